//! latscope's device simulator: a deterministic discrete-event engine ([`engine`]) whose
//! models ([`models`]) emit ftrace-like events and digital lines into the trace model
//! ([`emit`]), calibrated scenarios ([`scenarios`], configured by [`scenario`] files),
//! incremental runs for a live view ([`simulation`]), reports measured from the emitted
//! trace ([`report`]) and writers of ftrace text and VCD ([`output`]).
//!
//! The seed fully determines a run: same scenario, settings and seed, same trace, byte
//! for byte.

pub mod emit;
pub mod engine;
pub mod models;
pub mod output;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod scenarios;
pub mod simulation;

pub use scenario::{BUILTIN, Scenario, ScenarioError, Setting, SettingValue, parse_duration, prepare};
pub use simulation::{Batch, Output, Simulation, Speed, run};
