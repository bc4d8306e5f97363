//! Message text of the ftrace marker events: `bprint` records (a printk format from
//! printk_formats plus arguments packed by the kernel's `vbin_printf`) are formatted here;
//! `print`/`bputs` carry their text directly. Also splits a message into `key=value`
//! tokens (marker events expose every such token as a field, so rules can match and key on them).
//!
//! Argument packing (kernel `vbin_printf`, libtraceevent `make_bprint_args`): every numeric
//! argument is 4-byte aligned from the start of `buf` (64-bit values too: the kernel stores
//! them as two u32), `%s` strings are inline and NUL-terminated. Supported conversions:
//! `d i u x X o c s p` (with `%pS`-style suffixes, printed as hex since kallsyms is not
//! consulted), flags `-0+ #`, width and precision (including `*`), length `hh h l ll z j t L`.
//! Anything else stops formatting: the rest of the format is appended verbatim.

use super::bytes::Endian;
use std::fmt::Write;

/// Formats `fmt` with the packed `args`. `long_size` is the kernel's long size.
pub(crate) fn format_bprint(fmt: &str, args: &[u8], endian: Endian, long_size: usize, out: &mut String) {
    let b = fmt.as_bytes();
    let mut pos = 0usize; // in args
    let mut i = 0usize;
    let mut lit_start = 0usize;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        out.push_str(&fmt[lit_start..i]);
        let spec_start = i;
        i += 1;
        if b.get(i) == Some(&b'%') {
            out.push('%');
            i += 1;
            lit_start = i;
            continue;
        }
        let mut left = false;
        let mut zero = false;
        let mut plus = false;
        let mut space = false;
        let mut alt = false;
        while let Some(&c) = b.get(i) {
            match c {
                b'-' => left = true,
                b'0' => zero = true,
                b'+' => plus = true,
                b' ' => space = true,
                b'#' => alt = true,
                _ => break,
            }
            i += 1;
        }
        let read_arg = |size: usize, pos: &mut usize| -> Option<u64> {
            *pos = (*pos + 3) & !3;
            let v = endian.read_uint(args, *pos, size)?;
            *pos += size;
            Some(v)
        };
        let mut width = 0usize;
        if b.get(i) == Some(&b'*') {
            let Some(w) = read_arg(4, &mut pos) else { break };
            let w = w as u32 as i32;
            if w < 0 {
                left = true;
            }
            width = w.unsigned_abs() as usize;
            i += 1;
        } else {
            while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
                width = width.saturating_mul(10).saturating_add(usize::from(d - b'0'));
                i += 1;
            }
        }
        let mut prec: Option<usize> = None;
        if b.get(i) == Some(&b'.') {
            i += 1;
            if b.get(i) == Some(&b'*') {
                let Some(p) = read_arg(4, &mut pos) else { break };
                prec = Some((p as u32 as i32).max(0) as usize);
                i += 1;
            } else {
                let mut p = 0usize;
                while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
                    p = p.saturating_mul(10).saturating_add(usize::from(d - b'0'));
                    i += 1;
                }
                prec = Some(p);
            }
        }
        // Keep widths sane: a hostile format must not make us allocate gigabytes.
        width = width.min(256);
        let prec = prec.map(|p| p.min(256));
        let mut size = 4usize;
        let mut longs = 0;
        while let Some(&c) = b.get(i) {
            match c {
                b'h' => {}
                b'l' => {
                    longs += 1;
                    size = if longs >= 2 { 8 } else { long_size };
                }
                b'L' | b'q' | b'j' => size = 8,
                b'z' | b'Z' | b't' => size = long_size,
                _ => break,
            }
            i += 1;
        }
        let Some(&conv) = b.get(i) else {
            lit_start = spec_start;
            break;
        };
        i += 1;
        let mut body = String::new();
        let mut sign = "";
        let mut numeric = true;
        match conv {
            b'd' | b'i' => {
                let Some(v) = read_arg(size, &mut pos) else {
                    lit_start = spec_start;
                    break;
                };
                let v = if size == 8 { v as i64 } else { i64::from(v as u32 as i32) };
                if v < 0 {
                    sign = "-";
                } else if plus {
                    sign = "+";
                } else if space {
                    sign = " ";
                }
                let _ = write!(body, "{}", v.unsigned_abs());
            }
            b'u' | b'x' | b'X' | b'o' => {
                let Some(v) = read_arg(size, &mut pos) else {
                    lit_start = spec_start;
                    break;
                };
                let _ = match conv {
                    b'u' => write!(body, "{v}"),
                    b'x' => write!(body, "{}{v:x}", if alt && v != 0 { "0x" } else { "" }),
                    b'X' => write!(body, "{}{v:X}", if alt && v != 0 { "0X" } else { "" }),
                    _ => write!(body, "{}{v:o}", if alt { "0" } else { "" }),
                };
            }
            b'p' => {
                let Some(v) = read_arg(long_size, &mut pos) else {
                    lit_start = spec_start;
                    break;
                };
                // `%ps`, `%pS`, `%pf`, … name a symbol: we print the address.
                while b.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
                    i += 1;
                }
                let _ = write!(body, "0x{v:x}");
                numeric = false;
            }
            b'c' => {
                let Some(v) = read_arg(4, &mut pos) else {
                    lit_start = spec_start;
                    break;
                };
                body.push(char::from(v as u8));
                numeric = false;
            }
            b's' => {
                let rest = args.get(pos..).unwrap_or(&[]);
                let n = memchr::memchr(0, rest).unwrap_or(rest.len());
                let s = &rest[..n];
                pos += n + 1;
                let s = match prec {
                    Some(p) => &s[..s.len().min(p)],
                    None => s,
                };
                body.push_str(&String::from_utf8_lossy(s));
                numeric = false;
            }
            _ => {
                // Unknown conversion: keep the rest of the format as it is.
                lit_start = spec_start;
                break;
            }
        }
        if numeric && let Some(p) = prec {
            while body.len() < p {
                body.insert(0, '0');
            }
        }
        let len = sign.len() + body.chars().count();
        let pad = width.saturating_sub(len);
        if left {
            out.push_str(sign);
            out.push_str(&body);
            out.extend(std::iter::repeat_n(' ', pad));
        } else if zero && numeric && prec.is_none() {
            out.push_str(sign);
            out.extend(std::iter::repeat_n('0', pad));
            out.push_str(&body);
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(sign);
            out.push_str(&body);
        }
        lit_start = i;
    }
    out.push_str(fmt.get(lit_start..).unwrap_or(""));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn fmt(f: &str, args: &[u8], long: usize) -> String {
        let mut s = String::new();
        format_bprint(f, args, Endian::Little, long, &mut s);
        s
    }

    #[test]
    fn trappy_cpu_load() {
        // args 0, 800000, 0.
        let s = fmt("cpu_load: cpu: %d freq: %u load: %u\n", &words(&[0, 800_000, 0]), 4);
        assert_eq!(s, "cpu_load: cpu: 0 freq: 800000 load: 0\n");
    }

    #[test]
    fn conversions() {
        let mut args = words(&[u32::MAX, 255, 7]);
        args.extend_from_slice(b"ab\0\0");
        args.extend_from_slice(&words(&[0x10, 0x1, 42, 42]));
        let s = fmt("%d %5x|%-3u|%s %#llx %c%%%03d", &args, 8);
        assert_eq!(s, "-1    ff|7  |ab 0x100000010 *%042");
        // Missing arguments stop formatting without panicking.
        assert_eq!(fmt("a=%d b=%d", &words(&[1]), 4), "a=1 b=%d");
        assert_eq!(fmt("%q tail", &[], 4), "%q tail");
        assert_eq!(fmt("%ps: x", &words(&[0xc044504c]), 4), "0xc044504c: x");
    }
}
