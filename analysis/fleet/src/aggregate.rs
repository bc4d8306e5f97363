//! `latscope fleet`: statistics per group of labels over a dataset's pairs, with polars
//! lazy scans run by the streaming engine.
//!
//! Each (group, analysis) is a streaming scan of exactly the pairs files of the group's
//! captures (the catalogue knows each capture's labels), filtered to the analysis and
//! projected to `latency_ns`, whose batches feed [`select`]: a group of up to
//! [`select::MAX_HELD`] pairs is kept and sorted, a larger one is rescanned until the
//! quantiles' ranks are found, so memory stays bounded whatever the dataset's size. The worst
//! pairs are a top-k scan. Percentiles are exact over every pair of the group and
//! interpolate linearly as `report` does (`latscope_analysis::stats::linear_quantile`).

use crate::FleetError;
use crate::dataset::{CaptureInfo, Dataset};
use crate::schema;
use crate::select::{self, FirstPass};
use latscope_analysis::inference::{self, Inference, Verdict};
use latscope_analysis::report::pct;
use latscope_analysis::report::threshold::{Regression, Threshold, p_text};
use latscope_analysis::stats::StatsNs;
use polars::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The version of the JSON layout (`latscope_fleet`).
pub const FLEET_VERSION: u32 = 1;

/// What `latscope fleet` asks.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetOptions {
    /// Label names to group captures by (none: the whole dataset is one group per analysis).
    pub group_by: Vec<String>,
    /// Only these analyses (empty: all).
    pub analyses: Vec<String>,
    /// `--baseline NAME=VALUE --compare NAME=VALUE`: A/B per group.
    pub baseline: Option<(String, String)>,
    pub compare: Option<(String, String)>,
    /// `--trend NAME`: statistics per value of this label, in order of first append.
    pub trend: Option<String>,
    /// A trend step is a change point when its p99 p-value, adjusted by Holm's method over
    /// the trend's steps, is below this significance level.
    pub trend_alpha: f64,
    /// ... and p99 moved by more than this fraction of the previous value (0: any).
    pub trend_threshold: f64,
    /// Resamples, permutations and seed of the comparisons' and steps' intervals.
    pub inference: inference::Options,
    /// How many worst pairs per group.
    pub worst: usize,
    /// Points of each group's CDF (for plots); 0 for none.
    pub cdf_points: usize,
}

impl Default for FleetOptions {
    fn default() -> Self {
        Self {
            group_by: Vec::new(),
            analyses: Vec::new(),
            baseline: None,
            compare: None,
            trend: None,
            trend_alpha: 0.05,
            trend_threshold: 0.0,
            inference: inference::Options::default(),
            worst: 5,
            cdf_points: 200,
        }
    }
}

/// One of a group's longest pairs, and where to find it: the capture's file and the pair's
/// time on that file's own clock.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorstPair {
    pub capture: String,
    /// The input file the pair was measured in, as it was given to `report`.
    pub source: String,
    /// The same file as an absolute path on the machine that appended it: what a viewer
    /// opens, at `start_s`.
    pub path: String,
    pub key: String,
    pub start_s: f64,
    pub end_s: f64,
    pub latency_ns: f64,
    pub labels: schema::Labels,
}

/// The statistics of one analysis over one group of captures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Group {
    /// The group's value of each `--group-by` label; `null` for captures without it.
    pub labels: BTreeMap<String, Option<String>>,
    pub analysis: String,
    /// Captures of the group that contributed at least one pair.
    pub captures: u64,
    pub count: u64,
    pub stats_ns: StatsNs,
    pub worst: Vec<WorstPair>,
    /// `(latency_ns, fraction <= it)` at evenly spaced ranks, for plots; not in the JSON.
    #[serde(skip)]
    pub cdf: Vec<(f64, f64)>,
}

/// One side of an A/B.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FleetSide {
    pub captures: u64,
    pub count: u64,
    pub stats_ns: StatsNs,
}

/// `--baseline`/`--compare` for one group and analysis.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FleetComparison {
    pub labels: BTreeMap<String, Option<String>>,
    pub analysis: String,
    pub baseline: FleetSide,
    pub compare: FleetSide,
    /// Compare minus baseline, nanoseconds.
    pub delta_ns: latscope_analysis::report::Figures,
    /// Compare divided by baseline.
    pub ratio: latscope_analysis::report::Figures,
    /// Intervals, p-values, verdicts and method, as a report's comparison has them (one
    /// capture a side gives the very numbers `report CANDIDATE --baseline BASELINE` gives).
    #[serde(flatten)]
    pub inference: Inference,
}

