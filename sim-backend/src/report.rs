//! The report of a run: the scenario's measurements and its metrics. A
//! scenario declares what it measures as rule specs — the strings a user gives `latscope
//! report --rule` — which run through the analysis crate's runner on the emitted source,
//! exactly as on a captured trace; its metrics are small functions of the resulting
//! [`Outcome`]s. So `latscope report --rule SPEC` on the exported trace reproduces every
//! analysis of the run. The analyses are rendered by `latscope sim --format` through the
//! same report builder (histograms, groups, worst cases) as `latscope report`.

use latscope_analysis::live::Glance;
use latscope_analysis::outcome::{AnalysisKind, Outcome, Sample};
pub use latscope_analysis::report::Metrics;
use latscope_analysis::runner::{self, AnalysisError, Scope};
use latscope_analysis::spec::{Preset, Spec, SpecError, parse_spec};
use latscope_model::{PS_PER_US, Placed, Ps, Source};

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

/// Why a scenario's measurement could not run: a rule that does not parse or cannot run
/// on the emitted trace is a bug in the scenario's wiring.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeasureError {
    #[error("rule {rule:?}: {error}")]
    Spec { rule: String, error: SpecError },
    #[error("rule {rule:?}: {error}")]
    Run { rule: String, error: AnalysisError },
}

/// Runs `rules` on `src` (alone, as `latscope report` runs one input): one outcome per rule.
/// A rule whose events or tracks the trace does not have (yet: a live snapshot, or a
/// setting under which the driver never emits them) gives an empty outcome, so a report
/// always lists the scenario's analyses.
pub fn measure(src: &Source, rules: &[String]) -> Result<Vec<Outcome>, MeasureError> {
    let placed = [Placed::unaligned(src)];
    let mut out = Vec::new();
    for rule in rules {
        let spec = parse_spec(rule).map_err(|error| MeasureError::Spec { rule: rule.clone(), error })?;
        collect(&mut out, rule, &spec, runner::run(&spec, &placed, Scope::Each).map(|r| r.outcomes))?;
    }
    Ok(out)
}

/// One rule's outcomes into `out`; what the trace lacks is an empty outcome ([`measure`]).
fn collect(
    out: &mut Vec<Outcome>,
    rule: &str,
    spec: &Spec,
    ran: Result<Vec<Outcome>, AnalysisError>,
) -> Result<(), MeasureError> {
    match ran {
        Ok(outcomes) => out.extend(outcomes),
        Err(AnalysisError::Missing { .. }) => out.push(Outcome::new(spec.name(), kind_of(spec), 0)),
        Err(error) => return Err(MeasureError::Run { rule: rule.to_owned(), error }),
    }
    Ok(())
}

/// [`measure`] over a trace that grows while it runs (the workbench's live run): each
/// [`LiveMeasure::update`] gives what `measure` gives on the snapshot, and its pair rules
/// read only what is new since the last ([`latscope_analysis::live`]).
#[derive(Debug)]
pub struct LiveMeasure {
    rules: Vec<String>,
    live: latscope_analysis::live::LiveAnalyses,
}

