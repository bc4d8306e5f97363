//! The built-in scenarios of DESIGN §5.2: each wires models with a driver strategy, runs,
//! and measures its metrics from the emitted trace with pair rules and stall windows.

pub mod axienet;
pub mod e1000e;
pub mod imx8mq;
pub mod litesdcard;

use crate::report::{Analyzer, Report};
use crate::scenario::{Kind, Scenario, ScenarioError};
use crate::simulation::Model;
use latscope_analysis::pairing::PairError;
use latscope_model::Source;

/// A pair rule that the emitted trace cannot satisfy is a bug in the scenario's wiring;
/// it is reported against the scenario file.
pub fn analysis_error(s: &Scenario) -> impl Fn(PairError) -> ScenarioError + '_ {
    move |e| s.bad_value("analysis", e.to_string())
}

pub fn build(s: &Scenario) -> Result<Box<dyn Model>, ScenarioError> {
    match s.kind {
        Kind::E1000eMta => e1000e::build(s),
        Kind::LiteSdCard => litesdcard::build(s),
        Kind::Imx8mqCpuidle => imx8mq::build(s),
        Kind::AxienetNapi => axienet::build(s),
    }
}

pub fn report(s: &Scenario, src: &Source) -> Result<Report, ScenarioError> {
    let mut a = Analyzer::new(src, &s.file);
    let r = match s.kind {
        Kind::E1000eMta => e1000e::measure(s, &mut a),
        Kind::LiteSdCard => litesdcard::measure(s, &mut a),
        Kind::Imx8mqCpuidle => imx8mq::measure(s, &mut a),
        Kind::AxienetNapi => axienet::measure(s, &mut a),
    };
    r?;
    Ok(a.finish())
}

/// Throughput of block requests in bytes per second: their bytes over the time from the
/// first issue to the last completion (what `date; cp; date` measures).
pub fn throughput(
    pairs: &latscope_analysis::pairing::PairResult,
    bytes_per_pair: impl Fn(&latscope_analysis::pairing::Pair) -> u64,
) -> f64 {
    let (Some(first), Some(last)) =
        (pairs.pairs.iter().map(|p| p.start).min(), pairs.pairs.iter().map(|p| p.end).max())
    else {
        return 0.0;
    };
    let bytes: u64 = pairs.pairs.iter().map(bytes_per_pair).sum();
    if last <= first {
        return 0.0;
    }
    bytes as f64 / ((last - first) as f64 / 1e12)
}
