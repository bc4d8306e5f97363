//! The latscope application: the command line (`cli`) and, with its issue, the GUI.

pub mod cli;
pub mod report_cmd;
