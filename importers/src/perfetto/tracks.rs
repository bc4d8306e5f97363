//! Slices, instants and counters: track events (TrackDescriptor + TrackEvent packets) and
//! atrace markers (`B|pid|name`, `E`, `C|pid|name|value`, `S|`/`F|` async slices) become span
//! tracks and sample-and-hold counter tracks.

use super::ftrace::Atrace;
use super::protos::{TrackDescriptor, TrackEvent};
use latscope_model::{AnalogTrack, Diagnostics, Interner, Ps, SpanTrack, Sym};
use rustc_hash::FxHashMap;

/// TrackEvent types.
const SLICE_BEGIN: i32 = 1;
const SLICE_END: i32 = 2;
const INSTANT: i32 = 3;
const COUNTER: i32 = 4;

/// A track event whose time is not yet on the trace's clock.
#[derive(Debug, Clone)]
pub(crate) struct RawTrackEvent {
    pub ts: u64,
    pub clock: u32,
    pub kind: i32,
    pub track: u64,
    /// Index into [`TrackEvents::names`].
    pub name: u32,
    pub value: f64,
}

/// Per packet sequence: interned event names and defaults.
#[derive(Debug, Default, Clone)]
pub(crate) struct SeqState {
    pub names: FxHashMap<u64, u32>,
    pub default_track: Option<u64>,
    pub clock: Option<u32>,
}

#[derive(Debug, Default)]
pub(crate) struct TrackEvents {
    pub descriptors: FxHashMap<u64, TrackDescriptor>,
    pub seqs: FxHashMap<u32, SeqState>,
    pub raw: Vec<RawTrackEvent>,
    pub names: Vec<Vec<u8>>,
    name_ids: FxHashMap<Vec<u8>, u32>,
    pub unnamed_iids: u64,
}

impl TrackEvents {
    pub(crate) fn name_id(&mut self, name: &[u8]) -> u32 {
        if let Some(&i) = self.name_ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_vec());
        self.name_ids.insert(name.to_vec(), i);
        i
    }

    /// Records one TrackEvent of sequence `seq` with packet time `ts` on clock `clock`.
    pub(crate) fn add(&mut self, seq: u32, ts: u64, clock: Option<u32>, e: &TrackEvent) {
        // What the sequence's state says, read without copying it: a sequence can intern
        // thousands of names, and this runs per event.
        let state = self.seqs.get(&seq);
        let interned = e.name_iid.and_then(|iid| state.and_then(|s| s.names.get(&iid)).copied());
        let (default_track, default_clock) = state.map_or((None, None), |s| (s.default_track, s.clock));
        let name = match (&e.name, e.name_iid) {
            (Some(n), _) => self.name_id(n),
            (None, Some(iid)) => match interned {
                Some(i) => i,
                None => {
                    self.unnamed_iids += 1;
                    self.name_id(format!("name#{iid}").as_bytes())
                }
            },
            (None, None) => self.name_id(b""),
        };
        let value = e.counter_value.map(|v| v as f64).or(e.double_counter_value).unwrap_or(0.0);
        self.raw.push(RawTrackEvent {
            ts,
            clock: clock.or(default_clock).unwrap_or(super::clocks::BOOTTIME),
            kind: e.r#type,
            track: e.track_uuid.or(default_track).unwrap_or(0),
            name,
            value,
        });
    }

    /// The display name of a track.
    fn track_name(&self, uuid: u64, names: &FxHashMap<i32, Vec<u8>>) -> String {
        let Some(d) = self.descriptors.get(&uuid) else {
            return format!("track {uuid}");
        };
        let own = d.name.as_ref().or(d.static_name.as_ref()).or(d.atrace_name.as_ref());
        if let Some(n) = own {
            return String::from_utf8_lossy(n).into_owned();
        }
        if let Some(t) = &d.thread {
            let n = t.thread_name.clone().or_else(|| names.get(&t.tid).cloned()).unwrap_or_default();
            return format!("{}-{}", String::from_utf8_lossy(&n), t.tid);
        }
        if let Some(p) = &d.process {
            let n = p
                .process_name
                .clone()
                .or_else(|| p.cmdline.first().cloned())
                .or_else(|| names.get(&p.pid).cloned())
                .unwrap_or_default();
            return format!("{} {}", String::from_utf8_lossy(&n), p.pid);
        }
        format!("track {uuid}")
    }
}

/// Spans and counters under construction, found by display name (or by the index a
/// caller kept: atrace adds one slice or sample per marker).
#[derive(Debug, Default)]
pub(crate) struct Built {
    pub spans: Vec<SpanTrack>,
    span_index: FxHashMap<String, usize>,
    /// (name, unit, times, values)
    pub counters: Vec<(String, String, Vec<Ps>, Vec<f32>)>,
    counter_index: FxHashMap<String, usize>,
    pub end_without_begin: u64,
    pub never_ended: u64,
    pub unmapped: u64,
}

