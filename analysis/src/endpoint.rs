//! Endpoint selection: what a rule's start or end (or a detector's selector) picks out of
//! a source. An [`Endpoint`] is an ftrace event with field predicates, an edge of a digital
//! track, or a threshold crossing of an analog track; this module resolves it against a
//! source's strings once (so matching compares symbols) and lists where it occurs
//! ([`endpoint_times`], [`endpoint_events`]). Field lookup falls back from the event's field
//! to an alias (`host` is trace.dat's `name`) to the event's `cpu`/`pid`/`comm` columns.

use latscope_model::{AnalogTrack, DigitalTrack, EventRef, FieldValue, Ps, Source, Sym, Threshold};

/// How a field value is compared with the text of a predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredOp {
    /// `field=value`: equal (numbers compare as numbers, strings byte for byte).
    Eq,
    /// `field!=value`.
    Ne,
    /// `field~text`: the string form contains `text`.
    Contains,
    /// `field!~text`: the string form does not contain `text` (a missing field holds).
    NotContains,
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

/// An analog threshold level in the track's unit. Compared by bit pattern so rules stay `Eq`.
#[derive(Debug, Clone, Copy)]
pub struct Level(pub f64);

impl PartialEq for Level {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}
impl Eq for Level {}

/// One end of a pair rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// An ftrace event by name, with field predicates that must all hold.
    Event { name: String, preds: Vec<Pred> },
    /// A transition of the digital track named `track`; on an analog track of that name, a
    /// crossing of its automatic threshold ([`Threshold::Auto`]).
    Edge { track: String, edge: Edge },
    /// A crossing of `level` on the analog track `track` (`CH:rise@1.65`), with no
    /// hysteresis: the signal crosses the level exactly once per edge it reports.
    Crossing { track: String, edge: Edge, level: Level },
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

    /// What the endpoint names: the event or the track.
    pub fn target(&self) -> &str {
        match self {
            Endpoint::Event { name, .. } => name,
            Endpoint::Edge { track, .. } | Endpoint::Crossing { track, .. } => track,
        }
    }

    /// Whether `src` holds what this endpoint selects from (the event name on at least one
    /// event, or the track), whether or not any occurrence matches its predicates.
    pub fn present_in(&self, src: &Source) -> bool {
        match self {
            Endpoint::Event { name, .. } => src
                .strings
                .lookup(name.as_bytes())
                .is_some_and(|sym| src.events.layouts().iter().any(|l| l.event == sym)),
            Endpoint::Edge { track, .. } => {
                src.digital.iter().any(|d| &d.name == track) || src.analog.iter().any(|a| &a.name == track)
            }
            Endpoint::Crossing { track, .. } => src.analog.iter().any(|a| &a.name == track),
        }
    }
}

/// Errors in a rule that a source cannot satisfy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    #[error("rule {rule}: no digital or analog track named {track:?}")]
    NoSuchTrack { rule: String, track: String },
    #[error("rule {rule}: analog track {track:?} has no finite sample to put a threshold on")]
    NoThreshold { rule: String, track: String },
    #[error("rule {rule}: {count} key fields; at most {max} are supported")]
    TooManyKeys { rule: String, count: usize, max: usize },
}

/// An endpoint resolved against a source's strings, so matching compares symbols.
pub(crate) struct Resolved<'a> {
    /// `None` when the source never interned the event name: it cannot occur.
    pub(crate) name: Option<Sym>,
    pub(crate) preds: Vec<(Option<Sym>, Option<Sym>, &'a Pred)>,
}

pub(crate) fn resolve<'a>(src: &Source, name: &str, preds: &'a [Pred]) -> Resolved<'a> {
    Resolved {
        name: src.strings.lookup(name.as_bytes()),
        preds: preds
            .iter()
            .map(|p| (src.strings.lookup(p.field.as_bytes()), alias_sym(src, &p.field), p))
            .collect(),
    }
}

/// The field tried when `name` is absent: trace.dat's mmc events call the host `name`,
/// while the text format prints it as `mmc0:` (stored as `host`).
pub(crate) fn alias_sym(src: &Source, name: &str) -> Option<Sym> {
    match name {
        "host" => src.strings.lookup(b"name"),
        _ => None,
    }
}

