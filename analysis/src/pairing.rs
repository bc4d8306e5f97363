//! The generic pairing core (DESIGN §4.2) and the stall-window detector (DESIGN §4.4).
//!
//! A [`PairRule`] names a start and an end [`Endpoint`] — an ftrace event with field
//! predicates, or an edge on a named digital track — optional `by` key fields, a
//! [`Policy`] and an optional `within` timeout. [`pair`] walks a [`Source`] once, in time
//! order, and returns the pairs with the counts of starts never closed and ends that found
//! no open start. Presets, rule-spec parsing, statistics and reports are built on this.

use crate::model::{DigitalTrack, EventRef, FieldValue, Ps, Source, Sym};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// How a field value is compared with the text of a predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredOp {
    /// `field=value`: equal (numbers compare as numbers, strings byte for byte).
    Eq,
    /// `field!=value`.
    Ne,
    /// `field~text`: the string form contains `text`.
    Contains,
}

/// One field predicate of an event selector, e.g. `irq=36`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pred {
    pub field: String,
    pub op: PredOp,
    pub value: String,
}

impl Pred {
    pub fn new(field: impl Into<String>, op: PredOp, value: impl Into<String>) -> Self {
        Self { field: field.into(), op, value: value.into() }
    }
}

/// Which transitions of a digital track an endpoint selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Rise,
    Fall,
    Any,
}

/// One end of a pair rule (DESIGN §4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// An ftrace event by name, with field predicates that must all hold.
    Event { name: String, preds: Vec<Pred> },
    /// A transition of the digital track named `track`.
    Edge { track: String, edge: Edge },
}

impl Endpoint {
    pub fn event(name: impl Into<String>) -> Self {
        Endpoint::Event { name: name.into(), preds: Vec::new() }
    }
    pub fn event_where(name: impl Into<String>, preds: Vec<Pred>) -> Self {
        Endpoint::Event { name: name.into(), preds }
    }
    pub fn edge(track: impl Into<String>, edge: Edge) -> Self {
        Endpoint::Edge { track: track.into(), edge }
    }
}

/// DESIGN §4.2 policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// An end closes the oldest open start with its key.
    Fifo,
    /// An end closes the newest open start with its key (nesting).
    Lifo,
    /// One open start per key; a new start replaces it and the replaced one is unmatched.
    Next,
}

/// `start -> end [by KEY...] [policy P] [within D]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRule {
    pub name: String,
    pub start: Endpoint,
    pub end: Endpoint,
    /// Key fields as (start field, end field). `cpu`, `pid` and `comm` name the event's
    /// columns when the event has no field of that name.
    pub by: Vec<(String, String)>,
    pub policy: Policy,
    /// Starts older than this when an end arrives are dropped as unmatched.
    pub within: Option<Ps>,
}

impl PairRule {
    pub fn new(name: impl Into<String>, start: Endpoint, end: Endpoint, policy: Policy) -> Self {
        Self { name: name.into(), start, end, by: Vec::new(), policy, within: None }
    }
    /// Adds a key field with the same name on both sides.
    pub fn by(mut self, field: &str) -> Self {
        self.by.push((field.to_owned(), field.to_owned()));
        self
    }
    /// Adds a key pairing start field `start` with end field `end` (`pid:next_pid`).
    pub fn by_mapped(mut self, start: &str, end: &str) -> Self {
        self.by.push((start.to_owned(), end.to_owned()));
        self
    }
    pub fn within(mut self, d: Ps) -> Self {
        self.within = Some(d);
        self
    }
}

/// One value of a pair key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyVal {
    Int(i64),
    Str(Sym),
    /// The field is absent on this event.
    Missing,
}

/// A matched pair: start and end time (relative ps) and the key it was matched by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub start: Ps,
    pub end: Ps,
    pub key: Vec<KeyVal>,
}

impl Pair {
    pub fn duration(&self) -> Ps {
        self.end - self.start
    }
}

/// What [`pair`] found, pairs sorted by end time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairResult {
    pub pairs: Vec<Pair>,
    pub unmatched_start: u64,
    pub unmatched_end: u64,
}

impl PairResult {
    pub fn durations(&self) -> Vec<Ps> {
        self.pairs.iter().map(Pair::duration).collect()
    }
}

