//! The latscope application: the command line (`cli`) and the desktop workbench (`gui`),
//! two front ends over one engine ([`latscope_engine`]).

pub mod cli;
pub mod errors;
pub mod gui;
