//! ftrace text: tracefs `trace`/`trace_pipe`, `trace-cmd report`, function, function_graph
//! and latency formats.
//!
//! This module owns the parallel driver: it picks the time origin (the whole seconds of the
//! first timestamp, so `origin + relative ps` reproduces the tracer's seconds exactly),
//! splits the input at line boundaries into chunks that never separate a stack trace or a
//! wrapped payload from its event, parses the chunks with rayon and merges them in file
//! order. The chunks write their events into one allocation of the event columns, a window
//! each, bounded by the chunk's line count (`SharedColumns`), and hand back their pages of
//! the input as they finish. function_graph traces are parsed as one chunk because call
//! nesting spans lines.
//!
//! `Source.records` counts trace records as the kernel's ring buffer holds them: every
//! event line, every `<stack trace>` record, and for function_graph one record per entry
//! and per exit (a leaf `func();` is both, so two); `/* event */` comments count as events.

mod chunk;
mod flags;
mod graph;
mod line;
mod payload;

use crate::assemble::{ColumnWindow, MergeError, SharedColumns};
use crate::{LoadControl, ParseFailure, Position};
use chunk::{ChunkOut, ChunkParser, MAX_LINE, OVERLONG_LINE, is_cut_point};
use latscope_model::{
    BuildError, ClockDomain, ClockOrigin, Diagnostics, KernelClock, Source, SourceKind, SpanTrack, Sym,
};
use memchr::memchr;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Inputs smaller than this are parsed as one chunk (threads would cost more than they save).
const PARALLEL_MIN_BYTES: usize = 256 * 1024;
/// The smallest chunk of a parallel parse (~1 ms of work).
const MIN_CHUNK_BYTES: usize = 256 * 1024;
/// How far the header peeks (origin, function_graph detection) look.
const PEEK_LINES: usize = 4096;

/// Parses ftrace text. Never panics; malformed lines are counted in the diagnostics.
pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    parse_releasing(data, ctl, &|_| {})
}

/// [`parse`], calling `release` with each chunk's byte range once it is parsed (the input
/// is not read there again).
pub fn parse_releasing(
    data: &[u8],
    ctl: &LoadControl,
    release: &(dyn Fn(Range<usize>) + Sync),
) -> Result<Source, ParseFailure> {
    let targets = if data.len() < PARALLEL_MIN_BYTES {
        Vec::new()
    } else {
        guided_cuts(data.len(), rayon::current_num_threads())
    };
    parse_at(data, ctl, &targets, release)
}

/// [`parse`] with `chunks` chunks of about equal size (at least 1; function_graph input
/// always uses 1). Exposed so tests can check that chunking does not change the result.
pub fn parse_with_chunks(data: &[u8], ctl: &LoadControl, chunks: usize) -> Result<Source, ParseFailure> {
    let n = chunks.max(1);
    let targets: Vec<usize> = (1..n).map(|i| data.len() / n * i).collect();
    parse_at(data, ctl, &targets, &|_| {})
}

/// Where the chunks of a parallel parse should end: decreasing sizes, each a share of what
/// is left (guided self-scheduling). The threads take chunks in this order from one queue,
/// so big chunks start first and the last ones are small: a thread that ends early finds
/// small work left instead of idling while another finishes a big chunk.
fn guided_cuts(len: usize, threads: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut at = 0usize;
    loop {
        let size = ((len - at) / (2 * threads.max(1))).max(MIN_CHUNK_BYTES);
        if len - at <= size + MIN_CHUNK_BYTES / 2 {
            return cuts;
        }
        at += size;
        cuts.push(at);
    }
}

/// Parses the chunks that end near `targets` (see [`split`]) on the rayon pool.
fn parse_at(
    data: &[u8],
    ctl: &LoadControl,
    targets: &[usize],
    release: &(dyn Fn(Range<usize>) + Sync),
) -> Result<Source, ParseFailure> {
    if ctl.is_cancelled() {
        return Err(ParseFailure::Cancelled);
    }
    let origin = peek_origin(data);
    let targets = if is_function_graph(data) { &[][..] } else { targets };
    let bounds = split(data, targets);
    // A line holds at most one event, so each chunk's line count bounds its events: the
    // chunks write them straight into one allocation of the event columns.
    let lines = run_queue(bounds.len(), |i| line_count(&data[bounds[i].0..bounds[i].1]));
    let mut columns = SharedColumns::new(lines);
    let windows: Vec<Mutex<Option<ColumnWindow<'_>>>> =
        columns.windows().into_iter().map(|w| Mutex::new(Some(w))).collect();
    let outs = run_queue(bounds.len(), |i| {
        let (s, e) = bounds[i];
        let window = windows[i].lock().unwrap_or_else(PoisonError::into_inner).take();
        let out = match window {
            Some(w) => ChunkParser::new(origin, w).run(&data[s..e], s as u64, ctl),
            None => Err(ParseFailure::invalid(Position::Byte(s as u64), "chunk parsed twice")),
        };
        release(s..e);
        out
    });
    drop(windows);
    let mut parts = Vec::with_capacity(outs.len());
    for out in outs {
        parts.push(out?);
    }
    assemble(parts, origin, columns)
}

