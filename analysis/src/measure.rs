//! The shared step after an analysis ran: what it found ([`PairResult`]s, windows) as an
//! [`Outcome`], with the notes every outcome carries (lost-event gaps, repeated ends), and
//! the errors of running a spec.

use crate::endpoint::{Endpoint, PairError};
use crate::outcome::{AnalysisKind, Note, Outcome, Sample};
use crate::pairing::{KeyVal, PairResult, PairRule, render_key, render_key_with};
use crate::stats::RunningLatencies;
use latscope_model::{Interner, Ps, Source, Sym};
use rustc_hash::{FxHashMap, FxHashSet};

/// Whether key field `name` holds a task id, shown with the task's name.
fn is_task(name: &str) -> bool {
    name == "pid" || name.ends_with("_pid") || name == "tid"
}

/// Task names of a source, for the task ids analyses report.
#[derive(Debug, Default)]
pub(crate) struct TaskNames(FxHashMap<i32, Sym>);

impl TaskNames {
    /// The name each of `pids` had in `src`: its comm on the first event it ran.
    pub(crate) fn of(src: &Source, pids: impl IntoIterator<Item = i32>) -> Self {
        let mut wanted: FxHashSet<i32> = pids.into_iter().collect();
        let mut names = FxHashMap::default();
        if wanted.is_empty() {
            return TaskNames(names);
        }
        for (i, pid) in src.events.pid.iter().enumerate() {
            if wanted.remove(pid) {
                names.insert(*pid, src.events.comm[i]);
                if wanted.is_empty() {
                    break;
                }
            }
        }
        TaskNames(names)
    }

    /// `1234 (dd)`, or the number alone for a task the source never saw run.
    pub(crate) fn label(&self, src: &Source, pid: i64) -> String {
        task_label(src, &self.0, pid)
    }
}

/// `1234 (dd)` from `names` (task id -> name), or the number alone.
fn task_label(src: &Source, names: &FxHashMap<i32, Sym>, pid: i64) -> String {
    match i32::try_from(pid).ok().and_then(|p| names.get(&p)) {
        Some(&comm) => format!("{pid} ({})", src.strings.resolve(comm)),
        None => pid.to_string(),
    }
}

/// A key value as people read it: a device `MAJ,MIN`, a task id with its name.
fn readable(src: &Source, tasks: &FxHashMap<i32, Sym>, name: &str, v: i64) -> Option<String> {
    if latscope_model::display::is_device(name) {
        return Some(latscope_model::kernel::dev_text(v as u64));
    }
    is_task(name).then(|| task_label(src, tasks, v))
}

/// A spec that parsed but cannot run on the sources given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    #[error("{rule}: no source has {what}")]
    Missing { rule: String, what: String },
    /// Each source alone, and the spec applies to none of them (each one's reason).
    #[error("{rule}: applies to no open source ({})", reasons.join("; "))]
    Nowhere { rule: String, reasons: Vec<String> },
    #[error(transparent)]
    Pair(#[from] PairError),
}

/// A [`PairResult`] as an outcome: samples by start with rendered keys.
pub(crate) fn outcome_of(
    name: &str,
    kind: AnalysisKind,
    source: usize,
    rule: &PairRule,
    res: &PairResult,
    src: &Source,
) -> Outcome {
    outcome_keyed(name, kind, source, rule, res, src, &src.strings)
}

/// [`outcome_of`] with the interner that `res`'s string keys refer to.
pub(crate) fn outcome_keyed(
    name: &str,
    kind: AnalysisKind,
    source: usize,
    rule: &PairRule,
    res: &PairResult,
    src: &Source,
    strings: &Interner,
) -> Outcome {
    let mut o = Outcome::new(name, kind, source);
    // The task ids in keys, named once.
    let task_fields = task_fields(rule);
    let pids: FxHashSet<i32> = if task_fields.is_empty() {
        FxHashSet::default()
    } else {
        res.pairs.iter().flat_map(|p| task_ids(&p.key, &task_fields)).collect()
    };
    let tasks = TaskNames::of(src, pids);
    // Few distinct keys, many pairs: render each key once, as people read it, and keep the
    // stored text where it differs. Pairs of a rule without keys (pulses, edges) all share
    // the rendering of no key, which needs no lookup.
    let mut rendered: FxHashMap<&[KeyVal], String> = Default::default();
    let no_key = render_key(rule, &[], strings);
    for p in &res.pairs {
        let key = if p.key.is_empty() {
            no_key.clone()
        } else {
            rendered
                .entry(&p.key[..])
                .or_insert_with(|| render_noting(&mut o.raw_keys, &tasks.0, rule, &p.key, src, strings))
                .clone()
        };
        let sample =
            Sample { start: p.start, end: p.end, key, start_event: p.start_event, end_event: p.end_event };
        if p.flagged { o.excluded.push(sample) } else { o.samples.push(sample) }
    }
    o.samples.sort_by_key(|s| (s.start, s.end));
    o.excluded.sort_by_key(|s| (s.start, s.end));
    if !o.excluded.is_empty() {
        o.notes.push(Note { what: crate::outcome::EXCLUDED_NOTE.into(), count: o.excluded.len() as u64 });
    }
    o.unmatched_start = res.unmatched_start;
    o.unmatched_end = res.unmatched_end;
    note_lost_events(&mut o, src);
    o
}

