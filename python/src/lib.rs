//! latscope's Python API (issue 32): the `latscope` module built with pyo3 and maturin.
//! `latscope.open(paths)` and `latscope.sim(scenario, settings)` return a `Capture` whose
//! `.events()`, `.table(name)`, `.pairs(spec)`, `.decode(spec)` and `.query(sql)` are polars
//! DataFrames.
//!
//! A front end like the command line: every method is one call into `latscope-engine`
//! ([`session`]), whose `query` module builds the tables, so Python gets what `latscope
//! query` prints. Tables cross to Python as Arrow C streams ([`arrow`]), never row by row
//! and through no polars wheel's private API.
//!
//! The pyo3 module is behind the `python` feature, which maturin turns on
//! (`pyproject.toml`); without it the crate builds and tests with the workspace on a machine
//! without Python.

pub mod arrow;
#[cfg(feature = "python")]
mod module;
pub mod session;

pub use session::Session;
