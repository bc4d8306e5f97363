//! The one way every analysis runs — `latscope report`, the workbench's analysis panel and
//! the simulator's scenario measurements all call [`run`]:
//! - the **each-or-together rule** ([`Scope`]): sources the user placed on one timeline (an
//!   alignment given, or any source placed off its own clock) are one trace and a spec runs
//!   over all of them together; otherwise each source is analysed alone (two captures are an
//!   A/B comparison).
//! - the **error rule**: a spec runs on every source it applies to. Alone, a source it does
//!   not apply to (it lacks the event or track, or the track cannot be thresholded) is
//!   skipped and named in [`Ran::skipped`]; the spec fails only when it applies to no source
//!   (with one source: that source's error; with several: [`AnalysisError::Nowhere`], every
//!   source's reason). Together, the spec fails when no source holds what it selects.
//! - the **pair-rule step** ([`run_pair_rule`]): per source holding both endpoints, else
//!   once across the sources holding the start and those holding the end, on the common
//!   timeline; and the dispatch of every other spec to its analysis.

use crate::measure::{add_repeat_note, missing_error, outcome_keyed, outcome_of};
use crate::outcome::{AnalysisKind, Note, Outcome};
use crate::pairing::{self, PairRule};
use crate::spec::{Preset, Spec};
use crate::{chain, detect, presets};
use latscope_model::Placed;

pub use crate::measure::AnalysisError;

/// Whether several sources are analysed one by one or as one trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Each source alone (captures compared A/B, or unrelated files).
    Each,
    /// All sources as one trace on the common timeline.
    Together,
}

impl Scope {
    /// The each-or-together rule: `Together` when there are several sources and the user
    /// aligned them (`aligned`: `--align`, the Align dialog) or any of them is placed off its
    /// own clock (offsets restored from a session); else `Each`.
    pub fn of(aligned: bool, sources: &[Placed<'_>]) -> Scope {
        if sources.len() > 1 && (aligned || sources.iter().any(|s| !s.placement.is_identity())) {
            Scope::Together
        } else {
            Scope::Each
        }
    }
}

/// What running one spec gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    /// One outcome per source the spec applied to (or one across sources), `source` set to
    /// the index of the source its times belong to.
    pub outcomes: Vec<Outcome>,
    /// Sources a spec run on each source alone did not apply to, and why (it applied to
    /// another one).
    pub skipped: Vec<(usize, AnalysisError)>,
}