/// Most keys a [`GrowingOutcome`] keeps rendered between updates.
pub(crate) const RENDERED_CACHE: usize = 1 << 16;

/// A pair rule's outcome built as its pairs arrive from a [`crate::pairing::LivePairer`]:
/// after each [`GrowingOutcome::extend`], [`GrowingOutcome::outcome`] with [`GrowingOutcome::samples`] equals
/// [`outcome_of`] over every pair so far on the source read so far. New pairs are
/// rendered and merged into the samples by start; only a task that gets its name late
/// (its key was shown as a bare number, and its first event arrived since) re-renders
/// the samples already made.
#[derive(Debug)]
pub(crate) struct GrowingOutcome {
    outcome: Outcome,
    /// Keys as people read them, a cache: a key unique to each pair (`dev,sector`) would
    /// otherwise keep a copy per sample for as long as the run goes, so it is emptied
    /// past [`RENDERED_CACHE`] keys.
    rendered: FxHashMap<Vec<KeyVal>, String>,
    /// Keys shown with a task as a bare number, kept until the task is named: the
    /// rendering, and how many of the key's tasks had no name when it was made.
    pending: FxHashMap<Vec<KeyVal>, (String, usize)>,
    /// Each task's name on the first event it ran, over the events read (`read`).
    first_comm: FxHashMap<i32, Sym>,
    read: usize,
    /// The latencies of `outcome.samples`, for statistics that do not sort them all; made
    /// when first asked for while the samples are kept. A view that reads statistics kept
    /// apart ([`crate::live::LiveAnalyses::glance`]) never asks, and would otherwise keep
    /// each latency a second time, 8 bytes a sample for as long as the run goes.
    running: Option<RunningLatencies>,
    /// Whether `outcome` keeps the samples: an answer that only stands (live lines and a
    /// flight recorder, which read each sample once) needs their latencies alone.
    keeps_samples: bool,
    /// Keys of samples already made were rendered again since [`Self::take_renamed`].
    renamed: bool,
}

impl GrowingOutcome {
    pub(crate) fn new(name: &str, kind: AnalysisKind, source: usize) -> Self {
        Self {
            outcome: Outcome::new(name, kind, source),
            rendered: FxHashMap::default(),
            pending: FxHashMap::default(),
            first_comm: FxHashMap::default(),
            read: 0,
            running: None,
            keeps_samples: true,
            renamed: false,
        }
    }

    /// The same, keeping no samples: [`Self::extend`] still returns them.
    pub(crate) fn without_samples(mut self) -> Self {
        self.keeps_samples = false;
        self.running = Some(RunningLatencies::default());
        self
    }

    /// The latencies of the samples so far.
    pub(crate) fn running(&mut self) -> &mut RunningLatencies {
        let samples = &self.outcome.samples;
        self.running.get_or_insert_with(|| {
            let mut running = RunningLatencies::default();
            samples.iter().for_each(|s| running.push(s.latency()));
            running
        })
    }

