//! Analyses kept up to date over a source that grows while it is analysed: the
//! simulator's live trace, a recording. [`LiveAnalyses::update`] gives, for each spec, what
//! [`runner::run_spec`] gives on the source as it is now, but a pair rule over one source,
//! a digital channel's pulses (`pulse:CH`) and its phases longer than a duration
//! (`long:CH over D`), and the `block` and `wakeup` presets, read only what arrived since
//! the last update: their open starts wait in the pairer and their samples grow in place.
//! So does a stall detector over events or a digital channel (`stall:SEL factor F`): its
//! gaps are kept by length, and its windows start again only when the median moves past
//! a gap read before; and polling runs (`poll:SEL within D`), each handed on once it has
//! ended, the run still going counted apart. [`LiveAnalyses::stand`] gives the samples
//! each update added and the statistics of all, without copying or sorting the earlier
//! ones; [`LiveAnalyses::glance`] the statistics a panel shows, kept as samples arrive,
//! with a spread of the samples. The other presets (`cmd-irq`, `chain`) and rules whose
//! edges need the whole track (an analog threshold) run whole at each update.
//!
//! [`AcrossStanding`] keeps a pair rule across several growing sources (a kernel recording
//! and the logic analyzer beside it) the same way.
//!
//! The source given to each update must extend the one before: everything recorded
//! before some time T, and then only what is at or after T appended (the accumulator's
//! snapshots, the recorder's watermark). A source that does not ([`LiveAnalyses::reset`],
//! or a shorter one) starts the pairing again from its beginning.

use crate::detect::{phase_rule, selector_in};
use crate::endpoint::Endpoint;
use crate::measure::{AnalysisError, GrowingOutcome, missing_error};
use crate::outcome::{AnalysisKind, Note, Outcome, Sample, Window};
use crate::pairing::{LiveAcrossPairer, LivePairer, Pair, PairResult, PairRule, Policy, render_key};
use crate::presets::{self, BlockPairer, WakeupPairer, block_names, cmd_irq_rule, wakeup_start};
use crate::runner::{self, check_names};
use crate::running_stats::RunningSummary;
use crate::spec::{CmdIrq, IrqSel, Preset, Spec};
use crate::stats::{RunningLatencies, StatsOptions, Summary, bucket_of};
use latscope_model::{Placed, Ps, Source, kernel};
use std::collections::BTreeMap;

/// The repeated-ends note of a pair rule's outcome, as [`runner::run_pair_rule`] words it.
pub(crate) const REPEAT_NOTE: &str = "end with no new start after its key closed a pair";

/// Specs analysed over a growing source (module doc).
#[derive(Debug)]
pub struct LiveAnalyses {
    items: Vec<Item>,
}

#[derive(Debug)]
struct Item {
    spec: Spec,
    /// Whether the outcome keeps its samples ([`LiveAnalyses::for_standing`] keeps none).
    keeps_samples: bool,
    /// The running state of a spec that grows; `None` for one that runs whole.
    grow: Option<(Grower, GrowingOutcome)>,
    /// The running state is new: the next update reads the source from its beginning.
    fresh: bool,
    /// The statistics of a spec that grows, kept as its samples arrive once
    /// [`LiveAnalyses::glance`] asked for them.
    summary: Option<RunningSummary>,
}

/// What pairs a spec that grows.
#[derive(Debug)]
enum Grower {
    Rule(LivePairer),
    /// A digital channel's pulses: its phase rule, rise -> next fall (`pulse:CH`).
    Pulse(LivePairer),
    /// A digital channel's phases longer than a duration (`long:CH over D`): its pulses,
    /// those longer kept.
    Long(LivePairer, Ps),
    /// Gaps longer than a factor times the median gap (`stall:SELECTOR factor F`).
    Stall(Box<StallGrower>),
    /// Polling loops (`poll:SELECTOR within D [min N]`).
    Poll(Box<PollGrower>),
    Block(BlockPairer),
    Wakeup(WakeupPairer),
}

impl Grower {
    /// The state of `spec` before anything is read, when it grows.
    fn of(spec: &Spec, keeps_samples: bool) -> Option<(Grower, GrowingOutcome)> {
        let grower = match spec {
            Spec::Pair(rule) => Grower::Rule(LivePairer::new(rule.clone())),
            // Through a threshold (`@LEVEL`), the edges are a crossing's: run whole.
            Spec::Pulse { name, channel, high, level: None } => {
                Grower::Pulse(LivePairer::new(phase_rule(name, channel, *high, None)))
            }
            Spec::Long { name, track, high, level: None, over } => {
                Grower::Long(LivePairer::new(phase_rule(name, track, *high, None)), *over)
            }
            Spec::Stall { name, selector, factor } => {
                Grower::Stall(Box::new(StallGrower::new(name, selector.clone(), *factor)))
            }
            Spec::Poll { name, selector, spacing, min_iterations } => {
                Grower::Poll(Box::new(PollGrower::new(name, selector.clone(), *spacing, *min_iterations)))
            }
            Spec::Preset(Preset::Block) => Grower::Block(BlockPairer::new()),
            Spec::Preset(Preset::Wakeup) => Grower::Wakeup(WakeupPairer::new(false)),
            _ => return None,
        };
        let kind = match grower {
            Grower::Pulse(_) | Grower::Poll(_) => AnalysisKind::Pulse,
            Grower::Long(..) | Grower::Stall(_) => AnalysisKind::Stall,
            _ => AnalysisKind::Pair,
        };
        Some((grower, Self::no_samples_yet(spec.name(), kind, keeps_samples)))
    }

    fn no_samples_yet(name: &str, kind: AnalysisKind, keeps_samples: bool) -> GrowingOutcome {
        let grown = GrowingOutcome::new(name, kind, 0);
        if keeps_samples { grown } else { grown.without_samples() }
    }

    /// A sample of the outcome whose end may still move: a polling run still going.
    fn still_open(&self) -> Option<Sample> {
        match self {
            Grower::Poll(pg) => pg.still_open(),
            _ => None,
        }
    }

    fn rule(&self) -> PairRule {
        match self {
            Grower::Rule(p) | Grower::Pulse(p) | Grower::Long(p, _) => p.rule().clone(),
            Grower::Block(p) => p.rule().clone(),
            Grower::Wakeup(p) => p.rule(),
            Grower::Stall(st) => st.rule.clone(),
            Grower::Poll(pg) => pg.rule.clone(),
        }
    }

