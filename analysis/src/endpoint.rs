//! Endpoint selection: what a rule's start or end (or a detector's selector) picks out of
//! a source. An [`Endpoint`] is an ftrace event with field predicates, an edge of a digital
//! track, or a threshold crossing of an analog track; this module resolves it against a
//! source's strings once (so matching compares symbols) and lists where it occurs
//! ([`endpoint_times`], [`endpoint_events`]). Field lookup falls back from the event's field
//! to an alias (`host` is trace.dat's `name`) to the event's `cpu`/`pid`/`comm` columns.
//!
//! Event and track names resolve as users type them ([`latscope_model::resolve_name`]): the
//! exact name, else the one name ending with it after a separator (`CMD` is
//! `litesdcard.CMD`); a name several end with is an error listing them
//! ([`Endpoint::check_names`], which the runner asks before an analysis runs).

use latscope_model::kernel::MARKER_NAMES;
use latscope_model::{
    AnalogTrack, DigitalTrack, EventRef, FieldValue, NameError, Ps, Source, Sym, Threshold, resolve_name,
};

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
    /// event, or the track, as names resolve), whether or not any occurrence matches its
    /// predicates.
    pub fn present_in(&self, src: &Source) -> bool {
        match self {
            Endpoint::Event { name, .. } => matches!(event_sym(src, name), Ok(Some(_))),
            Endpoint::Edge { track, .. } => matches!(track_named(src, track), Ok(Some(_))),
            Endpoint::Crossing { track, .. } => matches!(analog_named(src, track), Ok(Some(_))),
        }
    }

    /// Whether the name this endpoint gives means one thing in `src`: an error listing the
    /// candidates when several names end with it. A name `src` lacks is not an error here.
    pub fn check_names(&self, src: &Source) -> Result<(), NameError> {
        match self {
            Endpoint::Event { name, .. } => event_sym(src, name).map(drop),
            Endpoint::Edge { track, .. } => track_named(src, track).map(drop),
            Endpoint::Crossing { track, .. } => analog_named(src, track).map(drop),
        }
    }
}

/// `Unknown` is no error for a lookup that may find nothing (the source lacks the name).
fn found<T>(r: Result<T, NameError>) -> Result<Option<T>, NameError> {
    match r {
        Ok(x) => Ok(Some(x)),
        Err(NameError::Unknown { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The event name `typed` means in `src`: the name itself when an event has it, else the
/// marker event's other name ([`MARKER_NAMES`]: a capture read from trace.dat or from its
/// text answers a rule that names either), else the one event name ending with it after a
/// separator; `None` when no event answers.
pub fn event_sym(src: &Source, typed: &str) -> Result<Option<Sym>, NameError> {
    let layouts = src.events.layouts();
    let exact = |name: &str| {
        src.strings.lookup(name.as_bytes()).filter(|&sym| layouts.iter().any(|l| l.event == sym))
    };
    if let Some(sym) = exact(typed) {
        return Ok(Some(sym));
    }
    if MARKER_NAMES.contains(&typed)
        && let Some(sym) = MARKER_NAMES.iter().filter(|&&n| n != typed).find_map(|n| exact(n))
    {
        return Ok(Some(sym));
    }
    let mut syms: Vec<Sym> = layouts.iter().map(|l| l.event).collect();
    syms.sort_unstable_by_key(|s| s.0);
    syms.dedup();
    let names: Vec<std::borrow::Cow<'_, str>> = syms.iter().map(|&s| src.strings.resolve(s)).collect();
    found(resolve_name(names.iter().map(|n| n.as_ref()), typed, "event")).map(|i| i.map(|i| syms[i]))
}

/// A digital or analog track of a source, by index within its kind.
#[derive(Debug, Clone, Copy)]
pub enum TrackRef<'a> {
    Digital(usize, &'a DigitalTrack),
    Analog(usize, &'a AnalogTrack),
}

/// The digital or analog track `typed` means in `src` (an exact digital name, an exact
/// analog one, else the one track whose name ends with it after a separator).
pub fn track_named<'a>(src: &'a Source, typed: &str) -> Result<Option<TrackRef<'a>>, NameError> {
    let names = src.digital.iter().map(|d| d.name.as_str()).chain(src.analog.iter().map(|a| a.name.as_str()));
    Ok(found(resolve_name(names, typed, "digital or analog track"))?.map(|i| match src.digital.get(i) {
        Some(d) => TrackRef::Digital(i, d),
        None => {
            let k = i - src.digital.len();
            TrackRef::Analog(k, &src.analog[k])
        }
    }))
}

/// The analog track `typed` means in `src` (see [`track_named`]).
pub fn analog_named<'a>(src: &'a Source, typed: &str) -> Result<Option<(usize, &'a AnalogTrack)>, NameError> {
    let names = src.analog.iter().map(|a| a.name.as_str());
    Ok(found(resolve_name(names, typed, "analog track"))?.map(|i| (i, &src.analog[i])))
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
    #[error("rule {rule}: {error}")]
    Name { rule: String, error: NameError },
}

/// An endpoint resolved against a source's strings, so matching compares symbols.
pub(crate) struct Resolved<'a> {
    /// `None` when the source never interned the event name: it cannot occur.
    pub(crate) name: Option<Sym>,
    pub(crate) preds: Vec<(Option<Sym>, Option<Sym>, &'a Pred)>,
}

/// `name` as names resolve ([`event_sym`]); an ambiguous name selects nothing here (the
/// runner reports it before an analysis runs: [`Endpoint::check_names`]).
pub(crate) fn resolve<'a>(src: &Source, name: &str, preds: &'a [Pred]) -> Resolved<'a> {
    Resolved {
        name: event_sym(src, name).ok().flatten(),
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
            // A device is written `MAJ,MIN` (`dev="254,0"`) or as its `dev_t`.
            if matches!(p.op, PredOp::Eq | PredOp::Ne)
                && let Some(want) = parse_int(&p.value)
                    .or_else(|| latscope_model::kernel::parse_dev(&p.value).map(i128::from))
            {
                return int_eq(got, want) == (p.op == PredOp::Eq);
            }
            match v {
                FieldValue::UInt(dev) if latscope_model::display::is_device(&p.field) => {
                    latscope_model::kernel::dev_text(dev).into()
                }
                _ => got.to_string().into(),
            }
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
    candidates_from(src, mask, 0)
}

/// [`candidates`] from the event at index `from` on.
pub(crate) fn candidates_from<'a>(
    src: &'a Source,
    mask: &'a [bool],
    from: usize,
) -> impl Iterator<Item = EventRef<'a>> + 'a {
    src.events
        .layout
        .get(from..)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter(|&(_, l)| mask.get(l.0 as usize).copied().unwrap_or(false))
        .filter_map(move |(i, _)| src.events.get(from + i))
}

