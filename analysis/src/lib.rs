//! latscope's analysis crate: it owns the trace model (`model`) that every importer and
//! the simulator fill, and the analyses that run on it.

pub mod align;
pub mod chain;
pub mod detect;
pub mod outcome;
pub mod pairing;
pub mod presets;
pub mod report;
pub mod spec;
pub mod stats;
