//! A kernel's ring buffer read while it records: what its tracefs says about the buffer
//! and its events ([`KernelMeta`]), its sub-buffers ("pages", as each CPU's
//! `trace_pipe_raw` gives them) decoded into sources by the same compiled per-format
//! readers a trace.dat goes through ([`PageDecoder`]), pages cut to a time window with
//! only that window's records re-encoded ([`PageDecoder::cut`]), and a trace.dat (file
//! version 6) written from the pages ([`write_v6`]).
//!
//! Times: a record's raw timestamp is the ring buffer's clock (for `mono`, nanoseconds of
//! `CLOCK_MONOTONIC`); a decoder stores it as picoseconds after an origin fixed when the
//! decoder is made, so every batch of pages lands on one timeline.

use super::bytes::Endian;
use super::decode::{Shared, TimeConv, Worker};
use super::format::{EventFormat, PageLayout, is_old_event_header, parse_format, parse_header_page};
use super::page::{PageFormat, PageWriter};
use super::render::{Kallsyms, TraceDatRenderer};
use super::sections::{parse_cmdlines, parse_printk_formats};
use crate::{ParseFailure, Position};
use latscope_model::{
    ClockDomain, ClockOrigin, Diagnostics, EventRenderer, EventTableBuilder, Gap, KernelClock, PS_PER_NS, Ps,
    Source, SourceKind,
};
use std::io::{self, Read, Write};
use std::sync::Arc;

/// What a kernel's tracefs says about its ring buffer and the events recorded: everything
/// decoding its pages and writing a trace.dat need, read from the kernel (never assumed).
#[derive(Debug, Clone, Default)]
pub struct KernelMeta {
    pub big_endian: bool,
    /// The kernel's `long` in bytes (4 or 8).
    pub long_size: u8,
    /// Sub-buffer size in bytes.
    pub page_size: u32,
    /// `events/header_page` and `events/header_event`.
    pub header_page: Vec<u8>,
    pub header_event: Vec<u8>,
    /// `events/ftrace/*/format` (markers, bprint, …).
    pub ftrace_formats: Vec<Vec<u8>>,
    /// `(system, events/SYSTEM/NAME/format)` of the events recorded.
    pub event_formats: Vec<(String, Vec<u8>)>,
    /// `/proc/kallsyms` (may be empty: addresses then print as numbers).
    pub kallsyms: Vec<u8>,
    /// `printk_formats`.
    pub printk_formats: Vec<u8>,
    /// `saved_cmdlines`: task names by pid.
    pub cmdlines: Vec<u8>,
    /// The `trace_clock` file while recording (`… [mono] …`).
    pub trace_clock: Vec<u8>,
    /// `uname -srm`-like text of the machine, if known.
    pub uname: Option<String>,
    /// CPUs of the buffer (`per_cpu/cpuN`).
    pub cpus: u32,
    /// `per_cpu/cpuN/stats` at the end of the recording, by CPU.
    pub cpu_stats: Vec<Vec<u8>>,
}

impl KernelMeta {
    /// The clock selected in [`KernelMeta::trace_clock`] (`mono`), else `local`.
    pub fn clock(&self) -> String {
        super::sections::selected_clock(&self.trace_clock).unwrap_or_else(|| "local".into())
    }

    fn endian(&self) -> Endian {
        if self.big_endian { Endian::Big } else { Endian::Little }
    }

    /// The sub-buffer layout `header_page` gives.
    fn layout(&self) -> Result<PageLayout, ParseFailure> {
        let layout = parse_header_page(&self.header_page, self.long_size);
        let bad = layout.data_offset < layout.commit_offset.saturating_add(layout.long_size)
            || layout.data_offset >= self.page_size;
        if bad || is_old_event_header(&self.header_event) {
            return Err(ParseFailure::invalid(
                Position::Byte(0),
                format!(
                    "tracefs header_page/header_event describe a ring buffer this reader does not know \
                     ({layout:?}, page size {})",
                    self.page_size
                ),
            ));
        }
        Ok(layout)
    }

    fn page_format(&self) -> Result<PageFormat, ParseFailure> {
        Ok(PageFormat { endian: self.endian(), layout: self.layout()?, page_size: self.page_size as usize })
    }

