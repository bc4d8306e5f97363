//! CSV captures: Saleae Logic 2 / Logic 1.x exports,
//! sigrok-cli CSV output and oscilloscope CSV from Keysight/Agilent, Rigol, Tektronix,
//! Siglent, PicoScope and Digilent, plus a generic `time, ch1, ch2…` fallback.
//!
//! This module owns the line and field reader every dialect shares: lines are split on
//! `\n` with `\r` stripped and a UTF-8 BOM dropped, each line is capped at
//! [`MAX_LINE_BYTES`] (a longer one is counted as malformed with its line number and
//! skipped, so an endless line costs no memory), and fields honour RFC 4180 quotes within
//! a line. [`dialect`] decides which dialect a file is; [`logic`] reads logic-analyzer
//! exports into digital tracks, [`scope`] reads oscilloscope exports, and [`table`] turns
//! time + value columns into uniform analog tracks.
//!
//! The reader is hand-written rather than the `csv` crate: it works zero-copy on the
//! memory-mapped file, keeps exact line numbers for diagnostics, and caps each line's
//! length before looking at it, which the `csv` crate's record reader does not.
//!
//! Time origin: every CSV source's relative time zero is the first time in the file, and
//! `Source.origin` holds that first time in the file's own time base (seconds relative to
//! the trigger or capture start for most exports; Unix epoch seconds for Saleae ISO-8601
//! exports). `time_range_seconds()` therefore prints the times written in the file.

pub mod dialect;
mod logic;
pub mod numbers;
mod scope;
mod table;

use crate::{LoadControl, ParseFailure, Position};
use latscope_model::Source;

pub use dialect::{CsvKind, ScopeVendor, sniff};

/// Longest line accepted. Real exports stay far below (a 16-channel Saleae row is ~60
/// bytes); anything longer is garbage or an attack and is skipped as malformed.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How often (in lines) progress is reported and cancel checked.
const PROGRESS_EVERY: u64 = 16 * 1024;

/// Imports `data`, which [`sniff`] recognised as `kind`.
pub fn parse(kind: CsvKind, data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    // Every dialect takes its layout from the first line: an over-long one cannot be skipped
    // like a data row, and the dialects would otherwise misreport it as a missing header.
    if let Some(first) = Lines::new(data).find(|l| l.too_long || !numbers::trim(l.text).is_empty())
        && first.too_long
    {
        return Err(ParseFailure::Limit {
            at: Position::Line(first.no),
            what: "CSV header line length".into(),
            limit: format!("{MAX_LINE_BYTES} bytes"),
        });
    }
    match kind {
        CsvKind::SaleaeLogic2Digital | CsvKind::SaleaeLogic1 | CsvKind::Sigrok => {
            logic::parse(kind, data, ctl)
        }
        CsvKind::SaleaeLogic2Analog | CsvKind::SaleaeLogic1Analog | CsvKind::SaleaeMso => {
            scope::parse_saleae_analog(kind, data, ctl)
        }
        CsvKind::SaleaeAnalyzer | CsvKind::SaleaeLogic2Analyzer => logic::parse_analyzer(kind, data, ctl),
        CsvKind::Scope(vendor) => scope::parse(vendor, data, ctl),
    }
}

/// One line of the file, without its line terminator.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub no: u64,
    /// Byte offset of the line's start in the file.
    pub offset: u64,
    pub text: &'a [u8],
    /// The line exceeded [`MAX_LINE_BYTES`]; `text` is empty.
    pub too_long: bool,
}

/// Lines of a byte buffer, as described in the module doc.
#[derive(Debug, Clone)]
pub(crate) struct Lines<'a> {
    data: &'a [u8],
    pos: usize,
    no: u64,
}

impl<'a> Lines<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        let pos = if data.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        Self { data, pos, no: 0 }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        if self.pos >= self.data.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.data[start..];
        let end = memchr::memchr(b'\n', rest).map_or(self.data.len(), |i| start + i);
        self.pos = end + 1;
        self.no += 1;
        let mut text = &self.data[start..end];
        if let Some(t) = text.strip_suffix(b"\r") {
            text = t;
        }
        let too_long = text.len() > MAX_LINE_BYTES;
        Some(Line { no: self.no, offset: start as u64, text: if too_long { &[] } else { text }, too_long })
    }
}

