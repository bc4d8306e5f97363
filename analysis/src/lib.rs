//! latscope's analyses over the trace model (`latscope_model`): rule specs and their
//! grammar, endpoint selection, the pairing engine, stall and other detectors, presets and
//! chains, the runner every front end calls, statistics and reports.
//!
//! Modules in layers, each using only those above it (docs/ARCHITECTURE.md has the map):
//! `units`, `outcome`; `endpoint`; `pairing`, `stall`; `spec` (types and grammar);
//! `measure`; `presets`, `chain`, `detect`, `align`; `runner`; `live`; `stats`; `inference`; `report`.

pub mod align;
pub mod chain;
pub mod detect;
pub mod endpoint;
pub mod inference;
pub mod live;
pub mod measure;
pub mod outcome;
pub mod pairing;
pub mod presets;
pub mod report;
pub mod runner;
pub mod running_stats;
pub mod spec;
pub mod stall;
pub mod stats;
pub mod units;