/// One value of the trend label.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrendPoint {
    pub value: String,
    pub captures: u64,
    pub count: u64,
    pub stats_ns: StatsNs,
}

/// The trend of one group and analysis over the values of the trend label.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Trend {
    pub labels: BTreeMap<String, Option<String>>,
    pub analysis: String,
    pub label: String,
    /// How the points are ordered: `"value"` when every value of the label is a number or
    /// an ISO 8601 date or time (a build number, a nightly's date), else `"appended"` (in
    /// order of each value's first append: commits).
    pub order: &'static str,
    pub points: Vec<TrendPoint>,
    /// Each point's p99 against the previous point's, with its interval and p-value.
    pub steps: Vec<TrendStep>,
    /// The significance level of the change points (Holm-adjusted over the steps).
    pub alpha: f64,
    /// The steps that are change points, in order.
    pub change_points: Vec<TrendChange>,
    /// The first of `change_points`.
    pub first_change: Option<TrendChange>,
}

/// One step of a trend: a point's p99 against the previous point's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrendStep {
    pub from: String,
    pub value: String,
    /// `p99 / previous p99 - 1`.
    pub change: Option<f64>,
    /// 95 % interval of the change (a fraction), and of the difference in ns.
    pub ci95_change: Option<[f64; 2]>,
    pub ci95_ns: Option<[f64; 2]>,
    /// The step's bootstrap p-value, and Holm's adjustment over the trend's steps.
    pub p_value: Option<f64>,
    pub p_adjusted: Option<f64>,
    pub verdict: Verdict,
    /// Adjusted p below `alpha` and the change beyond `--trend-threshold`.
    pub change_point: bool,
}

/// A change point of a trend: where p99 moved, from the previous value's p99.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrendChange {
    pub value: String,
    pub p99_ns: f64,
    /// The previous point's p99.
    pub from_p99_ns: f64,
    /// `p99_ns / from_p99_ns - 1`.
    pub change: f64,
    pub ci95_change: Option<[f64; 2]>,
    pub p_value: Option<f64>,
    pub p_adjusted: Option<f64>,
}

impl TrendChange {
    /// `commit=abc123: p99 +7.4% [+3.1%, +11.9%], p=0.002`.
    pub fn summary(&self, label: &str) -> String {
        let interval =
            self.ci95_change.map(|[lo, hi]| format!(" [{}, {}]", pct(lo), pct(hi))).unwrap_or_default();
        let p = self.p_value.map(|p| format!(", p={}", p_text(p))).unwrap_or_default();
        format!("{label}={}: p99 {}{interval}{p}", self.value, pct(self.change))
    }
}

/// A `--fail-if` crossed by one group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FleetCrossing {
    pub threshold: String,
    pub labels: BTreeMap<String, Option<String>>,
    pub analysis: String,
    /// The statistic's value (a limit), or the relative change (`regressed`).
    pub value: f64,
    /// For `regressed`: the change found, with its interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regression: Option<Regression>,
}

impl std::fmt::Display for FleetCrossing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(r) = &self.regression {
            return write!(
                f,
                "regression: --fail-if {} in group {}: {} {}",
                self.threshold,
                labels_text(&self.labels),
                self.analysis,
                r.summary()
            );
        }
        let value = if self.threshold.contains(".count") {
            format!("{}", self.value)
        } else {
            latscope_analysis::report::human_ns(self.value)
        };
        write!(
            f,
            "threshold crossed: --fail-if {} in group {}: {} is {value}",
            self.threshold,
            labels_text(&self.labels),
            self.analysis
        )
    }
}

