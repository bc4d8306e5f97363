//! CSV dialect detection by content (a header alone can be ambiguous across exporters): which exporter wrote
//! a file, its field separator and decimal mark. Looks only at the first
//! [`SNIFF_BYTES`] and [`SNIFF_LINES`] lines, so it is cheap and bounded on any input, and
//! it never claims a file it cannot read (random text with commas is not a CSV capture).

use super::numbers::{Cell, parse_value, time_unit_exp, trim};
use super::{Dialect, Lines, split_fields, unquote};

pub const SNIFF_BYTES: usize = 64 * 1024;
pub const SNIFF_LINES: usize = 64;

/// Oscilloscope exporters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeVendor {
    /// `x-axis,1,2` / `second,Volt,Volt` (InfiniiVision "CSV" and "ASCII XY").
    Keysight,
    /// `X,CH1,Start,Increment,` / `Sequence,Volt,<start>,<inc>` (DS1000Z), or DHO `t0 =`.
    Rigol,
    /// `Model,…` key/value preamble then `TIME,CH1,…` (MDO/MSO).
    Tektronix,
    /// `Record Length,2.5E+03,,<t>,<v>`: TDS/TBS spreadsheet, preamble and data share rows.
    TektronixTds,
    /// `Record Length,Analog:…` preamble then `Second,Volt`.
    Siglent,
    /// `Time,Channel A` / `(ms),(V)`, any separator, possibly decimal commas.
    PicoScope,
    /// `#`-comment block from WaveForms, then `Time (s),Channel 1 (V)`.
    Digilent,
    /// `time, ch1, ch2…` or headerless numeric rows; first column is time in seconds.
    Generic,
}

impl ScopeVendor {
    pub fn format_name(self) -> &'static str {
        match self {
            ScopeVendor::Keysight => "scope-csv/keysight",
            ScopeVendor::Rigol => "scope-csv/rigol",
            ScopeVendor::Tektronix | ScopeVendor::TektronixTds => "scope-csv/tektronix",
            ScopeVendor::Siglent => "scope-csv/siglent",
            ScopeVendor::PicoScope => "scope-csv/picoscope",
            ScopeVendor::Digilent => "scope-csv/digilent",
            ScopeVendor::Generic => "scope-csv/generic",
        }
    }
}

/// Which exporter wrote a CSV file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvKind {
    /// `Time [s],<names>` with 0/1/X values on change rows.
    SaleaeLogic2Digital,
    /// `Time [s],<names>` with voltages (or ISO-8601 times).
    SaleaeLogic2Analog,
    /// `Trigger [s],Time [s],<names>` MSO waveform export.
    SaleaeMso,
    /// `Time[s], Channel 0, …` (no space in the header, `, ` separators, tab option).
    SaleaeLogic1,
    /// `Time[s], Channel 0, …` with voltages (Logic 1.x analog export).
    SaleaeLogic1Analog,
    /// `Time [s],<analyzer columns…>` protocol-analyzer table (e.g. I2C packets).
    SaleaeAnalyzer,
    /// `name,type,start_time,duration,…` Logic 2 analyzer table.
    SaleaeLogic2Analyzer,
    /// sigrok-cli `-O csv`.
    Sigrok,
    Scope(ScopeVendor),
}

impl CsvKind {
    /// The `Format` family this kind belongs to.
    pub fn format(self) -> crate::Format {
        match self {
            CsvKind::Sigrok => crate::Format::SigrokCsv,
            CsvKind::Scope(_) => crate::Format::ScopeCsv,
            _ => crate::Format::SaleaeCsv,
        }
    }
}

/// Head of a file split into non-empty lines with their fields.
struct Head<'a> {
    /// (line text, fields) of the first non-empty lines, comments included.
    lines: Vec<(&'a [u8], Vec<&'a [u8]>)>,
    dialect: Dialect,
}

/// Picks the separator from the first line that is not a comment: tab, then `;`, then `,`.
pub(crate) fn sniff_dialect(first: &[u8], sample_data: &[&[u8]]) -> Dialect {
    let outside_quotes = |c: u8| {
        let mut quoted = false;
        first.iter().any(|&b| {
            if b == b'"' {
                quoted = !quoted;
            }
            !quoted && b == c
        })
    };
    let delimiter = if outside_quotes(b'\t') {
        b'\t'
    } else if outside_quotes(b';') {
        b';'
    } else {
        b','
    };
    // A decimal comma only makes sense when the separator is not a comma; the data rows
    // then decide (`-0,50000000`).
    let decimal_comma =
        delimiter != b',' && sample_data.iter().any(|l| l.contains(&b',') && !l.contains(&b'.'));
    Dialect { delimiter, decimal_comma }
}

