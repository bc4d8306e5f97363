//! Reports: the serde model of a report, built from the inputs and the
//! analyses' [`Outcome`]s, and its writers — JSON, Markdown, self-contained HTML, CSV and
//! Parquet of the samples. `--fail-if` thresholds live in [`threshold`].
//!
//! Every report says what made it ([`Provenance`]): the latscope version, each input with
//! the SHA-256 of its bytes, and the command line that makes it again; HTML and Markdown add
//! the date and host. The date is the caller's (`SOURCE_DATE_EPOCH` when set), so the same
//! inputs give the same bytes; JSON, CSV and Parquet carry no date at all. Groups and worst
//! samples come in a fixed order. Every string that comes from a trace, a path or an
//! argument is escaped by the writer that prints it (HTML, Markdown) or neutralised (CSV
//! cells starting with `= + - @`).

mod html;
mod markdown;
pub mod perfetto;
#[cfg(feature = "tables")]
mod table;
pub mod threshold;

use crate::inference::{self, Inference};
use crate::outcome::{AnalysisKind, Outcome};
use crate::stats::{self, Bucket, GroupStats, StatsError, StatsNs, StatsOptions};
use latscope_model::{ClockOrigin, PS_PER_NS, Ps, Source};

pub use html::{html_escape, to_html};
pub use markdown::{md_escape, to_markdown};
#[cfg(feature = "tables")]
pub use table::{to_csv, to_parquet};

/// The version of the JSON layout (`latscope_report`).
pub const REPORT_VERSION: u32 = 1;

/// The version of latscope that writes reports (every crate of the workspace shares it).
pub const LATSCOPE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Per-key tables of the text reports show this many keys, then how many more there are.
pub const TOP_KEYS: usize = 20;

/// What made a report, beyond its inputs' contents: filled by the engine, which reads the
/// files, the clock and the host.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provenance {
    /// The command line that makes the report again, rendered from the request (not argv).
    pub command: Option<String>,
    /// When the report was made, RFC 3339 UTC (`SOURCE_DATE_EPOCH` when set).
    pub date: Option<String>,
    /// The host that made it.
    pub host: Option<String>,
    /// Per input (by index), the digest of the file's bytes; `None` for a source that is no
    /// file (a simulation).
    pub files: Vec<Option<FileDigest>>,
}

/// The SHA-256 of a file's bytes and how many there were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDigest {
    /// Lower-case hex.
    pub sha256: String,
    pub bytes: u64,
}

impl Report {
    /// What the text reports call each input: its file name, the path where file names
    /// repeat, a number only where the paths do too ([`latscope_model::source_labels`]).
    /// The JSON keeps the numbers (`input`).
    pub fn input_labels(&self) -> Vec<String> {
        let paths: Vec<&str> = self.inputs.iter().map(|i| i.path.as_str()).collect();
        latscope_model::source_labels(&paths)
    }