/// `soc=imx93 kernel=6.6` (`(all)` for no labels, `(none)` for a missing value).
pub fn labels_text(labels: &BTreeMap<String, Option<String>>) -> String {
    if labels.is_empty() {
        return "(all)".to_owned();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("(none)")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Everything `latscope fleet` prints.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FleetReport {
    pub latscope_fleet: u32,
    pub dataset: String,
    pub group_by: Vec<String>,
    /// Committed captures read.
    pub captures: u64,
    pub groups: Vec<Group>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub comparison: Vec<FleetComparison>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trend: Vec<Trend>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub crossings: Vec<FleetCrossing>,
    pub warnings: Vec<String>,
}

type GroupKey = BTreeMap<String, Option<String>>;

fn key_of(c: &CaptureInfo, names: &[String]) -> GroupKey {
    names.iter().map(|n| (n.clone(), c.labels.get(n).cloned())).collect()
}

/// The pairs of `captures` for `analysis`, as one lazy frame. Files with the same label
/// names share a schema and are scanned together; different label sets are scanned apart
/// and concatenated on the columns every pairs file has.
fn scan(captures: &[&CaptureInfo], analysis: &str, columns: &[&str]) -> Result<LazyFrame, FleetError> {
    let mut by_schema: BTreeMap<Vec<&str>, Vec<PathBuf>> = BTreeMap::new();
    for c in captures {
        by_schema
            .entry(c.labels.keys().map(String::as_str).collect())
            .or_default()
            .push(c.pairs_file.clone());
    }
    let engine = |e: PolarsError| FleetError::Engine(format!("scanning pairs: {e}"));
    let mut frames = Vec::new();
    for files in by_schema.into_values() {
        let paths = files
            .iter()
            .map(|p| PlRefPath::try_from_path(p))
            .collect::<PolarsResult<Vec<_>>>()
            .map_err(engine)?;
        let args = ScanArgsParquet {
            hive_options: HiveOptions { enabled: Some(false), ..HiveOptions::default() },
            glob: false,
            ..ScanArgsParquet::default()
        };
        let lf = LazyFrame::scan_parquet_files(paths.into_iter().collect(), args).map_err(engine)?;
        frames.push(
            lf.filter(col(schema::COL_ANALYSIS).eq(lit(analysis)))
                .select(columns.iter().map(|c| col(*c)).collect::<Vec<_>>()),
        );
    }
    if frames.len() == 1 {
        return Ok(frames.remove(0));
    }
    concat(frames, UnionArgs::default()).map_err(engine)
}

/// Streams the `columns` of the pairs of `analysis` in `captures` to `each`, batch by batch:
/// the streaming engine runs on its own thread and hands over one batch at a time, so
/// memory holds a few batches, never the group.
fn stream_frames(
    captures: &[&CaptureInfo],
    analysis: &str,
    columns: &[&str],
    each: &mut dyn FnMut(&DataFrame) -> Result<(), FleetError>,
) -> Result<(), FleetError> {
    let engine = |e: PolarsError| FleetError::Engine(format!("scanning pairs: {e}"));
    let lf = scan(captures, analysis, columns)?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<DataFrame>(2);
    // The callback's `true` stops the query (the receiver is gone).
    let sink = lf
        .sink_batches(PlanCallback::new(move |df: DataFrame| Ok(tx.send(df).is_err())), true, None)
        .map_err(engine)?;
    std::thread::scope(|scope| {
        let query = scope.spawn(move || sink.collect_with_engine(Engine::Streaming).map(drop));
        let mut bad: Option<FleetError> = None;
        for df in rx {
            // After an error, drain so the query can end.
            if bad.is_none()
                && let Err(e) = each(&df)
            {
                bad = Some(e);
            }
        }
        let ran = query.join().map_err(|_| FleetError::Engine("the pairs scan panicked".into()))?;
        ran.map_err(engine)?;
        bad.map_or(Ok(()), Err)
    })
}

/// [`stream_frames`] of `latency_ns` alone, as slices of values.
fn stream_latencies(
    captures: &[&CaptureInfo],
    analysis: &str,
    each: &mut dyn FnMut(&[f64]),
) -> Result<(), FleetError> {
    stream_frames(captures, analysis, &[schema::COL_LATENCY], &mut |df| {
        let engine = |e: PolarsError| FleetError::Engine(format!("scanning pairs: {e}"));
        let ca = df.column(schema::COL_LATENCY).and_then(|c| c.f64().cloned()).map_err(engine)?;
        if ca.null_count() == 0 {
            for arr in ca.downcast_iter() {
                each(arr.values().as_slice());
            }
        } else {
            let vals: Vec<f64> = ca.iter().flatten().collect();
            each(&vals);
        }
        Ok(())
    })
}

/// Statistics and worst pairs of one analysis over `captures`.
struct Measured {
    count: u64,
    captures: u64,
    stats: StatsNs,
    worst: Vec<WorstPair>,
    cdf: Vec<(f64, f64)>,
}

fn measure(
    captures: &[&CaptureInfo],
    analysis: &str,
    worst_k: usize,
    cdf_points: usize,
    with_worst: bool,
) -> Result<Measured, FleetError> {
    // Captures that contributed pairs (an analysis that found nothing adds no rows).
    let with: Vec<&CaptureInfo> =
        captures.iter().copied().filter(|c| c.analyses.get(analysis).is_some_and(|n| *n > 0)).collect();
    if with.is_empty() {
        return Ok(Measured {
            count: 0,
            captures: 0,
            stats: StatsNs::default(),
            worst: Vec::new(),
            cdf: Vec::new(),
        });
    }
    let mut first = FirstPass::default();
    stream_latencies(&with, analysis, &mut |v| first.push(v))?;
    let count = first.count;
    let cdf = first.cdf(cdf_points);
    let changed = || FleetError::Engine(format!("the pairs of {analysis} changed while they were read"));
    let stats = select::finish(first, |each| stream_latencies(&with, analysis, each), changed)?;
    let worst = if with_worst && worst_k > 0 && count > 0 {
        worst_pairs(&with, analysis, worst_k)?
    } else {
        Vec::new()
    };
    Ok(Measured { count, captures: with.len() as u64, stats, worst, cdf })
}

/// A candidate for the worst pairs: what orders it, and the row's other columns.
struct Candidate {
    latency_ns: f64,
    capture: String,
    start_s: f64,
    end_s: f64,
    source: String,
    input: usize,
    key: String,
}

/// Longest first; ties by capture and time, so the output is reproducible.
fn worst_first(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    b.latency_ns
        .total_cmp(&a.latency_ns)
        .then_with(|| a.capture.cmp(&b.capture))
        .then_with(|| a.start_s.total_cmp(&b.start_s))
}

/// The `k` longest pairs, kept while the rows stream past (a sort of the whole group held
/// every row of it: 740 MB for 6.4 million pairs).
fn worst_pairs(captures: &[&CaptureInfo], analysis: &str, k: usize) -> Result<Vec<WorstPair>, FleetError> {
    let cols = [
        schema::COL_CAPTURE,
        schema::COL_SOURCE,
        schema::COL_INPUT,
        schema::COL_KEY,
        schema::COL_START,
        schema::COL_END,
        schema::COL_LATENCY,
    ];
    let mut best: Vec<Candidate> = Vec::new();
    stream_frames(captures, analysis, &cols, &mut |df| {
        let engine = |e: PolarsError| FleetError::Engine(format!("worst pairs: {e}"));
        let text = |name: &str| df.column(name).and_then(|c| c.str().cloned()).map_err(engine);
        let float = |name: &str| df.column(name).and_then(|c| c.f64().cloned()).map_err(engine);
        let (capture, source, key) =
            (text(schema::COL_CAPTURE)?, text(schema::COL_SOURCE)?, text(schema::COL_KEY)?);
        let (start, end, lat) =
            (float(schema::COL_START)?, float(schema::COL_END)?, float(schema::COL_LATENCY)?);
        let input = df.column(schema::COL_INPUT).and_then(|c| c.u32().cloned()).map_err(engine)?;
        // Only rows that could enter the k best are copied out of the batch.
        let floor = if best.len() >= k { best.last().map(|c| c.latency_ns) } else { None };
        for i in 0..df.height() {
            let Some(l) = lat.get(i) else { continue };
            if floor.is_some_and(|f| l.total_cmp(&f).is_lt()) {
                continue;
            }
            best.push(Candidate {
                latency_ns: l,
                capture: capture.get(i).unwrap_or_default().to_owned(),
                start_s: start.get(i).unwrap_or(f64::NAN),
                end_s: end.get(i).unwrap_or(f64::NAN),
                source: source.get(i).unwrap_or_default().to_owned(),
                input: input.get(i).unwrap_or(0) as usize,
                key: key.get(i).unwrap_or_default().to_owned(),
            });
            if best.len() >= 4 * k.max(16) {
                best.sort_by(worst_first);
                best.truncate(k);
            }
        }
        best.sort_by(worst_first);
        best.truncate(k);
        Ok(())
    })?;
    let by_id: BTreeMap<&str, &CaptureInfo> = captures.iter().map(|c| (c.capture.as_str(), *c)).collect();
    Ok(best
        .into_iter()
        .map(|c| WorstPair {
            labels: by_id.get(c.capture.as_str()).map(|ci| ci.labels.clone()).unwrap_or_default(),
            path: by_id
                .get(c.capture.as_str())
                .and_then(|ci| ci.paths.get(c.input))
                .cloned()
                .unwrap_or_else(|| c.source.clone()),
            capture: c.capture,
            source: c.source,
            key: c.key,
            start_s: c.start_s,
            end_s: c.end_s,
            latency_ns: c.latency_ns,
        })
        .collect())
}

fn parse_pair(text: &str, flag: &str) -> Result<(String, String), FleetError> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| FleetError::Usage(format!("{flag} {text:?}: expected LABEL=VALUE")))?;
    Ok((k.trim().to_owned(), v.to_owned()))
}

