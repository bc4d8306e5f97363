//! The pairing engine. A [`PairRule`] names a start and an end
//! [`Endpoint`], optional `by` key fields, a [`Policy`] and an optional `within` timeout.
//! [`pair`] walks a [`Source`] once, in time order, and returns the pairs with the counts of
//! starts never closed and ends that found no open start. [`pair_across`] does the same over
//! several placed sources on their common timeline. What an endpoint selects
//! is `endpoint`'s; presets, chains and detectors are built on this.
//!
//! Matching compares interned symbols; a key is rendered to text only for matched pairs.

use crate::endpoint::{
    Endpoint, PairError, Resolved, TrackRef, alias_sym, candidates_from, digital_of, edge_times_from,
    field_of, layout_mask, matches, resolved, track_named,
};
use crate::outcome::EventAt;
use latscope_model::{EventRef, FieldValue, Interner, Placed, Ps, Source, Sym};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// The pairing policies (fifo, lifo, next), plus `First` for the `wakeup` preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// An end closes the oldest open start with its key.
    Fifo,
    /// An end closes the newest open start with its key (nesting).
    Lifo,
    /// One open start per key; a new start replaces it and the replaced one is unmatched.
    Next,
    /// An end closes the oldest open start with its key, and the other open starts of that
    /// key are dropped as unmatched (`policy first`: a switch-in ends every pending wakeup).
    First,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Lifo => "lifo",
            Policy::Next => "next",
            Policy::First => "first",
        }
    }
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

/// The most key fields a rule may have: keys are stored inline, so pairing a million events
/// allocates nothing per event.
pub const MAX_KEYS: usize = 4;

/// A key as stored while pairing: unused slots are `Missing`.
type Key = [KeyVal; MAX_KEYS];

const NO_KEY: Key = [KeyVal::Missing; MAX_KEYS];

fn key_from(v: &[KeyVal]) -> Key {
    let mut k = NO_KEY;
    for (slot, &x) in k.iter_mut().zip(v) {
        *slot = x;
    }
    k
}

/// A matched pair: start and end time (relative ps), the key it was matched by, and the
/// events its ends are (none for an edge of a digital track).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub start: Ps,
    pub end: Ps,
    pub key: Vec<KeyVal>,
    /// Its start or end is a decoded annotation that failed (a CRC error, a frame cut by a
    /// stopped clock): the pair is kept apart from the statistics by default.
    pub flagged: bool,
    pub start_event: Option<EventAt>,
    pub end_event: Option<EventAt>,
}

/// An occurrence's `order` packs the source's rank (bits 48..) over the event's index
/// (below 2^40) or, from 2^40 up, an edge's track: the event it is, if it is one.
fn event_at(order: u64) -> Option<EventAt> {
    let local = order & ((1 << 48) - 1);
    (local < (1 << 40)).then_some(EventAt { source: (order >> 48) as u32, index: local as u32 })
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
    /// Unmatched ends whose key had already closed a pair: the same request completed twice
    /// (or its start was lost between two ends), counted within `unmatched_end`.
    pub repeated_end: u64,
}

impl PairResult {
    pub fn durations(&self) -> Vec<Ps> {
        self.pairs.iter().map(Pair::duration).collect()
    }
}

fn to_key(v: FieldValue) -> KeyVal {
    match v {
        FieldValue::Str(s) => KeyVal::Str(s),
        other => KeyVal::Int(other.as_i64().unwrap_or_default()),
    }
}

/// An occurrence of an endpoint: time, whether it ends and/or starts a pair, and its keys.
#[derive(Debug)]
pub(crate) struct Occ {
    t: Ps,
    order: u64,
    is_end: bool,
    is_start: bool,
    start_key: Key,
    end_key: Key,
    /// The event is a failed decode ([`flagged_layouts`]).
    flagged: bool,
}

