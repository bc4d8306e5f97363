//! The report of a run (DESIGN §7.1): the pair analyses and stall windows that the metrics
//! were measured with, and the scenario's metrics. Everything here is computed from the
//! emitted [`Source`] with the generic pairing core, exactly as for a captured trace.
//! The analyses are [`Outcome`]s, so `latscope sim --format` renders them through the same
//! report builder (histograms, groups, worst cases) as `latscope report`.

use latscope_analysis::outcome::{AnalysisKind, Outcome, Sample, Window};
use latscope_analysis::pairing::{self, Edge, KeyVal, PairError, PairResult, PairRule, StallWindow};
pub use latscope_analysis::report::Metrics;
use latscope_model::{Ps, Source};

/// What a run measured: the analyses (as [`Outcome`]s, rendered by `latscope sim` through
/// the same report builder as `latscope report`) and the scenario's metrics.
#[derive(Debug, Clone)]
pub struct Report {
    /// The trace's name in reports.
    pub path: String,
    pub metrics: Metrics,
    pub outcomes: Vec<Outcome>,
}

impl Report {
    /// The analysis named `name` (the last one, when a scenario measured it twice).
    pub fn outcome(&self, name: &str) -> Option<&Outcome> {
        self.outcomes.iter().rev().find(|o| o.name == name)
    }
}

/// Duration statistics in nanoseconds: the analysis crate's, so a scenario's figures are
/// computed exactly as `latscope report` computes them.
pub type Stats = latscope_analysis::stats::StatsNs;

/// [`Stats`] of durations in picoseconds; all `null` when there is nothing to measure (or,
/// never expected, when the statistics engine fails).
pub fn stats_of(durations_ps: &[Ps]) -> Stats {
    if durations_ps.is_empty() {
        return Stats::default();
    }
    latscope_analysis::stats::stats_of(durations_ps).unwrap_or_default()
}

/// Builds a report while the scenario measures its metrics.
#[derive(Debug)]
pub struct Analyzer<'a> {
    pub src: &'a Source,
    pub report: Report,
}

impl<'a> Analyzer<'a> {
    pub fn new(src: &'a Source, path: &str) -> Self {
        Self {
            src,
            report: Report { path: path.to_owned(), metrics: Metrics::default(), outcomes: Vec::new() },
        }
    }

    /// Runs a pair rule and records it in the report.
    pub fn pair(&mut self, rule: &PairRule) -> Result<PairResult, PairError> {
        let r = pairing::pair(self.src, rule)?;
        self.report.outcomes.push(pair_outcome(self.src, rule, &r));
        Ok(r)
    }

    /// Statistics of the analysis recorded last.
    pub fn last_stats(&self) -> Stats {
        self.report.outcomes.last().map(|o| stats_of(&o.latencies())).unwrap_or_default()
    }

    /// Stall windows between `edge`s of a digital line; recorded as an analysis of the
    /// windows' durations, with the windows.
    pub fn stall(
        &mut self,
        name: &str,
        line: &str,
        edge: Edge,
        factor: f64,
    ) -> Result<Vec<StallWindow>, PairError> {
        let track = self
            .src
            .digital
            .iter()
            .find(|d| d.name == line)
            .ok_or_else(|| PairError::NoSuchTrack { rule: name.to_owned(), track: line.to_owned() })?;
        let (_, windows) = pairing::stall_windows(track, edge, factor);
        let mut outcome = Outcome::new(name, AnalysisKind::Stall, 0);
        outcome.samples =
            windows.iter().map(|w| Sample { start: w.start, end: w.end, key: String::new() }).collect();
        outcome.windows =
            windows.iter().map(|w| Window { start: w.start, end: w.end, excess: w.excess }).collect();
        self.report.outcomes.push(outcome);
        Ok(windows)
    }

    pub fn metric(&mut self, name: &str, value: f64) {
        self.report.metrics.0.push((name.to_owned(), value));
    }

    pub fn finish(self) -> Report {
        self.report
    }
}

/// A pair result as an [`Outcome`] of source 0, keys rendered `field=value` as presets do.
pub fn pair_outcome(src: &Source, rule: &PairRule, r: &PairResult) -> Outcome {
    let mut o = Outcome::new(rule.name.clone(), AnalysisKind::Pair, 0);
    o.unmatched_start = r.unmatched_start;
    o.unmatched_end = r.unmatched_end;
    let key = |k: &[KeyVal]| pairing::render_key(rule, k, &src.strings);
    o.samples = r.pairs.iter().map(|p| Sample { start: p.start, end: p.end, key: key(&p.key) }).collect();
    o.samples.sort_by_key(|s| (s.start, s.end));
    o
}

/// Length of the union of intervals (overlaps counted once).
pub fn union_length(mut iv: Vec<(Ps, Ps)>) -> Ps {
    iv.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(Ps, Ps)> = None;
    for (a, b) in iv {
        match cur {
            Some((s, e)) if a <= e => cur = Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                cur = Some((a, b));
            }
            None => cur = Some((a, b)),
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_follow_numpy_linear_percentiles() {
        let s = stats_of(&[1000, 2000, 3000, 4000]);
        assert_eq!(s.p50, Some(2.5));
        assert_eq!(s.p90, Some(3.7));
        assert_eq!((s.min, s.max, s.mean), (Some(1.0), Some(4.0), Some(2.5)));
        assert_eq!(stats_of(&[]), Stats::default());
        assert_eq!(union_length(vec![(0, 10), (5, 15), (20, 25)]), 20);
    }
}