/// `--baseline kernel=6.1` as a label name and value.
pub fn parse_selector(text: &str, flag: &str) -> Result<(String, String), FleetError> {
    parse_pair(text, flag)
}

/// Groups of captures in a stable order (by label values, missing values last).
fn groups_of<'a>(captures: &'a [CaptureInfo], names: &[String]) -> Vec<(GroupKey, Vec<&'a CaptureInfo>)> {
    // Ordered by each value, a missing one (`true`) after every present one.
    type Order = Vec<(bool, String)>;
    let mut groups: BTreeMap<Order, (GroupKey, Vec<&CaptureInfo>)> = BTreeMap::new();
    for c in captures {
        let key = key_of(c, names);
        let order: Vec<(bool, String)> =
            key.values().map(|v| (v.is_none(), v.clone().unwrap_or_default())).collect();
        groups.entry(order).or_insert_with(|| (key, Vec::new())).1.push(c);
    }
    groups.into_values().collect()
}

fn analyses_of(captures: &[&CaptureInfo], only: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in captures {
        for a in c.analyses.keys() {
            if (only.is_empty() || only.contains(a)) && !names.contains(a) {
                names.push(a.clone());
            }
        }
    }
    names.sort();
    names
}

/// Aggregates the dataset at `dir`. Thresholds are checked per group; crossings are in the
/// report (the command turns them into exit code 3).
pub fn fleet(
    dataset: &Dataset,
    opts: &FleetOptions,
    thresholds: &[Threshold],
) -> Result<FleetReport, FleetError> {
    fleet_until(dataset, opts, thresholds, &|| false)
}