/// Per layout of `src`: whether its events are decoded annotations that failed, which
/// carry a text field `error` naming the failure (`crc`, `clock stopped`). A kernel's
/// `error` field is an errno, an integer, and flags nothing.
pub(crate) fn flagged_layouts(src: &Source) -> Vec<bool> {
    let Some(error) = src.strings.lookup(b"error") else { return vec![false; src.events.layouts().len()] };
    src.events
        .layouts()
        .iter()
        .map(|l| l.fields.iter().any(|&(name, kind)| name == error && kind == latscope_model::FieldKind::Str))
        .collect()
}

/// Occurrences of `rule`'s endpoints in `src`, unsorted. `order` ranks simultaneous ones:
/// events in file order, then edges; `source_rank` separates sources. With `across`, an
/// edge endpoint whose track this source lacks gives nothing instead of an error.
fn event_occurrences(
    src: &Source,
    rule: &PairRule,
    source_rank: u64,
    from: usize,
    emit: &mut dyn FnMut(Occ),
) -> Result<(), PairError> {
    let fields = |pick: fn(&(String, String)) -> &String| -> Vec<(Option<Sym>, Option<Sym>, &str)> {
        rule.by
            .iter()
            .map(|f| {
                let n = pick(f).as_str();
                (src.strings.lookup(n.as_bytes()), alias_sym(src, n), n)
            })
            .collect()
    };
    let start_fields = fields(|f| &f.0);
    let end_fields = fields(|f| &f.1);
    if rule.by.len() > MAX_KEYS {
        return Err(PairError::TooManyKeys { rule: rule.name.clone(), count: rule.by.len(), max: MAX_KEYS });
    }
    let key_of = |ev: &EventRef<'_>, fields: &[(Option<Sym>, Option<Sym>, &str)]| -> Key {
        let mut k = NO_KEY;
        for (slot, &(s, a, n)) in k.iter_mut().zip(fields) {
            *slot = field_of(ev, s, a, n).map_or(KeyVal::Missing, to_key);
        }
        k
    };
    let start_ev = resolved(src, &rule.start);
    let end_ev = resolved(src, &rule.end);
    let base = source_rank << 48;
    let flagged = flagged_layouts(src);
    if start_ev.is_some() || end_ev.is_some() {
        let names = |r: &Option<Resolved<'_>>| layout_mask(src, r.as_ref().and_then(|r| r.name));
        let (start_mask, end_mask) = (names(&start_ev), names(&end_ev));
        let mask: Vec<bool> = start_mask.iter().zip(&end_mask).map(|(&a, &b)| a || b).collect();
        for ev in candidates_from(src, &mask, from) {
            let s = start_ev.as_ref().is_some_and(|r| matches(src, &ev, r));
            let e = end_ev.as_ref().is_some_and(|r| matches(src, &ev, r));
            if s || e {
                emit(Occ {
                    t: ev.ts(),
                    order: base + ev.index as u64,
                    is_end: e,
                    is_start: s,
                    start_key: if s { key_of(&ev, &start_fields) } else { NO_KEY },
                    end_key: if e { key_of(&ev, &end_fields) } else { NO_KEY },
                    flagged: flagged.get(src.events.layout[ev.index].0 as usize).copied().unwrap_or(false),
                });
            }
        }
    }
    Ok(())
}

/// Edge and crossing occurrences of `rule`'s endpoints in `src`, unsorted. With `seen`
/// (a live source's changes already read, per endpoint), only the changes past it, and
/// `seen` moves to the tracks' ends.
fn edge_occurrences(
    src: &Source,
    rule: &PairRule,
    source_rank: u64,
    across: bool,
    mut seen: Option<&mut [usize; 2]>,
) -> Result<Vec<Occ>, PairError> {
    let mut occ = Vec::new();
    let base = source_rank << 48;
    // Edges carry no fields: their key is all `Missing`, so a keyed rule only pairs them by time.
    for (k, (ep, is_start)) in [(&rule.start, true), (&rule.end, false)].into_iter().enumerate() {
        if let Endpoint::Edge { edge, .. } | Endpoint::Crossing { edge, .. } = ep {
            // Across sources, each source gives the endpoints it has.
            if across && !ep.present_in(src) {
                continue;
            }
            let (index, d) = digital_of(src, &rule.name, ep)?;
            let from = seen.as_deref().map_or(0, |s| s[k]);
            for t in edge_times_from(&d, *edge, from) {
                occ.push(Occ {
                    t,
                    // After every event at this instant. A track has one transition per
                    // time, so the track identifies it (and merges start and end below).
                    order: base + (1 << 40) + index as u64,
                    is_end: !is_start,
                    is_start,
                    start_key: NO_KEY,
                    end_key: NO_KEY,
                    flagged: false,
                });
            }
            if let Some(s) = seen.as_deref_mut() {
                s[k] = d.transitions();
            }
        }
    }
    Ok(occ)
}