    /// The outcome of the pairs so far in `grown`, with the counts and notes the whole
    /// runner gives; holding `samples` when given, else a copy of all of them.
    fn outcome(&self, grown: &GrowingOutcome, src: &Source, samples: Option<Vec<Sample>>) -> Outcome {
        let samples = samples.unwrap_or_else(|| grown.samples().to_vec());
        match self {
            Grower::Rule(p) => grown.outcome(samples, &p.counts(), src, REPEAT_NOTE),
            // The pulse detector notes no repeated ends.
            Grower::Pulse(p) => grown.outcome(samples, &p.counts(), src, ""),
            // The detector counts no unmatched edges and notes nothing.
            Grower::Long(p, over) => windows_outcome(&p.rule().name, grown, samples, *over, Vec::new()),
            Grower::Stall(st) => {
                let notes = vec![
                    Note {
                        what: format!("median period{}", Note::PS_SUFFIX),
                        count: st.median.max(0) as u64,
                    },
                    Note { what: "occurrences".into(), count: st.times },
                ];
                windows_outcome(&st.rule.name, grown, samples, st.median, notes)
            }
            // The run still going is the whole detector's last sample.
            Grower::Poll(pg) => {
                let mut o = Outcome::new(&pg.rule.name, AnalysisKind::Pulse, 0);
                let open = pg.open_run().map_or(0, |(.., n)| n);
                o.notes.push(Note { what: "iterations".into(), count: pg.iterations + open });
                o.samples = samples;
                o.samples.extend(pg.still_open());
                o
            }
            Grower::Block(p) => {
                let counts = p.counts();
                let mut o =
                    grown.outcome(samples, &PairResult { repeated_end: 0, ..counts.clone() }, src, "");
                p.add_notes(&mut o, &counts);
                o
            }
            Grower::Wakeup(p) => {
                let mut o = grown.outcome(samples, &p.counts_with(Vec::new()), src, REPEAT_NOTE);
                p.add_notes(&mut o);
                o
            }
        }
    }
}

/// A detector's outcome whose samples are windows (`long`, `stall`): holding `samples`,
/// with each of `grown`'s samples a window too, however few samples a view holds, its
/// excess what it lasts past `allowed`.
fn windows_outcome(
    name: &str,
    grown: &GrowingOutcome,
    samples: Vec<Sample>,
    allowed: Ps,
    notes: Vec<Note>,
) -> Outcome {
    let mut o = Outcome::new(name, AnalysisKind::Stall, 0);
    o.notes = notes;
    o.windows = grown
        .samples()
        .iter()
        .map(|s| Window { start: s.start, end: s.end, excess: s.latency() - allowed })
        .collect();
    o.samples = samples;
    o
}

/// A stall detector over a growing source (`stall:SELECTOR factor F`, as
/// [`crate::detect`] runs it whole): the gaps between consecutive occurrences, their
/// lengths counted for the median (the upper median, a rank of
/// [`RunningLatencies`]) and the gaps kept in buckets by length (16 bytes a gap, where a
/// map by length costs a node entry and a vector for each length, and kernel clocks make
/// most lengths differ), so that the windows,
/// the gaps longer than F times the median, are found without reading every gap again.
/// While the median moves past no gap read before, the windows only gain the new gaps
/// above it; otherwise they are all given again.
#[derive(Debug)]
struct StallGrower {
    /// The detector's name, the selector at both ends: what the samples' keys render by.
    rule: PairRule,
    reader: Occurrences,
    factor: f64,
    last: Option<Ps>,
    /// Occurrences read.
    times: u64,
    lengths: RunningLatencies,
    /// The gaps, (length, start), in the buckets of [`crate::stats::bucket_of`] their
    /// lengths fall in, which ascend with the length.
    by_length: Vec<Vec<(Ps, Ps)>>,
    median: Ps,
}

impl StallGrower {
    fn new(name: &str, selector: Endpoint, factor: f64) -> Self {
        Self {
            rule: PairRule::new(name, selector.clone(), selector.clone(), Policy::Next),
            reader: Occurrences::new(selector),
            factor,
            last: None,
            times: 0,
            lengths: RunningLatencies::default(),
            by_length: Vec::new(),
            median: 0,
        }
    }

    /// Whether a gap of `length` is a window under `median`, as the whole detector says.
    fn is_window(&self, length: Ps, median: Ps) -> bool {
        length as f64 > self.factor * median as f64
    }

    /// Reads the occurrences of `at` new in `src`: the windows to add, as pairs in start
    /// order, and whether they are all the windows (the first read, or the median moved
    /// past gaps read before) rather than the new ones.
    fn advance(&mut self, src: &Source, at: Endpoint) -> Result<(Vec<Pair>, bool), AnalysisError> {
        let first = self.reader.resolved.is_none();
        let found = self.reader.read(&self.rule.name, src, at)?;
        let mut new = Vec::with_capacity(found.len());
        for t in found {
            if let Some(prev) = self.last.replace(t) {
                new.push((prev, t - prev));
            }
            self.times += 1;
        }
        let was = self.median;
        new.iter().for_each(|&(_, length)| self.lengths.push(length));
        self.median = self.lengths.nth(self.lengths.count() / 2).unwrap_or(0);
        // The bucket of the least length that can be a window under `median`.
        let first_bucket = |median: Ps| -> usize {
            let limit = (self.factor * median as f64).floor();
            bucket_of(if limit.is_nan() { Ps::MIN } else { limit as Ps })
        };
        // Gaps read before whose being a window the new median changes lie in the buckets
        // between the two limits.
        let (a, b) = (first_bucket(was), first_bucket(self.median));
        let moved = was != self.median
            && self
                .by_length
                .iter()
                .take(a.max(b) + 1)
                .skip(a.min(b))
                .flatten()
                .any(|&(length, _)| self.is_window(length, was) != self.is_window(length, self.median));
        for &(start, length) in &new {
            let b = bucket_of(length);
            if b >= self.by_length.len() {
                self.by_length.resize_with(b + 1, Vec::new);
            }
            self.by_length[b].push((length, start));
        }
        let pair = |start: Ps, length: Ps| Pair {
            start,
            end: start + length,
            key: Vec::new(),
            flagged: false,
            start_event: None,
            end_event: None,
        };
        if first || moved {
            let mut all: Vec<Pair> = self
                .by_length
                .iter()
                .skip(first_bucket(self.median))
                .flatten()
                .filter(|&&(length, _)| self.is_window(length, self.median))
                .map(|&(length, start)| pair(start, length))
                .collect();
            all.sort_by_key(|p| (p.start, p.end));
            return Ok((all, true));
        }
        let added = new.into_iter().filter(|&(_, length)| self.is_window(length, self.median));
        Ok((added.map(|(s, length)| pair(s, length)).collect(), false))
    }
}

/// A detector's selector read over a growing source: what it resolved to when last read,
/// and how far: events, and the track's changes.
#[derive(Debug)]
struct Occurrences {
    selector: Endpoint,
    resolved: Option<Endpoint>,
    events: usize,
    changes: usize,
}

impl Occurrences {
    fn new(selector: Endpoint) -> Self {
        Self { selector, resolved: None, events: 0, changes: 0 }
    }