/// The value of a key or predicate field: a real field first, then its alias, then the
/// event's columns (`cpu`, `pid`, `comm`).
pub(crate) fn field_of(
    ev: &EventRef<'_>,
    sym: Option<Sym>,
    alias: Option<Sym>,
    name: &str,
) -> Option<FieldValue> {
    if let Some(v) = sym.and_then(|s| ev.field(s)) {
        return Some(v);
    }
    if let Some(v) = alias.and_then(|s| ev.field(s)) {
        return Some(v);
    }
    match name {
        "cpu" => Some(FieldValue::Int(i64::from(ev.cpu()))),
        "pid" => Some(FieldValue::Int(i64::from(ev.pid()))),
        "comm" => Some(FieldValue::Str(ev.comm())),
        _ => None,
    }
}

/// Integer equality that also treats a negative value as its 32- and 64-bit two's
/// complement, so `state=4294967295` matches kernels that print `state=-1`.
pub(crate) fn int_eq(got: i128, want: i128) -> bool {
    const W32: i128 = 1 << 32;
    const W64: i128 = 1 << 64;
    got == want
        || (got < 0 && (got + W32 == want || got + W64 == want))
        || (want < 0 && (want + W32 == got || want + W64 == got))
}

fn pred_holds(src: &Source, ev: &EventRef<'_>, sym: Option<Sym>, alias: Option<Sym>, p: &Pred) -> bool {
    let Some(v) = field_of(ev, sym, alias, &p.field) else {
        return matches!(p.op, PredOp::Ne | PredOp::NotContains);
    };
    let text: std::borrow::Cow<'_, str> = match v {
        FieldValue::Str(s) => src.strings.resolve(s),
        FieldValue::Int(_) | FieldValue::UInt(_) => {
            let got = match v {
                FieldValue::UInt(u) => i128::from(u),
                other => i128::from(other.as_i64().unwrap_or_default()),
            };
            if matches!(p.op, PredOp::Eq | PredOp::Ne)
                && let Some(want) = parse_int(&p.value)
            {
                return int_eq(got, want) == (p.op == PredOp::Eq);
            }
            got.to_string().into()
        }
    };
    match p.op {
        PredOp::Eq => text == p.value,
        PredOp::Ne => text != p.value,
        PredOp::Contains => text.contains(p.value.as_str()),
        PredOp::NotContains => !text.contains(p.value.as_str()),
    }
}

/// A decimal or `0x` hexadecimal integer.
fn parse_int(s: &str) -> Option<i128> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let v = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => i128::from_str_radix(hex, 16).ok()?,
        None => digits.parse::<i128>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// One flag per layout of `src`: whether events of that layout are named `name`. Scans
/// test a flag per event instead of following each event's layout to its name.
pub(crate) fn layout_mask(src: &Source, name: Option<Sym>) -> Vec<bool> {
    src.events.layouts().iter().map(|l| Some(l.event) == name).collect()
}

/// The events whose layout `mask` selects, in table order.
pub(crate) fn candidates<'a>(src: &'a Source, mask: &'a [bool]) -> impl Iterator<Item = EventRef<'a>> + 'a {
    src.events
        .layout
        .iter()
        .enumerate()
        .filter(|&(_, l)| mask.get(l.0 as usize).copied().unwrap_or(false))
        .filter_map(|(i, _)| src.events.get(i))
}

pub(crate) fn matches(src: &Source, ev: &EventRef<'_>, r: &Resolved<'_>) -> bool {
    r.name == Some(ev.name()) && r.preds.iter().all(|&(sym, alias, p)| pred_holds(src, ev, sym, alias, p))
}

/// Times of the selected transitions of a digital track.
pub fn edge_times(track: &DigitalTrack, edge: Edge) -> Vec<Ps> {
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

/// The digital view of an edge or crossing endpoint's track, and its index among the
/// source's tracks (digital first, then analog) for ordering simultaneous occurrences.
pub(crate) type Digital<'a> = (usize, std::borrow::Cow<'a, DigitalTrack>);

