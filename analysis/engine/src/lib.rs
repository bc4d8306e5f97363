//! latscope's engine: the one library behind every front end — the command line, the
//! workbench, the recorder and the Python API (`python/`) — so each gives the same answer.
//!
//! Its roles, in the order a front end meets them:
//! - [`Registry`]: what can be asked for by name. Presets (the analysis crate's and those a
//!   decoder's events serve), decoders (native, and found at run time) with their channels
//!   and options, and the hints of what a preset lacks. One table per concept.
//! - [`channels`]: which track a name means, by one rule, and what to say about a decoder's
//!   channels before it runs (ambiguous, never toggles).
//! - [`Capture`]: files opened into sources, placed on the common timeline, decoded and
//!   aligned. The workbench keeps its own shared sources and calls the functions below on
//!   them instead.
//! - [`decode`]: decoder stacks run on a source, on a `.sr` file's samples, or on every input
//!   that has their channels, and attached to a source as span tracks and events.
//! - [`analyse`]: presets and rule specs run with the runner's each-or-together rule; a spec
//!   that cannot run says why, and what to record.
//! - [`report`]: the report in every format, the Perfetto trace and the CI gate; [`sim`]
//!   does the same for a simulator run, [`fleet`] for datasets of many captures.
//! - Writers of what the commands print: [`events`] (as `trace-cmd report`), [`annotations`]
//!   (`latscope decode`), [`info`]; all through [`Output`] (standard output, or a file
//!   written atomically and never over an input).
//! - [`sigrok`]: every libsigrokdecode decoder as a `sigrok:ID` stage, through sigrok-cli.
//! - [`query`]: SQL over a capture's tables (`latscope query`, the workbench's query panel).
//!
//! Errors are [`EngineError`], which names what it was about (file, preset, rule, decoder,
//! input) above the library error beneath it.

pub mod analyse;
pub mod annotations;
pub mod atomic;
pub mod capture;
pub mod channels;
pub mod decode;
mod error;
pub mod events;
pub mod fleet;
pub mod info;
pub mod output;
pub mod provenance;
#[cfg(feature = "query")]
pub mod query;
pub mod registry;
pub mod report;
pub mod sigrok;
pub mod sim;

pub use capture::Capture;
pub use error::{EngineError, Result};
pub use output::Output;
pub use registry::Registry;

/// Opens one capture file: its format found by content, its importer run under `ctl`
/// (progress, cancel, track selection).
pub fn open(path: &std::path::Path, ctl: &latscope_importers::LoadControl) -> Result<latscope_model::Source> {
    Ok(latscope_importers::open(path, ctl)?)
}
