//! The file container: the common prefix, the v6 sequential layout and the v7 sections
//! (found through the chained options sections), and the metadata blocks they hold:
//! header_page/header_event, event formats, kallsyms, printk formats, saved cmdlines and
//! the per-CPU data table of each buffer. Produces a [`FileInfo`]; decoding the pages is
//! `page.rs`'s job.

use super::bytes::{Cursor, Endian, show};
use super::compress::{Codec, decompress};
use super::format::{EventFormat, PageLayout, is_old_event_header, parse_format, parse_header_page};
use super::options::{BufferOpt, Options, parse_options};
use crate::{ParseFailure, Position};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

pub(crate) const MAGIC: &[u8] = b"\x17\x08\x44tracing";

/// One CPU's data region in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuRegion {
    pub cpu: u32,
    pub offset: u64,
    pub size: u64,
}

/// A ring buffer (the top one or an instance) and where its pages are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Buffer {
    pub name: String,
    pub clock: Option<String>,
    /// Sub-buffer size.
    pub page_size: u32,
    pub cpus: Vec<CpuRegion>,
    /// v7: every region is a run of compressed chunks.
    pub compressed: bool,
}

/// Everything the metadata says, ready for page decoding.
#[derive(Debug)]
pub(crate) struct FileInfo {
    pub version: u32,
    pub endian: Endian,
    pub file_long: u8,
    pub page_size: u32,
    pub codec: Codec,
    pub codec_name: String,
    pub page: PageLayout,
    pub formats: Vec<EventFormat>,
    pub kallsyms_lines: usize,
    /// The kallsyms functions, for `%ps` and trace-cmd's plugin forms.
    pub kallsyms: super::render::Kallsyms,
    /// printk_formats: address → format (C escapes resolved).
    pub printk: FxHashMap<u64, String>,
    pub cmdlines: FxHashMap<i32, Vec<u8>>,
    pub cpus: u32,
    pub options: Options,
    /// The top buffer (or, when a file holds only instances, the first instance).
    pub top: Option<Buffer>,
    /// Names of buffer instances that were not imported.
    pub other_buffers: Vec<String>,
    /// v6 `latency  ` files and v7 BUFFER_TEXT: the ASCII trace and its file offset.
    pub latency_text: Option<(u64, Vec<u8>)>,
    pub warnings: Vec<String>,
}

/// Parses everything but the pages.
pub(crate) fn read_file_info(data: &[u8]) -> Result<FileInfo, ParseFailure> {
    let mut c = Cursor::new(data, 0, Endian::Little, "file header");
    c.tag(MAGIC)?;
    let version_str = c.cstr()?;
    let version = match version_str {
        b"6" | b"0.6" => 6,
        b"7" => 7,
        v => {
            return Err(ParseFailure::invalid(
                Position::Byte(10),
                format!("unsupported trace.dat file version {:?} (this reader knows 6 and 7)", show(v)),
            ));
        }
    };
    let endian = match c.u8()? {
        0 => Endian::Little,
        1 => Endian::Big,
        e => return Err(c.field_error(1, format!("bad endian byte {e}"))),
    };
    c.endian = endian;
    let file_long = c.u8()?;
    if file_long != 4 && file_long != 8 {
        return Err(c.field_error(1, format!("bad long size {file_long}")));
    }
    let page_size = c.u32()?;
    if !(64..=(64 << 20)).contains(&page_size) {
        return Err(c.field_error(4, format!("implausible page size {page_size}")));
    }
    let mut info = FileInfo {
        version,
        endian,
        file_long,
        page_size,
        codec: Codec::None,
        codec_name: String::new(),
        page: PageLayout {
            commit_offset: 8,
            long_size: u32::from(file_long),
            data_offset: 8 + u32::from(file_long),
        },
        formats: Vec::new(),
        kallsyms_lines: 0,
        kallsyms: super::render::Kallsyms::default(),
        printk: FxHashMap::default(),
        cmdlines: FxHashMap::default(),
        cpus: 0,
        options: Options::default(),
        top: None,
        other_buffers: Vec::new(),
        latency_text: None,
        warnings: Vec::new(),
    };
    if version == 6 {
        read_v6(data, c, &mut info)?;
    } else {
        read_v7(data, c, &mut info)?;
    }
    Ok(info)
}