/// Errors in a rule that the source cannot satisfy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    #[error("rule {rule}: no digital track named {track:?}")]
    NoSuchTrack { rule: String, track: String },
}

/// An endpoint resolved against a source's strings, so matching compares symbols.
struct Resolved<'a> {
    /// `None` when the source never interned the event name: it cannot occur.
    name: Option<Sym>,
    preds: Vec<(Option<Sym>, &'a str, PredOp, &'a Pred)>,
}

fn resolve<'a>(src: &Source, name: &str, preds: &'a [Pred]) -> Resolved<'a> {
    Resolved {
        name: src.strings.lookup(name.as_bytes()),
        preds: preds
            .iter()
            .map(|p| (src.strings.lookup(p.field.as_bytes()), p.field.as_str(), p.op, p))
            .collect(),
    }
}

/// The value of a key or predicate field: a real field first, then the event's columns.
fn field_of(src: &Source, ev: &EventRef<'_>, sym: Option<Sym>, name: &str) -> Option<KeyVal> {
    if let Some(v) = sym.and_then(|s| ev.field(s)) {
        return Some(match v {
            FieldValue::Str(s) => KeyVal::Str(s),
            other => KeyVal::Int(other.as_i64().unwrap_or_default()),
        });
    }
    match name {
        "cpu" => Some(KeyVal::Int(i64::from(ev.cpu()))),
        "pid" => Some(KeyVal::Int(i64::from(ev.pid()))),
        "comm" => Some(KeyVal::Str(ev.comm())),
        _ => {
            let _ = src;
            None
        }
    }
}

fn pred_holds(src: &Source, ev: &EventRef<'_>, sym: Option<Sym>, name: &str, op: PredOp, p: &Pred) -> bool {
    let v = field_of(src, ev, sym, name);
    let text: std::borrow::Cow<'_, str> = match v {
        Some(KeyVal::Int(i)) => {
            // Numbers compare numerically so `state=4294967295` matches a u64 field too.
            if let (Ok(want), PredOp::Eq | PredOp::Ne) = (p.value.parse::<i128>(), op) {
                let got = match ev.field(sym.unwrap_or_default()) {
                    Some(FieldValue::UInt(u)) => i128::from(u),
                    _ => i128::from(i),
                };
                return (got == want) == (op == PredOp::Eq);
            }
            i.to_string().into()
        }
        Some(KeyVal::Str(s)) => src.strings.resolve(s),
        Some(KeyVal::Missing) | None => return op == PredOp::Ne,
    };
    match op {
        PredOp::Eq => text == p.value,
        PredOp::Ne => text != p.value,
        PredOp::Contains => text.contains(p.value.as_str()),
    }
}

fn matches(src: &Source, ev: &EventRef<'_>, r: &Resolved<'_>) -> bool {
    r.name == Some(ev.name())
        && r.preds.iter().all(|&(sym, name, op, p)| pred_holds(src, ev, sym, name, op, p))
}

fn edge_times(track: &DigitalTrack, edge: Edge) -> Vec<Ps> {
    let mut prev = track.initial;
    let mut out = Vec::new();
    for (&t, &l) in track.times.iter().zip(&track.levels) {
        let hit = match edge {
            Edge::Rise => prev == 0 && l == 1,
            Edge::Fall => prev == 1 && l == 0,
            Edge::Any => true,
        };
        if hit {
            out.push(t);
        }
        prev = l;
    }
    out
}

/// An occurrence of an endpoint: time, whether it ends and/or starts a pair, and its keys.
struct Occ {
    t: Ps,
    order: u64,
    is_end: bool,
    is_start: bool,
    start_key: Vec<KeyVal>,
    end_key: Vec<KeyVal>,
}