    /// Whether `src` does not extend what was read (the selector `at` resolved to there).
    fn behind(&self, src: &Source, at: &Endpoint) -> bool {
        let changes = edges_track(src, at).map(|d| d.transitions());
        self.resolved.as_ref().is_some_and(|r| r != at)
            || src.events.len() < self.events
            || changes.is_some_and(|c| c < self.changes)
    }

    /// What the selector resolves to in `src`, if it can be read growing: the whole
    /// detector says what a source lacking it gives, and an analog track's edges come from
    /// a threshold over the whole track.
    fn grows_over(&self, src: &Source) -> Option<Endpoint> {
        let at = selector_in(&self.selector, src)?;
        LivePairer::applies(&PairRule::new("", at.clone(), at.clone(), Policy::Next), src).then_some(at)
    }

    /// The times of the occurrences of `at` new in `src`, in time order.
    fn read(&mut self, name: &str, src: &Source, at: Endpoint) -> Result<Vec<Ps>, AnalysisError> {
        let (found, changes) = presets::occurrences_from(name, &at, src, self.events, self.changes)?;
        self.resolved = Some(at);
        self.events = src.events.len();
        self.changes = changes;
        Ok(found.into_iter().map(|(t, ..)| t).collect())
    }
}

/// The digital track whose edges `at` selects, if it selects a track's edges.
fn edges_track<'a>(src: &'a Source, at: &Endpoint) -> Option<&'a latscope_model::DigitalTrack> {
    match (at, crate::endpoint::track_named(src, at.target())) {
        (Endpoint::Event { .. }, _) => None,
        (_, Ok(Some(crate::endpoint::TrackRef::Digital(_, d)))) => Some(d),
        _ => None,
    }
}

/// The time before which `src` holds every occurrence of `at` it will hold: its last
/// event's, or the end of the track whose edges `at` selects. A growing source gains only
/// what is at or after it.
fn reach_of(src: &Source, at: &Endpoint) -> Option<Ps> {
    match at {
        Endpoint::Event { .. } => src.events.ts.last().copied(),
        _ => edges_track(src, at).map(|d| d.end),
    }
}

/// Polling loops over a growing source (`poll:SELECTOR within D [min N]`, as
/// [`crate::detect`] runs it whole): maximal runs of occurrences each within D of the
/// previous. A run ends when an occurrence comes more than D after its last, or when the
/// source reaches past that; an ended run of N or more is a sample, handed on once. The
/// run still going is a sample of the whole detector's too once it holds N, but its end
/// moves: it is in the outcome and the statistics, never in what an update adds, until
/// it ends.
#[derive(Debug)]
struct PollGrower {
    rule: PairRule,
    reader: Occurrences,
    spacing: Ps,
    min: u64,
    /// The run going on: its first and last occurrence, and how many it holds.
    open: Option<(Ps, Ps, u64)>,
    /// The last occurrence of the run that ended last: an occurrence within D of it means
    /// the source did not grow only at its end, and is read again from its beginning.
    ended_at: Option<Ps>,
    /// The iterations of the ended runs of N or more.
    iterations: u64,
}

impl PollGrower {
    fn new(name: &str, selector: Endpoint, spacing: Ps, min: u32) -> Self {
        Self {
            rule: PairRule::new(name, selector.clone(), selector.clone(), Policy::Next),
            reader: Occurrences::new(selector),
            spacing,
            min: u64::from(min),
            open: None,
            ended_at: None,
            iterations: 0,
        }
    }

    fn sample(first: Ps, last: Ps, n: u64) -> Sample {
        Sample::new(first, last, format!("iterations={n}"))
    }

    /// The run still going, if it holds N or more: first, last, count.
    fn open_run(&self) -> Option<(Ps, Ps, u64)> {
        self.open.filter(|&(.., n)| n >= self.min)
    }

    /// The run still going, if it holds N or more: a sample whose end may still move.
    fn still_open(&self) -> Option<Sample> {
        self.open_run().map(|(first, last, n)| Self::sample(first, last, n))
    }

    /// Reads the occurrences of `at` new in `src`: the runs of N or more that ended, in
    /// start order. `None` when an occurrence joins a run that had ended (the source grew
    /// before its end): the caller reads it again from its beginning.
    fn advance(&mut self, src: &Source, at: Endpoint) -> Result<Option<Vec<Sample>>, AnalysisError> {
        let reach = reach_of(src, &at);
        let found = self.reader.read(&self.rule.name, src, at)?;
        let mut ended = Vec::new();
        for t in found {
            if self.ended_at.is_some_and(|e| t - e <= self.spacing) && self.open.is_none() {
                return Ok(None);
            }
            match &mut self.open {
                Some((_, last, n)) if t - *last <= self.spacing => {
                    *last = t;
                    *n += 1;
                }
                _ => {
                    self.end_run(&mut ended);
                    self.open = Some((t, t, 1));
                }
            }
        }
        if self.open.is_some_and(|(_, last, _)| reach.is_some_and(|r| r - last > self.spacing)) {
            self.end_run(&mut ended);
        }
        Ok(Some(ended))
    }

    fn end_run(&mut self, ended: &mut Vec<Sample>) {
        let Some((first, last, n)) = self.open.take() else { return };
        self.ended_at = Some(last);
        if n >= self.min {
            self.iterations += n;
            ended.push(Self::sample(first, last, n));
        }
    }
}

/// One analysis after an update, as a live line and a trigger read it: the samples the
/// update added and the statistics of all of them, without copying or sorting the earlier
/// samples of an analysis that grows.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub name: String,
    /// The samples this update added, in the order they closed; all of them when `anew`.
    pub added: Vec<Sample>,
    /// Samples whose end may still move (a polling run still going): in the statistics,
    /// not in `added` until they end. When the recording ends, they are final.
    pub open: Vec<Sample>,
    /// The samples start again here (the first update, a reset, an analysis that runs
    /// whole): earlier updates' samples are void.
    pub anew: bool,
    pub count: u64,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    pub max_ns: Option<f64>,
}

impl Standing {
    /// The standing of a whole outcome (a spec that runs whole, a report's).
    pub fn of_outcome(o: Outcome) -> Standing {
        let mut running = RunningLatencies::default();
        for s in &o.samples {
            running.push(s.latency());
        }
        Standing::of(o.name, o.samples, true, &mut running)
    }

    fn of(name: String, added: Vec<Sample>, anew: bool, running: &mut RunningLatencies) -> Standing {
        Standing {
            name,
            added,
            open: Vec::new(),
            anew,
            count: running.count(),
            p50_ns: running.quantile_ns(0.5),
            p99_ns: running.quantile_ns(0.99),
            max_ns: running.max_ns(),
        }
    }
}

impl LiveAnalyses {
    pub fn new(specs: Vec<Spec>) -> Self {
        Self::with(specs, true)
    }