fn read_headers(c: &mut Cursor<'_>, info: &mut FileInfo) -> Result<(), ParseFailure> {
    c.set_what("header_page");
    c.tag(b"header_page\0")?;
    let n = c.u64()?;
    let text = c.bytes(n)?;
    info.page = parse_header_page(text, info.file_long);
    if info.page.data_offset < info.page.commit_offset.saturating_add(info.page.long_size)
        || info.page.data_offset >= info.page_size
    {
        return Err(c.error(format!("bad sub-buffer layout {:?}", info.page)));
    }
    c.set_what("header_event");
    c.tag(b"header_event\0")?;
    let n = c.u64()?;
    let text = c.bytes(n)?;
    if is_old_event_header(text) {
        return Err(c.error("pre-2.6.31 event headers (2-bit type, 3-bit length) are not supported"));
    }
    Ok(())
}

/// Parses event format texts (system, text, byte offset) in parallel — a trace.dat carries
/// the format of every event the kernel has, often two thousand, and most are never used —
/// and keeps them, and the warnings for those not understood, in file order.
fn push_formats(info: &mut FileInfo, texts: &[(&str, &[u8], u64)]) {
    let parsed: Vec<Result<EventFormat, String>> =
        texts.par_iter().map(|&(system, text, _)| parse_format(system, text)).collect();
    for (r, &(system, _, at)) in parsed.into_iter().zip(texts) {
        match r {
            Ok(f) => info.formats.push(f),
            Err(e) => info.warnings.push(format!(
                "byte {at}: format of a {system} event not understood ({e}); its records are skipped"
            )),
        }
    }
}

fn read_ftrace_formats(c: &mut Cursor<'_>, info: &mut FileInfo) -> Result<(), ParseFailure> {
    c.set_what("ftrace event formats");
    let n = c.u32()?;
    let mut texts = Vec::new();
    for _ in 0..n {
        let size = c.u64()?;
        let at = c.offset();
        texts.push(("ftrace", c.bytes(size)?, at));
    }
    push_formats(info, &texts);
    Ok(())
}

fn read_event_formats(c: &mut Cursor<'_>, info: &mut FileInfo) -> Result<(), ParseFailure> {
    c.set_what("event formats");
    let n_sys = c.u32()?;
    let mut systems = Vec::new();
    let mut texts = Vec::new();
    for _ in 0..n_sys {
        let system = String::from_utf8_lossy(c.cstr()?).into_owned();
        let n = c.u32()?;
        for _ in 0..n {
            let size = c.u64()?;
            let at = c.offset();
            texts.push((systems.len(), c.bytes(size)?, at));
        }
        systems.push(system);
    }
    let texts: Vec<(&str, &[u8], u64)> =
        texts.into_iter().map(|(i, text, at)| (systems[i].as_str(), text, at)).collect();
    push_formats(info, &texts);
    Ok(())
}

fn read_kallsyms(c: &mut Cursor<'_>, info: &mut FileInfo) -> Result<(), ParseFailure> {
    c.set_what("kallsyms");
    let n = c.u32()?;
    let text = c.bytes(u64::from(n))?;
    info.kallsyms_lines = memchr::memchr_iter(b'\n', text).count();
    info.kallsyms = super::render::Kallsyms::parse(text);
    Ok(())
}

fn read_printk(c: &mut Cursor<'_>, info: &mut FileInfo) -> Result<(), ParseFailure> {
    c.set_what("printk formats");
    let n = c.u32()?;
    let text = c.bytes(u64::from(n))?;
    info.printk = parse_printk_formats(text);
    Ok(())
}

fn read_cmdlines(c: &mut Cursor<'_>, info: &mut FileInfo) -> Result<(), ParseFailure> {
    c.set_what("saved cmdlines");
    let n = c.u64()?;
    let text = c.bytes(n)?;
    info.cmdlines = parse_cmdlines(text);
    Ok(())
}