impl Built {
    /// The index of span track `track`, made if new.
    fn span_track(&mut self, track: &str) -> usize {
        if let Some(&i) = self.span_index.get(track) {
            return i;
        }
        self.spans.push(SpanTrack::new(track));
        self.span_index.insert(track.to_owned(), self.spans.len() - 1);
        self.spans.len() - 1
    }

    fn span_at(&mut self, track: usize, start: Ps, end: Ps, label: Sym, depth: usize) {
        let depth = depth.min(usize::from(u16::MAX)) as u16;
        if let Some(t) = self.spans.get_mut(track) {
            t.push(start, end.max(start), label, depth, 0);
        }
    }

    fn span(&mut self, track: &str, start: Ps, end: Ps, label: Sym, depth: usize) {
        let i = self.span_track(track);
        self.span_at(i, start, end, label, depth);
    }

    /// The index of counter track `track` (in `unit`), made if new.
    fn counter_track(&mut self, track: &str, unit: &str) -> usize {
        if let Some(&i) = self.counter_index.get(track) {
            return i;
        }
        self.counters.push((track.to_owned(), unit.to_owned(), Vec::new(), Vec::new()));
        self.counter_index.insert(track.to_owned(), self.counters.len() - 1);
        self.counters.len() - 1
    }

    fn sample_at(&mut self, track: usize, ts: Ps, v: f64) {
        if let Some(c) = self.counters.get_mut(track) {
            c.2.push(ts);
            c.3.push(v as f32);
        }
    }

    fn sample(&mut self, track: &str, unit: &str, ts: Ps, v: f64) {
        let i = self.counter_track(track, unit);
        self.sample_at(i, ts, v);
    }

    /// Moves the tracks into `spans` and `analog`, sorted, and says what did not pair.
    pub(crate) fn finish(
        self,
        spans: &mut Vec<SpanTrack>,
        analog: &mut latscope_model::Tracks<AnalogTrack>,
        diags: &mut Diagnostics,
    ) {
        // In name order, as the tracks were listed when they were kept by name.
        let mut made = self.spans;
        made.sort_by(|a, b| a.name.cmp(&b.name));
        for mut t in made {
            t.sort();
            spans.push(t);
        }
        let mut counters = self.counters;
        counters.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, unit, times, samples) in counters {
            let mut order: Vec<usize> = (0..times.len()).collect();
            order.sort_by_key(|&i| times[i]);
            let times = order.iter().map(|&i| times[i]).collect();
            let samples = order.iter().map(|&i| samples[i]).collect();
            analog.push(AnalogTrack::with_times(name, unit, times, samples));
        }
        if self.end_without_begin > 0 {
            diags.warn(format!(
                "{} slice end(s) with no open slice on their track or thread",
                self.end_without_begin
            ));
        }
        if self.never_ended > 0 {
            diags.warn(format!(
                "{} slice(s) never ended; they are drawn to the trace's end",
                self.never_ended
            ));
        }
        if self.unmapped > 0 {
            diags.warn(format!(
                "{} track event(s) on a clock no clock snapshot relates to the trace's clock; not shown",
                self.unmapped
            ));
        }
    }
}

/// Turns track events into spans (begin/end nested per track, instants as zero-length
/// spans) and counters. `to_ps` maps (clock, ns) to model time.
pub(crate) fn build_track_events(
    te: &TrackEvents,
    names: &FxHashMap<i32, Vec<u8>>,
    strings: &mut Interner,
    to_ps: &dyn Fn(u32, u64) -> Option<Ps>,
    trace_end: Ps,
    out: &mut Built,
) {
    let mut timed: Vec<(Ps, usize)> = Vec::with_capacity(te.raw.len());
    for (i, e) in te.raw.iter().enumerate() {
        match to_ps(e.clock, e.ts) {
            Some(ps) => timed.push((ps, i)),
            None => out.unmapped += 1,
        }
    }
    timed.sort_by_key(|&(ps, _)| ps);
    let labels: Vec<Sym> = te.names.iter().map(|n| strings.intern(n)).collect();
    let mut track_names: FxHashMap<u64, String> = FxHashMap::default();
    let mut stacks: FxHashMap<u64, Vec<(Ps, Sym)>> = FxHashMap::default();
    for (ps, i) in timed {
        let e = &te.raw[i];
        let name = track_names.entry(e.track).or_insert_with(|| te.track_name(e.track, names)).clone();
        let label = labels.get(e.name as usize).copied().unwrap_or(Sym(0));
        match e.kind {
            SLICE_BEGIN => stacks.entry(e.track).or_default().push((ps, label)),
            SLICE_END => match stacks.get_mut(&e.track).and_then(|s| s.pop().map(|x| (x, s.len()))) {
                Some(((start, label), depth)) => out.span(&name, start, ps, label, depth),
                None => out.end_without_begin += 1,
            },
            INSTANT => {
                let depth = stacks.get(&e.track).map_or(0, Vec::len);
                out.span(&name, ps, ps, label, depth);
            }
            COUNTER => {
                let unit = te
                    .descriptors
                    .get(&e.track)
                    .and_then(|d| d.counter.as_ref())
                    .and_then(|c| c.unit_name.as_ref())
                    .map(|u| String::from_utf8_lossy(u).into_owned())
                    .unwrap_or_default();
                let mult = te
                    .descriptors
                    .get(&e.track)
                    .and_then(|d| d.counter.as_ref())
                    .map_or(1, |c| if c.unit_multiplier == 0 { 1 } else { c.unit_multiplier });
                out.sample(&name, &unit, ps, e.value * mult as f64);
            }
            _ => {}
        }
    }
    close_open(
        stacks.into_iter().map(|(k, v)| (track_names.get(&k).cloned().unwrap_or_default(), v)),
        trace_end,
        out,
    );
}