/// Sorts by time (at one instant: source, then file order, edges last) and merges a
/// transition selected by both endpoints (`CH:rise -> CH:rise`, `CH:any -> CH:fall`)
/// into one occurrence that ends, then starts.
fn sort_merge(mut occ: Vec<Occ>) -> Vec<Occ> {
    // Events arrive in time order; only edges appended after them need the sort, and only
    // a transition selected twice needs the merge (which copies everything).
    if !occ.is_sorted_by_key(|o| (o.t, o.order)) {
        occ.sort_by_key(|o| (o.t, o.order));
    }
    if !occ.windows(2).any(|w| w[0].t == w[1].t && w[0].order == w[1].order) {
        return occ;
    }
    let mut merged: Vec<Occ> = Vec::with_capacity(occ.len());
    for o in occ {
        match merged.last_mut() {
            Some(last) if last.t == o.t && last.order == o.order => {
                if o.is_start {
                    last.is_start = true;
                    last.start_key = o.start_key;
                }
                last.flagged |= o.flagged;
                if o.is_end {
                    last.is_end = true;
                    last.end_key = o.end_key;
                }
            }
            _ => merged.push(o),
        }
    }
    merged
}

/// Pairs `rule` over `src`. An occurrence that is both a start and an end
/// first closes, then opens, so `X -> X` yields consecutive intervals.
pub fn pair(src: &Source, rule: &PairRule) -> Result<PairResult, PairError> {
    let mut engine = Engine::new(rule);
    feed_source(&mut engine, src, rule, 0, None)?;
    Ok(engine.finish())
}

/// Feeds `engine` the occurrences of `rule` in `src` in time order, from event `from` on
/// and, with `seen`, from each edge endpoint's change `seen[k]` on (moved to the tracks'
/// ends). Event occurrences stream straight in (they come in time order); the edges,
/// usually few, are sorted apart and merged into the stream. Nothing is fed on an error.
fn feed_source(
    engine: &mut Engine,
    src: &Source,
    rule: &PairRule,
    from: usize,
    seen: Option<&mut [usize; 2]>,
) -> Result<(), PairError> {
    let edges = sort_merge(edge_occurrences(src, rule, 0, false, seen)?);
    let mut edges = edges.into_iter().peekable();
    event_occurrences(src, rule, 0, from, &mut |o| {
        while let Some(e) = edges.next_if(|e| (e.t, e.order) < (o.t, o.order)) {
            engine.feed(e);
        }
        engine.feed(o);
    })?;
    edges.for_each(|e| engine.feed(e));
    Ok(())
}

/// Pairing kept up to date over a source that only grows (a live capture's snapshots).
/// Each snapshot holds everything recorded before some time T; the next one adds only
/// what is at or after T, appended to the event table and to the digital tracks. Each
/// [`LivePairer::advance`] reads only what is new, and the starts still open wait in the
/// engine: after it, the pairs it returned so far with [`LivePairer::counts`] are what
/// [`pair`] gives on that snapshot.
#[derive(Debug)]
pub struct LivePairer {
    rule: PairRule,
    engine: Engine,
    /// Events read, and each edge endpoint's track changes read (start, end).
    events: usize,
    changes: [usize; 2],
}

impl LivePairer {
    pub fn new(rule: PairRule) -> Self {
        let engine = Engine::new(&rule);
        Self { rule, engine, events: 0, changes: [0; 2] }
    }

    pub fn rule(&self) -> &PairRule {
        &self.rule
    }