fn occurrences(src: &Source, rule: &PairRule) -> Result<Vec<Occ>, PairError> {
    let mut occ: Vec<Occ> = Vec::new();
    let start_fields: Vec<(Option<Sym>, &str)> =
        rule.by.iter().map(|(s, _)| (src.strings.lookup(s.as_bytes()), s.as_str())).collect();
    let end_fields: Vec<(Option<Sym>, &str)> =
        rule.by.iter().map(|(_, e)| (src.strings.lookup(e.as_bytes()), e.as_str())).collect();
    let key_of = |ev: &EventRef<'_>, fields: &[(Option<Sym>, &str)]| -> Vec<KeyVal> {
        fields.iter().map(|&(s, n)| field_of(src, ev, s, n).unwrap_or(KeyVal::Missing)).collect()
    };
    let start_ev = match &rule.start {
        Endpoint::Event { name, preds } => Some(resolve(src, name, preds)),
        Endpoint::Edge { .. } => None,
    };
    let end_ev = match &rule.end {
        Endpoint::Event { name, preds } => Some(resolve(src, name, preds)),
        Endpoint::Edge { .. } => None,
    };
    if start_ev.is_some() || end_ev.is_some() {
        for ev in src.events.iter() {
            let s = start_ev.as_ref().is_some_and(|r| matches(src, &ev, r));
            let e = end_ev.as_ref().is_some_and(|r| matches(src, &ev, r));
            if s || e {
                occ.push(Occ {
                    t: ev.ts(),
                    order: ev.index as u64,
                    is_end: e,
                    is_start: s,
                    start_key: if s { key_of(&ev, &start_fields) } else { Vec::new() },
                    end_key: if e { key_of(&ev, &end_fields) } else { Vec::new() },
                });
            }
        }
    }
    // Edges carry no fields: their key is empty, so a keyed rule only pairs them by time.
    let mut add_edges = |ep: &Endpoint, is_start: bool| -> Result<(), PairError> {
        if let Endpoint::Edge { track, edge } = ep {
            let (index, d) =
                src.digital.iter().enumerate().find(|(_, d)| &d.name == track).ok_or_else(|| {
                    PairError::NoSuchTrack { rule: rule.name.clone(), track: track.clone() }
                })?;
            let missing = vec![KeyVal::Missing; rule.by.len()];
            for t in edge_times(d, *edge) {
                occ.push(Occ {
                    t,
                    // After every event at this instant. A track has one transition per
                    // time, so the track identifies it (and merges start and end below).
                    order: (1 << 62) + index as u64,
                    is_end: !is_start,
                    is_start,
                    start_key: missing.clone(),
                    end_key: missing.clone(),
                });
            }
        }
        Ok(())
    };
    add_edges(&rule.start, true)?;
    add_edges(&rule.end, false)?;
    // Stable by time; at one instant, events keep file order and edges come after them.
    occ.sort_by_key(|o| (o.t, o.order));
    // A transition selected by both endpoints (`CH:rise -> CH:rise`, `CH:any -> CH:fall`)
    // is one occurrence that ends, then starts.
    let mut merged: Vec<Occ> = Vec::with_capacity(occ.len());
    for o in occ {
        match merged.last_mut() {
            Some(last) if last.t == o.t && last.order == o.order => {
                if o.is_start {
                    last.is_start = true;
                    last.start_key = o.start_key;
                }
                if o.is_end {
                    last.is_end = true;
                    last.end_key = o.end_key;
                }
            }
            _ => merged.push(o),
        }
    }
    Ok(merged)
}

/// Pairs `rule` over `src` (DESIGN §4.2). An occurrence that is both a start and an end
/// first closes, then opens, so `X -> X` yields consecutive intervals.
pub fn pair(src: &Source, rule: &PairRule) -> Result<PairResult, PairError> {
    let occ = occurrences(src, rule)?;
    let mut open: FxHashMap<Vec<KeyVal>, VecDeque<Ps>> = FxHashMap::default();
    let mut res = PairResult::default();
    let expired = |start: Ps, now: Ps| rule.within.is_some_and(|w| now - start > w);
    for o in occ {
        if o.is_end {
            let q = open.get_mut(&o.end_key);
            let mut closed = None;
            if let Some(q) = q {
                match rule.policy {
                    Policy::Fifo | Policy::Next => {
                        while let Some(&s) = q.front() {
                            q.pop_front();
                            if expired(s, o.t) {
                                res.unmatched_start += 1;
                            } else {
                                closed = Some(s);
                                break;
                            }
                        }
                    }
                    Policy::Lifo => {
                        if let Some(s) = q.pop_back() {
                            if expired(s, o.t) {
                                // Every older start is older still: all of them expired.
                                res.unmatched_start += 1 + q.len() as u64;
                                q.clear();
                            } else {
                                closed = Some(s);
                            }
                        }
                    }
                }
            }
            match closed {
                Some(s) => res.pairs.push(Pair { start: s, end: o.t, key: o.end_key.clone() }),
                None => res.unmatched_end += 1,
            }
        }
        if o.is_start {
            let q = open.entry(o.start_key).or_default();
            if rule.policy == Policy::Next && !q.is_empty() {
                res.unmatched_start += q.len() as u64;
                q.clear();
            }
            q.push_back(o.t);
        }
    }
    res.unmatched_start += open.values().map(|q| q.len() as u64).sum::<u64>();
    Ok(res)
}

