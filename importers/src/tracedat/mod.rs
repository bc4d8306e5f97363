//! trace-cmd `trace.dat`, file versions 6 and 7, in pure Rust.
//!
//! - `bytes`: bounds-checked integers/strings in the file's byte order;
//! - `sections`: the prefix, the v6 layout, v7 sections and the metadata blocks;
//! - `options`: the option lists (v6 and chained v7 sections);
//! - `compress`: zstd/zlib sections and per-CPU chunks, with size limits;
//! - `format`: event format files and `header_page`;
//! - `page`: sub-buffer headers and event headers;
//! - `decode`: record payloads → model events (per-format compiled field readers);
//! - `printf`: `bprint` formatting and `key=value` tokens of marker messages;
//! - `printfmt`: the event formats' `print fmt`, parsed and evaluated as libtraceevent does;
//! - `render`: the source's event renderer (print fmt, trace-cmd plugin forms, kallsyms).
//! - `live`: a kernel's ring buffer read while it records (tracefs metadata, pages decoded,
//!   cut to a window and re-encoded, written as a v6 file).
//!
//! Pages are independent (each carries its base timestamp), so runs of pages are decoded in
//! parallel, one `EventTableBuilder` per run, then merged in (CPU, file) order and sorted
//! stably by time: equal timestamps keep the lower CPU first, as `trace-cmd report` does.
//!
//! Timestamps follow trace-cmd 3.1.6's `timestamp_calc()`: TSC2NSEC (`(ts*mult)>>shift`),
//! then the OFFSET option. The DATE option is ignored (as `report` does without `--date`);
//! guest/host TIME_SHIFT corrections are not applied (a warning says so). Clocks that
//! `trace-cmd report` prints as raw counters (`counter`, `x86-tsc`, `boot`) are stored as
//! if they were nanoseconds.

mod bytes;
mod compress;
mod decode;
mod format;
pub mod live;
mod options;
mod page;
mod printf;
mod printfmt;
mod render;
mod sections;

use crate::assemble::merge_builders;
use crate::{LoadControl, ParseFailure, Position};
use bytes::{Cursor, Endian};
use compress::{Codec, Inflater, check_size, decompress};
/// Ftrace's `common_flags` bits as an [`IrqFlags`](latscope_model::IrqFlags) column
/// (Perfetto records the same bits).
pub(crate) use decode::irq_flags;
use decode::{Shared, TimeConv, Worker};
use latscope_model::{
    ClockDomain, ClockOrigin, Diagnostics, EventTableBuilder, KernelClock, PS_PER_NS, Source, SourceKind,
};
use page::PageFormat;
use rayon::prelude::*;
use sections::{Buffer, FileInfo, read_file_info};

/// Pages per parallel job for uncompressed data (1 MiB of 4 KiB pages).
const PAGES_PER_JOB: usize = 256;
/// Uncompressed bytes per job for compressed data (whole chunks are never split).
const BYTES_PER_JOB: u64 = 1 << 20;

/// One run of a CPU's data.
#[derive(Debug, Clone, Copy)]
enum Chunk<'a> {
    /// Whole pages at file offset `at`.
    Raw { at: u64, bytes: &'a [u8] },
    /// A compressed chunk holding whole pages.
    Packed { at: u64, bytes: &'a [u8], size: u64 },
}

#[derive(Debug)]
struct Job<'a> {
    cpu: u16,
    chunks: Vec<Chunk<'a>>,
}