    /// Whether `rule` can be paired this way over `src`: an edge endpoint must be a digital
    /// track's (an analog track's edges come from a threshold chosen over the whole track,
    /// which moves as it grows), and a crossing is an analog track's.
    pub fn applies(rule: &PairRule, src: &Source) -> bool {
        [&rule.start, &rule.end].into_iter().all(|ep| match ep {
            Endpoint::Event { .. } => true,
            Endpoint::Edge { track, .. } => {
                matches!(track_named(src, track), Ok(Some(TrackRef::Digital(..))))
            }
            Endpoint::Crossing { .. } => false,
        })
    }

    /// Whether `src` is shorter than what was read: it does not extend the source this
    /// pairer follows.
    pub fn behind(&self, src: &Source) -> bool {
        read_past(&self.rule, src, self.events, self.changes)
    }

    /// Pairs what `src` holds past what earlier calls read; returns the pairs that closed,
    /// sorted by end. Nothing is read when it fails.
    pub fn advance(&mut self, src: &Source) -> Result<Vec<Pair>, PairError> {
        let mut changes = self.changes;
        feed_source(&mut self.engine, src, &self.rule, self.events, Some(&mut changes))?;
        self.events = src.events.len();
        self.changes = changes;
        Ok(std::mem::take(&mut self.engine.res.pairs))
    }

    /// What [`pair`] would count on the source read so far (no pairs): the starts still
    /// open count as unmatched, as they do at the end of a file.
    pub fn counts(&self) -> PairResult {
        self.engine.counts()
    }
}

/// Whether `src` holds fewer events than `events`, or fewer changes on an edge endpoint's
/// track than `changes` (start, end): what was read of it is not a part of it.
fn read_past(rule: &PairRule, src: &Source, events: usize, changes: [usize; 2]) -> bool {
    src.events.len() < events
        || [&rule.start, &rule.end].into_iter().zip(changes).any(|(ep, seen)| {
            seen > 0 && digital_of(src, &rule.name, ep).map_or(true, |(_, d)| d.transitions() < seen)
        })
}

/// `rule`'s occurrences in `src` (source `rank`) on the common timeline, unsorted: events
/// from index `from`, and edges past `seen` (all of them without it, which then moves to
/// the tracks' ends). String keys are interned in `shared`, so they compare by their text
/// across sources.
fn common_occurrences(
    src: &Placed<'_>,
    rule: &PairRule,
    rank: usize,
    from: usize,
    seen: Option<&mut [usize; 2]>,
    shared: &mut Interner,
) -> Result<Vec<Occ>, PairError> {
    let mut occ = edge_occurrences(src, rule, rank as u64, true, seen)?;
    event_occurrences(src, rule, rank as u64, from, &mut |o| occ.push(o))?;
    for o in &mut occ {
        o.t = src.to_common(o.t);
        for k in o.start_key.iter_mut().chain(o.end_key.iter_mut()) {
            if let KeyVal::Str(s) = k {
                *s = shared.intern(src.strings.bytes_of(*s));
            }
        }
    }
    Ok(occ)
}

/// [`pair_across`] kept up to date over sources that only grow (a recording's kernel and
/// the logic analyzer beside it): each call's sources extend the previous call's, and
/// `complete` is a common time before which every source holds all it will ever hold.
/// Each [`LiveAcrossPairer::advance`] reads only what is new; what lies at or after
/// `complete` waits for a later call, so occurrences are paired in the order
/// [`pair_across`] pairs them, whichever source they arrived in first.
#[derive(Debug)]
pub struct LiveAcrossPairer {
    rule: PairRule,
    engine: Engine,
    /// The string keys of every source, compared by their text.
    shared: Interner,
    /// Per source: events read, and each edge endpoint's track changes read.
    read: Vec<(usize, [usize; 2])>,
    /// Occurrences read at or after the last `complete`, by time.
    held: Vec<Occ>,
}

impl LiveAcrossPairer {
    pub fn new(rule: PairRule) -> Self {
        let engine = Engine::new(&rule);
        Self { rule, engine, shared: Interner::new(), read: Vec::new(), held: Vec::new() }
    }