/// [`fleet`], giving up with [`FleetError::Cancelled`] between two scans once `stop` says so
/// (a viewer's Cancel).
pub fn fleet_until(
    dataset: &Dataset,
    opts: &FleetOptions,
    thresholds: &[Threshold],
    stop: &dyn Fn() -> bool,
) -> Result<FleetReport, FleetError> {
    let mut warnings = dataset.warnings.clone();
    if dataset.captures.is_empty() {
        return Err(FleetError::BadDataset {
            path: dataset.dir.clone(),
            message: "the dataset holds no complete capture; append some with `latscope report --label ... --dataset`"
                .into(),
        });
    }
    let known = dataset.label_names();
    for name in opts.group_by.iter().chain(opts.trend.iter()) {
        if !known.contains(name.as_str()) {
            return Err(FleetError::Usage(format!(
                "no capture has the label {name:?} (labels in the dataset: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                }
            )));
        }
        let without = dataset.captures.iter().filter(|c| !c.labels.contains_key(name)).count();
        if without > 0 {
            warnings.push(format!(
                "{without} of {} captures have no label {name:?}; they form the group {name}=(none)",
                dataset.captures.len()
            ));
        }
    }
    let distinct_sets: std::collections::BTreeSet<Vec<&String>> =
        dataset.captures.iter().map(|c| c.labels.keys().collect()).collect();
    if distinct_sets.len() > 1 {
        warnings.push(format!(
            "captures carry {} different sets of label names; a label a capture lacks reads as null",
            distinct_sets.len()
        ));
    }
    let all: Vec<&CaptureInfo> = dataset.captures.iter().collect();
    for name in &opts.analyses {
        if !all.iter().any(|c| c.analyses.contains_key(name)) {
            return Err(FleetError::Usage(format!(
                "no capture has the analysis {name:?} (analyses: {})",
                analyses_of(&all, &[]).join(", ")
            )));
        }
    }
    let mut groups = Vec::new();
    let mut comparison = Vec::new();
    let mut trend = Vec::new();
    let group_names: Vec<String> = opts.group_by.clone();
    for (key, members) in groups_of(&dataset.captures, &group_names) {
        for analysis in analyses_of(&members, &opts.analyses) {
            if stop() {
                return Err(FleetError::Cancelled);
            }
            let m = measure(&members, &analysis, opts.worst, opts.cdf_points, true)?;
            groups.push(Group {
                labels: key.clone(),
                analysis: analysis.clone(),
                captures: m.captures,
                count: m.count,
                stats_ns: m.stats,
                worst: m.worst,
                cdf: m.cdf,
            });
            if let (Some(base), Some(cmp)) = (&opts.baseline, &opts.compare) {
                let chosen = |sel: &(String, String)| -> Vec<&CaptureInfo> {
                    members.iter().copied().filter(|c| c.labels.get(&sel.0) == Some(&sel.1)).collect()
                };
                let side = |captures: &[&CaptureInfo]| -> Result<FleetSide, FleetError> {
                    let m = measure(captures, &analysis, 0, 0, false)?;
                    Ok(FleetSide { captures: m.captures, count: m.count, stats_ns: m.stats })
                };
                let (base_captures, cmp_captures) = (chosen(base), chosen(cmp));
                let (a, b) = (side(&base_captures)?, side(&cmp_captures)?);
                if a.count > 0 || b.count > 0 {
                    let inference = infer(&base_captures, &cmp_captures, &analysis, &opts.inference)?;
                    comparison.push(FleetComparison {
                        labels: key.clone(),
                        analysis: analysis.clone(),
                        delta_ns: latscope_analysis::report::figures(&a.stats_ns, &b.stats_ns, |x, y| {
                            Some(y - x)
                        }),
                        ratio: latscope_analysis::report::figures(&a.stats_ns, &b.stats_ns, |x, y| {
                            (x != 0.0).then(|| y / x)
                        }),
                        baseline: a,
                        compare: b,
                        inference,
                    });
                }
            }
            if let Some(label) = &opts.trend {
                trend.push(trend_of(&members, &analysis, label, key.clone(), opts)?);
            }
        }
    }
    if let (Some(base), Some(cmp)) = (&opts.baseline, &opts.compare) {
        for (sel, flag) in [(base, "--baseline"), (cmp, "--compare")] {
            if !dataset.captures.iter().any(|c| c.labels.get(&sel.0) == Some(&sel.1)) {
                warnings.push(format!("{flag} {}={}: no capture has this label value", sel.0, sel.1));
            }
        }
    }
    let crossings = gate(&groups, &comparison, thresholds)?;
    Ok(FleetReport {
        latscope_fleet: FLEET_VERSION,
        dataset: dataset.dir.display().to_string(),
        group_by: opts.group_by.clone(),
        captures: dataset.captures.len() as u64,
        groups,
        comparison,
        trend,
        crossings,
        warnings,
    })
}

