//! The one way every analysis runs — `latscope report`, the workbench's analysis panel and
//! the simulator's scenario measurements all call [`run`]:
//! - the **each-or-together rule** ([`Scope`]): sources the user placed on one timeline (an
//!   alignment given, or any source placed elsewhere than its clock puts it) are one trace and a spec runs
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

use crate::endpoint::{Edge, Endpoint};
use crate::measure::{add_repeat_note, missing_error, outcome_keyed, outcome_of};
use crate::outcome::{AnalysisKind, Note, Outcome};
use crate::pairing::{self, PairRule};
use crate::spec::{IrqSel, PRESETS, Preset, Spec, preset_spec};
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
    /// aligned them (`aligned`: `--align`, the Align dialog) or any of them is placed
    /// elsewhere than its clock puts it (offsets restored from a session); else `Each`.
    /// Sources placed by their clocks alone ([`latscope_model::Placement::by_clock`]: two
    /// captures of one machine) are still analysed each alone.
    pub fn of(aligned: bool, sources: &[Placed<'_>]) -> Scope {
        if sources.len() > 1 && (aligned || Placed::any_off_clock(sources)) {
            Scope::Together
        } else {
            Scope::Each
        }
    }
}

/// What messages call each of `sources`: names first, numbers only where names repeat
/// ([`latscope_model::source_labels`] of their paths, else their names).
pub fn labels(sources: &[Placed<'_>]) -> Vec<String> {
    let paths: Vec<String> = sources
        .iter()
        .map(|s| s.path.as_ref().map_or_else(|| s.name.clone(), |p| p.display().to_string()))
        .collect();
    latscope_model::source_labels(&paths.iter().map(String::as_str).collect::<Vec<_>>())
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
        let labels = labels(sources);
        let reasons = skipped.iter().map(|(i, e)| format!("{}: {e}", labels[*i])).collect();
        return Err(AnalysisError::Nowhere { rule: spec.name().to_owned(), reasons });
    }
    Ok(Ran { outcomes, skipped })
}

/// The presets run when none is asked for (`latscope report` without `--preset` and
/// `--rule`, and the workbench when files open).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DefaultPresets {
    /// The presets that found something, in the order of [`PRESETS`].
    pub names: Vec<String>,
    pub outcomes: Vec<Outcome>,
    /// For each preset the sources lack events for: what is missing and how to record it
    /// ([`presets::missing_events`]).
    pub missing: Vec<String>,
}

/// Every preset that finds something in the sources (a pair, or an unmatched start or
/// end), run by [`run`]; a preset that does not apply is not an error here. The presets
/// that lack events are listed with what is missing.
pub fn default_presets(sources: &[Placed<'_>], scope: Scope) -> DefaultPresets {
    let mut out = DefaultPresets::default();
    let plain: Vec<&latscope_model::Source> = sources.iter().map(|p| p.source).collect();
    for (name, _) in PRESETS {
        if name.contains("CH") {
            // `pulse:CH` needs a channel's name: never run by default, only named where
            // there are channels.
            let channels = plain.iter().any(|s| !s.digital.is_empty() || !s.analog.is_empty());
            out.missing.extend(presets::missing_events(name, &plain).filter(|_| channels));
            continue;
        }
        let Ok(spec) = preset_spec(name) else { continue };
        let found = run(&spec, sources, scope).map(|r| r.outcomes).unwrap_or_default();
        let something =
            found.iter().any(|o| !o.samples.is_empty() || o.unmatched_start + o.unmatched_end > 0);
        if something {
            out.names.push((*name).to_owned());
            out.outcomes.extend(found);
        } else if let Some(hint) = presets::missing_events(name, &plain) {
            out.missing.push(hint);
        }
    }
    out
}

/// Runs `spec` over `sources` as one trace: one [`Outcome`] per source it applies to (the
/// sources that hold what it selects), or one over several sources on their common timeline
/// when a pair rule's start and end are only found in different sources.
pub fn run_spec(spec: &Spec, sources: &[Placed<'_>]) -> Result<Vec<Outcome>, AnalysisError> {
    for src in sources {
        check_names(spec, src)?;
    }
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

/// Whether every name `spec` gives (events, tracks, channels, span tracks) means one thing in
/// `src`: a name several end with is an error listing them, before anything runs. Names
/// `src` lacks are for the analyses to report.
pub fn check_names(spec: &Spec, src: &latscope_model::Source) -> Result<(), AnalysisError> {
    let rule = spec.name();
    let named =
        |error| AnalysisError::Pair(crate::endpoint::PairError::Name { rule: rule.to_owned(), error });
    let edge = |track: &str| Endpoint::edge(track, Edge::Any);
    // A bare selector is an event, else a track: both readings must be unambiguous.
    let selector = |sel: &Endpoint| -> Vec<Endpoint> {
        match sel {
            Endpoint::Event { name, preds } if preds.is_empty() => vec![sel.clone(), edge(name)],
            _ => vec![sel.clone()],
        }
    };
    let endpoints: Vec<Endpoint> = match spec {
        Spec::Pair(r) => vec![r.start.clone(), r.end.clone()],
        Spec::Pulse { channel, .. } => vec![edge(channel)],
        Spec::Stall { selector: sel, .. } | Spec::Poll { selector: sel, .. } => selector(sel),
        Spec::Long { track, .. } => {
            let spans = src.spans.iter().map(|s| s.name.as_str());
            match latscope_model::resolve_name(spans, track, "span track") {
                Err(e @ latscope_model::NameError::Ambiguous { .. }) => return Err(named(e)),
                _ => vec![edge(track)],
            }
        }
        Spec::Preset(Preset::CmdIrq { opts, .. } | Preset::Chain { opts, .. }) => {
            let mut v: Vec<Endpoint> = opts.cmd.iter().cloned().collect();
            if let Some(IrqSel::Endpoint(e)) = &opts.irq {
                v.push(e.clone());
            }
            v
        }
        Spec::Preset(_) => Vec::new(),
    };
    endpoints.iter().try_for_each(|e| e.check_names(src)).map_err(named)
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
            add_repeat_note(&mut o, &res, crate::live::REPEAT_NOTE);
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
        // The pairing ranked only the sources it read: name their events by input.
        for at in [&mut p.start_event, &mut p.end_event].into_iter().flatten() {
            at.source = idx.get(at.source as usize).map_or(u32::MAX, |&i| i as u32);
        }
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
        assert!(both.to_string().contains("applies to no open source (a.txt: "), "{both}");
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
        // Two traces of one kernel clock placed by their clock values are still two captures.
        let kernel = latscope_model::ClockDomain::Kernel(latscope_model::KernelClock::Unnamed);
        let (mut c, mut d) = (events("c", &["x"]), events("d", &["x"]));
        c.origin = latscope_model::ClockOrigin::from_secs_ps(470, 0).on(kernel);
        d.origin = latscope_model::ClockOrigin::from_secs_ps(474, 0).on(kernel);
        let sources = [c, d];
        let by_clock = Placed::by_clock(&sources);
        assert_eq!(by_clock[1].placement, Placement::new(4 * latscope_model::PS_PER_S, 0.0));
        assert_eq!(Scope::of(false, &by_clock), Scope::Each);
        assert_eq!(Scope::of(false, &Placed::all(&sources)), Scope::Together, "off its clock");
    }
}