/// The lines of a chunk as [`ChunkParser::run`] reads them: one per `\n`, plus an unended last.
fn line_count(chunk: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', chunk).count() + usize::from(chunk.last().is_some_and(|&b| b != b'\n'))
}

/// Runs `job(0..n)` on the rayon pool, each thread taking the next index from one shared
/// counter (so in order), and returns the results by index. Rayon's own splitting would
/// give each thread a contiguous half of the list instead.
fn run_queue<T: Send>(n: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(n));
    rayon::scope(|scope| {
        for _ in 0..rayon::current_num_threads().min(n) {
            scope.spawn(|_| {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    mine.push((i, job(i)));
                }
                done.lock().unwrap_or_else(PoisonError::into_inner).extend(mine);
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Merges chunk results in file order into one source.
fn assemble(parts: Vec<ChunkOut>, origin: i64, columns: SharedColumns) -> Result<Source, ParseFailure> {
    let mut diag = Diagnostics::default();
    let mut metadata: Vec<(String, String)> = Vec::new();
    let mut spans = SpanTrack::new("function_graph");
    let mut later_spans: Vec<(SpanTrack, Vec<Box<[u8]>>)> = Vec::new();
    let mut open_gaps = Vec::new();
    let mut builders = Vec::with_capacity(parts.len());
    let mut line_base = 0u64;
    let mut records = 0u64;
    let mut saw_cpu = false;
    let mut unmatched = 0u64;
    for (i, mut part) in parts.into_iter().enumerate() {
        // Lost-event notes at the end of an earlier chunk apply to this chunk's first event
        // on their CPU.
        open_gaps.retain(|g: &latscope_model::Gap| match part.first_ts.iter().find(|(c, _)| *c == g.cpu) {
            Some(&(_, ts)) => {
                diag.gaps.push(latscope_model::Gap { ts, ..*g });
                false
            }
            None => true,
        });
        for d in &mut part.diag.first_malformed {
            d.line = d.line.map(|l| l + line_base);
        }
        for (line, cpu) in &part.buffer_started {
            diag.warn(format!(
                "line {}: CPU {cpu} buffer started: older events of this CPU were overwritten",
                line + line_base
            ));
        }
        diag.extend(part.diag);
        open_gaps.extend(part.open_gaps);
        for kv in part.metadata {
            if !metadata.contains(&kv) {
                metadata.push(kv);
            }
        }
        if i == 0 {
            spans = part.spans;
            spans.name = "function_graph".into();
        } else if !part.spans.is_empty() {
            let labels =
                part.spans.label.iter().map(|&s| part.events.interner().bytes_of(s).into()).collect();
            later_spans.push((part.spans, labels));
        }
        records += part.records;
        saw_cpu |= part.saw_cpu_column;
        unmatched += part.unmatched_exits;
        line_base += part.lines;
        builders.push(part.events);
    }

    let limit = |e: MergeError| match e {
        MergeError::Build(BuildError::ArenaFull) => ParseFailure::Limit {
            at: Position::Byte(0),
            what: "event field data".into(),
            limit: "4 GiB per source".into(),
        },
        e => ParseFailure::invalid(Position::Byte(0), format!("internal error: {e}")),
    };
    let mut merged = columns.merge(builders).map_err(limit)?;
    for (mut track, labels) in later_spans {
        track.label = labels.iter().map(|l| merged.intern(l)).collect::<Vec<Sym>>();
        for i in 0..track.len() {
            spans.push(track.start[i], track.end[i], track.label[i], track.depth[i], track.lane[i]);
        }
    }
    let (events, strings) = merged.finish().map_err(|e| limit(e.into()))?;
    // Losses with no later event on their CPU are placed at the end of the trace.
    let end = events.ts.last().copied().unwrap_or(0);
    diag.gaps.extend(open_gaps.into_iter().map(|g| latscope_model::Gap { ts: end, ..g }));
    diag.gaps.sort_by_key(|g| g.ts);
    spans.sort();
    if events.is_empty() && spans.is_empty() && !saw_cpu && diag.malformed > 0 {
        let first = diag.first_malformed.first();
        let line = first.and_then(|d| d.line).unwrap_or(1);
        if first.is_some_and(|d| d.message == OVERLONG_LINE) {
            return Err(ParseFailure::Limit {
                at: Position::Line(line),
                what: "line length (and no event line could be read)".into(),
                limit: format!("{MAX_LINE} bytes"),
            });
        }
        return Err(ParseFailure::invalid(
            Position::Line(line),
            "no event line with a [cpu] column: this looks like ftrace text written with \
             options/context-info=0, which latscope cannot read; record with context-info=1",
        ));
    }
    if unmatched > 0 {
        diag.warn(format!(
            "{unmatched} function_graph exit(s) without their entry (the buffer started mid-call)"
        ));
    }
    let mut source = Source::new("ftrace text", "ftrace-text", SourceKind::File);
    // A kernel trace clock; the text does not say which (tracefs `trace_clock` does).
    source.origin = ClockOrigin::from_secs_ps(origin, 0).on(ClockDomain::Kernel(KernelClock::Unnamed));
    source.strings = strings;
    source.events = events;
    if !spans.is_empty() {
        source.spans.push(spans);
    }
    source.records = Some(records);
    source.metadata = metadata;
    source.diagnostics = diag;
    Ok(source)
}

/// Lines of the first part of the input.
fn head_lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data[..data.len().min(4 * MAX_LINE)]
        .split(|&b| b == b'\n')
        .take(PEEK_LINES)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| l.len() <= MAX_LINE)
}

/// The whole seconds of the first timestamp (0 for counter clocks and relative formats).
fn peek_origin(data: &[u8]) -> i64 {
    for l in head_lines(data) {
        if l.first() == Some(&b'#') {
            continue;
        }
        let ts = line::parse_event_prefix(l)
            .map(|p| p.ts)
            .or_else(|| graph::parse_graph_line(l).and_then(|g| g.abstime))
            .or_else(|| line::parse_latency_prefix(l).map(|p| p.ts));
        if let Some(ts) = ts {
            return i64::try_from(ts.secs).unwrap_or(0);
        }
    }
    0
}

/// function_graph output needs one sequential pass (call nesting spans lines).
fn is_function_graph(data: &[u8]) -> bool {
    head_lines(data).any(|l| {
        l.starts_with(b"# tracer: function_graph")
            || (l.first() != Some(&b'#')
                && line::parse_event_prefix(l).is_none()
                && graph::parse_graph_line(l).is_some())
    })
}

/// Chunk bounds: each chunk ends at the first line after its target (ascending) where a
/// chunk may start.
fn split(data: &[u8], targets: &[usize]) -> Vec<(usize, usize)> {
    let mut bounds = Vec::with_capacity(targets.len() + 1);
    let mut start = 0;
    for &target in targets {
        if target <= start || target >= data.len() {
            continue;
        }
        let Some(nl) = memchr(b'\n', &data[target..]) else { break };
        let mut cut = target + nl + 1;
        let mut found = false;
        for _ in 0..PEEK_LINES {
            if cut >= data.len() {
                break;
            }
            let end = memchr(b'\n', &data[cut..]).map_or(data.len(), |j| cut + j);
            if is_cut_point(&data[cut..end]) {
                found = true;
                break;
            }
            cut = end + 1;
        }
        if !found || cut >= data.len() {
            continue;
        }
        bounds.push((start, cut));
        start = cut;
    }
    bounds.push((start, data.len()));
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guided_chunks_shrink_and_cover_the_input() {
        for (len, threads) in
            [(42_469_013, 2), (42_469_013, 8), (300_000, 2), (2_000_000_000, 2), (1 << 20, 1)]
        {
            let cuts = guided_cuts(len, threads);
            let mut ends = cuts.clone();
            ends.push(len);
            let sizes: Vec<usize> =
                ends.iter().scan(0, |start, &end| Some(end - std::mem::replace(start, end))).collect();
            assert!(sizes.iter().all(|&s| s >= MIN_CHUNK_BYTES / 2), "{len}/{threads}: {sizes:?}");
            assert!(sizes.windows(2).all(|w| w[0] + MIN_CHUNK_BYTES >= w[1]), "{len}/{threads}: {sizes:?}");
            // The first chunks keep every thread busy; the last are small.
            assert!(sizes[0] <= len / (2 * threads) + MIN_CHUNK_BYTES, "{sizes:?}");
            assert!(*sizes.last().unwrap_or(&0) < 2 * MIN_CHUNK_BYTES, "{sizes:?}");
        }
        assert_eq!(guided_cuts(42_469_013, 2).len() + 1, 17);
    }

    #[test]
    fn queue_returns_results_in_index_order() {
        let out = run_queue(100, |i| i * 3);
        assert_eq!(out, (0..100).map(|i| i * 3).collect::<Vec<_>>());
        assert!(run_queue(0, |i| i).is_empty());
    }
}