    /// Adds `pairs` (the ones that closed since the last call) over `src`, which extends
    /// the source of the earlier calls; returns the samples added (not the excluded ones),
    /// in the order they closed.
    pub(crate) fn extend(
        &mut self,
        rule: &PairRule,
        pairs: Vec<crate::pairing::Pair>,
        src: &Source,
    ) -> Vec<Sample> {
        let task_fields = task_fields(rule);
        if !task_fields.is_empty() {
            self.read_tasks(rule, &task_fields, src);
        }
        let (mut samples, mut excluded) = (Vec::new(), Vec::new());
        for p in pairs {
            let known = self.rendered.get(&p.key).or_else(|| self.pending.get(&p.key).map(|(k, _)| k));
            let key = match known {
                Some(k) => k.clone(),
                None => {
                    let shown = render_noting(
                        &mut self.outcome.raw_keys,
                        &self.first_comm,
                        rule,
                        &p.key,
                        src,
                        &src.strings,
                    );
                    let unnamed = self.unnamed(&p.key, &task_fields);
                    self.remember(p.key.clone(), shown.clone(), unnamed);
                    shown
                }
            };
            let sample = Sample {
                start: p.start,
                end: p.end,
                key,
                start_event: p.start_event,
                end_event: p.end_event,
            };
            if p.flagged {
                excluded.push(sample);
            } else {
                if let Some(running) = &mut self.running {
                    running.push(sample.latency());
                }
                samples.push(sample);
            }
        }
        if !self.keeps_samples {
            return samples;
        }
        let added = samples.clone();
        merge_by_start(&mut self.outcome.samples, samples);
        merge_by_start(&mut self.outcome.excluded, excluded);
        added
    }

    /// Adds `samples` made whole (a polling run's, its key its count), those that ended
    /// since the last call, in start order; returns them.
    pub(crate) fn push_samples(&mut self, samples: Vec<Sample>) -> Vec<Sample> {
        if let Some(running) = &mut self.running {
            samples.iter().for_each(|s| running.push(s.latency()));
        }
        if self.keeps_samples {
            merge_by_start(&mut self.outcome.samples, samples.clone());
        }
        samples
    }

    /// Reads the tasks of the events new in `src`; keys of tasks named only now are
    /// rendered again, in the samples already made too.
    fn read_tasks(&mut self, rule: &PairRule, task_fields: &[usize], src: &Source) {
        let start = self.read.min(src.events.len());
        for (i, &pid) in src.events.pid.iter().enumerate().skip(start) {
            self.first_comm.entry(pid).or_insert(src.events.comm[i]);
        }
        self.read = src.events.len();
        let stale: Vec<Vec<KeyVal>> = self
            .pending
            .iter()
            .filter(|(key, (_, unnamed))| self.unnamed(key, task_fields) < *unnamed)
            .map(|(key, _)| key.clone())
            .collect();
        if stale.is_empty() {
            return;
        }
        let mut renamed: FxHashMap<String, String> = FxHashMap::default();
        for key in stale {
            let Some((old, _)) = self.pending.remove(&key) else { continue };
            self.outcome.raw_keys.remove(&old);
            let new =
                render_noting(&mut self.outcome.raw_keys, &self.first_comm, rule, &key, src, &src.strings);
            let unnamed = self.unnamed(&key, task_fields);
            self.remember(key, new.clone(), unnamed);
            renamed.insert(old, new);
        }
        for s in self.outcome.samples.iter_mut().chain(self.outcome.excluded.iter_mut()) {
            if let Some(new) = renamed.get(&s.key) {
                s.key.clone_from(new);
            }
        }
        self.renamed = true;
    }

    /// Whether samples already handed on have another key now (a task was named late).
    pub(crate) fn take_renamed(&mut self) -> bool {
        std::mem::take(&mut self.renamed)
    }

    /// Whether the latencies are kept apart from the samples.
    #[cfg(test)]
    pub(crate) fn keeps_latencies(&self) -> bool {
        self.running.is_some()
    }

    /// The samples so far, by start (none when they are not kept).
    pub(crate) fn samples(&self) -> &[Sample] {
        &self.outcome.samples
    }

    /// How many of `key`'s tasks have no name yet.
    fn unnamed(&self, key: &[KeyVal], task_fields: &[usize]) -> usize {
        task_ids(key, task_fields).filter(|pid| !self.first_comm.contains_key(pid)).count()
    }

    /// Keeps `key`'s rendering: until its tasks are named when `unnamed` of them are not
    /// yet, else in the cache.
    fn remember(&mut self, key: Vec<KeyVal>, shown: String, unnamed: usize) {
        if unnamed > 0 {
            self.pending.insert(key, (shown, unnamed));
            return;
        }
        if self.rendered.len() >= RENDERED_CACHE {
            self.rendered.clear();
        }
        self.rendered.insert(key, shown);
    }

