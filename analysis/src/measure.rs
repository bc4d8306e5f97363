//! The shared step after an analysis ran: what it found ([`PairResult`]s, windows) as an
//! [`Outcome`], with the notes every outcome carries (lost-event gaps, repeated ends), and
//! the errors of running a spec.

use crate::endpoint::{Endpoint, PairError};
use crate::outcome::{AnalysisKind, Note, Outcome, Sample};
use crate::pairing::{KeyVal, PairResult, PairRule, render_key, render_key_with};
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
        match i32::try_from(pid).ok().and_then(|p| self.0.get(&p)) {
            Some(&comm) => format!("{pid} ({})", src.strings.resolve(comm)),
            None => pid.to_string(),
        }
    }
}

/// A key value as people read it: a device `MAJ,MIN`, a task id with its name.
fn readable(src: &Source, tasks: &TaskNames, name: &str, v: i64) -> Option<String> {
    if latscope_model::display::is_device(name) {
        return Some(latscope_model::kernel::dev_text(v as u64));
    }
    is_task(name).then(|| tasks.label(src, v))
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
    let task_fields: Vec<usize> = (0..rule.by.len()).filter(|&k| is_task(&rule.by[k].0)).collect();
    let mut pids: FxHashSet<i32> = FxHashSet::default();
    if !task_fields.is_empty() {
        for p in &res.pairs {
            for &k in &task_fields {
                if let Some(KeyVal::Int(v)) = p.key.get(k)
                    && let Ok(pid) = i32::try_from(*v)
                {
                    pids.insert(pid);
                }
            }
        }
    }
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
                .or_insert_with(|| {
                    let shown = render_key_with(rule, &p.key, strings, |n, v| readable(src, &tasks, n, v));
                    let raw = render_key(rule, &p.key, strings);
                    if raw != shown {
                        o.raw_keys.insert(shown.clone(), raw);
                    }
                    shown
                })
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