    /// Analyses that only [`Self::stand`]: the pair rules keep no samples, only their
    /// latencies (an [`Self::update`] then gives outcomes without samples). A recording's
    /// live lines and flight recorder read each sample once, as a standing hands it on;
    /// kept, the samples were the most of a live source's memory and of what a ring's
    /// handover frees.
    pub fn for_standing(specs: Vec<Spec>) -> Self {
        Self::with(specs, false)
    }

    fn with(specs: Vec<Spec>, keeps_samples: bool) -> Self {
        let items = specs
            .into_iter()
            .map(|spec| Item {
                grow: Grower::of(&spec, keeps_samples),
                spec,
                keeps_samples,
                fresh: true,
                summary: None,
            })
            .collect();
        Self { items }
    }

    pub fn specs(&self) -> impl Iterator<Item = &Spec> {
        self.items.iter().map(|i| &i.spec)
    }

    /// Which specs update from what is new, by name.
    pub fn incremental(&self) -> Vec<(&str, bool)> {
        self.items.iter().map(|i| (i.spec.name(), i.grow.is_some())).collect()
    }

    /// Forgets what was read: the next update reads its source from the beginning (the
    /// live source was reordered, or restarted).
    pub fn reset(&mut self) {
        for item in &mut self.items {
            item.grow = Grower::of(&item.spec, item.keeps_samples);
            item.fresh = true;
        }
    }

    /// Each spec's outcomes over `src`, as [`runner::run_spec`] gives them on it alone.
    /// A pair rule's outcome is a copy of all its samples.
    pub fn update(&mut self, src: &Source) -> Vec<Result<Vec<Outcome>, AnalysisError>> {
        self.items
            .iter_mut()
            .map(|item| match item.advance(src)? {
                Advanced::Whole(outcomes) => Ok(outcomes),
                Advanced::Grown(..) => Ok(item.grown_outcome(src).into_iter().collect()),
            })
            .collect()
    }

    /// Reads what is new in `src` without answering: a successor's analyses, reading
    /// along until they take over. Specs that run whole are left until they answer, since
    /// each answer reads everything anyway. The samples read along are not handed on: the
    /// first answer after following gives those its own update added, as if it had
    /// answered all along. The source it replaces gave the earlier ones (the successor
    /// reads the same events since it started, so its pairs are among those), and copying
    /// a ring's worth of samples made the tick of a handover seconds long.
    pub fn follow(&mut self, src: &Source) {
        for item in self.items.iter_mut().filter(|i| i.grow.is_some()) {
            // An error here (an endpoint not recorded yet) is the answer's, when asked.
            let _ = item.advance(src);
        }
    }

    /// Each spec's answer over `src` for a view of statistics: a spec that grows gives
    /// its statistics under `opts` and `cdf_points` points of its CDF, kept as samples
    /// arrive, and a spread of about `keep` samples with the worst; its cost is what is
    /// new, its buckets and keys, and the `keep` samples copied, not its history. The
    /// others run whole as [`Self::update`] runs them. Only for analyses made by
    /// [`Self::new`]: the others keep no samples to spread, nor to count again from when
    /// the pairing starts anew or keys are renamed.
    pub fn glance(
        &mut self,
        src: &Source,
        opts: StatsOptions,
        keep: usize,
        cdf_points: usize,
    ) -> Vec<Result<Glance, AnalysisError>> {
        self.items
            .iter_mut()
            .map(|item| {
                if item.grow.is_some() && item.summary.as_ref().is_none_or(|s| s.options() != opts) {
                    let samples = item.grow.as_ref().map_or(&[][..], |(_, grown)| grown.samples());
                    item.summary = Some(RunningSummary::of(samples, opts));
                }
                match item.advance(src)? {
                    Advanced::Whole(outcomes) => Ok(Glance::Whole(outcomes)),
                    Advanced::Grown(..) => {
                        let (Some((grower, grown)), Some(summary)) = (&item.grow, &mut item.summary) else {
                            return Ok(Glance::Whole(Vec::new()));
                        };
                        let shown = spread(grown.samples(), &summary.worst_samples(), keep);
                        let mut outcome = grower.outcome(grown, src, Some(shown));
                        // A sample whose end may still move is counted on a copy: its cost
                        // is the summary's buckets and keys, while a polling run goes on.
                        let mut with_open;
                        let summary = match grower.still_open() {
                            Some(open) => {
                                with_open = summary.clone();
                                with_open.push(&open);
                                &mut with_open
                            }
                            None => summary,
                        };
                        let summary_of = summary.summary(|k| outcome.raw_key(k).to_owned());
                        let cdf = summary.cdf_points(cdf_points);
                        outcome.samples.shrink_to_fit();
                        Ok(Glance::Grown(Box::new(Glanced { outcome, summary: summary_of, cdf })))
                    }
                }
            })
            .collect()
    }

    /// Each spec's standing over `src`: its outcomes' counts and statistics as
    /// [`runner::run_spec`] and [`crate::stats::summarize`] give them on `src` alone, and
    /// the samples added since the last update. A pair rule's costs what is new.
    pub fn stand(&mut self, src: &Source) -> Vec<Result<Vec<Standing>, AnalysisError>> {
        self.items
            .iter_mut()
            .map(|item| match item.advance(src)? {
                Advanced::Whole(outcomes) => Ok(outcomes.into_iter().map(Standing::of_outcome).collect()),
                Advanced::Grown(added, anew) => {
                    let Some((grower, grown)) = &mut item.grow else { return Ok(Vec::new()) };
                    let open = grower.still_open();
                    let running = grown.running();
                    // Counted while asked about: its end may still move.
                    open.iter().for_each(|s| running.push(s.latency()));
                    let mut standing = Standing::of(item.spec.name().to_owned(), added, anew, running);
                    if let Some(s) = &open {
                        running.remove(s.latency());
                    }
                    standing.open = open.into_iter().collect();
                    Ok(vec![standing])
                }
            })
            .collect()
    }
}

/// A pair rule over several growing sources on their common timeline (a kernel
/// recording and the logic analyzer beside it, [`LiveAcrossPairer`]), kept up to date as
/// [`LiveAnalyses::stand`] keeps one over a single source: each call costs what is new.
/// Sample times are those of the first source holding the start, as
/// [`runner::run_pair_rule`] gives them across sources.
#[derive(Debug)]
pub struct AcrossStanding {
    rule: PairRule,
    pairer: LiveAcrossPairer,
    running: RunningLatencies,
    /// The next standing starts the samples again.
    fresh: bool,
}

impl AcrossStanding {
    pub fn new(rule: PairRule) -> Self {
        Self {
            pairer: LiveAcrossPairer::new(rule.clone()),
            rule,
            running: RunningLatencies::default(),
            fresh: true,
        }
    }

    /// The rule it pairs.
    pub fn rule(&self) -> &PairRule {
        &self.rule
    }