    /// Every event format (ftrace's, then the recorded events'), parsed; those not
    /// understood are listed in the second vector.
    fn formats(&self) -> (Vec<EventFormat>, Vec<String>) {
        let mut out = Vec::new();
        let mut bad = Vec::new();
        let all = self
            .ftrace_formats
            .iter()
            .map(|t| ("ftrace", t))
            .chain(self.event_formats.iter().map(|(s, t)| (s.as_str(), t)));
        for (system, text) in all {
            match parse_format(system, text) {
                Ok(f) => out.push(f),
                Err(e) => bad.push(format!("{system}: {e}")),
            }
        }
        (out, bad)
    }
}

/// What one batch of pages held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageSpan {
    /// Raw timestamps of the first and last record (the page header's time for a page
    /// without records).
    pub first: u64,
    pub last: u64,
    pub records: u64,
}

/// Decodes a kernel's pages: event formats compiled once, each batch of one CPU's pages
/// into a [`Source`] sorted by time, on the timeline fixed by the origin.
#[derive(Debug)]
pub struct PageDecoder {
    shared: Shared,
    formats: Vec<EventFormat>,
    kallsyms: Kallsyms,
    long_size: usize,
    big_endian: bool,
    clock: String,
    origin_ns: u64,
    /// Event formats not understood (their records are counted as malformed).
    pub not_understood: Vec<String>,
}

impl PageDecoder {
    /// A decoder for `meta`'s pages whose times count from `origin_ns` (raw clock
    /// nanoseconds; whole seconds make times print as the kernel's do).
    pub fn new(meta: &KernelMeta, origin_ns: u64) -> Result<PageDecoder, ParseFailure> {
        if meta.long_size != 4 && meta.long_size != 8 {
            return Err(ParseFailure::invalid(
                Position::Byte(0),
                format!("bad long size {}", meta.long_size),
            ));
        }
        if !(64..=(64 << 20)).contains(&meta.page_size) {
            return Err(ParseFailure::invalid(
                Position::Byte(0),
                format!("implausible page size {}", meta.page_size),
            ));
        }
        let page = meta.page_format()?;
        let (formats, not_understood) = meta.formats();
        let time = TimeConv { tsc: None, offset: 0, origin_ns: i128::from(origin_ns) };
        let shared = Shared::new(
            &formats,
            meta.endian(),
            page.layout.long_size as usize,
            parse_printk_formats(&meta.printk_formats),
            parse_cmdlines(&meta.cmdlines),
            time,
            page,
        );
        Ok(PageDecoder {
            shared,
            formats,
            kallsyms: Kallsyms::parse(&meta.kallsyms),
            long_size: page.layout.long_size as usize,
            big_endian: meta.big_endian,
            clock: meta.clock(),
            origin_ns,
            not_understood,
        })
    }

    /// Replaces the task names (a fresh `saved_cmdlines`: tasks started since).
    pub fn set_cmdlines(&mut self, text: &[u8]) {
        self.shared.cmdlines = parse_cmdlines(text);
    }

    /// The name the decoder gives the events of task `pid`, by its `saved_cmdlines`.
    pub fn task_name(&self, pid: i32) -> &[u8] {
        self.shared.task_name(pid)
    }

    pub fn page_size(&self) -> usize {
        self.shared.page.page_size
    }