/// A stall window: a gap in a periodic stream longer than `factor` x its median period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallWindow {
    pub start: Ps,
    pub end: Ps,
    /// The gap minus the median period.
    pub excess: Ps,
}

/// Stall windows in a sorted list of occurrence times (DESIGN §4.4). Returns the median
/// period (the upper median for an even count; 0 with fewer than two times) and the windows.
pub fn stall_windows_in(times: &[Ps], factor: f64) -> (Ps, Vec<StallWindow>) {
    if times.len() < 2 {
        return (0, Vec::new());
    }
    let mut gaps: Vec<Ps> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let mut sorted = gaps.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    let limit = factor * median as f64;
    let windows = times
        .windows(2)
        .zip(gaps.drain(..))
        .filter(|&(_, g)| g as f64 > limit)
        .map(|(w, g)| StallWindow { start: w[0], end: w[1], excess: g - median })
        .collect();
    (median, windows)
}

/// Stall windows between selected edges of a digital track.
pub fn stall_windows(track: &DigitalTrack, edge: Edge, factor: f64) -> (Ps, Vec<StallWindow>) {
    stall_windows_in(&edge_times(track, edge), factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventTableBuilder, FieldKind, IrqFlags, SourceKind};

    /// An event as (ts, cpu, name, [(field, int value)]).
    type Ev<'a> = (Ps, u16, &'a str, &'a [(&'a str, i64)]);

    fn source(events: &[Ev<'_>]) -> Source {
        let mut b = EventTableBuilder::new();
        let comm = b.intern(b"task");
        for &(ts, cpu, name, fields) in events {
            let n = b.intern(name.as_bytes());
            let f: Vec<(Sym, FieldKind)> =
                fields.iter().map(|(k, _)| (b.intern(k.as_bytes()), FieldKind::Int)).collect();
            let l = b.layout(n, &f);
            let v: Vec<FieldValue> = fields.iter().map(|&(_, v)| FieldValue::Int(v)).collect();
            b.push(ts, cpu, 1, comm, IrqFlags::NONE, l, &v);
        }
        let (events, strings) = b.finish().expect("finish");
        let mut s = Source::new("t", "test", SourceKind::Simulator);
        s.events = events;
        s.strings = strings;
        s
    }

    fn rule(policy: Policy) -> PairRule {
        PairRule::new("r", Endpoint::event("a"), Endpoint::event("b"), policy)
    }

    fn spans(r: &PairResult) -> Vec<(Ps, Ps)> {
        r.pairs.iter().map(|p| (p.start, p.end)).collect()
    }

    #[test]
    fn fifo_lifo_next_differ_exactly() {
        let s = source(&[
            (1, 0, "a", &[]),
            (2, 0, "a", &[]),
            (5, 0, "b", &[]),
            (7, 0, "b", &[]),
            (8, 0, "b", &[]),
        ]);
        let f = pair(&s, &rule(Policy::Fifo)).expect("pair");
        assert_eq!(spans(&f), [(1, 5), (2, 7)]);
        assert_eq!((f.unmatched_start, f.unmatched_end), (0, 1));
        let l = pair(&s, &rule(Policy::Lifo)).expect("pair");
        assert_eq!(spans(&l), [(2, 5), (1, 7)]);
        let n = pair(&s, &rule(Policy::Next)).expect("pair");
        assert_eq!(spans(&n), [(2, 5)]);
        assert_eq!((n.unmatched_start, n.unmatched_end), (1, 2));
    }

    #[test]
    fn keys_map_fields_and_columns() {
        let s = source(&[
            (1, 0, "wake", &[("pid", 10)]),
            (2, 1, "wake", &[("pid", 20)]),
            (3, 1, "switch", &[("next_pid", 20)]),
            (4, 0, "switch", &[("next_pid", 10)]),
            (6, 0, "switch", &[("next_pid", 30)]),
        ]);
        let r = PairRule::new("w", Endpoint::event("wake"), Endpoint::event("switch"), Policy::Fifo)
            .by_mapped("pid", "next_pid");
        let p = pair(&s, &r).expect("pair");
        assert_eq!(spans(&p), [(2, 3), (1, 4)]);
        assert_eq!(p.pairs[0].key, [KeyVal::Int(20)]);
        assert_eq!((p.unmatched_start, p.unmatched_end), (0, 1));
        // `cpu` is a column: the entry on cpu 1 pairs with the exit on cpu 1.
        let s = source(&[(1, 0, "a", &[]), (2, 1, "a", &[]), (3, 1, "b", &[]), (9, 0, "b", &[])]);
        let p = pair(&s, &rule(Policy::Lifo).by("cpu")).expect("pair");
        assert_eq!(spans(&p), [(2, 3), (1, 9)]);
    }

    #[test]
    fn predicates_and_within() {
        let s = source(&[
            (1, 0, "idle", &[("state", 2)]),
            (3, 0, "idle", &[("state", 4_294_967_295)]),
            (10, 0, "idle", &[("state", 1)]),
            (100, 0, "idle", &[("state", 4_294_967_295)]),
        ]);
        let r = PairRule::new(
            "idle",
            Endpoint::event_where("idle", vec![Pred::new("state", PredOp::Ne, "4294967295")]),
            Endpoint::event_where("idle", vec![Pred::new("state", PredOp::Eq, "4294967295")]),
            Policy::Next,
        );
        assert_eq!(spans(&pair(&s, &r).expect("pair")), [(1, 3), (10, 100)]);
        let p = pair(&s, &r.within(50)).expect("pair");
        assert_eq!(spans(&p), [(1, 3)]);
        assert_eq!((p.unmatched_start, p.unmatched_end), (1, 1));
    }

    #[test]
    fn digital_edges_pair_with_events() {
        let mut s = source(&[
            (15, 0, "irq_handler_entry", &[("irq", 5)]),
            (40, 0, "irq_handler_entry", &[("irq", 5)]),
        ]);
        let mut d = DigitalTrack::new("IRQ", 0);
        for (t, l) in [(10, 1), (20, 0), (30, 1), (35, 0)] {
            d.push(t, l);
        }
        s.digital.push(d);
        let r = PairRule::new(
            "cmd-irq",
            Endpoint::edge("IRQ", Edge::Rise),
            Endpoint::event("irq_handler_entry"),
            Policy::Next,
        );
        let p = pair(&s, &r).expect("pair");
        assert_eq!(spans(&p), [(10, 15), (30, 40)]);
        let bad = PairRule::new("x", Endpoint::edge("NOPE", Edge::Any), Endpoint::event("a"), Policy::Next);
        assert!(matches!(pair(&s, &bad), Err(PairError::NoSuchTrack { .. })));
        let pulses = PairRule::new(
            "pulse",
            Endpoint::edge("IRQ", Edge::Rise),
            Endpoint::edge("IRQ", Edge::Fall),
            Policy::Next,
        );
        assert_eq!(spans(&pair(&s, &pulses).expect("pair")), [(10, 20), (30, 35)]);
        let periods = PairRule::new(
            "period",
            Endpoint::edge("IRQ", Edge::Rise),
            Endpoint::edge("IRQ", Edge::Rise),
            Policy::Next,
        );
        let p = pair(&s, &periods).expect("pair");
        assert_eq!(spans(&p), [(10, 30)]);
        assert_eq!((p.unmatched_start, p.unmatched_end), (1, 1));
        let any_fall = PairRule::new(
            "x",
            Endpoint::edge("IRQ", Edge::Any),
            Endpoint::edge("IRQ", Edge::Fall),
            Policy::Next,
        );
        assert_eq!(spans(&pair(&s, &any_fall).expect("pair")), [(10, 20), (30, 35)]);
    }

    #[test]
    fn stall_windows_measure_excess_over_median() {
        let times = [0, 10, 20, 30, 75, 85, 95, 110];
        let (median, w) = stall_windows_in(&times, 1.5);
        assert_eq!(median, 10);
        assert_eq!(w, [StallWindow { start: 30, end: 75, excess: 35 }]);
        let (_, w) = stall_windows_in(&times, 1.4);
        assert_eq!(w.len(), 2);
        assert_eq!(stall_windows_in(&[5], 1.5), (0, Vec::new()));
    }
}