pub(crate) fn matches(src: &Source, ev: &EventRef<'_>, r: &Resolved<'_>) -> bool {
    r.name == Some(ev.name()) && r.preds.iter().all(|&(sym, alias, p)| pred_holds(src, ev, sym, alias, p))
}

/// Times of the selected transitions of a digital track.
pub fn edge_times(track: &DigitalTrack, edge: Edge) -> Vec<Ps> {
    selected(track.initial, track.changes(), edge)
}

/// [`edge_times`] among the track's changes from index `from` on (a live source's new
/// ones): the level before is the change before's, or the initial level.
pub(crate) fn edge_times_from(track: &DigitalTrack, edge: Edge, from: usize) -> Vec<Ps> {
    let Some(before) = from.checked_sub(1) else { return edge_times(track, edge) };
    let levels = track.levels();
    let Some(&prev) = levels.get(before) else { return Vec::new() };
    selected(prev, (from..levels.len()).map(|i| (track.time(i), levels[i])), edge)
}

fn selected(mut prev: u8, changes: impl Iterator<Item = (Ps, u8)>, edge: Edge) -> Vec<Ps> {
    let mut out = Vec::new();
    for (t, l) in changes {
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
    let name_error = |error| PairError::Name { rule: rule.to_owned(), error };
    let analog = |i: usize, a: &AnalogTrack, th: Threshold| -> Result<Digital<'a>, PairError> {
        if th.resolve(a).is_none() {
            return Err(PairError::NoThreshold { rule: rule.to_owned(), track: a.name.clone() });
        }
        Ok((src.digital.len() + i, std::borrow::Cow::Owned(a.to_digital(th))))
    };
    match ep {
        Endpoint::Edge { track, .. } => match track_named(src, track).map_err(name_error)? {
            Some(TrackRef::Digital(i, d)) => Ok((i, std::borrow::Cow::Borrowed(d))),
            Some(TrackRef::Analog(i, a)) => analog(i, a, Threshold::Auto),
            None => Err(no_track(track)),
        },
        Endpoint::Crossing { track, level, .. } => match analog_named(src, track).map_err(name_error)? {
            Some((i, a)) => analog(i, a, Threshold::Fixed { level: level.0, hysteresis: 0.0 }),
            None => Err(no_track(track)),
        },
        Endpoint::Event { name, .. } => Err(no_track(name)),
    }
}

/// Times (relative ps, sorted) at which `ep` occurs in `src`. A source without the event
/// gives no times; a missing track is an error naming `rule`.
pub fn endpoint_times(src: &Source, rule: &str, ep: &Endpoint) -> Result<Vec<Ps>, PairError> {
    match ep {
        Endpoint::Event { name, preds } => {
            event_sym(src, name).map_err(|error| PairError::Name { rule: rule.to_owned(), error })?;
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