    /// The label of input `i` ([`Report::input_labels`]).
    pub fn input_label(&self, i: usize) -> String {
        self.input_labels().into_iter().nth(i).unwrap_or_else(|| format!("input {i}"))
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    pub latscope_report: u32,
    /// The latscope that wrote it ([`LATSCOPE_VERSION`]).
    pub latscope_version: String,
    /// The command line that makes this report again (`latscope report FILE --preset P`);
    /// absent when the caller gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub inputs: Vec<Input>,
    pub analyses: Vec<Analysis>,
    pub windows: Vec<WindowJson>,
    /// Scenario figures of a simulator run; empty for captures.
    pub metrics: Metrics,
    /// A/B per analysis name: each candidate against the baseline, or input 1 against
    /// input 0 when there are two inputs and no baseline.
    pub comparison: Vec<Comparison>,
    /// The input that is the baseline (`report --baseline`), when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<usize>,
    /// The `--align` argument and what it set (offset, drift, fit quality).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub align: Option<String>,
    /// Every sample of every analysis, for CSV/Parquet and the HTML plots; not in the JSON.
    /// Empty when built with [`ReportOptions::without_samples`] (JSON and Markdown).
    #[serde(skip)]
    pub samples: Vec<SampleRow>,
    /// Heading of the Markdown and HTML reports (a simulator run names its scenario).
    #[serde(skip)]
    pub title: Option<String>,
    /// When the report was made (RFC 3339, UTC): the Markdown and HTML headers only, so the
    /// JSON stays the same for the same inputs.
    #[serde(skip)]
    pub date: Option<String>,
    /// The host that made it: the Markdown and HTML headers only.
    #[serde(skip)]
    pub host: Option<String>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Input {
    pub path: String,
    pub format: String,
    pub events: u64,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// The SHA-256 of the file's bytes (lower-case hex); `null` for a source that is no file.
    pub sha256: Option<String>,
    /// The file's size in bytes; `null` likewise.
    pub bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Analysis {
    pub name: String,
    pub kind: AnalysisKind,
    /// Index into `inputs` of the source the times belong to.
    pub input: usize,
    pub count: u64,
    pub unmatched_start: u64,
    pub unmatched_end: u64,
    /// Pairs left out of the statistics because an end is a failed decode (a CRC error, a
    /// frame cut by a stopped clock); 0 with `--include-errors`.
    pub excluded_errors: u64,
    pub stats_ns: StatsNs,
    /// Log buckets, 1-2-5 per decade.
    pub histogram: Vec<Bucket>,
    /// Equal-width buckets from min to max.
    pub histogram_linear: Vec<Bucket>,
    /// The largest groups (by count); `groups_total` counts them all.
    pub groups: Vec<GroupStats>,
    pub groups_total: u64,
    pub worst: Vec<Worst>,
    /// What pairing noticed (double completions, IRQs without a command, ...).
    pub notes: Vec<NoteJson>,
    /// A chain's stages, each a full analysis.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Analysis>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Worst {
    pub start_s: f64,
    pub end_s: f64,
    pub latency_ns: f64,
    /// The key as people read it (`dev=254,0`, `pid=1234 (dd)`).
    pub key: String,
    /// The key as stored (`dev=266338304`, `pid=1234`).
    pub key_raw: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NoteJson {
    pub what: String,
    pub count: u64,
}

impl NoteJson {
    /// See [`crate::outcome::Note::label`].
    pub fn label(&self) -> &str {
        crate::outcome::note_label(&self.what)
    }

    /// See [`crate::outcome::Note::value_text`].
    pub fn value_text(&self) -> String {
        crate::outcome::note_value_text(&self.what, self.count)
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WindowJson {
    pub analysis: String,
    pub start_s: f64,
    pub end_s: f64,
    pub duration_ns: f64,
    pub excess_ns: f64,
}

/// Named numbers in insertion order (a JSON object).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics(pub Vec<(String, f64)>);

impl Metrics {
    /// The value of metric `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|m| m.0 == name).map(|m| m.1)
    }
}

impl serde::Serialize for Metrics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// One side of an A/B comparison.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Side {
    pub input: usize,
    pub count: u64,
    pub unmatched_start: u64,
    pub unmatched_end: u64,
    pub stats_ns: StatsNs,
}

/// The figures an A/B comparison reports; `None` where a side has no samples (or, for
/// ratios, A is zero).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Figures {
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

/// A/B of one analysis: B (a candidate) against A (the baseline).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    pub analysis: String,
    pub a: Side,
    pub b: Side,
    /// B minus A, nanoseconds.
    pub delta_ns: Figures,
    /// B divided by A.
    pub ratio: Figures,
    /// B's count minus A's.
    pub count_delta: i64,
    /// B's count divided by A's.
    pub count_ratio: Option<f64>,
    /// Intervals, p-values, verdicts and the method (`ci95_ns`, `ci95_change`, `p_value`,
    /// `shift_p_value`, `verdict`, `method`): see [`crate::inference`].
    #[serde(flatten)]
    pub inference: Inference,
}

/// One sample as CSV and Parquet print it.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRow {
    pub analysis: String,
    pub input: usize,
    pub key: String,
    pub start_s: f64,
    pub end_s: f64,
    pub latency_ns: f64,
}

/// An input of a report: how to name it and the source it was read into.
#[derive(Debug, Clone, Copy)]
pub struct ReportInput<'a> {
    pub path: &'a str,
    pub source: &'a Source,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportOptions {
    pub stats: StatsOptions,
    pub align: Option<String>,
    pub metrics: Metrics,
    pub title: Option<String>,
    /// Leave [`Report::samples`] empty: a report rendered only as JSON or Markdown never
    /// prints them, and a row per sample costs more than the statistics (a million pulses).
    pub without_samples: bool,
    /// The input every other input is compared with (`report --baseline`); without one,
    /// two inputs are compared B against A.
    pub baseline: Option<usize>,
    /// Resamples, permutations and seed of the comparisons' intervals and tests.
    pub inference: inference::Options,
    /// The command line, date, host and file digests the report states.
    pub provenance: Provenance,
}

/// Report building failed in the statistics engine, or a writer failed.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Stats(#[from] StatsError),
    #[error("writing {format}: {message}")]
    Writer { format: &'static str, message: String },
}

/// Output formats of `latscope report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Md,
    Html,
    Csv,
    Parquet,
}