/// `0xADDR : "fmt"` lines.
pub(crate) fn parse_printk_formats(text: &[u8]) -> FxHashMap<u64, String> {
    let mut out = FxHashMap::default();
    for line in text.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let Some((addr, fmt)) = line.split_once(':') else { continue };
        let addr = addr.trim();
        let Ok(addr) = u64::from_str_radix(addr.trim_start_matches("0x"), 16) else { continue };
        let fmt = fmt.trim();
        let fmt = fmt.strip_prefix('"').unwrap_or(fmt);
        let fmt = fmt.strip_suffix('"').unwrap_or(fmt);
        out.insert(addr, unescape_c(fmt));
    }
    out
}

/// Resolves the C escapes tracefs writes in printk_formats (`\n`, `\t`, `\"`, `\\`).
pub(crate) fn unescape_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(ch) = it.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\x07'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// `PID COMM` lines.
pub(crate) fn parse_cmdlines(text: &[u8]) -> FxHashMap<i32, Vec<u8>> {
    let mut out = FxHashMap::default();
    for line in text.split(|&b| b == b'\n') {
        let Some(sp) = memchr::memchr(b' ', line) else { continue };
        let Some(pid) = std::str::from_utf8(&line[..sp]).ok().and_then(|p| p.trim().parse::<i32>().ok())
        else {
            continue;
        };
        out.insert(pid, line[sp + 1..].to_vec());
    }
    out
}

/// The clock selected in a `trace_clock` text (`[local] global …` → `local`).
pub(crate) fn selected_clock(text: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(text);
    let open = s.find('[')?;
    let close = s[open..].find(']')? + open;
    let name = s[open + 1..close].trim();
    (!name.is_empty()).then(|| name.to_string())
}

fn read_v6(data: &[u8], mut c: Cursor<'_>, info: &mut FileInfo) -> Result<(), ParseFailure> {
    info.codec_name = "none".into();
    read_headers(&mut c, info)?;
    read_ftrace_formats(&mut c, info)?;
    read_event_formats(&mut c, info)?;
    read_kallsyms(&mut c, info)?;
    read_printk(&mut c, info)?;
    read_cmdlines(&mut c, info)?;
    c.set_what("cpu count");
    info.cpus = c.u32()?;
    let mut v6_buffers: Vec<(String, u64)> = Vec::new();
    loop {
        c.set_what("data section tag");
        let at = c.offset();
        let tag = c.bytes(10)?;
        match tag {
            b"options  \0" => {
                c.set_what("options");
                parse_options(&mut c, 6, &mut info.options, &mut v6_buffers, &mut info.warnings)?;
            }
            b"latency  \0" => {
                info.latency_text = Some((c.offset(), c.rest().to_vec()));
                return Ok(());
            }
            b"flyrecord\0" => break,
            other => {
                return Err(ParseFailure::invalid(
                    Position::Byte(at),
                    format!(
                        "expected \"options  \", \"latency  \" or \"flyrecord\", found {:?}",
                        show(other)
                    ),
                ));
            }
        }
    }
    let (cpus, clock) = read_v6_cpu_table(&mut c, info, info.cpus)?;
    info.top =
        Some(Buffer { name: String::new(), clock, page_size: info.page_size, cpus, compressed: false });
    for (name, off) in v6_buffers {
        // The instance's table is only checked for presence: instances are not imported.
        let mut b = Cursor::new(data, 0, info.endian, "buffer instance");
        let ok =
            usize::try_from(off).ok().is_some_and(|o| b.seek(o).is_ok() && b.tag(b"flyrecord\0").is_ok());
        if !ok {
            info.warnings.push(format!("byte {off}: buffer instance {name:?} has no flyrecord table"));
        }
        info.other_buffers.push(name);
    }
    Ok(())
}