fn trend_of(
    members: &[&CaptureInfo],
    analysis: &str,
    label: &str,
    key: GroupKey,
    opts: &FleetOptions,
) -> Result<Trend, FleetError> {
    // Values in order of their first append (captures are sorted by append time).
    let mut values: Vec<&str> = Vec::new();
    for c in members {
        if let Some(v) = c.labels.get(label)
            && !values.contains(&v.as_str())
        {
            values.push(v);
        }
    }
    let order = order_trend_values(&mut values);
    let mut points = Vec::new();
    let mut sides: Vec<Vec<&CaptureInfo>> = Vec::new();
    for v in values {
        let chosen: Vec<&CaptureInfo> =
            members.iter().copied().filter(|c| c.labels.get(label).map(String::as_str) == Some(v)).collect();
        let m = measure(&chosen, analysis, 0, 0, false)?;
        if m.count > 0 {
            points.push(TrendPoint {
                value: v.to_owned(),
                captures: m.captures,
                count: m.count,
                stats_ns: m.stats,
            });
            sides.push(chosen);
        }
    }
    // Each point against the previous one: p99's change, its interval and p-value.
    let mut steps = Vec::new();
    let mut loaded = sides.first().map(|s| load_side(s, analysis)).transpose()?;
    for i in 1..points.len() {
        let next = load_side(&sides[i], analysis)?;
        let prev = loaded.take().unwrap_or_default();
        let inf = infer_loaded(&prev, &next, analysis, &opts.inference);
        let (x, y) = (points[i - 1].stats_ns.p99, points[i].stats_ns.p99);
        steps.push(TrendStep {
            from: points[i - 1].value.clone(),
            value: points[i].value.clone(),
            change: x.zip(y).and_then(|(x, y)| (x != 0.0).then(|| y / x - 1.0)),
            ci95_change: inf.ci95_change.p99,
            ci95_ns: inf.ci95_ns.p99,
            p_value: inf.p_value.p99,
            p_adjusted: None,
            verdict: inf.verdict.p99,
            change_point: false,
        });
        loaded = Some(next);
    }
    // Holm over the steps that have a p-value: the chance of any false change point in this
    // trend stays below alpha.
    let tested: Vec<usize> = (0..steps.len()).filter(|&i| steps[i].p_value.is_some()).collect();
    let adjusted = inference::holm(&tested.iter().filter_map(|&i| steps[i].p_value).collect::<Vec<_>>());
    for (&i, &p) in tested.iter().zip(&adjusted) {
        let step = &mut steps[i];
        step.p_adjusted = Some(p);
        step.change_point = p < opts.trend_alpha
            && step.change.is_some_and(|c| c.abs() > opts.trend_threshold)
            && matches!(step.verdict, Verdict::Regressed | Verdict::Improved);
    }
    let change_points: Vec<TrendChange> = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.change_point)
        .filter_map(|(i, s)| {
            Some(TrendChange {
                value: s.value.clone(),
                p99_ns: points[i + 1].stats_ns.p99?,
                from_p99_ns: points[i].stats_ns.p99?,
                change: s.change?,
                ci95_change: s.ci95_change,
                p_value: s.p_value,
                p_adjusted: s.p_adjusted,
            })
        })
        .collect();
    Ok(Trend {
        labels: key,
        analysis: analysis.to_owned(),
        label: label.to_owned(),
        order,
        points,
        steps,
        alpha: opts.trend_alpha,
        first_change: change_points.first().cloned(),
        change_points,
    })
}