fn close_open(open: impl Iterator<Item = (String, Vec<(Ps, Sym)>)>, trace_end: Ps, out: &mut Built) {
    for (name, stack) in open {
        for (depth, (start, label)) in stack.into_iter().enumerate() {
            out.never_ended += 1;
            out.span(&name, start, trace_end, label, depth);
        }
    }
}

/// An async atrace slice: (tgid, name, cookie).
type AsyncKey = (i32, Vec<u8>, Vec<u8>);

/// Atrace markers, merged from every CPU, in time order: `B|tgid|name` opens a slice on
/// the writing thread and `E` closes that thread's newest; `S|tgid|name|cookie` and
/// `F|tgid|name|cookie` bound an async slice on the process; `C|tgid|name|value` is a
/// counter sample.
pub(crate) fn build_atrace(
    mut atrace: Atrace,
    names: &FxHashMap<i32, Vec<u8>>,
    strings: &mut Interner,
    trace_end: Ps,
    out: &mut Built,
) {
    let mut recs = std::mem::take(&mut atrace.recs);
    recs.sort_by_key(|r| (r.ts, r.cpu));
    // Named as ftrace names tasks (`comm-tid`) when the trace names the thread (a process
    // tree, a descriptor, a task_newtask or sched event); else by its id alone, as the
    // trace has no name for it.
    let thread_track = |tid: i32| match names.get(&tid) {
        Some(n) => format!("atrace {}-{tid}", String::from_utf8_lossy(n)),
        None => format!("atrace thread {tid}"),
    };
    // Track names, made once per thread and per counter.
    let mut thread_tracks: FxHashMap<i32, usize> = FxHashMap::default();
    let mut counter_tracks: FxHashMap<i32, FxHashMap<Box<[u8]>, usize>> = FxHashMap::default();
    let mut threads: FxHashMap<i32, Vec<(Ps, Sym)>> = FxHashMap::default();
    let mut asyncs: FxHashMap<AsyncKey, (Ps, Sym)> = FxHashMap::default();
    for r in &recs {
        let mut parts = atrace.text_of(r).splitn(4, |&b| b == b'|');
        let kind = parts.next().unwrap_or_default();
        let tgid: i32 =
            parts.next().and_then(|p| std::str::from_utf8(p).ok()?.trim().parse().ok()).unwrap_or(r.tid);
        let name = parts.next().unwrap_or_default();
        let rest = parts.next().unwrap_or_default();
        match kind {
            b"B" => {
                let label = strings.intern(name);
                threads.entry(r.tid).or_default().push((r.ts, label));
            }
            b"E" => match threads.get_mut(&r.tid).and_then(|s| s.pop().map(|x| (x, s.len()))) {
                Some(((start, label), depth)) => {
                    let track = match thread_tracks.get(&r.tid) {
                        Some(&i) => i,
                        None => {
                            let i = out.span_track(&thread_track(r.tid));
                            thread_tracks.insert(r.tid, i);
                            i
                        }
                    };
                    out.span_at(track, start, r.ts, label, depth);
                }
                None => out.end_without_begin += 1,
            },
            b"S" => {
                let label = strings.intern(name);
                asyncs.insert((tgid, name.to_vec(), rest.to_vec()), (r.ts, label));
            }
            b"F" => match asyncs.remove(&(tgid, name.to_vec(), rest.to_vec())) {
                Some((start, label)) => out.span(&format!("atrace async {tgid}"), start, r.ts, label, 0),
                None => out.end_without_begin += 1,
            },
            b"C" => {
                let value = rest.split(|&b| b == b'|').next().unwrap_or_default();
                if let Some(v) = std::str::from_utf8(value).ok().and_then(|s| s.trim().parse::<f64>().ok()) {
                    let tracks = counter_tracks.entry(tgid).or_default();
                    let track = match tracks.get(name) {
                        Some(&i) => i,
                        None => {
                            let i =
                                out.counter_track(&format!("{} {tgid}", String::from_utf8_lossy(name)), "");
                            tracks.insert(name.into(), i);
                            i
                        }
                    };
                    out.sample_at(track, r.ts, v);
                }
            }
            _ => {}
        }
    }
    close_open(threads.into_iter().map(|(tid, v)| (thread_track(tid), v)), trace_end, out);
    for ((tgid, _, _), (start, label)) in asyncs {
        out.never_ended += 1;
        out.span(&format!("atrace async {tgid}"), start, trace_end, label, 0);
    }
}
