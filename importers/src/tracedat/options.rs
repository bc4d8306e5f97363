//! trace.dat options: the v6 list (DONE without a size) and the v7
//! options sections (DONE with a u64 pointer to the next section). Unknown ids are skipped
//! by their size, never rejected.

use super::bytes::Cursor;
use super::sections::{CpuRegion, selected_clock};
use crate::ParseFailure;

/// Offsets of the v7 metadata sections (options 16–21).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SectionOffsets {
    pub header_info: Option<u64>,
    pub ftrace_events: Option<u64>,
    pub event_formats: Option<u64>,
    pub kallsyms: Option<u64>,
    pub printk: Option<u64>,
    pub cmdlines: Option<u64>,
}

/// A v7 BUFFER option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BufferOpt {
    pub section_offset: u64,
    pub name: String,
    pub clock: Option<String>,
    pub page_size: u32,
    pub cpus: Vec<CpuRegion>,
}

/// TSC2NSEC: `ns = (tsc * mult) >> shift`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tsc2Nsec {
    pub mult: u32,
    pub shift: u32,
    pub offset: u64,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub date: Option<String>,
    pub cpu_stats: u32,
    pub saw_trace_clock: bool,
    pub trace_clock: Option<String>,
    pub uname: Option<String>,
    pub version: Option<String>,
    /// OFFSET: ns added to every timestamp.
    pub ts_offset: i64,
    pub cpu_count: Option<u32>,
    pub trace_id: Option<u64>,
    pub time_shift: bool,
    pub guest: Option<String>,
    pub tsc2nsec: Option<Tsc2Nsec>,
    pub sections: SectionOffsets,
    pub buffers_v7: Vec<BufferOpt>,
    /// BUFFER_TEXT: (section offset, instance name).
    pub buffer_text: Option<(u64, String)>,
    pub unknown: Vec<u16>,
}

fn text(b: &[u8]) -> String {
    let end = memchr::memchr(0, b).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).trim().to_string()
}

/// The sign and magnitude (saturating) of a C number as `strtoll(s, NULL, 0)` and
/// `strtoull` read it: sign, then `0x` hex, `0` octal or decimal; stops at junk.
pub(crate) fn c_number(s: &str) -> (bool, u64) {
    let s = s.trim();
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    let mut v: u64 = 0;
    for ch in digits.chars() {
        let Some(d) = ch.to_digit(radix) else { break };
        v = v.saturating_mul(u64::from(radix)).saturating_add(u64::from(d));
    }
    (neg, v)
}

/// C `strtoll(s, NULL, 0)` (saturating).
pub(crate) fn strtoll(s: &str) -> i64 {
    let (neg, v) = c_number(s);
    let v = i64::try_from(v).unwrap_or(i64::MAX);
    if neg { v.saturating_neg() } else { v }
}

/// Parses an options list at `c`. `version` 6: ends at id 0 (no size). Version 7: ends at
/// DONE, whose u64 (the next options section's offset, 0 = last) is returned. v6 BUFFER
/// options (name, offset) go to `v6_buffers`.
pub(crate) fn parse_options(
    c: &mut Cursor<'_>,
    version: u32,
    opts: &mut Options,
    v6_buffers: &mut Vec<(String, u64)>,
    warnings: &mut Vec<String>,
) -> Result<u64, ParseFailure> {
    loop {
        if version >= 7 && c.remaining() == 0 {
            // A v7 options section whose DONE is missing: treat it as the last one.
            warnings.push(format!("byte {}: options section ends without DONE", c.offset()));
            return Ok(0);
        }
        let id = c.u16()?;
        if id == 0 && version < 7 {
            return Ok(0);
        }
        let size = c.u32()?;
        let at = c.offset();
        let data = c.bytes(u64::from(size))?;
        let mut d = Cursor::new(data, at, c.endian, "option");
        match id {
            0 => return Ok(if data.len() >= 8 { d.u64()? } else { 0 }),
            1 => opts.date = Some(text(data)),
            2 => opts.cpu_stats += 1,
            3 => {
                if version < 7 {
                    let off = d.u64()?;
                    let name = text(d.cstr().unwrap_or(&[]));
                    v6_buffers.push((name, off));
                } else {
                    opts.buffers_v7.push(parse_buffer_v7(&mut d)?);
                }
            }
            4 => {
                opts.saw_trace_clock = true;
                if let Some(c) = selected_clock(data) {
                    opts.trace_clock = Some(c);
                }
            }
            5 => opts.uname = Some(text(data)),
            6 | 10 => {}
            7 => opts.ts_offset = opts.ts_offset.wrapping_add(strtoll(&text(data))),
            8 => opts.cpu_count = Some(d.u32()?),
            9 => opts.version = Some(text(data)),
            11 => opts.trace_id = Some(d.u64()?),
            12 => opts.time_shift = true,
            13 => opts.guest = Some(text(d.cstr().unwrap_or(data))),
            14 => {
                if data.len() >= 16 {
                    let mult = d.u32()?;
                    let shift = d.u32()?;
                    let offset = d.u64()?;
                    if mult != 0 {
                        opts.tsc2nsec = Some(Tsc2Nsec { mult, shift: shift.min(63), offset });
                    }
                }
            }
            16..=21 if data.len() >= 8 => {
                let off = d.u64()?;
                let s = &mut opts.sections;
                let slot = match id {
                    16 => &mut s.header_info,
                    17 => &mut s.ftrace_events,
                    18 => &mut s.event_formats,
                    19 => &mut s.kallsyms,
                    20 => &mut s.printk,
                    _ => &mut s.cmdlines,
                };
                *slot = Some(off);
            }
            22 if data.len() >= 8 => {
                let off = d.u64()?;
                let name = text(d.cstr().unwrap_or(&[]));
                opts.buffer_text = Some((off, name));
            }
            other => {
                if !opts.unknown.contains(&other) {
                    opts.unknown.push(other);
                }
            }
        }
    }
}