/// The pairs a side's inference holds at most: beyond, whole captures are left out.
pub const MAX_INFERENCE_PAIRS: u64 = 1 << 22;

/// A side's pairs for the inference: each capture's `(start_s, latency_ns)`, captures in
/// the order of their ids (content hashes, so the numbers do not depend on the order of
/// appends), and what was left out to stay within [`MAX_INFERENCE_PAIRS`].
#[derive(Debug, Default)]
struct LoadedSide {
    captures: Vec<Vec<(f64, f64)>>,
    left_out: Option<String>,
}

fn load_side(captures: &[&CaptureInfo], analysis: &str) -> Result<LoadedSide, FleetError> {
    let mut with: Vec<&CaptureInfo> =
        captures.iter().copied().filter(|c| c.analyses.get(analysis).is_some_and(|n| *n > 0)).collect();
    with.sort_by(|a, b| a.capture.cmp(&b.capture));
    let total: u64 = with.iter().map(|c| c.analyses.get(analysis).copied().unwrap_or(0)).sum();
    let mut kept = Vec::new();
    let mut held = 0u64;
    for c in &with {
        let n = c.analyses.get(analysis).copied().unwrap_or(0);
        if !kept.is_empty() && held + n > MAX_INFERENCE_PAIRS {
            break;
        }
        held += n;
        kept.push(*c);
    }
    let left_out = (kept.len() < with.len()).then(|| {
        format!(
            "a side holds {total} pairs in {} captures; its intervals use the first {} captures by id ({held} pairs, at most {MAX_INFERENCE_PAIRS})",
            with.len(),
            kept.len()
        )
    });
    let index: BTreeMap<&str, usize> =
        kept.iter().enumerate().map(|(i, c)| (c.capture.as_str(), i)).collect();
    let mut out = vec![Vec::new(); kept.len()];
    if !kept.is_empty() {
        stream_frames(
            &kept,
            analysis,
            &[schema::COL_CAPTURE, schema::COL_START, schema::COL_LATENCY],
            &mut |df| {
                let engine = |e: PolarsError| FleetError::Engine(format!("reading pairs: {e}"));
                let capture =
                    df.column(schema::COL_CAPTURE).and_then(|c| c.str().cloned()).map_err(engine)?;
                let start = df.column(schema::COL_START).and_then(|c| c.f64().cloned()).map_err(engine)?;
                let lat = df.column(schema::COL_LATENCY).and_then(|c| c.f64().cloned()).map_err(engine)?;
                for i in 0..df.height() {
                    let (Some(c), Some(t), Some(l)) = (capture.get(i), start.get(i), lat.get(i)) else {
                        continue;
                    };
                    if let Some(&k) = index.get(c) {
                        out[k].push((t, l));
                    }
                }
                Ok(())
            },
        )?;
    }
    Ok(LoadedSide { captures: out, left_out })
}

fn infer_loaded(a: &LoadedSide, b: &LoadedSide, analysis: &str, opts: &inference::Options) -> Inference {
    fn refs(s: &LoadedSide) -> Vec<&[(f64, f64)]> {
        s.captures.iter().map(Vec::as_slice).collect()
    }
    let mut inf = inference::compare(&refs(a), &refs(b), analysis, opts);
    let notes: Vec<String> =
        [inf.method.note.take(), a.left_out.clone(), b.left_out.clone()].into_iter().flatten().collect();
    inf.method.note = (!notes.is_empty()).then(|| notes.join("; "));
    inf
}

/// The inference of `compare` against `base` for `analysis`: every capture's pairs, read
/// from the dataset.
fn infer(
    base: &[&CaptureInfo],
    compare: &[&CaptureInfo],
    analysis: &str,
    opts: &inference::Options,
) -> Result<Inference, FleetError> {
    Ok(infer_loaded(&load_side(base, analysis)?, &load_side(compare, analysis)?, analysis, opts))
}