impl LiveMeasure {
    pub fn new(rules: Vec<String>) -> Result<Self, MeasureError> {
        let specs = rules
            .iter()
            .map(|rule| parse_spec(rule).map_err(|error| MeasureError::Spec { rule: rule.clone(), error }))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { rules, live: latscope_analysis::live::LiveAnalyses::new(specs) })
    }

    /// The outcomes on `src`, which extends the snapshot of the last update.
    pub fn update(&mut self, src: &Source) -> Result<Vec<Outcome>, MeasureError> {
        let ran = self.live.update(src);
        let mut out = Vec::new();
        for ((rule, spec), ran) in self.rules.iter().zip(self.live.specs()).zip(ran) {
            collect(&mut out, rule, spec, ran)?;
        }
        Ok(out)
    }

    /// The answers on `src` for a view of statistics ([`LiveAnalyses::glance`]): what
    /// [`Self::update`] gives, but a rule that grows gives its statistics kept as samples
    /// arrive and about `keep` of its samples.
    ///
    /// [`LiveAnalyses::glance`]: latscope_analysis::live::LiveAnalyses::glance
    pub fn glance(
        &mut self,
        src: &Source,
        opts: latscope_analysis::stats::StatsOptions,
        keep: usize,
        cdf_points: usize,
    ) -> Result<Vec<Glance>, MeasureError> {
        let ran = self.live.glance(src, opts, keep, cdf_points);
        let mut out = Vec::new();
        for ((rule, spec), ran) in self.rules.iter().zip(self.live.specs()).zip(ran) {
            match ran {
                Ok(Glance::Whole(outcomes)) => out.push(Glance::Whole(outcomes)),
                Ok(grown) => out.push(grown),
                Err(AnalysisError::Missing { .. }) => {
                    out.push(Glance::Whole(vec![Outcome::new(spec.name(), kind_of(spec), 0)]))
                }
                Err(error) => return Err(MeasureError::Run { rule: rule.clone(), error }),
            }
        }
        Ok(out)
    }

    /// Reads the next snapshot from its beginning (the trace was reordered).
    pub fn reset(&mut self) {
        self.live.reset();
    }
}

/// The kind of outcome a spec gives.
fn kind_of(spec: &Spec) -> AnalysisKind {
    match spec {
        Spec::Pair(_) | Spec::Preset(Preset::Block | Preset::Wakeup | Preset::CmdIrq { .. }) => {
            AnalysisKind::Pair
        }
        Spec::Pulse { .. } | Spec::Poll { .. } => AnalysisKind::Pulse,
        Spec::Stall { .. } | Spec::Long { .. } => AnalysisKind::Stall,
        Spec::Preset(Preset::Chain { .. }) => AnalysisKind::Chain,
    }
}

/// The outcomes of a run, by analysis name, for the metric functions.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a>(pub &'a [Outcome]);

impl<'a> Found<'a> {
    /// The samples of analysis `name` (none when it found nothing).
    pub fn samples(&self, name: &str) -> &'a [Sample] {
        self.0.iter().rev().find(|o| o.name == name).map_or(&[], |o| &o.samples)
    }
    /// The latencies of analysis `name`, ps.
    pub fn latencies(&self, name: &str) -> Vec<Ps> {
        self.samples(name).iter().map(Sample::latency).collect()
    }
    /// Statistics of analysis `name`'s latencies, as `latscope report` prints them.
    pub fn stats(&self, name: &str) -> Stats {
        stats_of(&self.latencies(name))
    }
    /// The largest excess of analysis `name`'s detector windows, ps (0 with none).
    pub fn max_excess(&self, name: &str) -> Ps {
        let o = self.0.iter().rev().find(|o| o.name == name);
        o.and_then(|o| o.windows.iter().map(|w| w.excess).max()).unwrap_or(0)
    }
}

/// Microseconds of a statistic in nanoseconds (0 when there was nothing to measure).
pub fn us_of(ns: Option<f64>) -> f64 {
    ns.unwrap_or(0.0) / (PS_PER_US as f64 / 1e3)
}

/// The integer value of key field `field` in a rendered sample key (`dev=179,0 nr_sector=8`).
pub fn key_int(key: &str, field: &str) -> Option<i64> {
    key.split(' ').find_map(|kv| kv.strip_prefix(field)?.strip_prefix('=')?.parse().ok())
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

    #[test]
    fn key_fields_read_back_from_rendered_keys() {
        assert_eq!(key_int("dev=179,0 sector=2048 nr_sector=8", "nr_sector"), Some(8));
        assert_eq!(key_int("dev=179,0 sector=2048 nr_sector=8", "sector"), Some(2048));
        assert_eq!(key_int("cpu=0 irq=58", "cpu"), Some(0));
        assert_eq!(key_int("cpu=- irq=58", "cpu"), None);
    }
}
