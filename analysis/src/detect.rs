//! Detectors and pulse widths, as [`Outcome`]s:
//! - `pulse:CH[:high|low][@LEVEL]`: widths of high (low) pulses, rise -> next fall, policy
//!   next; an analog channel goes through its threshold (auto, or `@LEVEL` with no
//!   hysteresis). Kind `pulse`.
//! - `stall:SELECTOR [factor F]`: gaps between consecutive occurrences longer than F x the
//!   median gap (the upper median). Each is a window (excess = gap − median) and a sample
//!   (the gap). A note `median period (ps)` carries the median as its count (shown as a duration). Kind `stall`.
//! - `long:TRACK[:high|low][@LEVEL] over D`: spans of a span track, or high (low) phases of a
//!   digital/analog track, longer than D; windows with excess = length − D, and samples.
//!   Kind `stall`.
//! - `poll:SELECTOR within D [min N]`: polling loops, maximal runs of at least N (default 2)
//!   occurrences each within D of the previous; a sample per run from its first to its
//!   last occurrence with key `iterations=K`; a note `iterations` totals them. Kind `pulse`.
//!
//! A bare name as SELECTOR is the event of that name in a source that has it, else the
//! rising edges of the digital or analog track of that name.

use crate::endpoint::{self, Edge, Endpoint, Level, PairError};
use crate::measure::{AnalysisError, outcome_of};
use crate::outcome::{AnalysisKind, Note, Outcome, Sample, Window};
use crate::pairing::{self, Pair, PairResult, PairRule, Policy};
use crate::stall::stall_windows_in;
use latscope_model::{Placed, Ps, Source};

fn missing(rule: &str, what: String) -> AnalysisError {
    AnalysisError::Missing { rule: rule.to_owned(), what }
}

/// The endpoint a selector means in `src` (see the module doc), if `src` has it.
pub(crate) fn selector_in(sel: &Endpoint, src: &Source) -> Option<Endpoint> {
    if sel.present_in(src) {
        return Some(sel.clone());
    }
    match sel {
        Endpoint::Event { name, preds } if preds.is_empty() => {
            Some(Endpoint::edge(name.clone(), Edge::Rise)).filter(|e| e.present_in(src))
        }
        _ => None,
    }
}

pub(crate) fn phase_rule(name: &str, channel: &str, high: bool, level: Option<f64>) -> PairRule {
    let (a, b) = if high { (Edge::Rise, Edge::Fall) } else { (Edge::Fall, Edge::Rise) };
    let ep = |edge| match level {
        Some(l) => Endpoint::Crossing { track: channel.to_owned(), edge, level: Level(l) },
        None => Endpoint::edge(channel, edge),
    };
    PairRule::new(name, ep(a), ep(b), Policy::Next)
}

/// Pulses of one track straight from its transition times: a phase rule's two endpoints
/// are edges of the same track, so the pairing engine's general machinery (occurrence
/// records, sorting, keyed queues) is not needed. The result is `pairing::pair`'s with
/// policy next (tested against it): at one instant an end closes before a start opens, a
/// second start while one is open drops the first, an end with nothing open is unmatched.
pub(crate) fn pulse_pairs(src: &Source, rule: &PairRule) -> Result<PairResult, PairError> {
    let starts = endpoint::endpoint_times(src, &rule.name, &rule.start)?;
    let ends = endpoint::endpoint_times(src, &rule.name, &rule.end)?;
    let mut res = PairResult::default();
    res.pairs.reserve(starts.len().min(ends.len()));
    let mut next_start = starts.iter().copied().peekable();
    let mut open: Option<Ps> = None;
    let open_at = |t: Ps, open: &mut Option<Ps>, res: &mut PairResult| {
        if open.replace(t).is_some() {
            res.unmatched_start += 1;
        }
    };
    for &end in &ends {
        while let Some(t) = next_start.next_if(|&t| t < end) {
            open_at(t, &mut open, &mut res);
        }
        match open.take() {
            Some(t) => res.pairs.push(Pair {
                start: t,
                end,
                key: Vec::new(),
                flagged: false,
                start_event: None,
                end_event: None,
            }),
            None => {
                res.unmatched_end += 1;
                // Once a start has opened, the engine counts an unmatched end as a repeat.
                if starts.first().is_some_and(|&s| s < end) {
                    res.repeated_end += 1;
                }
            }
        }
    }
    for t in next_start {
        open_at(t, &mut open, &mut res);
    }
    res.unmatched_start += u64::from(open.is_some());
    Ok(res)
}

