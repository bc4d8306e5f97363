//! The latscope application: the command line (`cli`) and the desktop workbench (`gui`).

pub mod atomic;
pub mod cli;
pub mod decode_cmd;
pub mod events_cmd;
pub mod fleet_cmd;
pub mod gui;
pub mod report_cmd;