    /// The origin: raw clock nanoseconds at relative time zero.
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }

    /// A raw timestamp on this decoder's timeline.
    pub fn to_ps(&self, raw: u64) -> Ps {
        self.shared.time.ps(raw)
    }

    /// The raw timestamp of relative time `t` (rounded down to the nanosecond).
    pub fn to_raw(&self, t: Ps) -> u64 {
        let ns = i128::from(self.origin_ns) + i128::from(t.div_euclid(PS_PER_NS));
        ns.clamp(0, i128::from(u64::MAX)) as u64
    }

    /// An empty source on this decoder's timeline and clock.
    pub fn empty_source(&self) -> Source {
        let mut src = Source::new("kernel", "trace.dat", SourceKind::File);
        let secs = (self.origin_ns / 1_000_000_000) as i64;
        let ps = (self.origin_ns % 1_000_000_000) as i64 * PS_PER_NS;
        src.origin =
            ClockOrigin::from_secs_ps(secs, ps).on(ClockDomain::Kernel(KernelClock::from_name(&self.clock)));
        src
    }

    /// Decodes `pages` (whole pages of CPU `cpu`, in the order the buffer gave them) into a
    /// source sorted by time; lost events are its diagnostics' gaps, undecodable records
    /// its malformed count.
    pub fn decode(&self, cpu: u16, pages: &[u8]) -> (Source, PageSpan) {
        let mut w = Worker::new(&self.shared);
        let size = self.page_size();
        let mut span: Option<PageSpan> = None;
        for (i, page) in pages.chunks_exact(size).enumerate() {
            if let Some(p) = self.page_span(page) {
                span = Some(match span {
                    None => p,
                    Some(s) => PageSpan {
                        first: s.first.min(p.first),
                        last: s.last.max(p.last),
                        records: s.records + p.records,
                    },
                });
            }
            w.page(cpu, page, (i * size) as u64);
        }
        let mut src = self.empty_source();
        let diags: Diagnostics = std::mem::take(&mut w.diags);
        match w.builder.finish() {
            Ok((table, strings)) => {
                src.events = table;
                src.strings = strings;
            }
            Err(e) => {
                let mut d = diags.clone();
                d.warn(format!("CPU {cpu}: {e}"));
                src.diagnostics = d;
                return (src, span.unwrap_or_default());
            }
        }
        src.diagnostics = diags;
        (src, span.unwrap_or_default())
    }

    /// Decodes the records of several CPUs' pages (`cpus`: each CPU's whole pages, in the
    /// order its buffer gave them) whose raw time is in `[from, to]`, appending them to
    /// `builder` in time order across CPUs: equal times take the lower CPU first, then each
    /// CPU's own order, as a trace.dat file's reader orders them. A page whose lost-events
    /// flag is set adds its gap when its first record (or, without records, its time) is
    /// in range; a later call sees the rest of a page without counting it again. Returns
    /// the records decoded.
    ///
    /// This is how a growing source appends (`latscope-record`): decoded once, straight
    /// into its table, with no second copy of the strings.
    pub fn decode_merged(
        &self,
        builder: &mut EventTableBuilder,
        diags: &mut Diagnostics,
        cpus: &[(u16, &[u8])],
        from: u64,
        to: u64,
    ) -> u64 {
        /// One record in range: its time, CPU, which input and where its payload lies.
        struct At {
            ts: u64,
            cpu: u16,
            input: usize,
            start: usize,
            len: usize,
        }
        let pf = self.shared.page;
        let size = self.page_size();
        let in_range = |t: u64| t >= from && t <= to;
        let mut records: Vec<At> = Vec::new();
        for (input, &(cpu, pages)) in cpus.iter().enumerate() {
            for (i, page) in pages.chunks_exact(size).enumerate() {
                let page_at = i * size;
                let Some(h) = pf.header(page) else {
                    diags.malformed(None, page_at as u64, format!("CPU {cpu}: page header is cut short"));
                    continue;
                };
                let mut first = true;
                let res = pf.for_each_record(page, &h, |ts, payload, _| {
                    if first && h.missed && in_range(ts) {
                        diags.gaps.push(Gap { cpu, ts: self.shared.time.ps(ts), lost: h.lost });
                    }
                    first = false;
                    if in_range(ts) {
                        // Where the payload lies in this CPU's pages (a slice of `page`).
                        let start = page_at + (payload.as_ptr() as usize - page.as_ptr() as usize);
                        records.push(At { ts, cpu, input, start, len: payload.len() });
                    }
                });
                if first && h.missed && in_range(h.ts) {
                    diags.gaps.push(Gap { cpu, ts: self.shared.time.ps(h.ts), lost: h.lost });
                }
                if let Err(e) = res {
                    diags.malformed(
                        None,
                        (page_at + e.at) as u64,
                        format!("CPU {cpu}: {}; rest of the page skipped", e.message),
                    );
                }
            }
        }
        // Each CPU's records are in order already: a stable sort of the runs, CPU by CPU,
        // merges them.
        records.sort_by_key(|r| (r.ts, r.cpu));
        let mut w = Worker::new(&self.shared);
        std::mem::swap(&mut w.builder, builder);
        for r in &records {
            let Some(payload) = cpus.get(r.input).and_then(|c| c.1.get(r.start..r.start + r.len)) else {
                continue;
            };
            w.record(r.cpu, r.ts, payload, r.start as u64);
        }
        std::mem::swap(&mut w.builder, builder);
        diags.extend(std::mem::take(&mut w.diags));
        records.len() as u64
    }

    /// How `src`'s events read (their formats' print fmt, trace-cmd's plugin forms), for a
    /// source this decoder made.
    pub fn renderer(&self, src: &Source) -> Arc<dyn EventRenderer> {
        let (r, _) = TraceDatRenderer::new(
            &self.formats,
            &src.events,
            &src.strings,
            self.kallsyms.clone(),
            self.shared.printk.clone(),
            self.long_size,
            self.big_endian,
        );
        Arc::new(r)
    }

    /// The first page of `pages`: its first and last record's raw times (the header's time
    /// for a page without records) and how many records it holds; `None` without a whole
    /// page header.
    pub fn page_span(&self, pages: &[u8]) -> Option<PageSpan> {
        let pf = self.shared.page;
        let page = pages.get(..self.page_size().min(pages.len()))?;
        let h = pf.header(page)?;
        let (mut first, mut last, mut records) = (None, h.ts, 0);
        let _ = pf.for_each_record(page, &h, |ts, _, _| {
            first.get_or_insert(ts);
            last = ts;
            records += 1;
        });
        Some(PageSpan { first: first.unwrap_or(h.ts), last, records })
    }

    /// The bytes of `page` that hold anything: its header, its records and the lost count
    /// after them. A page read before it filled is mostly zeros; keeping only these bytes
    /// and padding when writing stores the same page.
    pub fn used_len(&self, page: &[u8]) -> usize {
        let pf = self.shared.page;
        let Some(h) = pf.header(page) else { return page.len() };
        let lost = if h.lost.is_some() { pf.layout.long_size as usize } else { 0 };
        (pf.layout.data_offset as usize + h.data_len + lost).min(page.len())
    }

    /// Whether lost events precede `page` (one page), and how many when the kernel stored
    /// the count: `Some(None)` says only that some were lost.
    pub fn lost_before(&self, page: &[u8]) -> Option<Option<u64>> {
        let h = self.shared.page.header(page)?;
        h.missed.then_some(h.lost)
    }

    /// Re-encodes the records of `pages` whose raw time is in `[from, to]` into new pages
    /// (a window keeps only its events, whatever the pages it came in held). Lost events
    /// before a kept record stay marked on the page that holds it. Returns the pages and
    /// the records kept.
    pub fn cut(&self, pages: &[u8], from: u64, to: u64) -> (Vec<u8>, u64) {
        let pf = self.shared.page;
        let mut w = PageWriter::new(pf);
        let mut kept = 0u64;
        for page in pages.chunks_exact(self.page_size()) {
            let Some(h) = pf.header(page) else { continue };
            let mut pending_missed = h.missed.then_some(h.lost);
            let _ = pf.for_each_raw_record(page, &h, |ts, payload, _, long| {
                if ts < from || ts > to {
                    return;
                }
                if let Some(lost) = pending_missed.take() {
                    w.missed(lost);
                }
                w.record(ts, payload, long);
                kept += 1;
            });
        }
        w.close();
        (w.out, kept)
    }
}