impl Format {
    /// Whether the bytes are text fit for a terminal.
    pub fn is_text(self) -> bool {
        self != Format::Parquet
    }
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format) -> Result<Vec<u8>, ReportError> {
    Ok(match format {
        Format::Json => to_json(report).into_bytes(),
        Format::Md => to_markdown(report).into_bytes(),
        Format::Html => to_html(report).into_bytes(),
        #[cfg(feature = "tables")]
        Format::Csv => to_csv(report)?,
        #[cfg(feature = "tables")]
        Format::Parquet => to_parquet(report)?,
        #[cfg(not(feature = "tables"))]
        Format::Csv | Format::Parquet => {
            return Err(ReportError::Writer {
                format: "csv/parquet",
                message: "built without the `tables` feature".into(),
            });
        }
    })
}

/// Pretty JSON with a final newline.
pub fn to_json(report: &Report) -> String {
    // Serialising plain structs of numbers and strings cannot fail.
    let mut s = serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

pub(crate) fn ps_to_ns(ps: Ps) -> f64 {
    ps as f64 / PS_PER_NS as f64
}

fn analysis_of(
    o: &Outcome,
    prefix: &str,
    origin: ClockOrigin,
    opts: &StatsOptions,
    rows: &mut Option<Vec<SampleRow>>,
) -> Result<Analysis, StatsError> {
    let summary = stats::summarize(o, opts)?;
    // Stages named by their analysis already carry its prefix (`chain/cmd->irq`).
    let name = if o.name.starts_with(prefix) { o.name.clone() } else { format!("{prefix}{}", o.name) };
    if let Some(rows) = rows {
        rows.extend(o.samples.iter().map(|s| SampleRow {
            analysis: name.clone(),
            input: o.source,
            key: s.key.clone(),
            start_s: origin.to_source_seconds(s.start),
            end_s: origin.to_source_seconds(s.end),
            latency_ns: ps_to_ns(s.latency()),
        }));
    }
    let stage_prefix = format!("{name}/");
    let stages = o
        .stages
        .iter()
        .map(|st| analysis_of(st, &stage_prefix, origin, opts, rows))
        .collect::<Result<_, _>>()?;
    Ok(Analysis {
        name,
        kind: o.kind,
        input: o.source,
        count: summary.count,
        unmatched_start: o.unmatched_start,
        unmatched_end: o.unmatched_end,
        excluded_errors: o.excluded.len() as u64,
        stats_ns: summary.stats_ns,
        histogram: summary.histogram_log,
        histogram_linear: summary.histogram_linear,
        groups: summary.groups,
        groups_total: summary.groups_total,
        worst: summary
            .worst
            .iter()
            .map(|s| Worst {
                start_s: origin.to_source_seconds(s.start),
                end_s: origin.to_source_seconds(s.end),
                latency_ns: ps_to_ns(s.latency()),
                key: s.key.clone(),
                key_raw: o.raw_key(&s.key).to_owned(),
            })
            .collect(),
        notes: o.notes.iter().map(|n| NoteJson { what: n.what.clone(), count: n.count }).collect(),
        stages,
    })
}

fn side(a: &Analysis) -> Side {
    Side {
        input: a.input,
        count: a.count,
        unmatched_start: a.unmatched_start,
        unmatched_end: a.unmatched_end,
        stats_ns: a.stats_ns,
    }
}

/// One figure of each of A and B combined by `f` (delta, ratio); `None` where either is.
pub fn figures(a: &StatsNs, b: &StatsNs, f: impl Fn(f64, f64) -> Option<f64>) -> Figures {
    let g = |x: Option<f64>, y: Option<f64>| x.zip(y).and_then(|(x, y)| f(x, y));
    Figures {
        mean: g(a.mean, b.mean),
        p50: g(a.p50, b.p50),
        p90: g(a.p90, b.p90),
        p99: g(a.p99, b.p99),
        max: g(a.max, b.max),
    }
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| b / a)
}