fn parse_buffer_v7(d: &mut Cursor<'_>) -> Result<BufferOpt, ParseFailure> {
    d.set_what("BUFFER option");
    let section_offset = d.u64()?;
    let name = text(d.cstr()?);
    let clock = text(d.cstr()?);
    let page_size = d.u32()?;
    if !(64..=(64 << 20)).contains(&page_size) {
        return Err(d.error(format!("implausible sub-buffer size {page_size}")));
    }
    let n = d.u32()?;
    if u64::from(n) * 20 > d.remaining() as u64 {
        return Err(d.error(format!("{n} CPUs do not fit in the option")));
    }
    let mut cpus = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let cpu = d.u32()?;
        if cpu >= 1 << 16 {
            return Err(d.error(format!("cpu id {cpu} is out of range")));
        }
        let offset = d.u64()?;
        let size = d.u64()?;
        cpus.push(CpuRegion { cpu, offset, size });
    }
    Ok(BufferOpt {
        section_offset,
        name: name.clone(),
        clock: (!clock.is_empty()).then_some(clock),
        page_size,
        cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracedat::bytes::Endian;

    #[test]
    fn strtoll_like_c() {
        assert_eq!(strtoll("0x10"), 16);
        assert_eq!(strtoll("-1500"), -1500);
        assert_eq!(strtoll("010"), 8);
        assert_eq!(strtoll("12abc"), 12);
        assert_eq!(strtoll(""), 0);
    }

    #[test]
    fn unknown_options_are_skipped_and_done_chains() {
        // id 99 size 5, UNAME "x", CPUCOUNT 4, DONE(next = 0x1234).
        let mut b = Vec::new();
        b.extend_from_slice(&99u16.to_le_bytes());
        b.extend_from_slice(&5u32.to_le_bytes());
        b.extend_from_slice(b"hello");
        b.extend_from_slice(&5u16.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(b"x\0");
        b.extend_from_slice(&8u16.to_le_bytes());
        b.extend_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(&4u32.to_le_bytes());
        let v6_end = b.len();
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&8u32.to_le_bytes());
        b.extend_from_slice(&0x1234u64.to_le_bytes());
        let mut opts = Options::default();
        let mut w = Vec::new();
        let next = parse_options(
            &mut Cursor::new(&b, 0, Endian::Little, "o"),
            7,
            &mut opts,
            &mut Vec::new(),
            &mut w,
        );
        assert_eq!(next.ok(), Some(0x1234));
        assert_eq!(
            (opts.unknown.as_slice(), opts.uname.as_deref(), opts.cpu_count),
            (&[99u16][..], Some("x"), Some(4))
        );
        // v6: id 0 ends the list without a size.
        let mut v6 = b[..v6_end].to_vec();
        v6.extend_from_slice(&0u16.to_le_bytes());
        let mut c = Cursor::new(&v6, 0, Endian::Little, "o");
        let mut opts = Options::default();
        assert_eq!(parse_options(&mut c, 6, &mut opts, &mut Vec::new(), &mut w).ok(), Some(0));
        assert_eq!(c.remaining(), 0);
    }
}
