//! The analysis room: the rules the panel runs (presets and rule specs, checked as typed),
//! their results with what the panel draws of them (statistics, CDF, scatter samples, the
//! A/B comparison, the bands shaded on the timeline), computed on a worker by the engine
//! ([`latscope_engine::analyse`], as `latscope report` computes them), and the panel's plot
//! choices. The panel itself is `views::analysis_panel`.

use super::document::SourceId;
use super::prepare::Prepared;
use super::view::Band;
use latscope_analysis::outcome::{Outcome, Sample};
use latscope_analysis::report::{self, Comparison, ReportInput, ReportOptions};
use latscope_analysis::runner::Scope;
use latscope_analysis::stats::{self, StatsNs, StatsOptions, Summary};
use latscope_engine::registry::Registry;
use latscope_engine::{EngineError, analyse};
use latscope_model::{Placed, Placement, Ps, format_seconds};
use std::sync::Arc;

/// The rules the panel runs, and the one being typed.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleEditor {
    /// Rule specs or preset names, run in this order.
    pub specs: Vec<String>,
    /// The rule being typed; added when it parses.
    pub draft: String,
    /// Keep pairs that end at a failed decode in the statistics (`--include-errors`).
    pub include_errors: bool,
}

/// No rule at first: when files open, the presets whose events they hold run by
/// themselves ([`Which::Presets`]) and fill the list.
impl Default for RuleEditor {
    fn default() -> Self {
        Self { specs: Vec::new(), draft: String::new(), include_errors: false }
    }
}

/// What the draft means as the user types: `None` when empty, else the analysis name or
/// the parser's message (`column N: expected ...`). Every preset of the registry is a rule,
/// the decoders' (`sd-cmd-resp`) too.
pub fn validate(registry: &Registry, text: &str) -> Option<anyhow::Result<String>> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(registry.rule(text).map(|s| s.name().to_owned()).map_err(|e| match e {
        // The parser's own message: the text is the one being typed.
        EngineError::Rule { error, .. } => anyhow::Error::new(error),
        e => anyhow::Error::new(e),
    }))
}

/// What an analysis run runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Which {
    /// These rule specs or preset names, in order.
    Rules(Vec<String>),
    /// Every preset whose events the sources hold, as `latscope report` without
    /// `--preset` ([`runner::default_presets`]): what runs when files open.
    Presets,
}

/// What a run found: the outcomes, the errors of rules that did not run, and for
/// [`Which::Presets`] the presets chosen and what the others miss.
#[derive(Debug, Default)]
pub struct Ran {
    pub outcomes: Vec<Outcome>,
    pub errors: Vec<anyhow::Error>,
    /// The presets that ran (with [`Which::Presets`]).
    pub chosen: Option<Vec<String>>,
    /// Presets that cannot run: what is missing and how to record it.
    pub missing: Vec<String>,
}

/// Runs `which` with the engine, as `latscope report` runs it: each source alone, or
/// (`together`, once the sources are aligned) all of them on the common timeline
/// (`runner::Scope::of`). A spec that applies to no source, or does not parse, becomes a
/// message (with what to record when a preset lacks events); the others still run.
pub fn run_analyses(
    registry: &Registry,
    sources: &[Arc<Prepared>],
    placements: &[Placement],
    which: &Which,
    together: bool,
    options: analyse::Options,
) -> Ran {
    // The sources are borrowed where they are, each with its placement: nothing is copied.
    let placed = placed(sources, placements);
    let scope = Scope::of(together, &placed);
    let mut errors = Vec::new();
    let engine_which = match which {
        Which::Presets => analyse::Which::Defaults,
        Which::Rules(texts) => analyse::Which::Specs(
            texts.iter().filter_map(|t| registry.rule(t).map_err(|e| errors.push(e.into())).ok()).collect(),
        ),
    };
    let done = analyse::analyse(registry, &engine_which, &placed, scope, options);
    errors.extend(done.failures.into_iter().map(anyhow::Error::new));
    Ran { outcomes: done.outcomes, errors, chosen: done.chosen, missing: done.missing }
}