fn read_v6_cpu_table(
    c: &mut Cursor<'_>,
    info: &FileInfo,
    cpus: u32,
) -> Result<(Vec<CpuRegion>, Option<String>), ParseFailure> {
    c.set_what("flyrecord cpu table");
    if u64::from(cpus) * 16 > c.remaining() as u64 {
        return Err(c.error(format!("table of {cpus} CPUs does not fit in the file")));
    }
    let mut regions = Vec::with_capacity(cpus as usize);
    for cpu in 0..cpus {
        let offset = c.u64()?;
        let size = c.u64()?;
        regions.push(CpuRegion { cpu, offset, size });
    }
    // trace-input.c read_cpu_data(): when CPUCOUNT raised the count, one more (zero) pair.
    if info.options.cpu_count.is_some_and(|n| n > cpus) {
        c.u64()?;
        c.u64()?;
    }
    let mut clock = None;
    if info.options.saw_trace_clock {
        c.set_what("trace_clock");
        let n = c.u64()?;
        let text = c.bytes(n)?;
        clock = selected_clock(text);
    }
    if clock.is_none() {
        clock = info.options.trace_clock.clone();
    }
    Ok((regions, clock))
}

/// A v7 section: its header at `offset` and its (decompressed) body.
struct Section {
    flags: u16,
    body_offset: u64,
    body: Vec<u8>,
}

const SECTION_COMPRESSED: u16 = 1;

fn read_section(
    data: &[u8],
    info: &FileInfo,
    offset: u64,
    want: Option<u16>,
) -> Result<Section, ParseFailure> {
    let mut c = Cursor::new(data, 0, info.endian, "section header");
    let pos = usize::try_from(offset).map_err(|_| c.error("offset overflows"))?;
    c.seek(pos)?;
    let id = c.u16()?;
    let flags = c.u16()?;
    let _desc = c.u32()?;
    let size = c.u64()?;
    if let Some(w) = want
        && w != id
    {
        return Err(ParseFailure::invalid(
            Position::Byte(offset),
            format!("expected section {w}, found section {id}"),
        ));
    }
    if id == 3 {
        // The flyrecord section's body is the CPU data, read by its own offsets.
        return Ok(Section { flags, body_offset: c.offset(), body: Vec::new() });
    }
    let body_offset = c.offset();
    c.set_what("section body");
    let raw = c.bytes(size)?;
    let body = if flags & SECTION_COMPRESSED != 0 {
        let mut b = Cursor::new(raw, body_offset, info.endian, "compressed section");
        let csize = b.u32()?;
        let usize_ = b.u32()?;
        let comp = b.bytes(u64::from(csize))?;
        decompress(info.codec, comp, u64::from(usize_), body_offset)?
    } else {
        raw.to_vec()
    };
    Ok(Section { flags, body_offset, body })
}

