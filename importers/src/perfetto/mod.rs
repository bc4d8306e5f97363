//! Perfetto protobuf traces (`.perfetto-trace`, `.pftrace`, `.pb`): a `Trace` message, i.e.
//! `TracePacket`s as repeated field 1, length-delimited, with no other framing.
//!
//! - `wire`: a bounds-checked field walk with byte offsets (framing, oneof dispatch);
//! - `protos`: hand-written prost messages for the subset latscope reads;
//! - `clocks`: clock snapshots, mapping every clock onto the trace's (BOOTTIME by default);
//! - `ftrace`: ftrace bundles (plain events and compact sched) → events, one worker per CPU;
//! - `tracks`: track events and atrace markers → span and counter tracks.
//!
//! One serial pass walks the packets: it keeps the ftrace bundles by CPU (byte ranges, no
//! copy), reads process names, clock snapshots, interned names and track events (few and
//! sequence-ordered), and counts every other packet type. The CPUs' bundles are then
//! decoded in parallel and merged (CPU order, stable time sort: equal times keep the lower
//! CPU first). Compressed packets (zlib `compressed_packets`, zstd
//! `zstd_compressed_packets`) are inflated, within a size limit, and walked the same way.

mod clocks;
mod ftrace;
pub mod names;
mod protos;
mod tracks;
mod wire;

use crate::{LoadControl, ParseFailure, Position};
use clocks::Clocks;
use ftrace::{BundleRef, CpuOutput, CpuWorker, Shared};
use latscope_model::{
    AnalogTrack, ClockDomain, ClockOrigin, Diagnostics, KernelClock, PS_PER_NS, PS_PER_S, Source, SourceKind,
};
use prost::Message;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use tracks::{Built, TrackEvents};
use wire::{Fields, Value};

/// Largest CPU number accepted (the model's cpu column is u16; real machines have fewer).
const MAX_CPU: u64 = 4096;
/// Inflated bytes allowed per compressed packet and in total: a hostile file hits these
/// instead of exhausting memory.
const MAX_INFLATED_PACKET: u64 = 256 << 20;
const MAX_INFLATED_TOTAL: u64 = 4 << 30;

/// TracePacket fields.
mod packet {
    pub const FTRACE_EVENTS: u32 = 1;
    pub const PROCESS_TREE: u32 = 2;
    pub const CLOCK_SNAPSHOT: u32 = 6;
    pub const TIMESTAMP: u32 = 8;
    pub const SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const INTERNED_DATA: u32 = 12;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const INCREMENTAL_STATE_CLEARED: u32 = 41;
    pub const PROCESS_DESCRIPTOR: u32 = 43;
    pub const THREAD_DESCRIPTOR: u32 = 44;
    pub const COMPRESSED_PACKETS: u32 = 50;
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
    pub const DEFAULTS: u32 = 59;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    pub const ZSTD_COMPRESSED_PACKETS: u32 = 133;
    /// Fields about the packet rather than its payload: never counted as unread.
    pub const META: &[u32] = &[3, 42, 79, 87, 98];
    /// `SEQ_INCREMENTAL_STATE_CLEARED` in `sequence_flags`.
    pub const SEQ_CLEARED: u64 = 1;
}

/// True when `data` starts like a Perfetto trace: packets (field 1, length-delimited)
/// whose own fields all parse, with at least one field each.
pub fn looks_like_perfetto(data: &[u8]) -> bool {
    let head = &data[..data.len().min(1 << 20)];
    let mut packets = 0;
    for f in Fields::new(head, 0) {
        let Ok(f) = f else {
            // The head may cut the last packet: what came before decides.
            return packets > 0;
        };
        let (1, Value::Bytes(p)) = (f.number, f.value) else { return false };
        if p.is_empty() {
            return false;
        }
        let mut fields = 0;
        for g in Fields::new(p, 0) {
            let Ok(g) = g else { return false };
            if g.number > 1 << 16 {
                return false;
            }
            fields += 1;
        }
        if fields == 0 {
            return false;
        }
        packets += 1;
        if packets >= 8 {
            break;
        }
    }
    packets > 0
}