/// Field separator and decimal mark of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    pub delimiter: u8,
    pub decimal_comma: bool,
}

impl Default for Dialect {
    fn default() -> Self {
        Self { delimiter: b',', decimal_comma: false }
    }
}

/// Splits `line` into fields on `delim`, honouring `"…"` quotes (a delimiter inside quotes
/// is data; `""` is a literal quote, left doubled here: see [`unquote`]). Fields keep their
/// surrounding spaces but lose their quotes. Bounded by the line length.
pub(crate) fn split_fields<'a>(line: &'a [u8], delim: u8, out: &mut Vec<&'a [u8]>) {
    out.clear();
    let mut i = 0;
    loop {
        // Skip spaces before an opening quote only, so `, "name"` still unquotes.
        let mut j = i;
        while j < line.len() && line[j] == b' ' && delim != b' ' {
            j += 1;
        }
        if j < line.len() && line[j] == b'"' {
            let start = j + 1;
            let mut k = start;
            while k < line.len() {
                if line[k] == b'"' {
                    if line.get(k + 1) == Some(&b'"') {
                        k += 2;
                        continue;
                    }
                    break;
                }
                k += 1;
            }
            out.push(&line[start..k.min(line.len())]);
            // Anything between the closing quote and the next delimiter is dropped.
            let next = memchr::memchr(delim, &line[k.min(line.len())..]).map(|d| k + d);
            match next {
                Some(d) => i = d + 1,
                None => return,
            }
        } else {
            match memchr::memchr(delim, &line[i..]) {
                Some(d) => {
                    out.push(&line[i..i + d]);
                    i += d + 1;
                }
                None => {
                    out.push(&line[i..]);
                    return;
                }
            }
        }
    }
}

/// A field as display text: quotes' `""` undone, spaces trimmed, invalid UTF-8 replaced.
pub(crate) fn unquote(field: &[u8]) -> String {
    String::from_utf8_lossy(numbers::trim(field)).replace("\"\"", "\"")
}

/// Reports progress every [`PROGRESS_EVERY`] lines and stops on cancel.
#[derive(Debug)]
pub(crate) struct Progress<'c> {
    ctl: &'c LoadControl,
    reported: u64,
}

impl<'c> Progress<'c> {
    pub fn new(ctl: &'c LoadControl) -> Self {
        Self { ctl, reported: 0 }
    }

    /// Call once per line with the line's number and the offset after it.
    pub fn tick(&mut self, line_no: u64, offset_after: usize) -> Result<(), ParseFailure> {
        if line_no.is_multiple_of(PROGRESS_EVERY) {
            let now = offset_after as u64;
            self.ctl.advance(now.saturating_sub(self.reported));
            self.reported = now.max(self.reported);
            if self.ctl.is_cancelled() {
                return Err(ParseFailure::Cancelled);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(line: &str, delim: u8) -> Vec<String> {
        let mut out = Vec::new();
        split_fields(line.as_bytes(), delim, &mut out);
        out.iter().map(|f| unquote(f)).collect()
    }

    #[test]
    fn fields_honour_quotes() {
        assert_eq!(fields("a,b,,c,", b','), ["a", "b", "", "c", ""]);
        assert_eq!(
            fields(r#""USB LS, FS","v1",-0,"say ""hi""""#, b','),
            ["USB LS, FS", "v1", "-0", r#"say "hi""#]
        );
        assert_eq!(fields("0.1, 1, 0", b','), ["0.1", "1", "0"]);
        assert_eq!(fields("a\tb", b'\t'), ["a", "b"]);
        assert_eq!(fields(r#""unterminated,x"#, b','), ["unterminated,x"]);
        assert_eq!(fields("", b','), [""]);
    }

    #[test]
    fn lines_strip_bom_crlf_and_cap_length() {
        let mut data = b"\xEF\xBB\xBFa\r\nb\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        data.extend_from_slice(b"\nc");
        let lines: Vec<_> = Lines::new(&data).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!((lines[0].text, lines[0].no), (&b"a"[..], 1));
        assert_eq!((lines[1].text, lines[1].offset), (&b"b"[..], 6));
        assert!(lines[2].too_long && lines[2].text.is_empty());
        assert_eq!((lines[3].text, lines[3].no), (&b"c"[..], 4));
    }
}
