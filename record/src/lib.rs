//! latscope's recorder (issue 30): records this machine's kernel through tracefs, with no
//! trace-cmd. It enables the events the analyses need, reads each CPU's `trace_pipe_raw`
//! pages, decodes them with the trace.dat page decoder, prints live statistics, keeps the
//! windows around pairs that cross a trigger (the flight recorder), and saves trace.dat
//! (file version 6) files that `trace-cmd report` reads. tracefs is left as it was found.
//!
//! - `tracefs`: where tracefs is, the settings a recording changes and puts back, events;
//! - `sigrok`: a logic analyzer through `sigrok-cli` (streamed `-O binary`, saved as `.sr`);
//! - `ssh`: a board's tracefs through the system's `ssh` (a control master, `cat`, `echo`);
//! - `plan`: a recording as asked for (the command line's words), checked into `Options`;
//! - `decoded`: a logic capture's final annotations as a source that grows, in time order;
//! - `growing`: the recorded events as a source that grows, in time order across CPUs;
//! - `recorder`: the recording loop (readers per CPU, the ring of pages, stop conditions);
//! - `stats`: the live statistics of the analyses over what was recorded;
//! - `window`: triggers, crossings and the windows saved around them;
//! - `save`: atomic files and folders.

pub mod decoded;
pub mod growing;
pub mod plan;
pub mod recorder;
pub mod save;
pub mod sigrok;
pub mod ssh;
pub mod stats;
pub mod tracefs;
pub mod window;

pub use plan::{Request, plan};
pub use recorder::{
    DecoderLive, Live, LogicLive, Options, Recording, Ring, Snapshot, Stopped, placed_by, record, record_with,
};
pub use stats::LiveStat;
pub use window::{Saved, Trigger};

use std::path::Path;

/// Why a recording could not start, or stopped on an error.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{0}")]
    NoTracefs(String),
    #[error(
        "the kernel has no event {0:?} (not in tracefs events/): check the name, or build the kernel with it"
    )]
    NoSuchEvent(String),
    #[error(
        "the kernel's trace buffer is in use (tracing is on with events enabled: {0}); stop the other \
         tracer (trace-cmd reset) or pass --force to record anyway"
    )]
    Busy(String),
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("cannot start {command}: {error}")]
    Command { command: String, error: std::io::Error },
    #[error("{0}")]
    Decode(String),
    #[error("{0}")]
    Ssh(String),
    #[error("{0}")]
    Usage(String),
}

impl RecordError {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> RecordError {
        RecordError::Io { path: path.display().to_string(), error }
    }
}