    /// The outcome so far holding `samples` (all of [`Self::samples`], or a few for a view
    /// that reads statistics kept apart), with `counts` (unmatched and repeated ends) and
    /// the notes [`outcome_of`] and the pair-rule step add.
    pub(crate) fn outcome(
        &self,
        samples: Vec<Sample>,
        counts: &PairResult,
        src: &Source,
        repeat_note: &str,
    ) -> Outcome {
        let o = &self.outcome;
        let mut o = Outcome {
            name: o.name.clone(),
            kind: o.kind,
            source: o.source,
            samples,
            unmatched_start: o.unmatched_start,
            unmatched_end: o.unmatched_end,
            notes: o.notes.clone(),
            windows: o.windows.clone(),
            stages: o.stages.clone(),
            excluded: o.excluded.clone(),
            raw_keys: o.raw_keys.clone(),
        };
        if !o.excluded.is_empty() {
            o.notes.push(Note { what: crate::outcome::EXCLUDED_NOTE.into(), count: o.excluded.len() as u64 });
        }
        o.unmatched_start = counts.unmatched_start;
        o.unmatched_end = counts.unmatched_end;
        note_lost_events(&mut o, src);
        add_repeat_note(&mut o, counts, repeat_note);
        o
    }
}

/// The key fields of `rule` that hold task ids.
fn task_fields(rule: &PairRule) -> Vec<usize> {
    (0..rule.by.len()).filter(|&k| is_task(&rule.by[k].0)).collect()
}

/// The task ids `key` holds in `fields`.
fn task_ids<'a>(key: &'a [KeyVal], fields: &'a [usize]) -> impl Iterator<Item = i32> + 'a {
    fields.iter().filter_map(|&k| match key.get(k) {
        Some(KeyVal::Int(v)) => i32::try_from(*v).ok(),
        _ => None,
    })
}

/// `key` as people read it (its strings in `strings`, its tasks named by `tasks`), noting
/// in `raw_keys` the stored text where it differs.
fn render_noting(
    raw_keys: &mut std::collections::BTreeMap<String, String>,
    tasks: &FxHashMap<i32, Sym>,
    rule: &PairRule,
    key: &[KeyVal],
    src: &Source,
    strings: &Interner,
) -> String {
    if key.is_empty() {
        return render_key(rule, &[], strings);
    }
    let shown = render_key_with(rule, key, strings, |n, v| readable(src, tasks, n, v));
    let raw = render_key(rule, key, strings);
    if raw != shown {
        raw_keys.insert(shown.clone(), raw);
    }
    shown
}

/// Merges `new` (in the order the pairs closed) into `samples` (sorted by start, then end)
/// as a stable sort of both would: only the tail of `samples` that sorts after the first
/// new sample is sorted again.
fn merge_by_start(samples: &mut Vec<Sample>, mut new: Vec<Sample>) {
    if new.is_empty() {
        return;
    }
    new.sort_by_key(|s| (s.start, s.end));
    let first = (new[0].start, new[0].end);
    let from = samples.partition_point(|s| (s.start, s.end) <= first);
    samples.extend(new);
    samples[from..].sort_by_key(|s| (s.start, s.end));
}

/// Notes the samples that span a lost-event gap of the tracer: an end or a start inside
/// may be missing, so the pair may be wrong.
pub(crate) fn note_lost_events(o: &mut Outcome, src: &Source) {
    let gaps = &src.diagnostics.gaps;
    if gaps.is_empty() {
        return;
    }
    let mut at: Vec<Ps> = gaps.iter().map(|g| g.ts).collect();
    at.sort_unstable();
    let spanning = o
        .samples
        .iter()
        .filter(|s| at.partition_point(|&t| t < s.start) < at.partition_point(|&t| t <= s.end))
        .count();
    o.notes.push(Note { what: "lost-event gaps in the source".into(), count: gaps.len() as u64 });
    if spanning > 0 {
        o.notes.push(Note { what: "samples spanning lost events".into(), count: spanning as u64 });
    }
}

pub(crate) fn missing_error(rule: &str, ep: &Endpoint) -> AnalysisError {
    let what = match ep {
        Endpoint::Event { name, .. } => format!("an event {name:?}"),
        Endpoint::Edge { track, .. } => format!("a digital or analog track {track:?}"),
        Endpoint::Crossing { track, .. } => format!("an analog track {track:?}"),
    };
    AnalysisError::Missing { rule: rule.to_owned(), what }
}

pub(crate) fn add_repeat_note(o: &mut Outcome, res: &PairResult, what: &str) {
    if res.repeated_end > 0 {
        o.notes.push(Note { what: what.to_owned(), count: res.repeated_end });
    }
}