    /// Whether a source is shorter than what was read of it: it does not extend the one
    /// this pairer follows.
    pub fn behind(&self, sources: &[Placed<'_>]) -> bool {
        self.read
            .iter()
            .zip(sources)
            .any(|(&(events, changes), src)| read_past(&self.rule, src, events, changes))
    }

    /// Reads what each source holds past what earlier calls read, and pairs what lies
    /// before `complete` (common time); returns the pairs that closed, in common time, with
    /// their events named by the index of their source. Nothing is read when it fails.
    pub fn advance(&mut self, sources: &[Placed<'_>], complete: Ps) -> Result<Vec<Pair>, PairError> {
        let mut read = self.read.clone();
        read.resize(sources.len(), (0, [0; 2]));
        let mut fresh = Vec::new();
        for (rank, src) in sources.iter().enumerate() {
            let (from, mut seen) = read[rank];
            fresh.extend(common_occurrences(src, &self.rule, rank, from, Some(&mut seen), &mut self.shared)?);
            read[rank] = (src.events.len(), seen);
        }
        self.read = read;
        fresh.append(&mut self.held);
        let mut ready = sort_merge(fresh);
        self.held = ready.split_off(ready.partition_point(|o| o.t < complete));
        ready.into_iter().for_each(|o| self.engine.feed(o));
        Ok(std::mem::take(&mut self.engine.res.pairs))
    }

    /// The interner the pairs' string keys refer to.
    pub fn strings(&self) -> &Interner {
        &self.shared
    }
}

/// Pairs `rule` over several sources at once, on the common timeline (each source's
/// placement applied): a `tracing_mark_write` start in a trace and a GPIO edge end in a
/// capture. Pair times are common-timeline picoseconds. String keys compare by their text
/// across sources.
pub fn pair_across(sources: &[Placed<'_>], rule: &PairRule) -> Result<PairResult, PairError> {
    pair_across_keyed(sources, rule).map(|(res, _)| res)
}

/// [`pair_across`], also returning the interner the pairs' string keys refer to (they are
/// re-interned across sources, so no single source's strings resolve them).
pub fn pair_across_keyed(
    sources: &[Placed<'_>],
    rule: &PairRule,
) -> Result<(PairResult, Interner), PairError> {
    let mut all = Vec::new();
    let mut shared = Interner::new();
    for (rank, src) in sources.iter().enumerate() {
        all.extend(common_occurrences(src, rule, rank, 0, None, &mut shared)?);
    }
    Ok((run(sort_merge(all), rule), shared))
}

fn run(occ: Vec<Occ>, rule: &PairRule) -> PairResult {
    let mut engine = Engine::new(rule);
    occ.into_iter().for_each(|o| engine.feed(o));
    engine.finish()
}

/// The pairing state machine: open starts per key, fed occurrences in time order.
#[derive(Debug)]
struct Engine {
    policy: Policy,
    within: Option<Ps>,
    /// Open starts per key: time, whether the start was a failed decode, and its order
    /// (which names its event).
    open: FxHashMap<Key, VecDeque<(Ps, bool, u64)>>,
    res: PairResult,
    width: usize,
}

impl Engine {
    fn new(rule: &PairRule) -> Self {
        Self {
            policy: rule.policy,
            within: rule.within,
            open: FxHashMap::default(),
            res: PairResult::default(),
            width: rule.by.len().min(MAX_KEYS),
        }
    }

    /// Starts still open: unmatched if nothing more arrives.
    fn open_starts(&self) -> u64 {
        self.open.values().map(|q| q.len() as u64).sum::<u64>()
    }

    /// The counts so far, with the starts still open as unmatched (no pairs).
    fn counts(&self) -> PairResult {
        PairResult {
            pairs: Vec::new(),
            unmatched_start: self.res.unmatched_start + self.open_starts(),
            unmatched_end: self.res.unmatched_end,
            repeated_end: self.res.repeated_end,
        }
    }

    fn finish(mut self) -> PairResult {
        self.res.unmatched_start += self.open_starts();
        self.res
    }

    fn feed(&mut self, o: Occ) {
        let (policy, within) = (self.policy, self.within);
        let width = self.width;
        let open = &mut self.open;
        let res = &mut self.res;
        let expired = |start: Ps, now: Ps| within.is_some_and(|w| now - start > w);
        {
            if o.is_end {
                let mut closed = None;
                let mut seen_key = false;
                if let Some(q) = open.get_mut(&o.end_key) {
                    seen_key = true;
                    match policy {
                        Policy::Fifo | Policy::Next | Policy::First => {
                            while let Some(s) = q.pop_front() {
                                if expired(s.0, o.t) {
                                    res.unmatched_start += 1;
                                } else {
                                    closed = Some(s);
                                    break;
                                }
                            }
                            if policy == Policy::First {
                                res.unmatched_start += q.len() as u64;
                                q.clear();
                            }
                        }
                        Policy::Lifo => {
                            if let Some(s) = q.pop_back() {
                                if expired(s.0, o.t) {
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
                    Some((s, flagged, order)) => res.pairs.push(Pair {
                        start: s,
                        end: o.t,
                        key: o.end_key[..width].to_vec(),
                        flagged: flagged || o.flagged,
                        start_event: event_at(order),
                        end_event: event_at(o.order),
                    }),
                    None => {
                        res.unmatched_end += 1;
                        // The key's queue exists once a start opened it: an end that finds it
                        // empty follows an end that already closed that key.
                        if seen_key {
                            res.repeated_end += 1;
                        }
                    }
                }
            }
            if o.is_start {
                let q = open.entry(o.start_key).or_default();
                if policy == Policy::Next && !q.is_empty() {
                    res.unmatched_start += q.len() as u64;
                    q.clear();
                }
                q.push_back((o.t, o.flagged, o.order));
            }
        }
    }
}

/// An occurrence found by an analysis with its own matching (the `block` preset's flush
/// keys): it starts and/or ends a pair under `key`.
pub(crate) fn custom_occurrence(t: Ps, order: u64, is_start: bool, is_end: bool, key: &[KeyVal]) -> Occ {
    let key = key_from(key);
    let (start_key, end_key) = match (is_start, is_end) {
        (true, true) => (key, key),
        (true, false) => (key, NO_KEY),
        _ => (NO_KEY, key),
    };
    Occ { t, order, is_end, is_start, start_key, end_key, flagged: false }
}

/// Pairs occurrences from [`custom_occurrence`] under `rule`'s policy and timeout.
pub(crate) fn pair_occurrences(occ: Vec<Occ>, rule: &PairRule) -> PairResult {
    run(sort_merge(occ), rule)
}

/// Pairs occurrences fed one at a time, already in time order with distinct `(t, order)`
/// (events of one table in table order): what [`pair_occurrences`] computes, without
/// collecting and sorting the occurrences first (at 10M events they were ~150 bytes each).
#[derive(Debug)]
pub(crate) struct StreamPairer(Engine);

impl StreamPairer {
    pub(crate) fn new(rule: &PairRule) -> Self {
        Self(Engine::new(rule))
    }
    pub(crate) fn feed(&mut self, o: Occ) {
        self.0.feed(o);
    }
    /// The pairs closed since the last call.
    pub(crate) fn take_pairs(&mut self) -> Vec<Pair> {
        std::mem::take(&mut self.0.res.pairs)
    }
    /// What the pairing counts so far, the starts still open as unmatched (no pairs).
    pub(crate) fn counts(&self) -> PairResult {
        self.0.counts()
    }
}

/// The key value of a field value (a missing field is [`KeyVal::Missing`]).
pub(crate) fn key_of_value(v: Option<FieldValue>) -> KeyVal {
    v.map_or(KeyVal::Missing, to_key)
}

/// A key as stored: `cpu=0 irq=36 dev=266338304` with the start-side field names.
pub fn render_key(rule: &PairRule, key: &[KeyVal], strings: &Interner) -> String {
    render_key_with(rule, key, strings, |_, _| None)
}

/// A key with `readable(field, number)` giving the text people read where it differs from
/// the number (`dev=254,0`, `pid=1234 (dd)`).
pub fn render_key_with(
    rule: &PairRule,
    key: &[KeyVal],
    strings: &Interner,
    readable: impl Fn(&str, i64) -> Option<String>,
) -> String {
    let mut out = String::new();
    for ((name, _), v) in rule.by.iter().zip(key) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(name);
        out.push('=');
        match v {
            KeyVal::Int(i) => match readable(name, *i) {
                Some(text) => out.push_str(&text),
                None => out.push_str(&i.to_string()),
            },
            KeyVal::Str(s) => out.push_str(&strings.resolve(*s)),
            KeyVal::Missing => out.push('-'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{Edge, Pred, PredOp, endpoint_times, int_eq};
    use latscope_model::DigitalTrack;
    use latscope_model::{EventTableBuilder, FieldKind, IrqFlags, SourceKind};

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
    fn first_policy_closes_the_oldest_and_drops_the_rest() {
        let s = source(&[
            (1, 0, "wake", &[("pid", 7)]),
            (2, 0, "wake", &[("pid", 7)]),
            (3, 0, "wake", &[("pid", 8)]),
            (5, 0, "switch", &[("next_pid", 7)]),
            (6, 0, "switch", &[("next_pid", 7)]),
            (9, 0, "switch", &[("next_pid", 8)]),
        ]);
        let r = PairRule::new("w", Endpoint::event("wake"), Endpoint::event("switch"), Policy::First)
            .by_mapped("pid", "next_pid");
        let p = pair(&s, &r).expect("pair");
        assert_eq!(spans(&p), [(1, 5), (3, 9)]);
        // The second wakeup of 7 is dropped; the second switch-in of 7 repeats a closed key.
        assert_eq!((p.unmatched_start, p.unmatched_end, p.repeated_end), (1, 1, 1));
    }

    #[test]
    fn integers_match_their_twos_complement_and_text_predicates_negate() {
        assert!(
            int_eq(-1, 4_294_967_295) && int_eq(4_294_967_295, -1) && int_eq(-1, 18_446_744_073_709_551_615)
        );
        assert!(!int_eq(-2, 4_294_967_295) && !int_eq(1, 2));
        let s = source(&[(1, 0, "idle", &[("state", -1)]), (2, 0, "idle", &[("state", 255)])]);
        let hits = |p: Pred| endpoint_times(&s, "t", &Endpoint::event_where("idle", vec![p])).expect("times");
        assert_eq!(hits(Pred::new("state", PredOp::Eq, "4294967295")), [1]);
        assert_eq!(hits(Pred::new("state", PredOp::Eq, "0xff")), [2]);
        assert_eq!(hits(Pred::new("state", PredOp::NotContains, "25")), [1]);
        assert_eq!(hits(Pred::new("nope", PredOp::NotContains, "x")), [1, 2]);
        assert_eq!(hits(Pred::new("nope", PredOp::Eq, "x")), Vec::<Ps>::new());
    }

    #[test]
    fn too_many_keys_is_an_error() {
        let s = source(&[(1, 0, "a", &[])]);
        let mut r = rule(Policy::Fifo);
        for f in ["a", "b", "c", "d", "e"] {
            r = r.by(f);
        }
        assert!(matches!(pair(&s, &r), Err(PairError::TooManyKeys { count: 5, .. })));
    }

    #[test]
    fn across_sources_uses_the_common_timeline() {
        let a = source(&[(100, 0, "cmd", &[("id", 1)]), (300, 0, "cmd", &[("id", 2)])]);
        let b = source(&[(10, 0, "done", &[("id", 2)]), (20, 0, "done", &[("id", 1)])]);
        // b's clock starts 400 later than a's.
        let placed = [Placed::unaligned(&a), Placed::new(&b, latscope_model::Placement::new(400, 0.0))];
        let r = PairRule::new("x", Endpoint::event("cmd"), Endpoint::event("done"), Policy::Fifo).by("id");
        let p = pair_across(&placed, &r).expect("pair");
        assert_eq!(spans(&p), [(300, 410), (100, 420)]);
    }
}