/// The serial pass's findings.
#[derive(Debug, Default)]
struct Scan<'a> {
    /// Per CPU, its bundles in file order.
    bundles: Vec<Vec<BundleRef<'a>>>,
    clocks: Clocks,
    names: FxHashMap<i32, Vec<u8>>,
    tracks: TrackEvents,
    /// Packets of types latscope does not read, by TracePacket field number.
    skipped: BTreeMap<u32, u64>,
    packets: u64,
    diags: Diagnostics,
    inflated: u64,
    /// While walking an inflated compressed packet: its offset in the file.
    container: Option<u64>,
}

/// Bytes of the file decoded between two releases of its pages (see [`parse_releasing`]).
const SEGMENT_BYTES: u64 = 8 << 20;

/// Parses a whole Perfetto trace held in memory.
pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    parse_releasing(data, ctl, &|_| {})
}

/// [`parse`], calling `release` with byte ranges of `data` it has decoded for good, so a
/// mapped file's pages do not stay resident beside the events made from them.
///
/// The bundles are decoded in file order, [`SEGMENT_BYTES`] at a time: within a segment each
/// CPU's worker decodes that CPU's bundles (groups of workers in parallel, see
/// `decode_in_file_order`), and the segment is released once all are past it. The
/// serial pass before touched the whole file; it is released first and each segment is read
/// back as it is decoded.
pub fn parse_releasing(
    data: &[u8],
    ctl: &LoadControl,
    release: &(dyn Fn(std::ops::Range<usize>) + Sync),
) -> Result<Source, ParseFailure> {
    let mut inflated_bufs: Vec<Vec<u8>> = Vec::new();
    // Pass 1: inflate compressed packets (their contents are walked in pass 2 in place of
    // the packet, so sequence order is kept).
    collect_inflated(data, &mut inflated_bufs)?;
    let mut scan = Scan::default();
    let mut next_inflated = 0usize;
    walk_trace(data, 0, &inflated_bufs, &mut next_inflated, &mut scan, ctl)?;
    if ctl.is_cancelled() {
        return Err(ParseFailure::Cancelled);
    }
    if scan.packets == 0 {
        return Err(ParseFailure::invalid(Position::Byte(0), "no trace packets: not a Perfetto trace"));
    }
    // The origin: whole seconds of the trace's start (first snapshot, else first bundle),
    // moved later to the first event's second.
    let start = scan
        .clocks
        .first_primary()
        .or_else(|| scan.bundles.iter().flatten().filter_map(|b| ftrace::first_timestamp(*b)).min())
        .unwrap_or(0);
    let origin_ns = start.div_euclid(1_000_000_000) * 1_000_000_000;
    // Only the bundles borrow the file and the inflated packets.
    let Scan { bundles, clocks, names, tracks, skipped, packets, mut diags, inflated, container: _ } = scan;
    let outputs = {
        let shared = Shared { clocks: &clocks, origin_ns, names: &names };
        release(0..data.len());
        decode_in_file_order(&shared, &bundles, data.len(), ctl, release)
    };
    let cpus = bundles.iter().filter(|b| !b.is_empty()).count();
    // The bundles are decoded: the inflated packets they lay in are freed before the merge.
    drop(bundles);
    drop(inflated_bufs);
    if ctl.is_cancelled() {
        return Err(ParseFailure::Cancelled);
    }
    let mut task_names = names;
    let mut builders = Vec::with_capacity(outputs.len());
    let mut atrace = ftrace::Atrace::default();
    let mut unknown: BTreeMap<u32, u64> = BTreeMap::new();
    let mut unmapped = 0;
    for o in outputs {
        builders.push(o.builder);
        diags.extend(o.diags);
        atrace.append(o.atrace);
        for (pid, n) in o.names {
            task_names.entry(pid).or_insert(n);
        }
        for (k, v) in o.unknown {
            *unknown.entry(k).or_default() += v;
        }
        unmapped += o.unmapped_clock;
    }
    let limit = |e: &dyn std::fmt::Display| ParseFailure::Limit {
        at: Position::Byte(data.len() as u64),
        what: "the event table".into(),
        limit: e.to_string(),
    };
    let merged = crate::assemble::merge_builders(builders).map_err(|e| limit(&e))?;
    let (table, mut strings) = merged.finish().map_err(|e| limit(&e))?;
    let mut source = Source::new("perfetto", "perfetto", SourceKind::File);
    let trace_end = table.ts.last().copied().unwrap_or(0);
    let mut built = Built::default();
    let to_ps = |clock: u32, ns: u64| {
        let ns = i64::try_from(ns).ok()?;
        let t = clocks.to_primary(clock, ns)?;
        t.checked_sub(origin_ns)?.checked_mul(PS_PER_NS)
    };
    let trace_end = tracks
        .raw
        .iter()
        .filter_map(|e| to_ps(e.clock, e.ts))
        .chain(atrace.recs.iter().map(|r| r.ts))
        .fold(trace_end, i64::max);
    tracks::build_atrace(atrace, &task_names, &mut strings, trace_end, &mut built);
    tracks::build_track_events(&tracks, &task_names, &mut strings, &to_ps, trace_end, &mut built);
    source.events = table;
    source.strings = strings;
    built.finish(&mut source.spans, &mut source.analog, &mut diags);
    source.origin =
        ClockOrigin::from_secs_ps(origin_ns / 1_000_000_000, 0).on(clock_domain(clocks.primary()));
    rebase(&mut source);
    // What was not read, said once each.
    for (number, count) in &unknown {
        let what = names::ftrace_event_name(*number).map_or_else(
            || format!("FtraceEvent field {number}"),
            |n| format!("{n} (FtraceEvent field {number})"),
        );
        diags.warn(format!(
            "{count} ftrace event(s) of a type latscope has no schema for, {what}: \
             kept as `ftrace_event_{number}` with fields named f<field number>"
        ));
    }
    if unmapped > 0 {
        diags.warn(format!(
            "{unmapped} ftrace bundle(s) on a clock no clock snapshot relates to the trace's clock: their times are the raw ftrace clock"
        ));
    }
    if tracks.unnamed_iids > 0 {
        diags.warn(format!(
            "{} track event(s) name an interned name their sequence never defined",
            tracks.unnamed_iids
        ));
    }
    if !skipped.is_empty() {
        diags.warn(skipped_packets(&skipped));
    }
    source.diagnostics = diags;
    source.metadata.push(("packets".into(), packets.to_string()));
    source.metadata.push(("cpus".into(), cpus.to_string()));
    source.metadata.push(("clock".into(), clock_name(clocks.primary())));
    if inflated > 0 {
        source.metadata.push(("inflated bytes".into(), inflated.to_string()));
    }
    Ok(source)
}

