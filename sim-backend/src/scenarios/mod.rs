//! The built-in scenarios (docs/SIMULATOR.md): each wires models with a driver strategy, runs,
//! and declares what it measures as rule specs ([`rules`], the strings `latscope report
//! --rule` takes) plus metric functions over their outcomes ([`report`]).

pub mod axienet;
pub mod e1000e;
pub mod imx8mq;
pub mod litesdcard;

use crate::report::{Found, LiveMeasure, Metrics, Report, key_int, measure};
use crate::scenario::{Kind, Scenario, ScenarioError};
use crate::simulation::Model;
use latscope_analysis::outcome::Sample;
use latscope_model::Source;

pub fn build(s: &Scenario) -> Result<Box<dyn Model>, ScenarioError> {
    match s.kind {
        Kind::E1000eMta => e1000e::build(s),
        Kind::LiteSdCard => litesdcard::build(s),
        Kind::Imx8mqCpuidle => imx8mq::build(s),
        Kind::AxienetNapi => axienet::build(s),
    }
}

/// The words a setting may take: (setting, its valid values).
pub type Choices = &'static [(&'static str, &'static [&'static str])];
/// The limits of number settings: (setting, lowest, highest).
pub type Ranges = &'static [(&'static str, f64, f64)];

/// The scenario kind's word settings and their values, and its numbers' limits (what the
/// workbench's settings editor offers, so only valid values can be chosen).
pub fn constraints(kind: Kind) -> (Choices, Ranges) {
    match kind {
        Kind::E1000eMta => (e1000e::CHOICES, e1000e::RANGES),
        Kind::LiteSdCard => (litesdcard::CHOICES, litesdcard::RANGES),
        Kind::Imx8mqCpuidle => (imx8mq::CHOICES, imx8mq::RANGES),
        Kind::AxienetNapi => (axienet::CHOICES, axienet::RANGES),
    }
}

/// What the scenario measures: rule specs, as a user types them after `latscope report
/// --rule` (some carry settings of the scenario, such as the stall factor).
pub fn rules(s: &Scenario) -> Result<Vec<String>, ScenarioError> {
    match s.kind {
        Kind::E1000eMta => e1000e::rules(s),
        Kind::LiteSdCard => Ok(litesdcard::rules()),
        Kind::Imx8mqCpuidle => Ok(imx8mq::rules()),
        Kind::AxienetNapi => Ok(axienet::rules()),
    }
}

/// Runs the scenario's rules on the emitted trace and computes its metrics from them.
pub fn report(s: &Scenario, src: &Source) -> Result<Report, ScenarioError> {
    let outcomes = measure(src, &rules(s)?).map_err(|e| s.bad_value("analysis", e.to_string()))?;
    report_of(s, outcomes)
}

/// The scenario's report over a trace that grows while it runs: each
/// [`LiveReport::update`] gives the outcomes [`report`] gives on that snapshot (and
/// [`LiveReport::report`] its metrics), and its pair rules read only what is new
/// ([`LiveMeasure`]).
#[derive(Debug)]
pub struct LiveReport {
    scenario: Scenario,
    measure: LiveMeasure,
}

impl LiveReport {
    pub fn new(s: &Scenario) -> Result<Self, ScenarioError> {
        let measure = LiveMeasure::new(rules(s)?).map_err(|e| s.bad_value("analysis", e.to_string()))?;
        Ok(Self { scenario: s.clone(), measure })
    }

    /// The analyses on `src`, a snapshot that extends the last one.
    pub fn update(
        &mut self,
        src: &Source,
    ) -> Result<Vec<latscope_analysis::outcome::Outcome>, ScenarioError> {
        self.measure.update(src).map_err(|e| self.scenario.bad_value("analysis", e.to_string()))
    }

    /// The analyses on `src` for a view of statistics ([`LiveMeasure::glance`]): a rule
    /// that grows answers with its statistics kept as samples arrive and about `keep` of
    /// its samples, so the answer costs what is new, not the run so far.
    pub fn glance(
        &mut self,
        src: &Source,
        opts: latscope_analysis::stats::StatsOptions,
        keep: usize,
        cdf_points: usize,
    ) -> Result<Vec<latscope_analysis::live::Glance>, ScenarioError> {
        self.measure
            .glance(src, opts, keep, cdf_points)
            .map_err(|e| self.scenario.bad_value("analysis", e.to_string()))
    }

    /// The report of `outcomes` (an update's): the scenario's metrics over them. Apart from
    /// [`LiveReport::update`] since the metrics read every sample, and a live view that
    /// shows only the analyses need not pay for them.
    pub fn report(
        &self,
        outcomes: Vec<latscope_analysis::outcome::Outcome>,
    ) -> Result<Report, ScenarioError> {
        report_of(&self.scenario, outcomes)
    }

    /// Reads the next snapshot from its beginning (the trace was reordered).
    pub fn reset(&mut self) {
        self.measure.reset();
    }
}

/// The scenario's metrics over `outcomes`, its rules' outcomes in order.
fn report_of(
    s: &Scenario,
    outcomes: Vec<latscope_analysis::outcome::Outcome>,
) -> Result<Report, ScenarioError> {
    let found = Found(&outcomes);
    let metrics = match s.kind {
        Kind::E1000eMta => e1000e::metrics(&found),
        Kind::LiteSdCard => litesdcard::metrics(&found),
        Kind::Imx8mqCpuidle => imx8mq::metrics(&found),
        Kind::AxienetNapi => axienet::metrics(s, &found)?,
    };
    Ok(Report { path: s.file.clone(), metrics, outcomes })
}

/// Throughput of block requests in bytes per second: their bytes (`nr_sector` of the key,
/// 512-byte sectors) over the time from the first issue to the last completion (what
/// `date; cp; date` measures).
pub fn throughput(samples: &[Sample]) -> f64 {
    let (Some(first), Some(last)) =
        (samples.iter().map(|p| p.start).min(), samples.iter().map(|p| p.end).max())
    else {
        return 0.0;
    };
    let bytes: u64 =
        samples.iter().map(|p| key_int(&p.key, "nr_sector").unwrap_or(0).max(0) as u64 * 512).sum();
    if last <= first {
        return 0.0;
    }
    bytes as f64 / ((last - first) as f64 / 1e12)
}

/// Metrics in the order given.
fn metrics_of(list: &[(&str, f64)]) -> Metrics {
    Metrics(list.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
}
