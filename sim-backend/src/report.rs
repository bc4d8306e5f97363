//! The report of a run (DESIGN §7.1): the pair analyses and stall windows that the metrics
//! were measured with, and the scenario's metrics. Everything here is computed from the
//! emitted [`Source`] with the generic pairing core, exactly as for a captured trace.
//! The analyses are also kept as [`Outcome`]s, so `latscope sim --format` can give them the
//! full statistics (histograms, groups, worst cases) of `latscope report`.

use latscope_analysis::model::{PS_PER_NS, Ps, Source};
use latscope_analysis::outcome::{AnalysisKind, Outcome, Sample, Window};
use latscope_analysis::pairing::{self, Edge, KeyVal, PairError, PairResult, PairRule, StallWindow};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub latscope_report: u32,
    pub inputs: Vec<InputJson>,
    pub analyses: Vec<AnalysisJson>,
    pub windows: Vec<WindowJson>,
    pub metrics: Metrics,
    /// The analyses above with their samples, for full reports (not in this JSON).
    #[serde(skip)]
    pub outcomes: Vec<Outcome>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InputJson {
    pub path: String,
    pub format: String,
    pub events: u64,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AnalysisJson {
    pub name: String,
    pub kind: &'static str,
    pub count: u64,
    pub unmatched_start: u64,
    pub unmatched_end: u64,
    pub stats_ns: Stats,
}

#[derive(Debug, Clone, Serialize)]
pub struct WindowJson {
    pub analysis: String,
    pub start_s: f64,
    pub end_s: f64,
    pub duration_ns: f64,
    pub excess_ns: f64,
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

/// Metrics in the order the scenario defines them (a JSON object).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics(pub Vec<(String, f64)>);

impl Metrics {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|m| m.0 == name).map(|m| m.1)
    }
}

impl Serialize for Metrics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// Builds a report while the scenario measures its metrics.
#[derive(Debug)]
pub struct Analyzer<'a> {
    pub src: &'a Source,
    pub report: Report,
}

impl<'a> Analyzer<'a> {
    pub fn new(src: &'a Source, path: &str) -> Self {
        let range = src.time_range_seconds();
        Self {
            src,
            report: Report {
                latscope_report: 1,
                inputs: vec![InputJson {
                    path: path.to_owned(),
                    format: src.format.clone(),
                    events: src.records(),
                    start_s: range.map(|r| r.0),
                    end_s: range.map(|r| r.1),
                }],
                analyses: Vec::new(),
                windows: Vec::new(),
                metrics: Metrics::default(),
                outcomes: Vec::new(),
            },
        }
    }

    /// Runs a pair rule and records it in the report.
    pub fn pair(&mut self, rule: &PairRule) -> Result<PairResult, PairError> {
        let r = pairing::pair(self.src, rule)?;
        self.report.analyses.push(AnalysisJson {
            name: rule.name.clone(),
            kind: "pair",
            count: r.pairs.len() as u64,
            unmatched_start: r.unmatched_start,
            unmatched_end: r.unmatched_end,
            stats_ns: stats_of(&r.durations()),
        });
        self.report.outcomes.push(pair_outcome(self.src, rule, &r));
        Ok(r)
    }

    /// Stall windows between `edge`s of a digital line; recorded as an analysis of the
    /// windows' durations and as windows.
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
        let durations: Vec<Ps> = windows.iter().map(|w| w.end - w.start).collect();
        self.report.analyses.push(AnalysisJson {
            name: name.to_owned(),
            kind: "stall",
            count: windows.len() as u64,
            unmatched_start: 0,
            unmatched_end: 0,
            stats_ns: stats_of(&durations),
        });
        let mut outcome = Outcome::new(name, AnalysisKind::Stall, 0);
        outcome.samples =
            windows.iter().map(|w| Sample { start: w.start, end: w.end, key: String::new() }).collect();
        outcome.windows =
            windows.iter().map(|w| Window { start: w.start, end: w.end, excess: w.excess }).collect();
        self.report.outcomes.push(outcome);
        let o = self.src.origin;
        self.report.windows.extend(windows.iter().map(|w| WindowJson {
            analysis: name.to_owned(),
            start_s: o.to_source_seconds(w.start),
            end_s: o.to_source_seconds(w.end),
            duration_ns: (w.end - w.start) as f64 / PS_PER_NS as f64,
            excess_ns: w.excess as f64 / PS_PER_NS as f64,
        }));
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
    o.samples = r
        .pairs
        .iter()
        .map(|p| {
            let key = rule
                .by
                .iter()
                .zip(&p.key)
                .map(|((_, field), v)| match v {
                    KeyVal::Int(i) => format!("{field}={i}"),
                    KeyVal::Str(s) => format!("{field}={}", src.strings.resolve(*s)),
                    KeyVal::Missing => format!("{field}=?"),
                })
                .collect::<Vec<_>>()
                .join(" ");
            Sample { start: p.start, end: p.end, key }
        })
        .collect();
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

/// Markdown table of the metrics.
pub fn markdown(report: &Report, title: &str) -> String {
    let mut s = format!("# {title}\n\n| metric | value |\n|---|---|\n");
    for (k, v) in &report.metrics.0 {
        s.push_str(&format!("| `{k}` | {} |\n", fmt_num(*v)));
    }
    s.push_str("\n| analysis | kind | count | unmatched start | unmatched end | p50 | max |\n|---|---|---|---|---|---|---|\n");
    for a in &report.analyses {
        let f = |v: Option<f64>| v.map_or("-".to_owned(), |x| format!("{:.3} us", x / 1e3));
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            a.name,
            a.kind,
            a.count,
            a.unmatched_start,
            a.unmatched_end,
            f(a.stats_ns.p50),
            f(a.stats_ns.max)
        ));
    }
    s
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 { format!("{v:.1}") } else { format!("{v:.3}") }
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