/// The sources with their placements.
fn placed<'a>(sources: &'a [Arc<Prepared>], placements: &[Placement]) -> Vec<Placed<'a>> {
    sources
        .iter()
        .enumerate()
        .map(|(i, p)| Placed::new(&p.source, placements.get(i).copied().unwrap_or_default()))
        .collect()
}

/// An outcome with what the panel draws, computed on the worker by the analysis crate's
/// statistics (the same numbers a report prints).
#[derive(Debug, Clone)]
pub struct AnalysisResult {
    pub outcome: Outcome,
    /// `None` when the statistics failed (the message is in `error`).
    pub summary: Option<Summary>,
    pub error: Option<String>,
    /// Sample indices, worst first (the panel links them to the timeline).
    pub worst: Vec<usize>,
    /// A chain's stages: name, count and their statistics, where the time goes.
    pub stages: Vec<(String, u64, StatsNs)>,
    /// The empirical CDF: (latency ns, fraction of samples at or below it), see [`cdf_points`].
    pub cdf: Vec<[f64; 2]>,
    /// The samples the latency-over-time scatter draws (all of them up to [`MAX_SCATTER`]).
    pub scatter: Vec<usize>,
    /// On input 0's result of an A/B pair (two sources, not aligned): the report's
    /// comparison with input 1's result of the same name.
    pub comparison: Option<Comparison>,
    /// A live run's result holds only a spread of its samples (with the worst), and the
    /// statistics of all: how many there are. `None` when it holds every sample.
    pub spread_of: Option<u64>,
}

/// Results with this many samples or more are freed on a thread of their own: one
/// allocation per sample (its key), tens of millions for a long live run, which the window
/// would otherwise free between two frames whenever new results replace them.
const FREE_ELSEWHERE_FROM: usize = 1 << 16;

impl Drop for AnalysisResult {
    fn drop(&mut self) {
        if self.outcome.samples.len() < FREE_ELSEWHERE_FROM {
            return;
        }
        let samples = std::mem::take(&mut self.outcome.samples);
        // Should no thread start, the closure and what it holds are freed here instead.
        let _ = std::thread::Builder::new().name("free results".into()).spawn(move || drop(samples));
    }
}

const WORST_LINKS: usize = 10;
/// Most points a CDF line keeps (evenly spaced ranks; the first and last always).
pub const MAX_CDF_POINTS: usize = 2000;
/// Most points a scatter draws: beyond this, evenly spaced samples plus the worst ones.
pub const MAX_SCATTER: usize = 20_000;

/// The empirical CDF of sorted latencies: one point per distinct value `x`, at the fraction
/// of samples `<= x` — so the first point is the minimum and the last the maximum at 1.0.
/// Long inputs keep at most about [`MAX_CDF_POINTS`] evenly spaced ranks (the last always).
pub fn cdf_points(sorted_ns: &[f64]) -> Vec<[f64; 2]> {
    let n = sorted_ns.len();
    // The last rank of each distinct value (ties are one step of the CDF).
    let ends: Vec<usize> = (0..n).filter(|&k| k + 1 == n || sorted_ns[k + 1] > sorted_ns[k]).collect();
    let step = ends.len().div_ceil(MAX_CDF_POINTS).max(1);
    let mut keep: Vec<usize> = ends.iter().copied().step_by(step).collect();
    if let Some(&last) = ends.last()
        && keep.last() != Some(&last)
    {
        keep.push(last);
    }
    keep.into_iter().map(|k| [sorted_ns[k], (k + 1) as f64 / n as f64]).collect()
}