fn read_v7(data: &[u8], mut c: Cursor<'_>, info: &mut FileInfo) -> Result<(), ParseFailure> {
    c.set_what("compression header");
    let name = c.cstr()?;
    let version = c.cstr()?;
    info.codec = Codec::from_name(name).ok_or_else(|| {
        c.error(format!("unknown compression {:?} (zstd, zlib and none are known)", show(name)))
    })?;
    info.codec_name =
        if version.is_empty() { show(name) } else { format!("{} {}", show(name), show(version)) };
    let mut next = c.u64()?;
    let mut buffers: Vec<BufferOpt> = Vec::new();
    let mut seen = Vec::new();
    while next != 0 {
        if seen.contains(&next) || seen.len() > 1000 {
            info.warnings.push(format!("byte {next}: options sections loop; stopped following them"));
            break;
        }
        seen.push(next);
        let sec = match read_section(data, info, next, Some(0)) {
            Ok(s) => s,
            Err(e) if buffers.is_empty() && info.options.buffer_text.is_none() => {
                // trace-cmd writes the options that locate the data last, after the data: a
                // file cut before them has no index to its pages.
                return Err(ParseFailure::invalid(
                    Position::Byte(next),
                    format!(
                        "the options section that locates the trace data of a v7 file is unreadable, \
                         so nothing can be loaded (truncated file?): {e}"
                    ),
                ));
            }
            Err(e) => {
                // The last options section (with the BUFFER option) is written after the
                // data, so a truncated file loses it: keep what we have.
                info.warnings.push(format!("options section unreadable: {e}"));
                break;
            }
        };
        let mut oc = Cursor::new(&sec.body, sec.body_offset, info.endian, "options");
        let mut v6_unused = Vec::new();
        next = parse_options(&mut oc, 7, &mut info.options, &mut v6_unused, &mut info.warnings)?;
        buffers.append(&mut info.options.buffers_v7);
    }
    // Metadata sections, each found through its option.
    let o = info.options.sections.clone();
    let need = |id: u16, off: Option<u64>| {
        off.ok_or_else(|| {
            ParseFailure::invalid(
                Position::Byte(0),
                format!("no option points to section {id} (truncated or damaged file)"),
            )
        })
    };
    {
        let s = read_section(data, info, need(16, o.header_info)?, Some(16))?;
        let mut sc = Cursor::new(&s.body, s.body_offset, info.endian, "headers");
        read_headers(&mut sc, info)?;
    }
    if let Some(off) = o.ftrace_events {
        let s = read_section(data, info, off, Some(17))?;
        read_ftrace_formats(&mut Cursor::new(&s.body, s.body_offset, info.endian, ""), info)?;
    }
    if let Some(off) = o.event_formats {
        let s = read_section(data, info, off, Some(18))?;
        read_event_formats(&mut Cursor::new(&s.body, s.body_offset, info.endian, ""), info)?;
    }
    // Symbols, printk formats and task names only label events: a damaged one costs names,
    // not the trace, so it is a warning (limits still stop the load).
    type Reader = fn(&mut Cursor<'_>, &mut FileInfo) -> Result<(), ParseFailure>;
    let optional: [(Option<u64>, u16, &str, &str, Reader); 3] = [
        (o.kallsyms, 19, "kallsyms", "addresses are shown as numbers", read_kallsyms),
        (o.printk, 20, "printk formats", "bprint payloads are shown raw", read_printk),
        (o.cmdlines, 21, "cmdlines", "task names may be missing", read_cmdlines),
    ];
    for (off, id, what, cost, read) in optional {
        let Some(off) = off else { continue };
        let result = read_section(data, info, off, Some(id))
            .and_then(|s| read(&mut Cursor::new(&s.body, s.body_offset, info.endian, ""), info));
        match result {
            Ok(()) => {}
            Err(e @ ParseFailure::Limit { .. }) => return Err(e),
            Err(e) => info.warnings.push(format!("{what} section unreadable, {cost}: {e}")),
        }
    }
    info.cpus = info.options.cpu_count.unwrap_or(0);
    // Buffers: the top one ("") is imported; instances are listed.
    let top_idx =
        buffers.iter().position(|b| b.name.is_empty()).or(if buffers.is_empty() { None } else { Some(0) });
    for (i, b) in buffers.into_iter().enumerate() {
        if Some(i) != top_idx {
            info.other_buffers.push(b.name);
            continue;
        }
        if !b.name.is_empty() {
            info.warnings.push(format!("the file has no top buffer; importing instance {:?}", b.name));
        }
        let sec = read_section(data, info, b.section_offset, Some(3))?;
        if info.cpus == 0 {
            info.cpus = b.cpus.iter().map(|r| r.cpu + 1).max().unwrap_or(0);
        }
        info.top = Some(Buffer {
            name: b.name,
            clock: b.clock.or_else(|| info.options.trace_clock.clone()),
            page_size: b.page_size,
            cpus: b.cpus,
            compressed: sec.flags & SECTION_COMPRESSED != 0,
        });
    }
    if info.top.is_none() {
        if let Some((off, name)) = info.options.buffer_text.clone() {
            let s = read_section(data, info, off, None)?;
            info.latency_text = Some((s.body_offset, s.body));
            if !name.is_empty() {
                info.warnings.push(format!("latency buffer {name:?}"));
            }
        } else {
            info.warnings
                .push("no BUFFER option found: the file holds no trace data (or was truncated)".into());
        }
    }
    Ok(())
}