/// The warning for packets latscope does not read: each type by its name in Perfetto's
/// protos (`trace_config`, `frame_timeline_event`, ...) with its count, most frequent
/// first; a field the published protos lack by its number.
fn skipped_packets(skipped: &BTreeMap<u32, u64>) -> String {
    let mut by_count: Vec<(&u32, &u64)> = skipped.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let list: Vec<String> = by_count
        .into_iter()
        .map(|(n, c)| match names::packet_name(*n) {
            Some(name) => format!("{name} ×{c}"),
            None => format!("TracePacket field {n} (not in Perfetto's published protos) ×{c}"),
        })
        .collect();
    let total: u64 = skipped.values().sum();
    format!("{total} packet(s) of types latscope does not read, skipped: {}", list.join(", "))
}

/// Decodes every CPU's bundles (`bundles[cpu]`, each list in file order) with one worker
/// per CPU, segment by segment of the file, releasing each segment once every worker is
/// past it.
///
/// The workers are dealt once into as many groups as rayon has threads (balanced by their
/// bytes), and each group is one task that walks the segments itself, its workers in turn
/// per segment. So a worker stays on one thread for the whole load: handed to whichever
/// thread was free at each segment (a parallel loop per segment), eight CPUs' workers on
/// two threads kept moving their interners, maps and column tails between cores' caches,
/// and cost ~14 % more CPU than on one thread. A segment is released by the group that
/// takes the slowest group's progress past it; groups that do not run at once (a busy
/// pool) only release later.
fn decode_in_file_order(
    shared: &Shared<'_>,
    bundles: &[Vec<BundleRef<'_>>],
    file_len: usize,
    ctl: &LoadControl,
    release: &(dyn Fn(std::ops::Range<usize>) + Sync),
) -> Vec<CpuOutput> {
    // (worker, its bundles, how many are done, its bytes)
    type Slot<'w> = (CpuWorker<'w>, &'w [BundleRef<'w>], usize, usize);
    let workers: Vec<Slot<'_>> = bundles
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(cpu, b)| {
            let bytes = b.iter().map(|b| b.data.len()).sum();
            let mut w = CpuWorker::new(shared, cpu as u16);
            w.reserve(bytes);
            (w, b.as_slice(), 0, bytes)
        })
        .collect();
    let n_groups = rayon::current_num_threads().clamp(1, workers.len().max(1));
    // Largest first, each to the group with the fewest bytes so far.
    let mut order: Vec<usize> = (0..workers.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(workers[i].3));
    let mut load = vec![0usize; n_groups];
    let mut group_of = vec![0usize; workers.len()];
    for i in order {
        let g = (0..n_groups).min_by_key(|&g| load[g]).unwrap_or(0);
        group_of[i] = g;
        load[g] += workers[i].3;
    }
    // (index in `workers`, slot), each group in CPU order.
    let mut groups: Vec<Vec<(usize, Slot<'_>)>> = (0..n_groups).map(|_| Vec::new()).collect();
    for (i, slot) in workers.into_iter().enumerate() {
        groups[group_of[i]].push((i, slot));
    }
    let file_len = file_len as u64;
    // Each group's progress: every bundle before this offset is decoded.
    let progress: Vec<AtomicU64> = (0..n_groups).map(|_| AtomicU64::new(0)).collect();
    let released = AtomicU64::new(0);
    let release_passed = || {
        let low = progress.iter().map(|p| p.load(Ordering::Acquire)).min().unwrap_or(0).min(file_len);
        let before = released.fetch_max(low, Ordering::AcqRel);
        if before < low {
            release(
                usize::try_from(before).unwrap_or(usize::MAX)..usize::try_from(low).unwrap_or(usize::MAX),
            );
        }
    };
    groups.par_iter_mut().zip(&progress).for_each(|(group, progress)| {
        let mut from = 0u64;
        while group.iter().any(|(_, (_, list, done, _))| *done < list.len()) {
            let to = from.saturating_add(SEGMENT_BYTES);
            for (_, (w, list, done, _)) in group.iter_mut() {
                while let Some(b) = list.get(*done).filter(|b| b.file_at < to) {
                    if ctl.is_cancelled() {
                        return;
                    }
                    w.bundle(*b);
                    ctl.advance(b.data.len() as u64);
                    *done += 1;
                }
            }
            progress.store(to, Ordering::Release);
            release_passed();
            from = to;
        }
        progress.store(u64::MAX, Ordering::Release);
        release_passed();
    });
    let mut slots: Vec<(usize, Slot<'_>)> = groups.into_iter().flatten().collect();
    slots.sort_by_key(|s| s.0);
    slots.into_iter().map(|(_, (w, _, _, _))| w.finish()).collect()
}

/// The kind of clock Perfetto's builtin clock `id` is: the realtime clocks read wall-clock
/// time, the others are the kernel's (what ftrace stamps with).
fn clock_domain(id: u32) -> ClockDomain {
    match id {
        1 | 2 => ClockDomain::Unix,
        3..=6 => ClockDomain::Kernel(KernelClock::from_name(&clock_name(id))),
        _ => ClockDomain::Own,
    }
}

fn clock_name(id: u32) -> String {
    match id {
        1 => "realtime".into(),
        2 => "realtime_coarse".into(),
        3 => "monotonic".into(),
        4 => "monotonic_coarse".into(),
        5 => "monotonic_raw".into(),
        6 => "boottime".into(),
        n => format!("clock {n}"),
    }
}

/// Moves the origin to the whole second at or before the first time held, so `start_s`
/// prints the trace clock's own seconds and relative times stay small.
fn rebase(source: &mut Source) {
    let Some((lo, _)) = source.time_range() else { return };
    let secs = lo.div_euclid(PS_PER_S);
    if secs == 0 {
        return;
    }
    let shift = secs * PS_PER_S;
    source.events.ts.iter_mut().for_each(|t| *t -= shift);
    for s in &mut source.spans {
        s.start.iter_mut().for_each(|t| *t -= shift);
        s.end.iter_mut().for_each(|t| *t -= shift);
    }
    for a in &mut source.analog {
        let times: Vec<_> = a.times.iter().map(|t| t - shift).collect();
        *a = AnalogTrack::with_times(
            std::mem::take(&mut a.name),
            std::mem::take(&mut a.unit),
            times,
            std::mem::take(&mut a.samples),
        );
    }
    source.origin =
        ClockOrigin::from_secs_ps(source.origin.secs + secs, source.origin.ps).on(source.origin.domain);
}

/// Inflates every compressed packet of the top-level trace, in file order.
fn collect_inflated(data: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), ParseFailure> {
    let mut total = 0u64;
    for f in Fields::new(data, 0) {
        let Ok(f) = f else { break };
        let (1, Value::Bytes(p)) = (f.number, f.value) else { continue };
        for g in Fields::new(p, f.value_at) {
            let Ok(g) = g else { break };
            let (n @ (packet::COMPRESSED_PACKETS | packet::ZSTD_COMPRESSED_PACKETS), Value::Bytes(z)) =
                (g.number, g.value)
            else {
                continue;
            };
            let mut buf = Vec::new();
            let limit = MAX_INFLATED_PACKET.min(MAX_INFLATED_TOTAL - total);
            let read = if n == packet::COMPRESSED_PACKETS {
                flate2::read::ZlibDecoder::new(z).take(limit + 1).read_to_end(&mut buf)
            } else {
                zstd::stream::read::Decoder::new(z).and_then(|d| d.take(limit + 1).read_to_end(&mut buf))
            };
            // A broken stream keeps what inflated; pass 2 reports it as malformed.
            let _ = read;
            if buf.len() as u64 > limit {
                return Err(ParseFailure::Limit {
                    at: Position::Byte(g.at),
                    what: "inflated compressed packets".into(),
                    limit: format!("{limit} bytes"),
                });
            }
            total += buf.len() as u64;
            out.push(buf);
        }
    }
    Ok(())
}

/// Walks a `Trace` message (the file, or an inflated packet group at `base`).
fn walk_trace<'a>(
    data: &'a [u8],
    base: u64,
    inflated: &'a [Vec<u8>],
    next_inflated: &mut usize,
    scan: &mut Scan<'a>,
    ctl: &LoadControl,
) -> Result<(), ParseFailure> {
    for f in Fields::new(data, base) {
        if ctl.is_cancelled() {
            return Err(ParseFailure::Cancelled);
        }
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                scan.diags.malformed(
                    None,
                    e.at,
                    format!("trace: {}; the rest of the file is not read", e.what),
                );
                scan.diags.warn(format!(
                    "byte offset {}: the trace ends in a broken or truncated packet ({}); what came before is loaded",
                    e.at, e.what
                ));
                break;
            }
        };
        match (f.number, f.value) {
            (1, Value::Bytes(p)) => packet(p, f.value_at, inflated, next_inflated, scan, false, ctl)?,
            _ => scan.diags.malformed(None, f.at, format!("trace: field {} is not a packet", f.number)),
        }
    }
    Ok(())
}