fn read_head(data: &[u8]) -> Head<'_> {
    let head = &data[..data.len().min(SNIFF_BYTES)];
    let raw: Vec<&[u8]> = Lines::new(head)
        .filter(|l| !l.too_long)
        .map(|l| l.text)
        .filter(|t| !trim(t).is_empty())
        .take(SNIFF_LINES)
        .collect();
    let first_plain = raw.iter().position(|l| !l.starts_with(b";") && !l.starts_with(b"#")).unwrap_or(0);
    let first = raw.get(first_plain).copied().unwrap_or(b"");
    let rest: Vec<&[u8]> = raw.iter().skip(first_plain + 1).copied().collect();
    let dialect = sniff_dialect(first, &rest);
    let lines = raw
        .into_iter()
        .map(|t| {
            let mut f = Vec::new();
            split_fields(t, dialect.delimiter, &mut f);
            (t, f)
        })
        .collect();
    Head { lines, dialect }
}

fn lower(f: &[u8]) -> String {
    unquote(f).to_ascii_lowercase()
}

fn is_number(f: &[u8], decimal_comma: bool) -> bool {
    matches!(parse_value(f, decimal_comma), Cell::Number(_))
}

fn is_level(f: &[u8]) -> bool {
    matches!(trim(f), b"0" | b"1" | b"X" | b"x")
}

/// A sigrok-cli time label (`samples`, `nanoseconds`, …).
pub(crate) fn sigrok_time_label(s: &str) -> bool {
    s == "samples" || (s.ends_with("seconds") && time_unit_exp(s).is_some())
}

