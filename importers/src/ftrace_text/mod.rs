//! ftrace text: tracefs `trace`/`trace_pipe`, `trace-cmd report`, function, function_graph
//! and latency formats (shared/FORMATS.md §1).
//!
//! This module owns the parallel driver: it picks the time origin (the whole seconds of the
//! first timestamp, so `origin + relative ps` reproduces the tracer's seconds exactly),
//! splits the input at line boundaries into chunks that never separate a stack trace or a
//! wrapped payload from its event, parses the chunks with rayon and merges them in file
//! order. function_graph traces are parsed as one chunk because call nesting spans lines.
//!
//! `Source.records` counts trace records as the kernel's ring buffer holds them: every
//! event line, every `<stack trace>` record, and for function_graph one record per entry
//! and per exit (a leaf `func();` is both, so two); `/* event */` comments count as events.

mod chunk;
mod graph;
mod line;
mod payload;

use crate::{LoadControl, ParseFailure, Position};
use chunk::{ChunkOut, ChunkParser, MAX_LINE, OVERLONG_LINE, is_cut_point};
use latscope_analysis::model::{
    ClockOrigin, Diagnostics, EventTableBuilder, Source, SourceKind, SpanTrack, Sym,
};
use memchr::memchr;
use rayon::prelude::*;

/// Inputs smaller than this are parsed as one chunk (threads would cost more than they save).
const PARALLEL_MIN_BYTES: usize = 256 * 1024;
/// Chunks per worker thread. Chunks take unequal times (their events differ), and the
/// parse ends when the last one does: with one chunk per rayon task, the other threads
/// idle for at most one chunk's time, a small share when there are 8 per thread. More
/// chunks cost more serial string absorbing in the merge.
const CHUNKS_PER_THREAD: usize = 8;
/// How far the header peeks (origin, function_graph detection) look.
const PEEK_LINES: usize = 4096;

/// Parses ftrace text. Never panics; malformed lines are counted in the diagnostics.
pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let chunks =
        if data.len() < PARALLEL_MIN_BYTES { 1 } else { CHUNKS_PER_THREAD * rayon::current_num_threads() };
    parse_with_chunks(data, ctl, chunks)
}

/// [`parse`] with an explicit number of chunks (at least 1; function_graph input always
/// uses 1). Exposed so tests can check that chunking does not change the result.
pub fn parse_with_chunks(data: &[u8], ctl: &LoadControl, chunks: usize) -> Result<Source, ParseFailure> {
    if ctl.is_cancelled() {
        return Err(ParseFailure::Cancelled);
    }
    let origin = peek_origin(data);
    let chunks = if is_function_graph(data) { 1 } else { chunks.max(1) };
    let bounds = split(data, chunks);
    // One chunk per task (`with_max_len(1)`): rayon would otherwise hand each thread runs of
    // several chunks that cannot be stolen once started, leaving one thread alone at the end.
    let outs: Vec<Result<ChunkOut, ParseFailure>> = bounds
        .par_iter()
        .with_max_len(1)
        .map(|&(s, e)| ChunkParser::new(origin).run(&data[s..e], s as u64, ctl))
        .collect();
    let mut parts = Vec::with_capacity(outs.len());
    for out in outs {
        parts.push(out?);
    }
    assemble(parts, origin)
}

/// Merges chunk results in file order into one source.
fn assemble(parts: Vec<ChunkOut>, origin: i64) -> Result<Source, ParseFailure> {
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
        open_gaps.retain(|g: &latscope_analysis::model::Gap| {
            match part.first_ts.iter().find(|(c, _)| *c == g.cpu) {
                Some(&(_, ts)) => {
                    diag.gaps.push(latscope_analysis::model::Gap { ts, ..*g });
                    false
                }
                None => true,
            }
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
            let labels = part.spans.label.iter().map(|&s| part.builder.interner.bytes_of(s).into()).collect();
            later_spans.push((part.spans, labels));
        }
        records += part.records;
        saw_cpu |= part.saw_cpu_column;
        unmatched += part.unmatched_exits;
        line_base += part.lines;
        builders.push(part.builder);
    }

    let limit = |_| ParseFailure::Limit {
        at: Position::Byte(0),
        what: "event field data".into(),
        limit: "4 GiB per source".into(),
    };
    let mut merged = EventTableBuilder::merge(builders).map_err(limit)?;
    for (mut track, labels) in later_spans {
        track.label = labels.iter().map(|l| merged.intern(l)).collect::<Vec<Sym>>();
        for i in 0..track.len() {
            spans.push(track.start[i], track.end[i], track.label[i], track.depth[i], track.lane[i]);
        }
    }
    let (events, strings) = merged.finish().map_err(limit)?;
    // Losses with no later event on their CPU are placed at the end of the trace.
    let end = events.ts.last().copied().unwrap_or(0);
    diag.gaps.extend(open_gaps.into_iter().map(|g| latscope_analysis::model::Gap { ts: end, ..g }));
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
    source.origin = ClockOrigin::from_secs_ps(origin, 0);
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

/// Chunk bounds: about `n` equal parts, each starting at a line where a chunk may start.
fn split(data: &[u8], n: usize) -> Vec<(usize, usize)> {
    let mut bounds = Vec::with_capacity(n);
    let mut start = 0;
    for i in 1..n {
        let target = data.len() / n * i;
        if target <= start {
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