/// Puts a trend's values (given in order of first append) in time order when they say it
/// themselves: all numbers, or all ISO 8601 dates or times (`2026-12-01`,
/// `2026-12-01T03:00Z`, which sort as text). A nightly appended late (a backfill) then
/// still takes its place. Other values (commits) keep the order of first append.
fn order_trend_values(values: &mut [&str]) -> &'static str {
    let numbers: Option<Vec<f64>> =
        values.iter().map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite())).collect();
    if let Some(numbers) = numbers {
        let mut paired: Vec<(f64, &str)> = numbers.into_iter().zip(values.iter().copied()).collect();
        paired.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (slot, (_, v)) in values.iter_mut().zip(paired) {
            *slot = v;
        }
        return "value";
    }
    if values.iter().all(|v| is_iso_date_or_time(v)) {
        values.sort_unstable();
        return "value";
    }
    "appended"
}

/// `YYYY-MM-DD`, optionally followed by `T` or a space and a time of digits, `:`, `.`,
/// `Z`, `+` and `-`: text of this shape sorts in time order (within one UTC offset).
fn is_iso_date_or_time(v: &str) -> bool {
    let b = v.as_bytes();
    let date = b.len() >= 10
        && b[..10]
            .iter()
            .enumerate()
            .all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() });
    date && (b.len() == 10
        || (matches!(b[10], b'T' | b' ')
            && b[11..].iter().all(|c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b'Z' | b'+' | b'-'))))
}

fn gate(
    groups: &[Group],
    comparison: &[FleetComparison],
    thresholds: &[Threshold],
) -> Result<Vec<FleetCrossing>, FleetError> {
    let mut out = Vec::new();
    for t in thresholds {
        let matching: Vec<&Group> = groups.iter().filter(|g| g.analysis == t.analysis).collect();
        if matching.is_empty() {
            let mut names: Vec<&str> = groups.iter().map(|g| g.analysis.as_str()).collect();
            names.dedup();
            return Err(FleetError::Usage(format!(
                "--fail-if {:?}: no group has the analysis {:?} (analyses: {})",
                t.text,
                t.analysis,
                names.join(", ")
            )));
        }
        if t.needs_baseline() {
            let compared: Vec<&FleetComparison> =
                comparison.iter().filter(|c| c.analysis == t.analysis).collect();
            if compared.is_empty() {
                return Err(FleetError::Usage(format!(
                    "--fail-if {:?}: `regressed` compares a baseline with a candidate: give --baseline LABEL=A --compare LABEL=B{}",
                    t.text,
                    if comparison.is_empty() { "" } else { " (no group has both sides of this analysis)" }
                )));
            }
            for c in compared {
                if let Some(r) = t.regression_in(&c.inference, &c.baseline.stats_ns, &c.compare.stats_ns) {
                    out.push(FleetCrossing {
                        threshold: t.text.clone(),
                        labels: c.labels.clone(),
                        analysis: c.analysis.clone(),
                        value: r.change,
                        regression: Some(r),
                    });
                }
            }
            continue;
        }
        for g in matching {
            if let Some(value) = t.crossed_by(g.count, &g.stats_ns) {
                out.push(FleetCrossing {
                    threshold: t.text.clone(),
                    labels: g.labels.clone(),
                    analysis: g.analysis.clone(),
                    value,
                    regression: None,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trend_values_that_are_times_or_numbers_are_put_in_order_and_commits_are_not() {
        let mut nightlies = vec!["2026-12-02", "2026-11-30", "2026-12-01"];
        assert_eq!(order_trend_values(&mut nightlies), "value");
        assert_eq!(nightlies, ["2026-11-30", "2026-12-01", "2026-12-02"]);
        let mut stamps = vec!["2026-12-01T03:00:00Z", "2026-11-30T23:59:59Z"];
        assert_eq!(order_trend_values(&mut stamps), "value");
        assert_eq!(stamps, ["2026-11-30T23:59:59Z", "2026-12-01T03:00:00Z"]);
        // Numerically, not as text: 10 after 9.
        let mut builds = vec!["10", "9", "100"];
        assert_eq!(order_trend_values(&mut builds), "value");
        assert_eq!(builds, ["9", "10", "100"]);
        // Commits (one of them all digits) keep the order of first append.
        let mut commits = vec!["c2f1e0a", "1234567", "abc123"];
        assert_eq!(order_trend_values(&mut commits), "appended");
        assert_eq!(commits, ["c2f1e0a", "1234567", "abc123"]);
        let mut mixed = vec!["2026-12-01", "nightly"];
        assert_eq!(order_trend_values(&mut mixed), "appended");
        assert!(!is_iso_date_or_time("2026-1-01"));
        assert!(!is_iso_date_or_time("2026-12-01x"));
    }
}
