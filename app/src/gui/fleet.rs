//! The fleet window: a dataset of many labelled captures (`latscope report --dataset`)
//! aggregated as `latscope fleet` does, shown as a table of groups, a p99 trend plot and a
//! CDF of the selected group, with each group's worst pairs. A click on a worst pair opens
//! its capture and shows that pair on the timeline.
//!
//! This module owns the window's state ([`FleetState`]); its messages are
//! `FleetMsg` (in `message.rs`), handled in `update/fleet.rs`, and the window is
//! `views::fleet`. The aggregation scans every pair of the dataset, so it runs as a
//! job ([`super::jobs::JobKind::Fleet`]).

use super::document::SourceId;
use latscope_fleet::{FleetReport, Group};
use std::sync::Arc;

/// What the fleet window shows and what it was asked.
#[derive(Debug, Default)]
pub struct FleetState {
    pub open: bool,
    /// The dataset directory, as typed.
    pub dir: String,
    /// `--group-by`, comma-separated, as typed.
    pub group_by: String,
    /// `--trend`, as typed (empty: no trend).
    pub trend: String,
    /// The last aggregation, and the dataset it was of.
    pub report: Option<Arc<FleetReport>>,
    pub error: Option<String>,
    /// The analysis whose groups the table and plots show.
    pub analysis: Option<String>,
    /// The selected group (an index into the report's groups).
    pub selected: Option<usize>,
}

/// A pair to show when source `source` (a worst pair's capture) has loaded: seconds on that
/// file's own clock.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingJump {
    pub source: SourceId,
    pub start_s: f64,
    pub end_s: f64,
}

pub fn split_names(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

impl FleetState {
    /// The groups of the chosen analysis, with their index in the report.
    pub fn shown_groups(&self) -> Vec<(usize, &Group)> {
        let Some(r) = &self.report else { return Vec::new() };
        r.groups.iter().enumerate().filter(|(_, g)| Some(&g.analysis) == self.analysis.as_ref()).collect()
    }
}