/// Recognises a CSV capture; `None` when the content is not one this crate reads.
pub fn sniff(data: &[u8]) -> Option<CsvKind> {
    // Binary data is never a CSV export.
    let probe = &data[..data.len().min(4096)];
    if probe.contains(&0) {
        return None;
    }
    let head = read_head(data);
    let lines = &head.lines;
    let dc = head.dialect.decimal_comma;
    let (first_text, _) = lines.first()?;

    if first_text.starts_with(b"; CSV generated by libsigrok") {
        return Some(CsvKind::Sigrok);
    }
    if first_text.starts_with(b"#") {
        let text = String::from_utf8_lossy(first_text).to_ascii_lowercase();
        if text.contains("waveforms") || text.contains("digilent") {
            return Some(CsvKind::Scope(ScopeVendor::Digilent));
        }
    }
    // The first line that is not a comment is the header (or the first data row).
    let start = lines.iter().position(|(t, _)| !t.starts_with(b";") && !t.starts_with(b"#"))?;
    let comments = &lines[..start];
    let (header_text, header) = &lines[start];
    let rest = &lines[start + 1..];
    let cells: Vec<String> = header.iter().map(|f| lower(f)).collect();
    let c0 = cells[0].as_str();
    let c0_compact: String = c0.chars().filter(|c| !c.is_whitespace()).collect();

    if comments.iter().any(|(t, _)| t.starts_with(b";")) && comments.iter().all(|(t, _)| t.starts_with(b";"))
    {
        // sigrok with a custom first comment line, or only a label row after comments.
        if cells.iter().skip(1).all(|c| c == "logic" || !c.is_empty())
            && (sigrok_time_label(c0) || c0 == "logic")
        {
            return Some(CsvKind::Sigrok);
        }
    }
    if sigrok_time_label(c0)
        || (cells.iter().all(|c| c == "logic" || c.starts_with('v') || c.ends_with(" dc") || c == "trigger")
            && cells.iter().any(|c| c == "logic"))
    {
        return Some(CsvKind::Sigrok);
    }
    match c0 {
        "x-axis" => return Some(CsvKind::Scope(ScopeVendor::Keysight)),
        "x" if cells.iter().any(|c| c == "start") && cells.iter().any(|c| c == "increment") => {
            return Some(CsvKind::Scope(ScopeVendor::Rigol));
        }
        "record length" => {
            let analog = cells.get(1).is_some_and(|c| c.starts_with("analog"));
            if !analog && header.len() >= 5 && is_number(header[3], false) {
                return Some(CsvKind::Scope(ScopeVendor::TektronixTds));
            }
            return Some(CsvKind::Scope(ScopeVendor::Siglent));
        }
        "model" | "firmware version"
            if lines.iter().any(|(_, f)| f.first().is_some_and(|c| lower(c) == "time"))
                || data.len() > SNIFF_BYTES =>
        {
            return Some(CsvKind::Scope(ScopeVendor::Tektronix));
        }
        "source" if rest.first().is_some_and(|(_, f)| f.first().is_some_and(|c| lower(c) == "second")) => {
            return Some(CsvKind::Scope(ScopeVendor::Siglent));
        }
        "name"
            if cells.get(1).is_some_and(|c| c == "type")
                && cells.get(2).is_some_and(|c| c == "start_time") =>
        {
            return Some(CsvKind::SaleaeLogic2Analyzer);
        }
        _ => {}
    }
    if cells.iter().any(|c| c.replace(' ', "").starts_with("t0="))
        && cells.iter().any(|c| c.replace(' ', "").contains("tinc="))
    {
        return Some(CsvKind::Scope(ScopeVendor::Rigol));
    }
    // PicoScope: a second row made only of `(unit)` cells.
    if let Some((_, units)) = rest.first()
        && units.len() == header.len()
        && units.iter().all(|u| {
            let u = trim(u);
            u.len() >= 2 && u.starts_with(b"(") && u.ends_with(b")")
        })
    {
        return Some(CsvKind::Scope(ScopeVendor::PicoScope));
    }
    if c0_compact == "trigger[s]" && cells.get(1).is_some_and(|c| c.replace(' ', "") == "time[s]") {
        return Some(CsvKind::SaleaeMso);
    }
    let data_rows: Vec<&Vec<&[u8]>> =
        rest.iter().map(|(_, f)| f).filter(|f| f.len() == header.len()).collect();
    if c0_compact == "time[s]" || c0 == "sample number" || c0 == "sample" {
        let logic1_header = header_text.starts_with(b"Time[s]")
            || header_text.windows(2).any(|w| w == b", ")
            || head.dialect.delimiter == b'\t'
            || c0.starts_with("sample");
        let values: Vec<&[u8]> = data_rows.iter().flat_map(|f| f.iter().skip(1).copied()).collect();
        // Mostly 0/1/X is digital: a stray garbage cell must not turn a digital export
        // into an analog one (it is then counted as malformed with its line).
        let levels = values.iter().filter(|v| is_level(v)).count();
        let all_levels = levels > 0 && levels * 10 >= values.len() * 9;
        let all_numbers = values.iter().all(|v| is_number(v, dc) || trim(v).is_empty() || is_level(v));
        if logic1_header {
            // Voltages have decimals; packed `display_base=dec` values are integers and go
            // to the digital reader, which explains why it refuses them.
            let voltages = values.iter().any(|v| v.contains(&b'.') || v.contains(&b'e'));
            if !all_levels && all_numbers && voltages {
                return Some(CsvKind::SaleaeLogic1Analog);
            }
            return Some(CsvKind::SaleaeLogic1);
        }
        if all_levels {
            return Some(CsvKind::SaleaeLogic2Digital);
        }
        if all_numbers {
            return Some(CsvKind::SaleaeLogic2Analog);
        }
        return Some(CsvKind::SaleaeAnalyzer);
    }
    let numeric_rows = data_rows.iter().filter(|f| f.iter().all(|v| is_number(v, dc))).count();
    // Headerless sigrok (`header=false:label=off`): only 0/1 cells.
    let all_rows: Vec<&Vec<&[u8]>> = std::iter::once(header).chain(rest.iter().map(|(_, f)| f)).collect();
    if all_rows.iter().all(|f| f.len() == header.len() && f.iter().all(|v| matches!(trim(v), b"0" | b"1"))) {
        return Some(CsvKind::Sigrok);
    }
    let time_header = c0_compact.starts_with("time")
        || c0_compact.starts_with("zeit")
        || c0_compact == "t"
        || c0_compact == "second";
    if header.len() >= 2 && time_header && numeric_rows > 0 {
        return Some(CsvKind::Scope(ScopeVendor::Generic));
    }
    // Headerless numeric rows (Tek TDS3000 "spreadsheet" and others).
    let numeric_header = header.len() >= 2 && header.iter().all(|v| is_number(v, dc));
    if numeric_header && (rest.is_empty() || numeric_rows * 2 >= rest.len()) {
        return Some(CsvKind::Scope(ScopeVendor::Generic));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<CsvKind> {
        sniff(s.as_bytes())
    }

    #[test]
    fn recognises_every_dialect() {
        use ScopeVendor::*;
        assert_eq!(kind("Time [s],Channel 0 :),Ch2\n0.000000000,0,X\n"), Some(CsvKind::SaleaeLogic2Digital));
        assert_eq!(kind("Time [s],ADC\n0.1,-0.012\n"), Some(CsvKind::SaleaeLogic2Analog));
        assert_eq!(kind("Trigger [s],Time [s],Ch0\n0,0,1.2\n"), Some(CsvKind::SaleaeMso));
        assert_eq!(kind("Time[s], Channel 0\n0.000000000000000, 1\n"), Some(CsvKind::SaleaeLogic1));
        assert_eq!(kind("Time [s],Packet ID,Address\n0.1,,0x3F\n"), Some(CsvKind::SaleaeAnalyzer));
        assert_eq!(kind("Time[s], Channel 0\n0.000000000000000, 1.25\n"), Some(CsvKind::SaleaeLogic1Analog));
        assert_eq!(kind("Time[s], Channels\n0.0, 0x03\n"), Some(CsvKind::SaleaeLogic1));
        assert_eq!(kind("name,type,start_time,duration,\"value\"\n"), Some(CsvKind::SaleaeLogic2Analyzer));
        assert_eq!(kind("; CSV generated by libsigrok 0.5.2\nlogic\n1\n"), Some(CsvKind::Sigrok));
        assert_eq!(kind("nanoseconds,logic,logic\n250,1,1\n"), Some(CsvKind::Sigrok));
        assert_eq!(kind("logic,logic,V DC\n0,1,-10\n"), Some(CsvKind::Sigrok));
        assert_eq!(kind("1,0\n0,1\n"), Some(CsvKind::Sigrok));
        assert_eq!(kind("x-axis,1\nsecond,Volt\n-0.001,0.1\n"), Some(CsvKind::Scope(Keysight)));
        assert_eq!(kind("X,CH1,Start,Increment,\nSequence,Volt,-1e-5,1e-7,\n"), Some(CsvKind::Scope(Rigol)));
        assert_eq!(kind("CH1V,CH2V,t0 =-0.001, tInc = 1e-6,\n1,2\n"), Some(CsvKind::Scope(Rigol)));
        assert_eq!(
            kind("Model,MSO58\nSample Interval,1.6e-10\n\nTIME,CH1\n0,1\n"),
            Some(CsvKind::Scope(Tektronix))
        );
        assert_eq!(kind("Record Length,2.50E+03,,-0.00000033,0.0056\n"), Some(CsvKind::Scope(TektronixTds)));
        assert_eq!(kind("Record Length,Analog:140000\nSecond,Volt\n"), Some(CsvKind::Scope(Siglent)));
        assert_eq!(kind("Source,CH1\nSecond,Volt\n 0.0,1.0\n"), Some(CsvKind::Scope(Siglent)));
        assert_eq!(kind("Time,Channel A\n(ms),(V)\n\n-0.5,0.1\n"), Some(CsvKind::Scope(PicoScope)));
        assert_eq!(kind("Zeit;Kanal A\n(ms);(V)\n-0,5;0,1\n"), Some(CsvKind::Scope(PicoScope)));
        assert_eq!(
            kind("#Digilent WaveForms Oscilloscope Acquisition\n\nTime (s),C1 (V)\n0,1\n"),
            Some(CsvKind::Scope(Digilent))
        );
        assert_eq!(kind("time,ch1,ch2\n0.0,1.5,2\n"), Some(CsvKind::Scope(Generic)));
        assert_eq!(kind("0.0,1.5\n1e-6,1.6\n"), Some(CsvKind::Scope(Generic)));
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        for s in ["", "hello,world\n", "a;b;c\nx;y;z\n", "\0\0\0,1\n", "# just a comment\n", "1\n2\n"] {
            assert_eq!(kind(s), None, "{s:?}");
        }
    }

    #[test]
    fn decimal_comma_only_with_other_separators() {
        let d = sniff_dialect(b"Zeit;Kanal A", &[b"-0,5;0,1"]);
        assert_eq!(d, Dialect { delimiter: b';', decimal_comma: true });
        let d = sniff_dialect(b"Frequenz\tKanal A", &[b"-52.95\t2.98"]);
        assert_eq!(d, Dialect { delimiter: b'\t', decimal_comma: false });
        assert!(!sniff_dialect(b"a,b", &[b"1,5"]).decimal_comma);
    }
}