pub(crate) fn run_pulse(
    name: &str,
    channel: &str,
    high: bool,
    level: Option<f64>,
    sources: &[Placed<'_>],
) -> Result<Vec<Outcome>, AnalysisError> {
    let rule = phase_rule(name, channel, high, level);
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        if !rule.start.present_in(src) {
            continue;
        }
        let res = pulse_pairs(src, &rule)?;
        out.push(outcome_of(name, AnalysisKind::Pulse, i, &rule, &res, src));
    }
    if out.is_empty() {
        return Err(missing(name, format!("a digital or analog track {channel:?}")));
    }
    Ok(out)
}

pub(crate) fn run_stall(
    name: &str,
    selector: &Endpoint,
    factor: f64,
    sources: &[Placed<'_>],
) -> Result<Vec<Outcome>, AnalysisError> {
    per_source_times(name, selector, sources, |i, times| {
        let (median, windows) = stall_windows_in(times, factor);
        let mut o = Outcome::new(name, AnalysisKind::Stall, i);
        o.notes.push(Note { what: format!("median period{}", Note::PS_SUFFIX), count: median.max(0) as u64 });
        o.notes.push(Note { what: "occurrences".into(), count: times.len() as u64 });
        o.samples = windows.iter().map(|w| Sample::new(w.start, w.end, String::new())).collect();
        o.windows = windows.iter().map(|w| Window { start: w.start, end: w.end, excess: w.excess }).collect();
        o
    })
}

/// One outcome per source holding `selector`, from the times it occurs there; an error
/// when no source holds it.
fn per_source_times(
    name: &str,
    selector: &Endpoint,
    sources: &[Placed<'_>],
    mut outcome: impl FnMut(usize, &[Ps]) -> Outcome,
) -> Result<Vec<Outcome>, AnalysisError> {
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let Some(ep) = selector_in(selector, src) else { continue };
        let times = endpoint::endpoint_times(src, name, &ep)?;
        out.push(outcome(i, &times));
    }
    if out.is_empty() {
        return Err(missing(name, format!("an event or track {:?}", selector.target())));
    }
    Ok(out)
}

pub(crate) fn run_long(
    name: &str,
    track: &str,
    high: bool,
    level: Option<f64>,
    over: Ps,
    sources: &[Placed<'_>],
) -> Result<Vec<Outcome>, AnalysisError> {
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let spans = src.spans.iter().map(|s| s.name.as_str());
        let span =
            latscope_model::resolve_name(spans, track, "span track").ok().and_then(|i| src.spans.get(i));
        let intervals: Vec<(Ps, Ps, String)> = if let Some(s) = span {
            (0..s.len())
                .map(|k| (s.start[k], s.end[k], src.strings.resolve(s.label[k]).into_owned()))
                .collect()
        } else {
            let rule = phase_rule(name, track, high, level);
            if !rule.start.present_in(src) {
                continue;
            }
            pairing::pair(src, &rule)?.pairs.iter().map(|p| (p.start, p.end, String::new())).collect()
        };
        let mut o = Outcome::new(name, AnalysisKind::Stall, i);
        for (a, b, label) in intervals {
            if b - a > over {
                o.windows.push(Window { start: a, end: b, excess: b - a - over });
                o.samples.push(Sample::new(a, b, label));
            }
        }
        o.samples.sort_by_key(|s| s.start);
        o.windows.sort_by_key(|w| w.start);
        out.push(o);
    }
    if out.is_empty() {
        return Err(missing(name, format!("a span, digital or analog track {track:?}")));
    }
    Ok(out)
}

/// Maximal runs of `min` or more times, each within `spacing` of the previous: (first, last, count).
pub fn polling_runs(times: &[Ps], spacing: Ps, min: u32) -> Vec<(Ps, Ps, u64)> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < times.len() {
        let mut j = k;
        while j + 1 < times.len() && times[j + 1] - times[j] <= spacing {
            j += 1;
        }
        let n = (j - k + 1) as u64;
        if n >= u64::from(min) {
            out.push((times[k], times[j], n));
        }
        k = j + 1;
    }
    out
}

pub(crate) fn run_poll(
    name: &str,
    selector: &Endpoint,
    spacing: Ps,
    min: u32,
    sources: &[Placed<'_>],
) -> Result<Vec<Outcome>, AnalysisError> {
    per_source_times(name, selector, sources, |i, times| {
        let runs = polling_runs(times, spacing, min);
        let mut o = Outcome::new(name, AnalysisKind::Pulse, i);
        o.notes.push(Note { what: "iterations".into(), count: runs.iter().map(|r| r.2).sum() });
        o.samples = runs.iter().map(|&(a, b, n)| Sample::new(a, b, format!("iterations={n}"))).collect();
        o
    })
}