/// One CPU's pages for [`write_v6`]: how many bytes (whole pages), and where to read them.
pub struct CpuPages<'a> {
    pub len: u64,
    pub data: &'a mut dyn Read,
}

impl std::fmt::Debug for CpuPages<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuPages").field("len", &self.len).finish()
    }
}

/// Writes a trace.dat, file version 6, as trace-cmd lays it out: the headers, ftrace's and
/// the recorded events' formats, kallsyms, printk formats, task names, the options (the
/// trace clock, uname, per-CPU stats, CPU count) and each CPU's pages, page-aligned.
/// `cpus` has one entry per CPU of `meta` (an empty one for a CPU that recorded nothing).
pub fn write_v6(meta: &KernelMeta, cpus: &mut [CpuPages<'_>], out: &mut dyn Write) -> io::Result<u64> {
    let big = meta.big_endian;
    let u16b = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let u32b = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let u64b = |v: u64| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut h: Vec<u8> = Vec::new();
    h.extend_from_slice(b"\x17\x08\x44tracing6\0");
    h.push(u8::from(big));
    h.push(meta.long_size);
    h.extend_from_slice(&u32b(meta.page_size));
    h.extend_from_slice(b"header_page\0");
    h.extend_from_slice(&u64b(meta.header_page.len() as u64));
    h.extend_from_slice(&meta.header_page);
    h.extend_from_slice(b"header_event\0");
    h.extend_from_slice(&u64b(meta.header_event.len() as u64));
    h.extend_from_slice(&meta.header_event);
    h.extend_from_slice(&u32b(meta.ftrace_formats.len() as u32));
    for f in &meta.ftrace_formats {
        h.extend_from_slice(&u64b(f.len() as u64));
        h.extend_from_slice(f);
    }
    // Systems in order of first appearance, each with its formats.
    let mut systems: Vec<(&str, Vec<&[u8]>)> = Vec::new();
    for (s, f) in &meta.event_formats {
        match systems.iter_mut().find(|(n, _)| n == s) {
            Some((_, list)) => list.push(f),
            None => systems.push((s, vec![f])),
        }
    }
    h.extend_from_slice(&u32b(systems.len() as u32));
    for (s, list) in &systems {
        h.extend_from_slice(s.as_bytes());
        h.push(0);
        h.extend_from_slice(&u32b(list.len() as u32));
        for f in list {
            h.extend_from_slice(&u64b(f.len() as u64));
            h.extend_from_slice(f);
        }
    }
    h.extend_from_slice(&u32b(meta.kallsyms.len() as u32));
    h.extend_from_slice(&meta.kallsyms);
    h.extend_from_slice(&u32b(meta.printk_formats.len() as u32));
    h.extend_from_slice(&meta.printk_formats);
    h.extend_from_slice(&u64b(meta.cmdlines.len() as u64));
    h.extend_from_slice(&meta.cmdlines);
    h.extend_from_slice(&u32b(meta.cpus));
    h.extend_from_slice(b"options  \0");
    let option = |h: &mut Vec<u8>, id: u16, data: &[u8]| {
        h.extend_from_slice(&u16b(id));
        h.extend_from_slice(&u32b(data.len() as u32));
        h.extend_from_slice(data);
    };
    // TRACECLOCK: its presence says the clock's text follows the CPU table.
    let mut clock_text = meta.trace_clock.clone();
    clock_text.push(0);
    option(&mut h, 4, &clock_text);
    if let Some(u) = &meta.uname {
        let mut t = u.as_bytes().to_vec();
        t.push(0);
        option(&mut h, 5, &t);
    }
    for (cpu, stats) in meta.cpu_stats.iter().enumerate() {
        let mut t = format!("CPU: {cpu}\n").into_bytes();
        t.extend_from_slice(stats);
        t.push(0);
        option(&mut h, 2, &t);
    }
    option(&mut h, 8, &u32b(meta.cpus));
    h.extend_from_slice(&u16b(0));
    h.extend_from_slice(b"flyrecord\0");
    let clock = format!("[{}]", meta.clock());
    let table_len = 16 * cpus.len() as u64 + 8 + clock.len() as u64;
    let page = u64::from(meta.page_size.max(1));
    let mut at = (h.len() as u64 + table_len).div_ceil(page) * page;
    let mut offsets = Vec::with_capacity(cpus.len());
    for c in cpus.iter() {
        offsets.push(at);
        at += c.len.div_ceil(page) * page;
    }
    for (c, &off) in cpus.iter().zip(&offsets) {
        h.extend_from_slice(&u64b(off));
        h.extend_from_slice(&u64b(c.len));
    }
    h.extend_from_slice(&u64b(clock.len() as u64));
    h.extend_from_slice(clock.as_bytes());
    let mut written = h.len() as u64;
    out.write_all(&h)?;
    for (c, &off) in cpus.iter_mut().zip(&offsets) {
        let pad = off - written;
        out.write_all(&vec![0; pad as usize])?;
        written += pad;
        let copied = io::copy(&mut c.data.take(c.len), out)?;
        if copied != c.len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} of {} bytes of a CPU's pages could be read", copied, c.len),
            ));
        }
        written += copied;
        let tail = c.len.div_ceil(page) * page - c.len;
        out.write_all(&vec![0; tail as usize])?;
        written += tail;
    }
    Ok(written)
}