/// Which samples the scatter draws: every one, or past [`MAX_SCATTER`] an even spread plus
/// the `worst` (outliers are what a user clicks on).
pub fn scatter_samples(samples: usize, worst: &[usize]) -> Vec<usize> {
    if samples <= MAX_SCATTER {
        return (0..samples).collect();
    }
    let step = samples.div_ceil(MAX_SCATTER - worst.len().min(MAX_SCATTER / 2));
    let mut v: Vec<usize> = (0..samples).step_by(step.max(1)).chain(worst.iter().copied()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// A scatter point: x = the sample's start in seconds from the trace start, y = latency ns.
pub fn scatter_point(outcome: &Outcome, sample: usize) -> Option<[f64; 2]> {
    let s = outcome.samples.get(sample)?;
    Some([s.start as f64 / 1e12, s.latency() as f64 / 1e3])
}

/// The samples whose latency lies in `[lo_ns, hi_ns]` (a histogram bar), by start.
pub fn samples_in_latency(outcome: &Outcome, lo_ns: f64, hi_ns: f64) -> Vec<usize> {
    (0..outcome.samples.len())
        .filter(|&i| {
            let ns = outcome.samples[i].latency() as f64 / 1e3;
            ns >= lo_ns && ns <= hi_ns
        })
        .collect()
}

/// The `k` samples of longest latency, longest first (the earlier start first among
/// equals, then the earlier sample): a selection, then a sort of those `k` only, since a
/// live run's panel summarises tens of millions of samples on every update.
fn worst_samples(samples: &[Sample], k: usize) -> Vec<usize> {
    let key = |i: usize| (std::cmp::Reverse(samples[i].latency()), samples[i].start, i);
    let mut worst: Vec<usize> = (0..samples.len()).collect();
    if worst.len() > k {
        worst.select_nth_unstable_by_key(k, |&i| key(i));
        worst.truncate(k);
    }
    worst.sort_unstable_by_key(|&i| key(i));
    worst
}

/// The samples' latencies in nanoseconds, ascending: sorted as integer picoseconds (several
/// times faster than a float sort) and then converted, which never reorders them.
fn sorted_ns(samples: &[Sample]) -> Vec<f64> {
    let mut ps: Vec<Ps> = samples.iter().map(Sample::latency).collect();
    ps.sort_unstable();
    ps.into_iter().map(|p| p as f64 / 1e3).collect()
}

pub fn summarize(outcome: Outcome) -> AnalysisResult {
    let opts = panel_stats_options();
    let (summary, error) = match stats::summarize(&outcome, &opts) {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let worst = worst_samples(&outcome.samples, WORST_LINKS);
    let stages = outcome
        .stages
        .iter()
        .map(|st| {
            let stats = stats::stats_of(&st.latencies()).unwrap_or_default();
            (st.name.clone(), st.samples.len() as u64, stats)
        })
        .collect();
    let cdf = cdf_points(&sorted_ns(&outcome.samples));
    let scatter = scatter_samples(outcome.samples.len(), &worst);
    AnalysisResult { outcome, summary, error, worst, stages, cdf, scatter, comparison: None, spread_of: None }
}

/// The result of a live analysis that kept its statistics as samples arrived
/// ([`latscope_analysis::live::Glanced`]): its outcome holds a spread of the samples and
/// the worst, which the scatter and the links show; its statistics and CDF are of all.
pub fn of_glanced(g: latscope_analysis::live::Glanced) -> AnalysisResult {
    let latscope_analysis::live::Glanced { outcome, summary, cdf } = g;
    let worst: Vec<usize> = summary
        .worst
        .iter()
        .take(WORST_LINKS)
        .filter_map(|w| latscope_analysis::live::index_of(&outcome.samples, w))
        .collect();
    let scatter = (0..outcome.samples.len()).collect();
    let spread_of = (summary.count > outcome.samples.len() as u64).then_some(summary.count);
    AnalysisResult {
        outcome,
        summary: Some(summary),
        error: None,
        worst,
        stages: Vec::new(),
        cdf,
        scatter,
        comparison: None,
        spread_of,
    }
}

/// The statistics the panel shows, of a whole outcome or kept live ([`of_glanced`]).
pub fn panel_stats_options() -> StatsOptions {
    StatsOptions { linear_buckets: 40, ..StatsOptions::default() }
}

impl AnalysisResult {
    /// How many samples the analysis found (a live result holds only some of them).
    pub fn count(&self) -> u64 {
        self.spread_of.unwrap_or(self.outcome.samples.len() as u64)
    }
}

/// Is `o` a polling-loop analysis (`poll:`)? Its samples are the loops.
fn is_polling(o: &Outcome) -> bool {
    o.notes.iter().any(|n| n.what == "iterations")
        && o.samples.iter().all(|s| s.key.starts_with("iterations="))
}

/// Most bands the timeline shades (each is walked every frame and carries its label).
pub const MAX_BANDS: usize = 100_000;

/// The timeline bands of the results: every detector window (stalls, long spans) and every
/// polling loop, over the source it came from (`to_common(input, t)`: that source and the
/// common time), the first [`MAX_BANDS`] of them.
pub fn bands(
    results: &[AnalysisResult],
    to_common: impl Fn(usize, Ps) -> Option<(SourceId, f64)>,
) -> Vec<Band> {
    let mut out = Vec::new();
    for r in results {
        let o = &r.outcome;
        // Labels are made only for the bands kept.
        let mut push = |start: Ps, end: Ps, color: egui::Color32, label: &dyn Fn() -> String| {
            if out.len() >= MAX_BANDS {
                return;
            }
            if let (Some((source, a)), Some((_, b))) = (to_common(o.source, start), to_common(o.source, end))
            {
                out.push(Band { source, start: a, end: b, color, label: label() });
            }
        };
        for w in &o.windows {
            let label = || {
                let (length, excess) = (format_seconds(w.end - w.start), format_seconds(w.excess));
                format!("{}: window {length} (excess {excess})", o.name)
            };
            push(w.start, w.end, super::theme::IRQ, &label);
        }
        if is_polling(o) {
            for s in &o.samples {
                let label = || format!("{}: polling loop {}, {}", o.name, format_seconds(s.latency()), s.key);
                push(s.start, s.end, super::theme::SOFTIRQ, &label);
            }
        }
    }
    out
}

/// Attaches the report's A/B comparison (two sources analysed apart) to input 0's results.
fn attach_comparisons(results: &mut [AnalysisResult], sources: &[Arc<Prepared>]) -> anyhow::Result<()> {
    if sources.len() != 2 {
        return Ok(());
    }
    let inputs: Vec<ReportInput<'_>> =
        sources.iter().map(|p| ReportInput { path: &p.source.name, source: &p.source }).collect();
    let outcomes: Vec<Outcome> = results.iter().map(|r| r.outcome.clone()).collect();
    let built = report::build(&inputs, &outcomes, &ReportOptions::default())?;
    for c in built.comparison {
        if let Some(r) = results.iter_mut().find(|r| r.outcome.source == 0 && r.outcome.name == c.analysis) {
            r.comparison = Some(c);
        }
    }
    Ok(())
}

/// Runs the analyses and their statistics: what the analysis worker does. Returns the
/// results, the errors, the presets chosen ([`Which::Presets`]) and the presets' missing
/// events.
pub fn analyse(
    registry: &Registry,
    sources: &[Arc<Prepared>],
    placements: &[Placement],
    which: &Which,
    together: bool,
    options: analyse::Options,
) -> (Vec<AnalysisResult>, Ran) {
    let mut ran = run_analyses(registry, sources, placements, which, together, options);
    let placed = placed(sources, placements);
    let together = Scope::of(together, &placed) == Scope::Together;
    let mut results: Vec<AnalysisResult> =
        std::mem::take(&mut ran.outcomes).into_iter().map(summarize).collect();
    if !together && let Err(e) = attach_comparisons(&mut results, sources) {
        ran.errors.push(e.context("A/B comparison"));
    }
    (results, ran)
}

/// Which plot each analysis shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlotKind {
    #[default]
    Histogram,
    Cdf,
    Scatter,
}

/// The panel's view choices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PanelView {
    pub plot: PlotKind,
    /// Log latency axis for the histogram (1-2-5 buckets) and the CDF.
    pub log_x: bool,
    /// Set while sources are aligned: what the alignment did (rules then run across them).
    pub aligned: Option<String>,
}

/// The analysis: the rules, their results and the panel's plot choices.
#[derive(Debug)]
pub struct AnalysisState {
    /// The rules the analysis panel runs.
    pub rules: RuleEditor,
    /// Shared, so an export's worker takes them without a copy on the UI thread.
    pub results: Arc<Vec<AnalysisResult>>,
    /// The sources the results were computed from: what an export reports on, and the
    /// documents' ids of them (a result's `outcome.source` indexes both).
    pub inputs: Vec<Arc<Prepared>>,
    pub input_ids: Vec<SourceId>,
    /// The placements `inputs` were analysed at (their alignment), in order.
    pub placements: Vec<Placement>,
    /// Which placement the results used, as each result says it: aligned (and how), or
    /// each source on its own clock.
    pub placement_used: String,
    /// The rule texts and preset names the results were run with (an export's command
    /// line repeats them; a custom rule is its whole text, not its name).
    pub ran_with: Vec<String>,
    /// The panel's plot choices.
    pub panel: PanelView,
    /// Presets that could not run: what they miss and how to record it.
    pub missing: Vec<String>,
    /// The rules are the workbench's choice (the presets the sources hold), not the
    /// user's: opening files chooses them again.
    pub chosen_by_files: bool,
    /// Sources joined since the presets were last chosen: choose them again once the
    /// loads are done.
    pub presets_due: bool,
}

impl Default for AnalysisState {
    fn default() -> Self {
        Self {
            rules: RuleEditor::default(),
            results: Arc::default(),
            inputs: Vec::new(),
            input_ids: Vec::new(),
            placements: Vec::new(),
            placement_used: String::new(),
            ran_with: Vec::new(),
            panel: PanelView::default(),
            missing: Vec::new(),
            chosen_by_files: true,
            presets_due: false,
        }
    }
}

impl AnalysisState {
    /// Forgets the results (the sources they describe changed or are gone).
    pub fn clear(&mut self) {
        self.results = Arc::default();
        self.inputs.clear();
        self.input_ids.clear();
        self.placements.clear();
        self.missing.clear();
        if self.chosen_by_files {
            self.rules.specs.clear();
        }
    }

    /// The document's id of the source result input `input` was.
    pub fn source_of(&self, input: usize) -> Option<SourceId> {
        self.input_ids.get(input).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The selection gives the full sort's first ten (ties by start, then by order), and
    /// the integer sort the float sort's order, on samples with many equal latencies and
    /// starts.
    #[test]
    fn worst_and_sorted_latencies_equal_a_full_sort() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        for n in [0usize, 1, 9, 10, 11, 500, 20_000] {
            let samples: Vec<Sample> = (0..n)
                .map(|_| {
                    let start = next(50) as Ps * 1000;
                    Sample::new(start, start + next(40) as Ps * 1_000_000, "")
                })
                .collect();
            let mut full: Vec<usize> = (0..n).collect();
            full.sort_by_key(|&i| (std::cmp::Reverse(samples[i].latency()), samples[i].start));
            full.truncate(WORST_LINKS);
            assert_eq!(worst_samples(&samples, WORST_LINKS), full, "{n} samples");
            let mut floats: Vec<f64> = samples.iter().map(|s| s.latency() as f64 / 1e3).collect();
            floats.sort_by(f64::total_cmp);
            assert_eq!(sorted_ns(&samples), floats, "{n} samples");
        }
    }
}