/// Parses a whole trace.dat file held in memory.
pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let info = read_file_info(data)?;
    if let Some((at, text)) = &info.latency_text {
        return latency_source(&info, *at, text, ctl);
    }
    let mut diags = Diagnostics::default();
    for w in &info.warnings {
        diags.warn(w.clone());
    }
    let Some(top) = info.top.clone() else {
        return Ok(finish_source(
            &info,
            None,
            Source::new("trace.dat", "trace.dat", SourceKind::File),
            diags,
        ));
    };
    let page_size = top.page_size as usize;
    if (info.page.data_offset as usize) >= page_size {
        return Err(ParseFailure::invalid(
            Position::Byte(0),
            format!(
                "sub-buffer size {page_size} is smaller than its header ({} bytes)",
                info.page.data_offset
            ),
        ));
    }
    let pf = PageFormat { endian: info.endian, layout: info.page, page_size };
    let jobs = split_jobs(plan_jobs(data, &info, &top, &mut diags)?, page_size);
    let mut time = TimeConv { tsc: info.options.tsc2nsec, offset: info.options.ts_offset, origin_ns: 0 };
    if let Some(first) = first_page_ts(&info, &jobs, &pf) {
        time.origin_ns = i128::from(time.ns(first) / 1_000_000_000) * 1_000_000_000;
    }
    let shared = Shared::new(
        &info.formats,
        info.endian,
        info.page.long_size as usize,
        info.printk.clone(),
        info.cmdlines.clone(),
        time,
        pf,
    );
    let results: Vec<Result<(EventTableBuilder, Diagnostics), ParseFailure>> =
        jobs.into_par_iter().map(|job| run_job(&shared, &info, job, ctl)).collect();
    let mut builders = Vec::with_capacity(results.len());
    for r in results {
        let (b, d) = r?;
        builders.push(b);
        diags.extend(d);
    }
    if ctl.is_cancelled() {
        return Err(ParseFailure::Cancelled);
    }
    let merged = merge_builders(builders).map_err(|e| limit(e.to_string()))?;
    let (mut table, strings) = merged.finish().map_err(|e| limit(e.to_string()))?;
    // Origin: whole seconds of the first event, so that relative picoseconds plus the
    // origin print exactly what `trace-cmd report` prints.
    let mut origin = ClockOrigin::from_secs_ps((time.origin_ns / 1_000_000_000) as i64, 0);
    if let Some(&first) = table.ts.first() {
        let first_ns = time.origin_ns + i128::from(first.div_euclid(PS_PER_NS));
        let secs = first_ns.div_euclid(1_000_000_000);
        let shift = (secs * 1_000_000_000 - time.origin_ns) * i128::from(PS_PER_NS);
        let shift_ps = shift.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        if shift_ps != 0 {
            // Saturating: a hostile file can put events anywhere in the i64 range.
            for t in &mut table.ts {
                *t = t.saturating_sub(shift_ps);
            }
            for g in &mut diags.gaps {
                g.ts = g.ts.saturating_sub(shift_ps);
            }
        }
        origin = ClockOrigin::from_secs_ps(secs as i64, 0);
    }
    let (renderer, not_understood) = render::TraceDatRenderer::new(
        &info.formats,
        &table,
        &strings,
        info.kallsyms.clone(),
        info.printk.clone(),
        info.page.long_size as usize,
        info.endian == Endian::Big,
    );
    if !not_understood.is_empty() {
        diags.warn(format!(
            "{} event format(s) with a print fmt this reader does not understand; their events show \
             `[FAILED TO PARSE]` and raw fields, as trace-cmd shows them: {}",
            not_understood.len(),
            not_understood.join("; ")
        ));
    }
    let mut src = Source::new("trace.dat", "trace.dat", SourceKind::File);
    src.origin = origin;
    src.strings = strings;
    src.events = table;
    src.renderer = Some(std::sync::Arc::new(renderer));
    Ok(finish_source(&info, Some(&top), src, diags))
}

fn limit(msg: String) -> ParseFailure {
    ParseFailure::Limit { at: Position::Byte(0), what: msg, limit: "4 GiB of field data".into() }
}

/// Splits each CPU's region into jobs; truncated regions keep their complete pages.
fn plan_jobs<'a>(
    data: &'a [u8],
    info: &FileInfo,
    top: &Buffer,
    diags: &mut Diagnostics,
) -> Result<Vec<Job<'a>>, ParseFailure> {
    let page_size = top.page_size as usize;
    let file_len = data.len() as u64;
    let mut jobs = Vec::new();
    for r in &top.cpus {
        if r.size == 0 {
            continue;
        }
        let cpu = u16::try_from(r.cpu)
            .map_err(|_| ParseFailure::invalid(Position::Byte(r.offset), "cpu id out of range"))?;
        if r.offset >= file_len {
            diags.warn(format!(
                "byte {}: CPU {cpu}'s data starts past the end of the file ({file_len} bytes); truncated file, nothing loaded for it",
                r.offset
            ));
            continue;
        }
        // The declared size of a compressed region leaves out its 4-byte chunk count
        // (trace-cmd 3.1.6 writes it so); the chunk headers say where the data ends.
        let slack = if top.compressed { 4 } else { 0 };
        let end = r.offset.saturating_add(r.size).saturating_add(slack);
        let avail_end = end.min(file_len);
        if end > file_len {
            diags.warn(format!(
                "byte {file_len}: the file ends inside CPU {cpu}'s data ({} of {} bytes present); truncated file, complete pages loaded",
                avail_end - r.offset,
                r.size
            ));
        }
        let region = &data[r.offset as usize..avail_end as usize];
        if !top.compressed {
            let whole = region.len() / page_size * page_size;
            if whole < region.len() && end <= file_len {
                diags.warn(format!(
                    "byte {}: CPU {cpu}'s data ends with a partial page; ignored",
                    r.offset + whole as u64
                ));
            }
            for (i, run) in region[..whole].chunks(PAGES_PER_JOB * page_size).enumerate() {
                let at = r.offset + (i * PAGES_PER_JOB * page_size) as u64;
                jobs.push(Job { cpu, chunks: vec![Chunk::Raw { at, bytes: run }] });
            }
            continue;
        }
        let mut c = Cursor::new(region, r.offset, info.endian, "compressed CPU data");
        let n = match c.u32() {
            Ok(n) => n,
            Err(e) => {
                diags.warn(format!("CPU {cpu}: {e}"));
                continue;
            }
        };
        let mut job = Job { cpu, chunks: Vec::new() };
        let mut job_bytes = 0u64;
        for i in 0..n {
            let at = c.offset();
            let chunk = (|| -> Result<Chunk<'a>, ParseFailure> {
                let csize = c.u32()?;
                let usize_ = c.u32()?;
                check_size(at, u64::from(csize), u64::from(usize_))?;
                let bytes = c.bytes(u64::from(csize))?;
                Ok(Chunk::Packed { at, bytes, size: u64::from(usize_) })
            })();
            match chunk {
                Ok(ch) => {
                    if let Chunk::Packed { size, .. } = ch {
                        job_bytes += size;
                    }
                    job.chunks.push(ch);
                    if job_bytes >= BYTES_PER_JOB {
                        jobs.push(std::mem::replace(&mut job, Job { cpu, chunks: Vec::new() }));
                        job_bytes = 0;
                    }
                }
                Err(e @ ParseFailure::Limit { .. }) => return Err(e),
                Err(e) => {
                    diags.warn(format!(
                        "CPU {cpu}: compressed chunk {i} of {n} unreadable ({e}); later chunks skipped"
                    ));
                    break;
                }
            }
        }
        if !job.chunks.is_empty() {
            jobs.push(job);
        }
    }
    let _ = info.codec;
    Ok(jobs)
}