    /// Forgets what was read: the next standing reads its sources from their beginnings.
    pub fn reset(&mut self) {
        *self = Self::new(self.rule.clone());
    }

    /// The standing over `sources`, of the pairs whose occurrences lie before `complete`
    /// (a common time before which every source holds all it will hold); sources that do
    /// not extend the last call's start the pairing again.
    pub fn stand(&mut self, sources: &[Placed<'_>], complete: Ps) -> Result<Standing, AnalysisError> {
        let spec = Spec::Pair(self.rule.clone());
        for src in sources {
            check_names(&spec, src)?;
        }
        let Some(home) = sources.iter().position(|s| self.rule.start.present_in(s)) else {
            return Err(missing_error(&self.rule.name, &self.rule.start));
        };
        if !sources.iter().any(|s| self.rule.end.present_in(s)) {
            return Err(missing_error(&self.rule.name, &self.rule.end));
        }
        if self.pairer.behind(sources) {
            self.reset();
        }
        let src = &sources[home];
        let mut added = Vec::new();
        for p in self.pairer.advance(sources, complete)? {
            if p.flagged {
                continue;
            }
            let sample = Sample {
                start: src.from_common(p.start),
                end: src.from_common(p.end),
                key: render_key(&self.rule, &p.key, self.pairer.strings()),
                start_event: p.start_event,
                end_event: p.end_event,
            };
            self.running.push(sample.latency());
            added.push(sample);
        }
        let anew = std::mem::take(&mut self.fresh);
        Ok(Standing::of(self.rule.name.clone(), added, anew, &mut self.running))
    }
}

/// `cmd-irq` with its command given and its IRQ number left to choose (`cmd-irq:cmd=D0:rise`)
/// over several growing sources, kept up to date as [`AcrossStanding`] keeps a rule. The
/// choice, the `irq_handler_entry` number most often first after a command, is counted as
/// the commands and the entries arrive (those before `complete`, in time order); the pairs
/// are those of the rule [`cmd_irq_rule`] names for the number chosen so far, and when that
/// number changes the pairing starts again for the new one. Once every source is complete,
/// the choice and the samples are [`crate::presets::run_cmd_irq`]'s across the sources.
#[derive(Debug)]
pub struct CmdIrqStanding {
    name: String,
    opts: CmdIrq,
    /// Per source: the events read, and the command's track changes read.
    read: Vec<(usize, usize)>,
    /// Occurrences read at or after the last `complete`, on the common timeline: (time,
    /// order, the entry's IRQ number, or `None` for a command).
    waiting: Vec<(Ps, u64, Option<i64>)>,
    /// Commands counted whose first entry after them has not come.
    open: u64,
    /// How many commands each IRQ number came first after.
    firsts: BTreeMap<i64, u64>,
    chosen: Option<(i64, AcrossStanding)>,
    fresh: bool,
}

impl CmdIrqStanding {
    /// `None` unless `opts` gives the command and leaves the IRQ to choose.
    pub fn new(name: &str, opts: &CmdIrq) -> Option<Self> {
        (opts.cmd.is_some() && opts.irq.is_none()).then(|| Self {
            name: name.to_owned(),
            opts: opts.clone(),
            read: Vec::new(),
            waiting: Vec::new(),
            open: 0,
            firsts: BTreeMap::new(),
            chosen: None,
            fresh: true,
        })
    }

    /// The command's endpoint.
    pub fn command(&self) -> Option<&Endpoint> {
        self.opts.cmd.as_ref()
    }

    /// Forgets what was read: the next standing reads its sources from their beginnings.
    pub fn reset(&mut self) {
        if let Some(fresh) = Self::new(&self.name, &self.opts) {
            *self = fresh;
        }
    }

