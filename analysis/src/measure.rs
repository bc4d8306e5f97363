//! The shared step after an analysis ran: what it found ([`PairResult`]s, windows) as an
//! [`Outcome`], with the notes every outcome carries (lost-event gaps, repeated ends), and
//! the errors of running a spec.

use crate::endpoint::{Endpoint, PairError};
use crate::outcome::{AnalysisKind, Note, Outcome, Sample};
use crate::pairing::{KeyVal, PairResult, PairRule, render_key};
use latscope_model::{Interner, Ps, Source};

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
    // Few distinct keys, many pairs: render each key once. Pairs of a rule without keys
    // (pulses, edges) all share the rendering of no key, which needs no lookup.
    let mut rendered: rustc_hash::FxHashMap<&[KeyVal], String> = Default::default();
    let no_key = render_key(rule, &[], strings);
    o.samples = res
        .pairs
        .iter()
        .map(|p| {
            let key = if p.key.is_empty() {
                no_key.clone()
            } else {
                rendered.entry(&p.key[..]).or_insert_with(|| render_key(rule, &p.key, strings)).clone()
            };
            Sample { start: p.start, end: p.end, key }
        })
        .collect();
    o.samples.sort_by_key(|s| (s.start, s.end));
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