/// One TracePacket.
fn packet<'a>(
    p: &'a [u8],
    at: u64,
    inflated: &'a [Vec<u8>],
    next_inflated: &mut usize,
    scan: &mut Scan<'a>,
    nested: bool,
    ctl: &LoadControl,
) -> Result<(), ParseFailure> {
    scan.packets += 1;
    let (mut ts, mut clock, mut seq, mut cleared) = (None, None, 0u32, false);
    let mut interned = None;
    let mut defaults = None;
    let mut track_event = None;
    for f in Fields::new(p, at) {
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                scan.diags.malformed(None, e.at, format!("packet: {}", e.what));
                return Ok(());
            }
        };
        let bytes = match f.value {
            Value::Bytes(b) => Some(b),
            _ => None,
        };
        let decode_err = |what: &str, e: prost::DecodeError| format!("{what}: {e}");
        match (f.number, bytes) {
            (packet::FTRACE_EVENTS, Some(b)) => {
                let cpu = Fields::new(b, f.value_at).find_map(|g| match g {
                    Ok(wire::Field { number: 1, value: Value::Varint(c), .. }) => Some(c),
                    _ => None,
                });
                let cpu = cpu.unwrap_or(0);
                if cpu >= MAX_CPU {
                    scan.diags.malformed(
                        None,
                        f.value_at,
                        format!("ftrace bundle for CPU {cpu} (above {MAX_CPU}); skipped"),
                    );
                    continue;
                }
                let cpu = cpu as usize;
                if scan.bundles.len() <= cpu {
                    scan.bundles.resize_with(cpu + 1, Vec::new);
                }
                let file_at = scan.container.unwrap_or(f.value_at);
                scan.bundles[cpu].push(BundleRef { data: b, at: f.value_at, file_at });
            }
            (packet::PROCESS_TREE, Some(b)) => match protos::ProcessTree::decode(b) {
                Ok(t) => {
                    for pr in &t.processes {
                        if let Some(c) = pr.cmdline.first() {
                            let base = c.rsplit(|&b| b == b'/').next().unwrap_or(c);
                            scan.names.entry(pr.pid).or_insert_with(|| base.to_vec());
                        }
                    }
                    for th in t.threads.iter().filter(|t| !t.name.is_empty()) {
                        scan.names.insert(th.tid, th.name.clone());
                    }
                }
                Err(e) => scan.diags.malformed(None, f.value_at, decode_err("process tree", e)),
            },
            (packet::CLOCK_SNAPSHOT, Some(b)) => match protos::ClockSnapshot::decode(b) {
                Ok(s) => scan.clocks.add(&s),
                Err(e) => scan.diags.malformed(None, f.value_at, decode_err("clock snapshot", e)),
            },
            (packet::TIMESTAMP, None) => ts = f.value.as_u64(),
            (packet::TIMESTAMP_CLOCK_ID, None) => clock = f.value.as_u64().map(|c| c as u32),
            (packet::SEQUENCE_ID, None) => seq = f.value.as_u64().unwrap_or(0) as u32,
            (packet::SEQUENCE_FLAGS, None) => {
                cleared |= f.value.as_u64().unwrap_or(0) & packet::SEQ_CLEARED != 0
            }
            (packet::INCREMENTAL_STATE_CLEARED, None) => cleared |= f.value.as_u64().unwrap_or(0) != 0,
            (packet::INTERNED_DATA, Some(b)) => interned = Some((b, f.value_at)),
            (packet::DEFAULTS, Some(b)) => defaults = Some((b, f.value_at)),
            (packet::TRACK_EVENT, Some(b)) => track_event = Some((b, f.value_at)),
            (packet::TRACK_DESCRIPTOR, Some(b)) => match protos::TrackDescriptor::decode(b) {
                Ok(d) => {
                    if let Some(t) = &d.thread
                        && let Some(n) = &t.thread_name
                    {
                        scan.names.insert(t.tid, n.clone());
                    }
                    scan.tracks.descriptors.insert(d.uuid, d);
                }
                Err(e) => scan.diags.malformed(None, f.value_at, decode_err("track descriptor", e)),
            },
            (packet::PROCESS_DESCRIPTOR, Some(b)) => {
                if let Ok(d) = protos::ProcessDescriptor::decode(b)
                    && let Some(n) = d.process_name.or_else(|| d.cmdline.first().cloned())
                {
                    scan.names.entry(d.pid).or_insert(n);
                }
            }
            (packet::THREAD_DESCRIPTOR, Some(b)) => {
                if let Ok(d) = protos::ThreadDescriptor::decode(b)
                    && let Some(n) = d.thread_name
                {
                    scan.names.insert(d.tid, n);
                }
            }
            (packet::COMPRESSED_PACKETS | packet::ZSTD_COMPRESSED_PACKETS, Some(_)) => {
                if nested {
                    scan.diags.malformed(
                        None,
                        f.at,
                        "compressed packets inside compressed packets; not read",
                    );
                    continue;
                }
                let Some(buf) = inflated.get(*next_inflated) else { continue };
                *next_inflated += 1;
                scan.inflated += buf.len() as u64;
                let before = scan.diags.malformed;
                scan.container = Some(f.at);
                let walked = walk_inner(buf, f.at, inflated, scan, ctl);
                scan.container = None;
                walked?;
                if scan.diags.malformed > before {
                    scan.diags.warn(format!(
                        "byte offset {}: the compressed packets there hold malformed records (offsets inside them count from the packet)",
                        f.at
                    ));
                }
            }
            (n, _) if packet::META.contains(&n) => {}
            (n, _) => *scan.skipped.entry(n).or_default() += 1,
        }
    }
    let state_changed = cleared || interned.is_some() || defaults.is_some();
    if state_changed {
        let st = scan.tracks.seqs.entry(seq).or_default();
        if cleared {
            *st = Default::default();
        }
        if let Some((b, at)) = defaults {
            match protos::TracePacketDefaults::decode(b) {
                Ok(d) => {
                    st.clock = d.timestamp_clock_id;
                    st.default_track = d.track_event_defaults.and_then(|t| t.track_uuid);
                }
                Err(e) => scan.diags.malformed(None, at, format!("packet defaults: {e}")),
            }
        }
        if let Some((b, at)) = interned {
            match protos::InternedData::decode(b) {
                Ok(d) => {
                    for n in d.event_names {
                        let id = scan.tracks.name_id(&n.name);
                        if let Some(st) = scan.tracks.seqs.get_mut(&seq) {
                            st.names.insert(n.iid, id);
                        }
                    }
                }
                Err(e) => scan.diags.malformed(None, at, format!("interned data: {e}")),
            }
        }
    }
    if let Some((b, at)) = track_event {
        match protos::TrackEvent::decode(b) {
            Ok(e) => match ts {
                Some(ts) => scan.tracks.add(seq, ts, clock, &e),
                None => scan.diags.malformed(None, at, "track event in a packet without a timestamp"),
            },
            Err(e) => scan.diags.malformed(None, at, format!("track event: {e}")),
        }
    }
    Ok(())
}

/// The packets inside an inflated compressed packet (file offset `at`); offsets of what
/// they hold are reported relative to that packet.
fn walk_inner<'a>(
    buf: &'a [u8],
    at: u64,
    inflated: &'a [Vec<u8>],
    scan: &mut Scan<'a>,
    ctl: &LoadControl,
) -> Result<(), ParseFailure> {
    let mut none = usize::MAX;
    for f in Fields::new(buf, 0) {
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                scan.diags.malformed(
                    None,
                    at,
                    format!("compressed packets, inner offset {}: {}", e.at, e.what),
                );
                break;
            }
        };
        if let (1, Value::Bytes(p)) = (f.number, f.value) {
            packet(p, f.value_at, inflated, &mut none, scan, true, ctl)?;
        }
    }
    Ok(())
}
