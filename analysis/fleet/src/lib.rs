//! Fleets of captures: a dataset of many labelled captures as Hive-partitioned Parquet
//! ([`dataset`]: the schema, appends, and reading it back safely) and its aggregation with
//! polars lazy scans ([`aggregate`]: exact percentiles per group of labels, A/B, trends,
//! thresholds), rendered as JSON, Markdown and self-contained HTML ([`render`]).
//!
//! Percentiles are always recomputed from the pairs of every capture in a group, never
//! averaged from per-capture percentiles, with the same linear interpolation as a report.

pub mod aggregate;
pub mod dataset;
pub mod render;
pub mod schema;
pub mod select;

use std::path::{Path, PathBuf};

pub use aggregate::{FleetOptions, FleetReport, Group, WorstPair, fleet};
pub use dataset::{AppendOutcome, CaptureToAppend, Dataset, append};
pub use schema::{DATASET_VERSION, Labels, parse_label};

/// For a viewer (the workbench's dataset view): reads the dataset at `dir` and returns its
/// groups by `group_by` with statistics, CDF points and worst pairs, and the p99 trend by
/// `trend` when given. Each [`WorstPair`] names the capture id, the file to open
/// (`path`, absolute) and the pair's `start_s`/`end_s` on that file's own clock, so a click
/// can open the capture at that pair. Blocking (it scans the pairs): run it off the UI thread.
/// Between two scans it gives up with [`FleetError::Cancelled`] once `stop` says so.
pub fn summarize(
    dir: &Path,
    group_by: &[String],
    trend: Option<&str>,
    stop: &dyn Fn() -> bool,
) -> Result<FleetReport, FleetError> {
    let dataset = Dataset::open(dir)?;
    let opts = FleetOptions {
        group_by: group_by.to_vec(),
        trend: trend.map(str::to_owned),
        ..FleetOptions::default()
    };
    aggregate::fleet_until(&dataset, &opts, &[], stop)
}

/// Anything that went wrong reading or writing a dataset; every variant names the path.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {message}", path.display())]
    Parquet { path: PathBuf, message: String },
    #[error("{}: dataset schema version {found}; this latscope reads versions up to {supported}: use a newer latscope (nothing was changed)", path.display())]
    NewerVersion { path: PathBuf, found: u32, supported: u32 },
    #[error("{}: {message}", path.display())]
    BadDataset { path: PathBuf, message: String },
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Engine(String),
    #[error("cancelled")]
    Cancelled,
}

impl FleetError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> FleetError {
        let path = path.into();
        move |source| FleetError::Io { path, source }
    }

    pub(crate) fn parquet(
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(polars::prelude::PolarsError) -> FleetError {
        let path = path.into();
        move |e| FleetError::Parquet { path, message: e.to_string() }
    }
}