    /// The standing over `sources` of the pairs whose occurrences lie before `complete` (a
    /// common time before which every source holds all it will hold).
    pub fn stand(&mut self, sources: &[Placed<'_>], complete: Ps) -> Result<Standing, AnalysisError> {
        let Some(cmd) = self.opts.cmd.clone() else {
            return Err(missing_error(&self.name, &Endpoint::event("cmd")));
        };
        if !sources.iter().any(|s| cmd.present_in(s)) {
            return Err(missing_error(&self.name, &cmd));
        }
        let behind = self.read.iter().zip(sources).any(|(&(events, _), s)| s.events.len() < events);
        if behind || self.read.len() != sources.len() {
            self.reset();
            self.read = vec![(0, 0); sources.len()];
        }
        for (src, (events, changes)) in sources.iter().zip(&mut self.read) {
            if cmd.present_in(src) {
                let (found, read) = presets::occurrences_from(&self.name, &cmd, src, *events, *changes)?;
                self.waiting.extend(found.into_iter().map(|(t, order, _)| (src.to_common(t), order, None)));
                *changes = read;
            }
            let entries = presets::irq_entries_from(src, *events);
            self.waiting.extend(entries.into_iter().map(|(t, i, n)| (src.to_common(t), i as u64, Some(n))));
            *events = src.events.len();
        }
        // In time order, an entry before a command at the same instant and order: the
        // whole choice takes the first entry strictly after each command.
        self.waiting.sort_unstable_by_key(|&(t, order, n)| (t, order, n.is_none()));
        let ready = self.waiting.partition_point(|w| w.0 < complete);
        for (_, _, n) in self.waiting.drain(..ready) {
            match n {
                Some(n) => {
                    if self.open > 0 {
                        *self.firsts.entry(n).or_default() += self.open;
                    }
                    self.open = 0;
                }
                None => self.open += 1,
            }
        }
        let best = presets::most_often_first(&self.firsts).map(|(n, _)| n);
        if let Some(n) = best
            && self.chosen.as_ref().is_none_or(|(was, _)| *was != n)
        {
            let opts = CmdIrq { cmd: Some(cmd), irq: Some(IrqSel::Number(n)) };
            let Some(rule) = cmd_irq_rule(&self.name, &opts) else {
                return Err(missing_error(&self.name, &Endpoint::event(kernel::IRQ_HANDLER_ENTRY.name)));
            };
            self.chosen = Some((n, AcrossStanding::new(rule)));
        }
        let fresh = std::mem::take(&mut self.fresh);
        match &mut self.chosen {
            Some((_, standing)) => {
                let mut s = standing.stand(sources, complete)?;
                s.anew |= fresh;
                Ok(s)
            }
            None => Ok(Standing::of(self.name.clone(), Vec::new(), fresh, &mut RunningLatencies::default())),
        }
    }
}

/// A spec's answer for a view that reads statistics and a few samples: the live
/// workbench's panel ([`LiveAnalyses::glance`]).
#[derive(Debug)]
pub enum Glance {
    /// A spec that runs whole: its outcomes, every sample.
    Whole(Vec<Outcome>),
    /// A spec that grows.
    Grown(Box<Glanced>),
}

/// A growing spec's outcome with a spread of its samples, and the statistics of all of
/// them kept as they arrived ([`RunningSummary`]).
#[derive(Debug)]
pub struct Glanced {
    /// The outcome; its `samples` are at most about `keep` of them, evenly spread by start,
    /// and the worst, in start order.
    pub outcome: Outcome,
    /// The statistics of every sample.
    pub summary: Summary,
    /// The CDF of every sample ([`RunningSummary::cdf_points`]).
    pub cdf: Vec<[f64; 2]>,
}

/// What one update of an item did.
enum Advanced {
    /// The spec ran whole: its outcomes.
    Whole(Vec<Outcome>),
    /// The pair rule read what is new: the samples it added, and whether it read the
    /// source from its beginning.
    Grown(Vec<Sample>, bool),
}

/// At most about `keep` of `samples` (sorted by start), evenly spread, and `worst` (some of
/// them), in start order.
fn spread(samples: &[Sample], worst: &[Sample], keep: usize) -> Vec<Sample> {
    if samples.len() <= keep {
        return samples.to_vec();
    }
    let step = samples.len().div_ceil(keep.saturating_sub(worst.len()).max(1));
    let mut at: Vec<usize> =
        (0..samples.len()).step_by(step).chain(worst.iter().filter_map(|w| index_of(samples, w))).collect();
    at.sort_unstable();
    at.dedup();
    at.into_iter().map(|i| samples[i].clone()).collect()
}

/// Where `sample` is in `samples`, sorted by start and end.
pub fn index_of(samples: &[Sample], sample: &Sample) -> Option<usize> {
    let from = samples.partition_point(|s| (s.start, s.end) < (sample.start, sample.end));
    (from..samples.len())
        .take_while(|&i| (samples[i].start, samples[i].end) == (sample.start, sample.end))
        .find(|&i| samples[i] == *sample)
}

impl Item {
    fn advance(&mut self, src: &Source) -> Result<Advanced, AnalysisError> {
        let whole = |spec: &Spec| runner::run_spec(spec, &[Placed::unaligned(src)]).map(Advanced::Whole);
        let Some((grower, _)) = &self.grow else { return whole(&self.spec) };
        // Whether what was read no longer leads to `src`.
        let behind = match (&self.spec, grower) {
            (Spec::Pair(rule), Grower::Rule(pairer)) => {
                check_names(&self.spec, src)?;
                // One source: the rule runs on it only if it holds both endpoints.
                if !rule.start.present_in(src) {
                    return Err(missing_error(&rule.name, &rule.start));
                }
                if !rule.end.present_in(src) {
                    return Err(missing_error(&rule.name, &rule.end));
                }
                if !LivePairer::applies(rule, src) {
                    return whole(&self.spec);
                }
                pairer.behind(src)
            }
            // The whole detector says what a missing or analog channel gives.
            (_, Grower::Pulse(pairer)) => {
                check_names(&self.spec, src)?;
                let rule = pairer.rule();
                if !rule.start.present_in(src) || !LivePairer::applies(rule, src) {
                    return whole(&self.spec);
                }
                pairer.behind(src)
            }
            (Spec::Long { track, .. }, Grower::Long(pairer, _)) => {
                check_names(&self.spec, src)?;
                let rule = pairer.rule();
                let spans = src.spans.iter().map(|s| s.name.as_str());
                let span = latscope_model::resolve_name(spans, track, "span track").is_ok();
                if span || !rule.start.present_in(src) || !LivePairer::applies(rule, src) {
                    return whole(&self.spec);
                }
                pairer.behind(src)
            }
            (_, Grower::Stall(st)) => {
                check_names(&self.spec, src)?;
                let Some(at) = st.reader.grows_over(src) else { return whole(&self.spec) };
                st.reader.behind(src, &at)
            }
            (_, Grower::Poll(pg)) => {
                check_names(&self.spec, src)?;
                let Some(at) = pg.reader.grows_over(src) else { return whole(&self.spec) };
                pg.reader.behind(src, &at)
            }
            (_, Grower::Block(pairer)) => {
                if block_names(src).is_none() {
                    return whole(&self.spec);
                }
                src.events.len() < pairer.read()
            }
            (_, Grower::Wakeup(pairer)) => match wakeup_start(src) {
                None => return whole(&self.spec),
                // The trace gained `sched_wakeup` after pairing from `sched_waking`.
                Some(from_waking) => from_waking != pairer.pairs_waking() || src.events.len() < pairer.read(),
            },
            _ => return whole(&self.spec),
        };
        if behind || self.fresh {
            self.grow = Grower::of(&self.spec, self.keeps_samples);
            self.fresh = true;
        }
        let Some((grower, grown)) = &mut self.grow else { return whole(&self.spec) };
        let pairs = match grower {
            Grower::Rule(pairer) | Grower::Pulse(pairer) => pairer.advance(src)?,
            Grower::Long(pairer, over) => {
                let over = *over;
                let mut pairs = pairer.advance(src)?;
                pairs.retain(|p| p.end - p.start > over);
                pairs
            }
            Grower::Stall(st) => {
                let Some(at) = selector_in(&st.reader.selector, src) else { return whole(&self.spec) };
                let (pairs, all) = st.advance(src, at)?;
                if all && !self.fresh {
                    // The median moved past gaps already read: the windows start again.
                    *grown =
                        Grower::no_samples_yet(self.spec.name(), AnalysisKind::Stall, self.keeps_samples);
                    self.fresh = true;
                }
                pairs
            }
            Grower::Block(pairer) => {
                let Some(names) = block_names(src) else { return whole(&self.spec) };
                pairer.feed(src, names);
                pairer.take_pairs()
            }
            Grower::Wakeup(pairer) => {
                if self.fresh && wakeup_start(src) == Some(true) {
                    *pairer = WakeupPairer::new(true);
                }
                pairer.feed(src);
                pairer.take_pairs()
            }
            // Its samples are runs, made whole: they bypass the pairs' keys.
            Grower::Poll(pg) => {
                let Some(at) = selector_in(&pg.reader.selector, src) else { return whole(&self.spec) };
                let Some(ended) = pg.advance(src, at)? else {
                    // The source grew before a run's end: read it again from its beginning.
                    self.grow = Grower::of(&self.spec, self.keeps_samples);
                    self.fresh = true;
                    return self.advance(src);
                };
                let added = grown.push_samples(ended);
                return Ok(self.grown(added));
            }
        };
        let added = grown.extend(&grower.rule(), pairs, src);
        Ok(self.grown(added))
    }