pub(crate) fn digital_of<'a>(src: &'a Source, rule: &str, ep: &Endpoint) -> Result<Digital<'a>, PairError> {
    let no_track = |track: &str| PairError::NoSuchTrack { rule: rule.to_owned(), track: track.to_owned() };
    let analog = |track: &str, th: Threshold| -> Result<Digital<'a>, PairError> {
        let (i, a): (usize, &AnalogTrack) =
            src.analog.iter().enumerate().find(|(_, a)| a.name == track).ok_or_else(|| no_track(track))?;
        if th.resolve(a).is_none() {
            return Err(PairError::NoThreshold { rule: rule.to_owned(), track: track.to_owned() });
        }
        Ok((src.digital.len() + i, std::borrow::Cow::Owned(a.to_digital(th))))
    };
    match ep {
        Endpoint::Edge { track, .. } => {
            match src.digital.iter().enumerate().find(|(_, d)| &d.name == track) {
                Some((i, d)) => Ok((i, std::borrow::Cow::Borrowed(d))),
                None => analog(track, Threshold::Auto),
            }
        }
        Endpoint::Crossing { track, level, .. } => {
            analog(track, Threshold::Fixed { level: level.0, hysteresis: 0.0 })
        }
        Endpoint::Event { name, .. } => Err(no_track(name)),
    }
}

/// Times (relative ps, sorted) at which `ep` occurs in `src`. A source without the event
/// gives no times; a missing track is an error naming `rule`.
pub fn endpoint_times(src: &Source, rule: &str, ep: &Endpoint) -> Result<Vec<Ps>, PairError> {
    match ep {
        Endpoint::Event { name, preds } => {
            let r = resolve(src, name, preds);
            if r.name.is_none() {
                return Ok(Vec::new());
            }
            let mask = layout_mask(src, r.name);
            Ok(candidates(src, &mask).filter(|ev| matches(src, ev, &r)).map(|ev| ev.ts()).collect())
        }
        Endpoint::Edge { edge, .. } | Endpoint::Crossing { edge, .. } => {
            let (_, d) = digital_of(src, rule, ep)?;
            Ok(edge_times(&d, *edge))
        }
    }
}

/// Indices of the events `ep` selects in `src` (empty for edges and crossings).
pub fn endpoint_events(src: &Source, ep: &Endpoint) -> Vec<usize> {
    match ep {
        Endpoint::Event { name, preds } => {
            let r = resolve(src, name, preds);
            if r.name.is_none() {
                return Vec::new();
            }
            let mask = layout_mask(src, r.name);
            candidates(src, &mask).filter(|ev| matches(src, ev, &r)).map(|ev| ev.index).collect()
        }
        _ => Vec::new(),
    }
}

pub(crate) fn resolved<'a>(src: &Source, ep: &'a Endpoint) -> Option<Resolved<'a>> {
    match ep {
        Endpoint::Event { name, preds } => Some(resolve(src, name, preds)).filter(|r| r.name.is_some()),
        _ => None,
    }
}

/// A field of events resolved once against a source: the field itself, then its alias,
/// then the `cpu`/`pid`/`comm` columns.
#[derive(Debug, Clone)]
pub struct FieldSel {
    sym: Option<Sym>,
    alias: Option<Sym>,
    name: String,
}

impl FieldSel {
    pub fn new(src: &Source, name: &str) -> Self {
        Self { sym: src.strings.lookup(name.as_bytes()), alias: alias_sym(src, name), name: name.to_owned() }
    }
    pub fn get(&self, ev: &EventRef<'_>) -> Option<FieldValue> {
        field_of(ev, self.sym, self.alias, &self.name)
    }
    /// Whether [`FieldSel::get`] reads only the event's own field `sym` (no alias, no
    /// column): then a caller that decodes all fields once may pick it out itself.
    pub(crate) fn plain_sym(&self) -> Option<Option<Sym>> {
        let column = matches!(self.name.as_str(), "cpu" | "pid" | "comm");
        (self.alias.is_none() && !column).then_some(self.sym)
    }
}