/// Runs `spec` over `sources` by the each-or-together and error rules (module doc).
pub fn run(spec: &Spec, sources: &[Placed<'_>], scope: Scope) -> Result<Ran, AnalysisError> {
    if scope == Scope::Together || sources.len() <= 1 {
        return run_spec(spec, sources).map(|outcomes| Ran { outcomes, skipped: Vec::new() });
    }
    let mut outcomes = Vec::new();
    let mut skipped = Vec::new();
    for (index, src) in sources.iter().enumerate() {
        match run_spec(spec, std::slice::from_ref(src)) {
            Ok(found) => outcomes.extend(found.into_iter().map(|mut o| {
                o.source = index;
                o
            })),
            Err(e) => skipped.push((index, e)),
        }
    }
    if outcomes.is_empty() {
        let reasons = skipped.iter().map(|(i, e)| format!("input {i} ({}): {e}", sources[*i].name)).collect();
        return Err(AnalysisError::Nowhere { rule: spec.name().to_owned(), reasons });
    }
    Ok(Ran { outcomes, skipped })
}

/// Runs `spec` over `sources` as one trace: one [`Outcome`] per source it applies to (the
/// sources that hold what it selects), or one over several sources on their common timeline
/// when a pair rule's start and end are only found in different sources.
pub fn run_spec(spec: &Spec, sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    match spec {
        Spec::Pair(rule) => run_pair_rule(rule, sources),
        Spec::Pulse { name, channel, high, level } => {
            detect::run_pulse(name, channel, *high, *level, sources)
        }
        Spec::Stall { name, selector, factor } => detect::run_stall(name, selector, *factor, sources),
        Spec::Long { name, track, high, level, over } => {
            detect::run_long(name, track, *high, *level, *over, sources)
        }
        Spec::Poll { name, selector, spacing, min_iterations } => {
            detect::run_poll(name, selector, *spacing, *min_iterations, sources)
        }
        Spec::Preset(p) => run_preset(p, sources),
    }
}

/// Runs a pair rule: per source holding both endpoints; else across the sources holding
/// the start and those holding the end, on the common timeline (times reported in the
/// first start source's own time).
pub fn run_pair_rule(rule: &PairRule, sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    let has_start: Vec<usize> = (0..sources.len()).filter(|&i| rule.start.present_in(&sources[i])).collect();
    let has_end: Vec<usize> = (0..sources.len()).filter(|&i| rule.end.present_in(&sources[i])).collect();
    let both: Vec<usize> = has_start.iter().copied().filter(|i| has_end.contains(i)).collect();
    if !both.is_empty() {
        let mut out = Vec::new();
        for i in both {
            let res = pairing::pair(&sources[i], rule)?;
            let mut o = outcome_of(&rule.name, AnalysisKind::Pair, i, rule, &res, &sources[i]);
            add_repeat_note(&mut o, &res, "end with no new start after its key closed a pair");
            out.push(o);
        }
        return Ok(out);
    }
    let Some(&home) = has_start.first() else { return Err(missing_error(&rule.name, &rule.start)) };
    if has_end.is_empty() {
        return Err(missing_error(&rule.name, &rule.end));
    }
    let mut idx: Vec<usize> = has_start.iter().chain(&has_end).copied().collect();
    idx.sort_unstable();
    idx.dedup();
    let placed: Vec<Placed<'_>> = idx.iter().map(|&i| sources[i]).collect();
    let (mut res, shared) = pairing::pair_across_keyed(&placed, rule)?;
    let src = &sources[home];
    for p in &mut res.pairs {
        p.start = src.from_common(p.start);
        p.end = src.from_common(p.end);
    }
    // String keys were re-interned across sources: render them with that interner.
    let mut o = outcome_keyed(&rule.name, AnalysisKind::Pair, home, rule, &res, src, &shared);
    o.notes.push(Note {
        what: format!("across sources {idx:?} on the common timeline"),
        count: idx.len() as u64,
    });
    Ok(vec![o])
}

fn run_preset(p: &Preset, sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    match p {
        Preset::Block => presets::run_block(sources),
        Preset::Wakeup => presets::run_wakeup(sources),
        Preset::CmdIrq { name, opts } => presets::run_cmd_irq(name, opts, sources),
        Preset::Chain { name, opts, line } => chain::run_chain(name, opts, line.as_ref(), sources),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::parse_spec;
    use latscope_model::{
        DigitalTrack, EventTableBuilder, FieldValue, IrqFlags, Placement, Ps, Source, SourceKind,
    };

    /// A source with events named `names` at 10, 20, 30 … ps.
    fn events(name: &str, names: &[&str]) -> Source {
        let mut b = EventTableBuilder::new();
        let comm = b.intern(b"task");
        for (k, n) in names.iter().enumerate() {
            let sym = b.intern(n.as_bytes());
            let l = b.layout(sym, &[]);
            let no_fields: [FieldValue; 0] = [];
            b.push(10 * (k as Ps + 1), 0, 1, comm, IrqFlags::NONE, l, &no_fields);
        }
        let (events, strings) = b.finish().expect("finish");
        let mut s = Source::new(name, "test", SourceKind::File);
        s.events = events;
        s.strings = strings;
        s
    }

    #[test]
    fn each_runs_where_the_spec_applies_and_fails_only_where_it_applies_nowhere() {
        let a = events("a.txt", &["start", "end", "start", "end"]);
        let mut b = Source::new("b.vcd", "test", SourceKind::File);
        b.digital.push(DigitalTrack::new("D", 0));
        let placed = [Placed::unaligned(&a), Placed::unaligned(&b)];
        let rule = parse_spec("start -> end").expect("spec");
        let ran = run(&rule, &placed, Scope::Each).expect("runs on a.txt");
        assert_eq!(ran.outcomes.len(), 1);
        assert_eq!((ran.outcomes[0].source, ran.outcomes[0].samples.len()), (0, 2));
        assert_eq!(ran.skipped.len(), 1);
        assert_eq!(ran.skipped[0].0, 1);
        // Together the same rule runs on the one source holding both ends: nothing skipped.
        let together = run(&rule, &placed, Scope::Together).expect("runs");
        assert_eq!(together.outcomes, ran.outcomes);
        assert!(together.skipped.is_empty());
        // On no source: alone, that source's own error; several, every source's reason.
        let none = parse_spec("nope -> end").expect("spec");
        let one = run(&none, &placed[..1], Scope::Each).unwrap_err();
        assert!(matches!(one, AnalysisError::Missing { .. }), "{one}");
        let both = run(&none, &placed, Scope::Each).unwrap_err();
        let AnalysisError::Nowhere { reasons, .. } = &both else { panic!("{both}") };
        assert_eq!(reasons.len(), 2);
        assert!(both.to_string().contains("applies to no open source (input 0 (a.txt): "), "{both}");
        assert!(matches!(run(&none, &placed, Scope::Together), Err(AnalysisError::Missing { .. })));
    }

    #[test]
    fn sources_are_together_when_aligned_or_placed_off_their_clock() {
        let (a, b) = (events("a", &["x"]), events("b", &["x"]));
        let apart = [Placed::unaligned(&a), Placed::unaligned(&b)];
        assert_eq!(Scope::of(false, &apart), Scope::Each);
        assert_eq!(Scope::of(true, &apart), Scope::Together);
        let moved = [Placed::unaligned(&a), Placed::new(&b, Placement::new(5, 0.0))];
        assert_eq!(Scope::of(false, &moved), Scope::Together);
        assert_eq!(Scope::of(true, &apart[..1]), Scope::Each);
    }
}