    /// The answer of an update of a spec that grows that added `added`; the summary kept
    /// up to date with them.
    fn grown(&mut self, added: Vec<Sample>) -> Advanced {
        let anew = std::mem::replace(&mut self.fresh, false);
        let Some((_, grown)) = &mut self.grow else { return Advanced::Grown(added, anew) };
        let renamed = grown.take_renamed();
        if let Some(summary) = &mut self.summary {
            if anew || renamed {
                *summary = RunningSummary::of(grown.samples(), summary.options());
            } else {
                added.iter().for_each(|s| summary.push(s));
            }
        }
        Advanced::Grown(added, anew)
    }

    /// The outcome so far of a spec that grows, a copy.
    fn grown_outcome(&self, src: &Source) -> Option<Outcome> {
        let (grower, grown) = self.grow.as_ref()?;
        Some(grower.outcome(grown, src, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::parse_spec;
    use latscope_model::{EventTableBuilder, FieldKind, FieldValue, IrqFlags, SourceKind};

    /// An event: time, task, its name, the event's name and its fields.
    type Ev<'a> = (i64, i32, &'a str, &'a str, &'a [(&'a str, i64)]);

    /// The first `n` of: task 1 wakes task 7 (10 ps), switches to it (20 ps), and task 7
    /// runs its first event (30 ps), as a live source holds them.
    fn wakeup_then_first_run(n: usize) -> Source {
        let mut b = EventTableBuilder::new();
        let events: [Ev<'_>; 3] = [
            (10, 1, "sh", "sched_wakeup", &[("pid", 7)]),
            (20, 1, "sh", "sched_switch", &[("prev_pid", 1), ("next_pid", 7)]),
            (30, 7, "worker", "sys_enter", &[("id", 0)]),
        ];
        for &(ts, pid, comm, name, fields) in &events[..n] {
            let (comm, name) = (b.intern(comm.as_bytes()), b.intern(name.as_bytes()));
            let kinds: Vec<_> =
                fields.iter().map(|(k, _)| (b.intern(k.as_bytes()), FieldKind::Int)).collect();
            let values: Vec<_> = fields.iter().map(|&(_, v)| FieldValue::Int(v)).collect();
            let layout = b.layout(name, &kinds);
            b.push(ts, 0, pid, comm, IrqFlags::NONE, layout, &values);
        }
        let mut s = Source::new("live", "test", SourceKind::Simulator);
        s.events = b.table().clone();
        s.strings = b.interner.clone();
        s
    }

    /// The first `n` of `events` (ns; `true` for a marker, `print`, `false` for another
    /// event, which says how far the source has grown), in their order.
    fn prints(events: &[(i64, bool)], n: usize) -> Source {
        let mut b = EventTableBuilder::new();
        let comm = b.intern(b"poller");
        let (print, other) = (b.intern(b"print"), b.intern(b"sched_switch"));
        let (print, other) = (b.layout(print, &[]), b.layout(other, &[]));
        for &(t, marker) in &events[..n] {
            b.push(t * 1000, 0, 5, comm, IrqFlags::NONE, if marker { print } else { other }, &[]);
        }
        let mut s = Source::new("live", "test", SourceKind::Simulator);
        s.events = b.table().clone();
        s.strings = b.interner.clone();
        s
    }

    /// A polling run is handed on once, when it has ended: when a later occurrence comes
    /// past its spacing, or the source reaches past it. While it goes on, it is counted in
    /// the statistics and stands open, as the whole detector counts it. An occurrence
    /// within the spacing of a run already ended (the source did not grow only at its end)
    /// reads the source anew.
    #[test]
    fn a_polling_run_is_handed_on_once_when_it_ends() {
        let spec = parse_spec("loop=poll:print within 10ns min 3").expect("spec");
        let mut live = LiveAnalyses::for_standing(vec![spec.clone()]);
        let mut stand = |src: &Source| {
            let want = runner::run_spec(&spec, &[Placed::unaligned(src)]).expect("runs").remove(0);
            let st = live.stand(src).remove(0).expect("stands").remove(0);
            assert_eq!(st.count, want.samples.len() as u64);
            let max = want.samples.iter().map(|s| s.latency() as f64 / 1e3).reduce(f64::max);
            assert_eq!(st.max_ns, max);
            st.added.iter().chain(&st.open).for_each(|s| assert!(want.samples.contains(s), "{s:?}"));
            let times = |v: &[Sample]| v.iter().map(|s| (s.start / 1000, s.end / 1000)).collect::<Vec<_>>();
            (times(&st.added), times(&st.open), st.anew)
        };
        let mut events = vec![(0, true), (5, true), (9, true), (20, false)];
        events.extend([100, 101, 102, 103, 200, 201, 205].map(|t| (t, true)));
        // Then the source reaches 300 ns, and an occurrence arrives 5 ns after the run
        // that ended at 205 ns, behind that.
        events.extend([(300, false), (210, true)]);
        let none = Vec::<(i64, i64)>::new;
        // Two of a run: not a sample yet. Three: a sample, open.
        assert_eq!(stand(&prints(&events, 2)), (none(), none(), true));
        assert_eq!(stand(&prints(&events, 3)), (none(), vec![(0, 9)], false));
        // The source reaches 20 ns, past it by more than 10 ns: ended, handed on.
        assert_eq!(stand(&prints(&events, 4)), (vec![(0, 9)], none(), false));
        // A run ended by a later occurrence; the next holds two, not a sample yet.
        assert_eq!(stand(&prints(&events, 10)), (vec![(100, 103)], none(), false));
        assert_eq!(stand(&prints(&events, 11)), (none(), vec![(200, 205)], false));
        assert_eq!(stand(&prints(&events, 12)), (vec![(200, 205)], none(), false));
        let (added, open, anew) = stand(&prints(&events, 13));
        assert!(anew, "read anew");
        assert_eq!((added, open), (vec![(0, 9), (100, 103)], vec![(200, 210)]));
    }

    /// A task's key is shown as a bare number until the task's first event arrives; then
    /// the samples already made show its name, as the whole runner shows it.
    #[test]
    fn a_task_named_late_renames_the_samples_already_made() {
        let spec = parse_spec("wake=sched_wakeup -> sched_switch by pid:next_pid").expect("spec");
        let mut live = LiveAnalyses::new(vec![spec.clone()]);
        // One event: the rule's end is not in the source yet, as the whole runner says.
        let first = live.update(&wakeup_then_first_run(1)).remove(0);
        assert!(matches!(first, Err(AnalysisError::Missing { .. })), "{first:?}");
        let mut keys = Vec::new();
        for n in [2, 3] {
            let src = wakeup_then_first_run(n);
            let got = live.update(&src).remove(0);
            assert_eq!(got, runner::run_spec(&spec, &[Placed::unaligned(&src)]), "{n} events");
            let o = got.expect("runs").remove(0);
            keys.extend(o.samples.iter().map(|s| s.key.clone()));
            if n == 3 {
                assert_eq!(o.raw_key("pid=7 (worker)"), "pid=7");
            }
        }
        assert_eq!(keys, ["pid=7", "pid=7 (worker)"]);
    }

    /// A source that is not a continuation (shorter) is read anew, and `reset` reads the
    /// next from its beginning: neither mixes in what was read before.
    #[test]
    fn a_shorter_source_or_a_reset_reads_anew() {
        let spec = parse_spec("wake=sched_wakeup -> sched_switch by pid:next_pid").expect("spec");
        let mut live = LiveAnalyses::new(vec![spec]);
        let keys = |live: &mut LiveAnalyses, n| -> Vec<String> {
            let o = live.update(&wakeup_then_first_run(n)).remove(0).expect("runs").remove(0);
            o.samples.into_iter().map(|s| s.key).collect()
        };
        assert_eq!(keys(&mut live, 3), ["pid=7 (worker)"]);
        assert_eq!(keys(&mut live, 2), ["pid=7"], "shorter: read anew");
        assert_eq!(keys(&mut live, 3), ["pid=7 (worker)"]);
        live.reset();
        assert_eq!(keys(&mut live, 3), ["pid=7 (worker)"], "after a reset the same source is read once");
        assert_eq!(live.incremental(), [("wake", true)]);
    }

    /// Analyses that read along with `follow` answer, when first asked, with what their
    /// own update added, and the statistics of every sample so far, as the whole runner
    /// gives them.
    #[test]
    fn analyses_that_followed_answer_with_what_is_new_and_the_statistics_of_all() {
        let spec = parse_spec("wake=sched_wakeup -> sched_switch by pid:next_pid").expect("spec");
        let whole_of =
            |src: &Source| runner::run_spec(&spec, &[Placed::unaligned(src)]).expect("runs").remove(0);
        // Followed through the pair: answered with nothing new, but counting it.
        let mut live = LiveAnalyses::new(vec![spec.clone()]);
        live.follow(&wakeup_then_first_run(2));
        let first = live.stand(&wakeup_then_first_run(3)).remove(0).expect("runs").remove(0);
        assert!(!first.anew && first.added.is_empty(), "followed already: {first:?}");
        assert_eq!(first.count, whole_of(&wakeup_then_first_run(3)).samples.len() as u64);
        // Followed before the pair: the answer that reads it hands it on.
        let mut live = LiveAnalyses::new(vec![spec.clone()]);
        live.follow(&wakeup_then_first_run(1));
        let src = wakeup_then_first_run(2);
        let first = live.stand(&src).remove(0).expect("runs").remove(0);
        assert_eq!(first.added, whole_of(&src).samples, "what its own update added");
        let again = live.stand(&src).remove(0).expect("runs").remove(0);
        assert!(!again.anew && again.added.is_empty(), "then only what is new: {again:?}");
    }

    /// Analyses made only to stand answer as those that keep their samples, without
    /// keeping them.
    #[test]
    fn analyses_for_standing_answer_the_same_and_keep_no_samples() {
        let spec = parse_spec("wake=sched_wakeup -> sched_switch by pid:next_pid").expect("spec");
        let (mut keeping, mut standing) =
            (LiveAnalyses::new(vec![spec.clone()]), LiveAnalyses::for_standing(vec![spec]));
        for n in [2, 3] {
            let src = wakeup_then_first_run(n);
            assert_eq!(keeping.stand(&src), standing.stand(&src), "{n} events");
        }
        let src = wakeup_then_first_run(3);
        let kept = keeping.update(&src).remove(0).expect("runs").remove(0);
        let none = standing.update(&src).remove(0).expect("runs").remove(0);
        assert_eq!((kept.samples.len(), none.samples.len()), (1, 0));
    }

    /// A glanced analysis keeps its latencies once, in the glance's statistics; a
    /// standing asked for later counts them from the samples, and answers as the whole
    /// runner.
    #[test]
    fn a_glanced_analysis_keeps_its_latencies_once() {
        let spec = parse_spec("wake=sched_wakeup -> sched_switch by pid:next_pid").expect("spec");
        let mut live = LiveAnalyses::new(vec![spec.clone()]);
        let keeps =
            |live: &LiveAnalyses| live.items[0].grow.as_ref().is_some_and(|(_, g)| g.keeps_latencies());
        for n in [2, 3] {
            let glanced = live.glance(&wakeup_then_first_run(n), StatsOptions::default(), 10, 10).remove(0);
            assert!(matches!(glanced, Ok(Glance::Grown(_))), "{glanced:?}");
            assert!(!keeps(&live), "{n} events: latencies kept beside the glance's");
        }
        let src = wakeup_then_first_run(3);
        let stood = live.stand(&src).remove(0).expect("runs").remove(0);
        let whole = runner::run_spec(&spec, &[Placed::unaligned(&src)]).expect("runs").remove(0);
        assert_eq!((stood.count, stood.max_ns), (1, Some(whole.samples[0].latency() as f64 / 1e3)));
        assert!(keeps(&live), "a standing keeps them from then on");
        // Analyses that only stand keep no samples, so their latencies are kept from the start.
        let mut standing = LiveAnalyses::for_standing(vec![spec]);
        standing.follow(&wakeup_then_first_run(2));
        assert!(standing.items[0].grow.as_ref().is_some_and(|(_, g)| g.keeps_latencies()));
    }

    /// A key unique to each pair (a block request's sector) overflows the rendered keys'
    /// cache, which is emptied: the answers stay the whole runner's.
    #[test]
    fn keys_unique_to_each_pair_overflow_the_cache_without_changing_the_answer() {
        let pairs = crate::measure::RENDERED_CACHE as i64 + 5_000;
        let mut b = EventTableBuilder::new();
        let comm = b.intern(b"dd");
        let (issue, done, sector) = (b.intern(b"issue"), b.intern(b"done"), b.intern(b"sector"));
        let (issue, done) =
            (b.layout(issue, &[(sector, FieldKind::Int)]), b.layout(done, &[(sector, FieldKind::Int)]));
        let spec = parse_spec("req=issue -> done by sector").expect("spec");
        let mut live = LiveAnalyses::new(vec![spec.clone()]);
        for k in 0..pairs {
            // Two requests in flight, completed out of order.
            b.push(10 * k, 0, 1, comm, IrqFlags::NONE, issue, &[FieldValue::Int(k)]);
            if k % 2 == 1 {
                b.push(10 * k + 1, 0, 1, comm, IrqFlags::NONE, done, &[FieldValue::Int(k)]);
                b.push(10 * k + 2, 0, 1, comm, IrqFlags::NONE, done, &[FieldValue::Int(k - 1)]);
            }
            if k % 30_000 == 29_999 || k == pairs - 1 {
                let mut src = Source::new("live", "test", SourceKind::Simulator);
                src.events = b.table().clone();
                src.strings = b.interner.clone();
                let got = live.update(&src).remove(0);
                assert_eq!(got, runner::run_spec(&spec, &[Placed::unaligned(&src)]), "{k}");
            }
        }
    }
}