/// The smallest first-page timestamp over the CPUs (a provisional origin).
fn first_page_ts(info: &FileInfo, jobs: &[Job<'_>], pf: &PageFormat) -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut seen_cpu = Vec::new();
    for job in jobs {
        if seen_cpu.contains(&job.cpu) {
            continue;
        }
        seen_cpu.push(job.cpu);
        let ts = match job.chunks.first()? {
            Chunk::Raw { bytes, .. } => pf.header(bytes).map(|h| h.ts),
            Chunk::Packed { at, bytes, size } => {
                decompress(info.codec, bytes, *size, *at).ok().and_then(|p| pf.header(&p).map(|h| h.ts))
            }
        };
        if let Some(ts) = ts {
            best = Some(best.map_or(ts, |b| b.min(ts)));
        }
        // The first CPU's first page is enough when data is compressed: decompressing
        // every CPU's first chunk twice costs more than a rare re-based origin.
        if info.codec != Codec::None && best.is_some() {
            break;
        }
    }
    best
}

/// Decoded bytes per job: small enough that one busy CPU's buffer spreads over all cores.
const JOB_BYTES: u64 = 2 << 20;

/// Splits each CPU's data into jobs of about [`JOB_BYTES`]: ring-buffer pages carry their
/// own absolute timestamp, so pages decode independently and the final sort merges them.
fn split_jobs(jobs: Vec<Job<'_>>, page_size: usize) -> Vec<Job<'_>> {
    let step = (JOB_BYTES as usize / page_size.max(1)).max(1) * page_size.max(1);
    let mut out = Vec::new();
    for job in jobs {
        let mut current = Job { cpu: job.cpu, chunks: Vec::new() };
        let mut size = 0u64;
        for chunk in job.chunks {
            let pieces: Vec<Chunk<'_>> = match chunk {
                Chunk::Raw { at, bytes } if bytes.len() > step => bytes
                    .chunks(step)
                    .enumerate()
                    .map(|(i, b)| Chunk::Raw { at: at + (i * step) as u64, bytes: b })
                    .collect(),
                other => vec![other],
            };
            for piece in pieces {
                size += match &piece {
                    Chunk::Raw { bytes, .. } => bytes.len() as u64,
                    Chunk::Packed { size, .. } => *size,
                };
                current.chunks.push(piece);
                if size >= JOB_BYTES {
                    out.push(std::mem::replace(&mut current, Job { cpu: job.cpu, chunks: Vec::new() }));
                    size = 0;
                }
            }
        }
        if !current.chunks.is_empty() {
            out.push(current);
        }
    }
    out
}

fn run_job(
    shared: &Shared,
    info: &FileInfo,
    job: Job<'_>,
    ctl: &LoadControl,
) -> Result<(EventTableBuilder, Diagnostics), ParseFailure> {
    let mut w = Worker::new(shared);
    // Ring-buffer records average 40-60 bytes with 10-15 bytes of field values once decoded;
    // reserving up front spares the columns their repeated growth. Sizes come from the file,
    // so the estimate is capped.
    let data_bytes: u64 = job
        .chunks
        .iter()
        .map(|c| match c {
            Chunk::Raw { bytes, .. } => bytes.len() as u64,
            Chunk::Packed { size, .. } => *size,
        })
        .sum();
    let estimate = (data_bytes / 48).min(1 << 26) as usize;
    w.reserve(estimate);
    let page_size = shared.page.page_size;
    let mut inflater = Inflater::default();
    let mut plain = Vec::new();
    for ch in job.chunks {
        if ctl.is_cancelled() {
            return Err(ParseFailure::Cancelled);
        }
        match ch {
            Chunk::Raw { at, bytes } => {
                for (i, page) in bytes.chunks_exact(page_size).enumerate() {
                    w.page(job.cpu, page, at + (i * page_size) as u64);
                }
                ctl.advance(bytes.len() as u64);
            }
            Chunk::Packed { at, bytes, size } => {
                match inflater.inflate(info.codec, bytes, size, at, &mut plain) {
                    Ok(()) => {}
                    Err(e @ ParseFailure::Limit { .. }) => return Err(e),
                    Err(e) => {
                        w.diags.malformed(None, at, format!("CPU {}: {e}; chunk skipped", job.cpu));
                        continue;
                    }
                };
                if plain.len() % page_size != 0 {
                    w.diags.malformed(
                        None,
                        at,
                        format!("CPU {}: chunk is not a whole number of pages", job.cpu),
                    );
                }
                for page in plain.chunks_exact(page_size) {
                    w.page(job.cpu, page, at);
                }
                ctl.advance(bytes.len() as u64);
            }
        }
    }
    Ok((w.builder, w.diags))
}

fn clock_prints_seconds(clock: &str) -> bool {
    matches!(clock, "local" | "global" | "uptime" | "perf" | "tsc2nsec" | "tai") || clock.starts_with("mono")
}

fn finish_source(info: &FileInfo, top: Option<&Buffer>, mut src: Source, mut diags: Diagnostics) -> Source {
    let m = &mut src.metadata;
    let mut put = |k: &str, v: String| m.push((k.to_string(), v));
    put("file version", info.version.to_string());
    put("endian", if info.endian == Endian::Big { "big" } else { "little" }.into());
    put("long size", info.page.long_size.to_string());
    put("page size", top.map_or(info.page_size, |t| t.page_size).to_string());
    put("cpus", info.cpus.to_string());
    let clock = top.and_then(|t| t.clock.clone()).unwrap_or_else(|| "local".into());
    put("clock", clock.clone());
    src.origin = src.origin.on(ClockDomain::Kernel(KernelClock::from_name(&clock)));
    if info.version >= 7 {
        put("compression", info.codec_name.clone());
    }
    if let Some(u) = &info.options.uname {
        put("uname", u.clone());
    }
    if let Some(v) = &info.options.version {
        put("trace-cmd version", v.clone());
    }
    if let Some(id) = info.options.trace_id {
        put("trace id", format!("0x{id:x}"));
    }
    if let Some(t) = info.options.tsc2nsec {
        put("tsc2nsec", format!("mult={} shift={} offset={}", t.mult, t.shift, t.offset));
    }
    if info.options.ts_offset != 0 {
        put("time offset ns", info.options.ts_offset.to_string());
    }
    put("event formats", info.formats.len().to_string());
    put("kallsyms lines", info.kallsyms_lines.to_string());
    if !clock_prints_seconds(&clock) && info.options.tsc2nsec.is_none() {
        diags.warn(format!(
            "clock {clock:?} counts in its own units; times are shown as if they were nanoseconds"
        ));
    }
    for b in &info.other_buffers {
        diags.warn(format!("buffer instance {b:?} not imported (only the top buffer is)"));
    }
    if !info.options.unknown.is_empty() {
        let ids: Vec<String> = info.options.unknown.iter().map(|i| i.to_string()).collect();
        diags.warn(format!("unknown option id(s) {} skipped", ids.join(", ")));
    }
    if info.options.time_shift || info.options.guest.is_some() {
        diags.warn(
            "guest/host TIME_SHIFT data present: timestamps are the guest's, not corrected to the host clock",
        );
    }
    src.diagnostics = diags;
    src
}

fn latency_source(info: &FileInfo, at: u64, text: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let inner = crate::ftrace_text::parse(text, ctl).map_err(|e| match e {
        ParseFailure::Invalid { at: Position::Line(l), message } => {
            ParseFailure::invalid(Position::Byte(at), format!("latency text, line {l}: {message}"))
        }
        other => other,
    })?;
    let mut src = inner;
    src.format = "trace.dat".into();
    let diags = std::mem::take(&mut src.diagnostics);
    Ok(finish_source(info, None, src, diags))
}