/// The pairs of the outcome named `name` of input `input`, as the inference takes them:
/// start on the input's own clock (seconds, exactly as the CSV and a fleet dataset store
/// it) and latency in ns.
fn points_of(outcomes: &[Outcome], name: &str, input: usize, origin: ClockOrigin) -> Vec<(f64, f64)> {
    outcomes
        .iter()
        .filter(|o| o.source == input && o.name == name)
        .flat_map(|o| o.samples.iter().map(|s| (origin.to_source_seconds(s.start), ps_to_ns(s.latency()))))
        .collect()
}

/// A/B per analysis name, in the baseline's order: every other input against `baseline`
/// when given, else input 1 against input 0 when there are exactly two inputs.
fn compare(
    analyses: &[Analysis],
    outcomes: &[Outcome],
    inputs: &[ReportInput<'_>],
    baseline: Option<usize>,
    opts: &inference::Options,
) -> Vec<Comparison> {
    let (base, candidates): (usize, Vec<usize>) = match baseline {
        Some(i) => (i, (0..inputs.len()).filter(|&j| j != i).collect()),
        None if inputs.len() == 2 => (0, vec![1]),
        None => return Vec::new(),
    };
    let origin = |i: usize| inputs.get(i).map(|x| x.source.origin).unwrap_or_default();
    let mut out = Vec::new();
    for a in analyses.iter().filter(|a| a.input == base) {
        for &cand in &candidates {
            let Some(b) = analyses.iter().find(|b| b.input == cand && b.name == a.name) else { continue };
            let pa = points_of(outcomes, &a.name, base, origin(base));
            let pb = points_of(outcomes, &b.name, cand, origin(cand));
            out.push(Comparison {
                analysis: a.name.clone(),
                a: side(a),
                b: side(b),
                delta_ns: figures(&a.stats_ns, &b.stats_ns, |x, y| Some(y - x)),
                ratio: figures(&a.stats_ns, &b.stats_ns, ratio),
                count_delta: b.count as i64 - a.count as i64,
                count_ratio: ratio(a.count as f64, b.count as f64),
                inference: inference::compare(&[&pa], &[&pb], &a.name, opts),
            });
        }
    }
    out
}

/// Builds the report of `outcomes` over `inputs` (an outcome's `source` indexes `inputs`).
pub fn build(
    inputs: &[ReportInput<'_>],
    outcomes: &[Outcome],
    opts: &ReportOptions,
) -> Result<Report, StatsError> {
    let mut samples = (!opts.without_samples).then(Vec::new);
    let mut analyses = Vec::with_capacity(outcomes.len());
    let mut windows = Vec::new();
    for o in outcomes {
        let origin = inputs.get(o.source).map(|i| i.source.origin).unwrap_or_default();
        analyses.push(analysis_of(o, "", origin, &opts.stats, &mut samples)?);
        windows.extend(o.windows.iter().map(|w| WindowJson {
            analysis: o.name.clone(),
            start_s: origin.to_source_seconds(w.start),
            end_s: origin.to_source_seconds(w.end),
            duration_ns: ps_to_ns(w.end - w.start),
            excess_ns: ps_to_ns(w.excess),
        }));
    }
    let comparison = compare(&analyses, outcomes, inputs, opts.baseline, &opts.inference);
    let prov = &opts.provenance;
    Ok(Report {
        latscope_report: REPORT_VERSION,
        latscope_version: LATSCOPE_VERSION.to_owned(),
        command: prov.command.clone(),
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(n, i)| {
                let range = i.source.time_range_seconds();
                let digest = prov.files.get(n).and_then(Option::as_ref);
                Input {
                    path: i.path.to_owned(),
                    format: i.source.format.clone(),
                    events: i.source.records(),
                    start_s: range.map(|r| r.0),
                    end_s: range.map(|r| r.1),
                    sha256: digest.map(|d| d.sha256.clone()),
                    bytes: digest.map(|d| d.bytes),
                }
            })
            .collect(),
        analyses,
        windows,
        metrics: opts.metrics.clone(),
        comparison,
        baseline: opts.baseline,
        align: opts.align.clone(),
        samples: samples.unwrap_or_default(),
        title: opts.title.clone(),
        date: prov.date.clone(),
        host: prov.host.clone(),
    })
}

pub use crate::units::human_ns;

/// A relative change for people: `+5.3%`.
pub fn pct(fraction: f64) -> String {
    if fraction.is_finite() { format!("{:+.1}%", fraction * 100.0) } else { "-".to_owned() }
}

/// A change in ns for people, with its sign: `+46.000 us`, `-812 ns`.
pub fn signed_ns(ns: f64) -> String {
    if ns < 0.0 { format!("-{}", human_ns(-ns)) } else { format!("+{}", human_ns(ns)) }
}

impl Comparison {
    /// B / A of `stat`, when both have a value and A's is not zero.
    pub fn ratio_of(&self, stat: inference::Stat) -> Option<f64> {
        let (a, b) =
            (self.a.stats_ns.get(stat.name()).flatten()?, self.b.stats_ns.get(stat.name()).flatten()?);
        ratio(a, b)
    }
}

/// [`human_ns`], or `-` for no value.
pub fn human_opt(ns: Option<f64>) -> String {
    ns.map_or_else(|| "-".to_owned(), human_ns)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::outcome::{Note, Sample, Window};
    use latscope_model::{ClockOrigin, SourceKind};

    /// Two sources with hand-made outcomes, one key carrying hostile text.
    pub(crate) fn sample_report() -> Report {
        let mut a = Source::new("a.txt", "ftrace-text", SourceKind::File);
        a.origin = ClockOrigin::from_secs_ps(470, 284_283_000_000);
        let b = Source::new("b.txt", "ftrace-text", SourceKind::File);
        let mut oa = Outcome::new("irq-handler", AnalysisKind::Pair, 0);
        for (i, l) in [2_000_000, 3_000_000, 6_000_000].iter().enumerate() {
            let key = if i == 2 { "name=<script>alert(1)</script>" } else { "irq=36" };
            oa.samples.push(Sample::new(i as Ps * 10_000_000, i as Ps * 10_000_000 + l, key));
        }
        oa.unmatched_end = 1;
        oa.notes.push(Note { what: "double completion".into(), count: 2 });
        oa.notes.push(Note { what: format!("median period{}", Note::PS_SUFFIX), count: 4_000_000_000 });
        oa.windows.push(Window { start: 0, end: 5_000_000, excess: 1_000_000 });
        let mut ob = Outcome::new("irq-handler", AnalysisKind::Pair, 1);
        ob.samples.push(Sample::new(0, 4_000_000, "=cmd|' /C calc'!A0"));
        let inputs = [ReportInput { path: "a.txt", source: &a }, ReportInput { path: "b.txt", source: &b }];
        build(&inputs, &[oa, ob], &ReportOptions::default()).unwrap()
    }

    #[test]
    fn json_has_the_contract_fields_and_comparison() {
        let r = sample_report();
        let v: serde_json::Value = serde_json::from_str(&to_json(&r)).unwrap();
        for k in ["latscope_report", "inputs", "analyses", "windows", "metrics", "comparison"] {
            assert!(v.get(k).is_some(), "{k}");
        }
        let a = &v["analyses"][0];
        for k in [
            "name",
            "kind",
            "count",
            "unmatched_start",
            "unmatched_end",
            "stats_ns",
            "histogram",
            "groups",
            "worst",
        ] {
            assert!(a.get(k).is_some(), "{k}");
        }
        assert_eq!(a["kind"], "pair");
        for k in ["min", "mean", "stddev", "p50", "p90", "p99", "p999", "max"] {
            assert!(a["stats_ns"].get(k).is_some(), "{k}");
        }
        // Worst first, in the source's own clock: 470.284283 + 20 us, 6 us long.
        assert_eq!(a["worst"][0]["latency_ns"], 6000.0);
        assert!((a["worst"][0]["start_s"].as_f64().unwrap() - 470.284303).abs() < 1e-9);
        assert_eq!(v["windows"][0]["excess_ns"], 1000.0);
        let c = &v["comparison"][0];
        assert_eq!(c["analysis"], "irq-handler");
        assert_eq!(c["count_delta"], -2);
        // A's p50 is 3 us, B's 4 us.
        assert_eq!(c["delta_ns"]["p50"], 1000.0);
        assert!((c["ratio"]["p50"].as_f64().unwrap() - 4.0 / 3.0).abs() < 1e-12);
        // Same input, same bytes.
        assert_eq!(to_json(&sample_report()), to_json(&r));
    }

    #[test]
    fn a_report_without_samples_prints_the_same_json_and_markdown() {
        let outcome = |source| {
            let mut o = Outcome::new("pulse:D1", AnalysisKind::Pulse, source);
            o.samples = (0..50).map(|i| Sample::new(i * 1000, i * 1000 + 7 * i, String::new())).collect();
            o
        };
        let a = Source::new("a.sr", "sigrok-sr", SourceKind::File);
        let b = Source::new("b.sr", "sigrok-sr", SourceKind::File);
        let inputs = [ReportInput { path: "a.sr", source: &a }, ReportInput { path: "b.sr", source: &b }];
        let outcomes = [outcome(0), outcome(1)];
        let full = build(&inputs, &outcomes, &ReportOptions::default()).unwrap();
        let lean = ReportOptions { without_samples: true, ..ReportOptions::default() };
        let lean = build(&inputs, &outcomes, &lean).unwrap();
        assert_eq!(full.samples.len(), 100);
        assert!(lean.samples.is_empty());
        assert_eq!(to_json(&lean), to_json(&full));
        assert_eq!(to_markdown(&lean), to_markdown(&full));
    }

    /// A source with `n` samples of `t` one microsecond apart, latencies `f(i)` ps.
    fn outcome_of(source: usize, n: i64, f: impl Fn(i64) -> i64) -> Outcome {
        let mut o = Outcome::new("t", AnalysisKind::Pair, source);
        o.samples = (0..n).map(|i| Sample::new(i * 1_000_000, i * 1_000_000 + f(i), String::new())).collect();
        o
    }

    #[test]
    fn a_baseline_is_compared_with_every_candidate_with_intervals_and_verdicts() {
        // Latencies 900..1000 ns in a scrambled order; the third input is 10 % slower.
        let lat = |i: i64| 900_000 + (i * 7919 % 1009) * 100;
        let sources: Vec<Source> = ["base.txt", "same.txt", "slow.txt"]
            .iter()
            .map(|p| Source::new(*p, "ftrace-text", SourceKind::File))
            .collect();
        let inputs: Vec<ReportInput<'_>> =
            sources.iter().map(|s| ReportInput { path: &s.name, source: s }).collect();
        let outcomes = [
            outcome_of(0, 3000, lat),
            outcome_of(1, 3000, |i| lat(i + 17)),
            outcome_of(2, 3000, |i| lat(i + 5) * 11 / 10),
        ];
        let opts = ReportOptions { baseline: Some(0), without_samples: true, ..ReportOptions::default() };
        let r = build(&inputs, &outcomes, &opts).unwrap();
        assert_eq!(r.comparison.len(), 2);
        assert_eq!((r.comparison[0].b.input, r.comparison[1].b.input), (1, 2));
        let v: serde_json::Value = serde_json::from_str(&to_json(&r)).unwrap();
        assert_eq!(v["baseline"], 0);
        let c = &v["comparison"][1];
        for stat in ["mean", "p50", "p90", "p99"] {
            assert_eq!(c["verdict"][stat], "regressed", "{stat}: {c}");
            let ci = c["ci95_ns"][stat].as_array().unwrap();
            assert!(ci[0].as_f64().unwrap() > 0.0 && ci[0].as_f64() < ci[1].as_f64(), "{stat}: {c}");
            assert!(c["p_value"][stat].as_f64().unwrap() < 0.01);
        }
        assert!(c["shift_p_value"].as_f64().unwrap() < 0.01);
        assert_eq!(c["method"]["resamples"], inference::RESAMPLES);
        assert_eq!(v["comparison"][0]["verdict"]["p50"], "inconclusive", "{}", v["comparison"][0]);
        // The gate: the slow candidate regressed, by 5 % too, not by 20 %.
        let gate = |text: &str| threshold::Threshold::parse(text).unwrap().check(&r).unwrap();
        let hit = gate("t.p50 regressed");
        assert_eq!(hit.len(), 1);
        assert_eq!(hit[0].input, 2);
        assert!(hit[0].to_string().starts_with("regression: t.p50 +10."), "{}", hit[0]);
        assert_eq!(gate("t.p99 regressed(99%) by 5%").len(), 1);
        assert!(gate("t.mean regressed by 20%").is_empty());
        // Same inputs, same bytes; Markdown and HTML show the intervals.
        assert_eq!(to_json(&build(&inputs, &outcomes, &opts).unwrap()), to_json(&r));
        let md = to_markdown(&r);
        assert!(
            md.contains("## Change of B against A (95 % intervals)") && md.contains("| regressed |"),
            "{md}"
        );
        let html = to_html(&r);
        assert_eq!(html.matches("<title>intervals</title>").count(), 2);
    }

    /// A block report keyed by sector: the text reports show the 20 largest keys, then how
    /// many more there are; the JSON keeps its 100 and the total.
    #[test]
    fn per_key_tables_show_the_top_twenty_then_how_many_more() {
        let src = Source::new("blk.dat", "trace.dat", SourceKind::File);
        let mut o = Outcome::new("block", AnalysisKind::Pair, 0);
        // 150 sectors, each seen twice.
        for i in 0..300_i64 {
            let key = format!("sector={}", i % 150);
            o.samples.push(Sample::new(i * 1_000_000, i * 1_000_000 + 1000 + i, key));
        }
        let prov = Provenance {
            command: Some("latscope report blk.dat --preset block".into()),
            date: Some("2025-12-05T02:00:00Z".into()),
            host: Some("<host>".into()),
            files: vec![Some(FileDigest { sha256: "ab".repeat(32), bytes: 7 })],
        };
        let opts = ReportOptions { provenance: prov, ..ReportOptions::default() };
        let r = build(&[ReportInput { path: "blk.dat", source: &src }], &[o], &opts).unwrap();
        assert_eq!((r.analyses[0].groups.len(), r.analyses[0].groups_total), (100, 150));
        let md = to_markdown(&r);
        assert_eq!(md.lines().filter(|l| l.starts_with("| sector=")).count(), TOP_KEYS, "{md}");
        assert!(md.contains("| *130 more keys* |"), "{md}");
        let html = to_html(&r);
        let keys = html.split("<h3>By key").nth(1).and_then(|s| s.split("</table>").next()).unwrap();
        assert_eq!(keys.matches("<td class=\"t\">sector=").count(), TOP_KEYS, "{keys}");
        assert!(html.contains(">130 more keys</td>"), "{html}");
        assert!(html.contains("By key (the 20 largest of 150 keys)"));
        // The header: version, date, host (escaped), command; the input's digest and size.
        assert!(md.starts_with(&format!(
            "# latscope report\n\n- latscope: {LATSCOPE_VERSION}\n- date: 2025-12-05T02:00:00Z\n- host: &lt;host&gt;\n- command: `latscope report blk.dat --preset block`\n"
        )), "{md}");
        assert!(md.contains(&format!("| 7 B | {} |", "ab".repeat(32))), "{md}");
        assert!(html.contains("<th class=\"t\">host</th><td class=\"t\">&lt;host&gt;</td>"), "{html}");
        let v: serde_json::Value = serde_json::from_str(&to_json(&r)).unwrap();
        assert_eq!(v["latscope_version"], LATSCOPE_VERSION);
        assert_eq!(v["command"], "latscope report blk.dat --preset block");
        assert_eq!(v["inputs"][0]["sha256"], "ab".repeat(32));
        assert_eq!(v["inputs"][0]["bytes"], 7);
        // No date or host in the JSON: it stays the same for the same inputs.
        assert!(v.get("date").is_none() && v.get("host").is_none());
    }

    #[test]
    fn human_units() {
        assert_eq!(human_ns(812.0), "812 ns");
        assert_eq!(human_ns(0.5), "0.500 ns");
        assert_eq!(human_ns(3250.0), "3.250 us");
        assert_eq!(human_ns(1_204_000.0), "1.204 ms");
    }
}
