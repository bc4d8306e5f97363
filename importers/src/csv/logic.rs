//! Logic-analyzer CSV: Saleae Logic 2 digital exports (one row per change),
//! Saleae Logic 1.x exports (`Time[s], Channel 0`, rows per change or per sample),
//! sigrok-cli `-O csv` (every sample, or `dedup`), and Saleae protocol-analyzer tables.
//!
//! Whatever the rows are, channels are stored as transitions ([`DigitalTrack::push`] keeps
//! changes only). `X` (Saleae "no data") is level 2. The last row's time is the end of the
//! capture. sigrok analog columns become analog tracks.

use super::dialect::{CsvKind, sigrok_time_label, sniff_dialect};
use super::numbers::{Cell, parse_iso8601, parse_time_ps, parse_value, time_unit_exp, trim};
use super::table::{self, Axis, Column};
use super::{Dialect, Line, Lines, Progress, split_fields, unquote};
use crate::{LoadControl, ParseFailure, Position};
use latscope_model::{ClockOrigin, Diagnostics, DigitalTrack, PS_PER_S, Ps, Source, SourceKind, SpanTrack};

/// The time cell of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum TimeCol {
    /// Decimal number in `10^exp` seconds.
    Decimal { exp: i32 },
    /// ISO-8601 wall-clock time (Saleae "Use ISO8601 timestamps").
    Iso,
    /// A sample count (sigrok `samples`, Logic 1.x `sample_number`) at `period_ps`.
    Samples { period_ps: f64 },
}

/// Largest time accepted relative to a file's first time (about 46 days). Keeping times
/// within half the `i64` range means differences of two times and `t0 + i·dt` of the
/// tracks built from them cannot overflow, whatever numbers a hostile file holds.
pub(super) const MAX_RELATIVE_PS: Ps = 4_000_000_000_000_000_000;

/// Converts time cells to picoseconds relative to the first one, which becomes the origin.
#[derive(Debug, Default)]
pub(super) struct Clock {
    pub(super) first: Option<(i64, i64)>,
}

impl Clock {
    /// Absolute (seconds, ps) of a cell, in the file's time base.
    pub(super) fn absolute(col: TimeCol, cell: &[u8], decimal_comma: bool) -> Option<(i64, i64)> {
        match col {
            TimeCol::Decimal { exp } => parse_time_ps(cell, exp, decimal_comma).map(|ps| (0, ps)),
            TimeCol::Iso => parse_iso8601(cell),
            TimeCol::Samples { period_ps } => {
                let n = parse_time_ps(cell, -12, false)?;
                let ps = (n as f64 * period_ps).round();
                (ps.abs() < 9.0e18).then_some((0, ps as i64))
            }
        }
    }

    /// `abs` relative to the first time seen, `None` beyond [`MAX_RELATIVE_PS`].
    pub(super) fn relative(&mut self, abs: (i64, i64)) -> Option<Ps> {
        let first = *self.first.get_or_insert(abs);
        let secs = abs.0.checked_sub(first.0)?;
        let t = secs.checked_mul(PS_PER_S)?.checked_add(abs.1.checked_sub(first.1)?)?;
        (t.abs() <= MAX_RELATIVE_PS).then_some(t)
    }

    pub(super) fn origin(&self) -> ClockOrigin {
        self.first.map_or_else(ClockOrigin::default, |(s, ps)| ClockOrigin::from_secs_ps(s, ps))
    }
}

fn level(cell: &[u8]) -> Option<u8> {
    match trim(cell) {
        b"0" => Some(0),
        b"1" => Some(1),
        b"X" | b"x" | b"" => Some(2),
        _ => None,
    }
}

/// What a column of a logic CSV holds.
#[derive(Debug, Clone)]
enum ColKind {
    Digital(usize),
    Analog(usize),
    Ignored,
}

/// Layout of a logic CSV after its header.
#[derive(Debug)]
struct Layout {
    dialect: Dialect,
    time: Option<(usize, TimeCol)>,
    columns: Vec<ColKind>,
    digital: Vec<DigitalTrack>,
    analog: Vec<Column>,
    /// Period of a row when there is no time column (sigrok without `time=true`).
    row_period_ps: Option<f64>,
    /// Lines to skip before data.
    header_lines: u64,
    format: &'static str,
    metadata: Vec<(String, String)>,
    /// sigrok-cli echo lines seen before the data.
    echo_lines: u64,
}

pub fn parse(kind: CsvKind, data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let mut diag = Diagnostics::default();
    let mut layout = match kind {
        CsvKind::Sigrok => sigrok_layout(data, &mut diag)?,
        _ => saleae_layout(kind, data)?,
    };
    let mut source = Source::new("", layout.format, SourceKind::File);
    let mut clock = Clock::default();
    let mut progress = Progress::new(ctl);
    let mut fields = Vec::new();
    let mut lines = Lines::new(data);
    let mut rows = 0u64;
    let mut last: Option<Ps> = None;
    let mut analog_times: Vec<Ps> = Vec::new();
    let mut echo_lines = layout.echo_lines;
    let expected = layout.columns.len();
    let dc = layout.dialect.decimal_comma;
    for line in lines.by_ref() {
        progress.tick(line.no, line.offset as usize + line.text.len())?;
        if line.no <= layout.header_lines {
            continue;
        }
        if line.too_long {
            diag.malformed(Some(line.no), line.offset, "line longer than 1 MiB");
            continue;
        }
        let text = trim(line.text);
        if text.is_empty() || (kind == CsvKind::Sigrok && text.starts_with(b";")) {
            continue;
        }
        split_fields(line.text, layout.dialect.delimiter, &mut fields);
        if fields.len() != expected && !(fields.len() == expected + 1 && trim(fields[expected]).is_empty()) {
            if kind == CsvKind::Sigrok && fields.len() == 1 && is_sigrok_echo(text) {
                echo_lines += 1;
                continue;
            }
            diag.malformed(
                Some(line.no),
                line.offset,
                format!("expected {expected} fields, found {}", fields.len()),
            );
            continue;
        }
        let t = match layout.time {
            Some((col, tc)) => match Clock::absolute(tc, fields[col], dc).and_then(|a| clock.relative(a)) {
                Some(t) => t,
                None => {
                    malformed_cell(&mut diag, &line, "time", fields[col]);
                    continue;
                }
            },
            None => {
                let period = layout.row_period_ps.unwrap_or(PS_PER_S as f64);
                if clock.first.is_none() {
                    clock.first = Some((0, 0));
                }
                let t = (rows as f64 * period).round();
                if t.abs() > MAX_RELATIVE_PS as f64 {
                    diag.malformed(Some(line.no), line.offset, "time beyond 46 days from the first row");
                    continue;
                }
                t as Ps
            }
        };
        if last.is_some_and(|l| t < l) {
            diag.malformed(Some(line.no), line.offset, "time goes backwards");
            continue;
        }
        // Validate the whole row before applying it, so a bad cell drops the row only.
        let mut ok = true;
        for (i, c) in layout.columns.iter().enumerate() {
            let good = match c {
                ColKind::Digital(_) => level(fields[i]).is_some(),
                ColKind::Analog(_) => !matches!(parse_value(fields[i], dc), Cell::Invalid),
                ColKind::Ignored => true,
            };
            if !good {
                malformed_cell(&mut diag, &line, "value", fields[i]);
                ok = false;
                break;
            }
        }
        if !ok {
            continue;
        }
        for (i, c) in layout.columns.iter().enumerate() {
            match c {
                ColKind::Digital(k) => {
                    let l = level(fields[i]).unwrap_or(2);
                    let track = &mut layout.digital[*k];
                    if rows == 0 {
                        track.initial = l;
                    }
                    track.push(t, l);
                }
                ColKind::Analog(k) => {
                    let v = match parse_value(fields[i], dc) {
                        Cell::Number(v) => v as f32,
                        _ => f32::NAN,
                    };
                    layout.analog[*k].values.push(v);
                }
                ColKind::Ignored => {}
            }
        }
        if !layout.analog.is_empty() {
            analog_times.push(t);
        }
        last = Some(t);
        rows += 1;
    }
    if echo_lines > 0 {
        diag.warn(format!("skipped {echo_lines} sigrok-cli analog echo line(s) like `A0: -10.0000 V DC`"));
    }
    if rows == 0 {
        diag.warn("no data rows");
    }
    source.origin = clock.origin();
    source.records = Some(rows);
    source.digital = layout.digital.into();
    if !layout.analog.is_empty() {
        let axis = match (layout.time, layout.row_period_ps) {
            (None, Some(dt_ps)) => Axis::Uniform { t0: 0, dt_ps },
            _ => Axis::Times(analog_times),
        };
        source.analog = table::build(&axis, layout.analog, &mut diag).into();
    }
    source.metadata = layout.metadata;
    source.diagnostics = diag;
    Ok(source)
}

fn malformed_cell(diag: &mut Diagnostics, line: &Line<'_>, what: &str, cell: &[u8]) {
    let shown: String = String::from_utf8_lossy(&cell[..cell.len().min(40)]).into_owned();
    diag.malformed(Some(line.no), line.offset, format!("invalid {what} `{shown}`"));
}

/// sigrok-cli 0.7 prints analog values to stdout as `A0: -10.0000 V DC` next to the CSV.
fn is_sigrok_echo(text: &[u8]) -> bool {
    let Some(colon) = memchr::memchr(b':', text) else { return false };
    colon > 0
        && text[..colon].iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        && text.get(colon + 1) == Some(&b' ')
}

fn first_content_line(data: &[u8]) -> Option<Line<'_>> {
    Lines::new(data).find(|l| !l.too_long && !trim(l.text).is_empty())
}

/// Saleae digital layouts: `Time [s]` or `Time[s]` then channel names.
fn saleae_layout(kind: CsvKind, data: &[u8]) -> Result<Layout, ParseFailure> {
    let header =
        first_content_line(data).ok_or_else(|| ParseFailure::invalid(Position::Line(1), "empty file"))?;
    let sample: Vec<&[u8]> = Lines::new(data).skip(header.no as usize).take(8).map(|l| l.text).collect();
    let dialect = sniff_dialect(header.text, &sample);
    let mut fields = Vec::new();
    split_fields(header.text, dialect.delimiter, &mut fields);
    let names: Vec<String> = fields.iter().map(|f| unquote(f)).collect();
    let c0 = names[0].to_ascii_lowercase();
    if c0.starts_with("sample") {
        return Err(ParseFailure::invalid(
            Position::Line(header.no),
            "this Saleae export has sample numbers instead of times (timestamp = sample_number); re-export with time stamps",
        ));
    }
    // Logic 1.x packs every channel into one column unless display_base = separate.
    if kind == CsvKind::SaleaeLogic1
        && names.len() == 2
        && let Some(row) = sample.iter().find(|l| !trim(l).is_empty())
    {
        let mut f = Vec::new();
        split_fields(row, dialect.delimiter, &mut f);
        if f.len() == 2 && level(f[1]).is_none() {
            return Err(ParseFailure::invalid(
                Position::Line(header.no + 1),
                "this Logic 1.x export packs all channels into one value column (display_base bin/dec/hex/ascii); re-export with display_base = separate",
            ));
        }
    }
    let iso = sample
        .iter()
        .find(|l| !trim(l).is_empty())
        .map(|row| {
            let mut f = Vec::new();
            split_fields(row, dialect.delimiter, &mut f);
            f.first().is_some_and(|c| parse_iso8601(c).is_some())
        })
        .unwrap_or(false);
    let time = if iso { TimeCol::Iso } else { TimeCol::Decimal { exp: 0 } };
    let mut digital = Vec::new();
    let mut columns = vec![ColKind::Ignored];
    for name in &names[1..] {
        columns.push(ColKind::Digital(digital.len()));
        digital.push(DigitalTrack::new(name.clone(), 0));
    }
    let format = if kind == CsvKind::SaleaeLogic1 { "saleae-logic1-csv" } else { "saleae-logic2-csv" };
    let software =
        if kind == CsvKind::SaleaeLogic1 { "Saleae Logic 1.x (or a look-alike)" } else { "Saleae Logic 2" };
    let mut metadata =
        vec![("instrument".to_string(), software.to_string()), ("export".to_string(), "digital".to_string())];
    if iso {
        metadata.push(("time".into(), "ISO-8601 wall clock; origin is Unix epoch seconds (UTC)".into()));
    }
    Ok(Layout {
        dialect,
        time: Some((0, time)),
        columns,
        digital,
        analog: Vec::new(),
        row_period_ps: None,
        header_lines: header.no,
        format,
        metadata,
        echo_lines: 0,
    })
}

/// Parses `200 kHz`, `1 MHz`, `40000000`, `2 mHz` into Hz.
pub(crate) fn parse_rate(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let value: f64 = s[..split].parse().ok()?;
    let unit = s[split..].trim();
    let f = match unit {
        "" | "Hz" => 1.0,
        "kHz" => 1e3,
        "MHz" => 1e6,
        "GHz" => 1e9,
        "mHz" => 1e-3,
        _ => return None,
    };
    let hz = value * f;
    (hz > 0.0 && hz.is_finite()).then_some(hz)
}

/// sigrok-cli CSV: `;` comment header (channel names, samplerate), optional label row.
fn sigrok_layout(data: &[u8], diag: &mut Diagnostics) -> Result<Layout, ParseFailure> {
    let mut names: Vec<String> = Vec::new();
    let mut rate: Option<f64> = None;
    let mut metadata = Vec::new();
    let mut first: Option<Line<'_>> = None;
    let mut echo_lines = 0;
    for line in Lines::new(data).take(10_000) {
        if line.too_long || trim(line.text).is_empty() {
            continue;
        }
        let Some(comment) = line.text.strip_prefix(b";") else {
            if is_sigrok_echo(trim(line.text)) && !line.text.contains(&b',') {
                echo_lines += 1;
                continue;
            }
            first = Some(line);
            break;
        };
        let c = String::from_utf8_lossy(comment);
        let c = c.trim();
        if let Some(rest) = c.strip_prefix("Channels (") {
            if let Some((_, list)) = rest.split_once("):") {
                names = list.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
            }
        } else if let Some(r) = c.strip_prefix("Samplerate:") {
            rate = parse_rate(r);
            metadata.push(("samplerate".to_string(), r.trim().to_string()));
        } else if let Some(from) = c.strip_prefix("from ") {
            let device = from.rsplit_once(" on ").map_or(from, |(d, _)| d);
            metadata.push(("instrument".to_string(), device.to_string()));
        } else if let Some(v) = c.strip_prefix("CSV generated by ") {
            metadata.push(("generator".to_string(), v.to_string()));
        }
    }
    let first = first
        .ok_or_else(|| ParseFailure::invalid(Position::Line(1), "no data rows after the sigrok header"))?;
    let sample: Vec<&[u8]> = Lines::new(data).skip(first.no as usize).take(8).map(|l| l.text).collect();
    let dialect = sniff_dialect(first.text, &sample);
    let mut fields = Vec::new();
    split_fields(first.text, dialect.delimiter, &mut fields);
    let labels: Vec<String> = fields.iter().map(|f| unquote(f)).collect();
    let has_labels = labels.iter().any(|l| matches!(parse_value(l.as_bytes(), false), Cell::Invalid));
    let (header_lines, labels) = if has_labels { (first.no, labels) } else { (first.no - 1, Vec::new()) };
    let ncols = fields.len();
    let l0 = labels.first().map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    let mut time = None;
    let mut start = 0;
    if has_labels && (sigrok_time_label(&l0) || l0 == "time") {
        start = 1;
        let tc = if l0 == "samples" {
            let Some(hz) = rate else {
                return Err(ParseFailure::invalid(
                    Position::Line(first.no),
                    "time in samples but no `; Samplerate:` line",
                ));
            };
            TimeCol::Samples { period_ps: 1e12 / hz }
        } else if l0 == "time" {
            // label=channel: the time is an integer in the unit implied by the rate.
            let exp = rate.map_or(0, |hz| {
                let mut e = 0;
                let mut scale = 1.0;
                while scale < hz && e > -18 {
                    scale *= 1000.0;
                    e -= 3;
                }
                e
            });
            TimeCol::Decimal { exp }
        } else {
            TimeCol::Decimal { exp: time_unit_exp(&l0).unwrap_or(0) }
        };
        time = Some((0, tc));
    }
    // Values of each column in the first rows decide logic vs analog in `label=channel`
    // and `label=off` files, where the label does not say.
    let mut is_logic = vec![true; ncols];
    let mut fs = Vec::new();
    for row in Lines::new(data).skip(header_lines as usize).take(1000) {
        let t = trim(row.text);
        if t.is_empty() || t.starts_with(b";") {
            continue;
        }
        split_fields(row.text, dialect.delimiter, &mut fs);
        if fs.len() != ncols {
            continue;
        }
        for (i, f) in fs.iter().enumerate() {
            if !matches!(trim(f), b"0" | b"1") {
                is_logic[i] = false;
            }
        }
    }
    let mut columns = Vec::new();
    let mut digital = Vec::new();
    let mut analog = Vec::new();
    let value_cols = ncols - start;
    let names_match = names.len() == value_cols
        || (names.len() + 1 == value_cols && labels.last().is_some_and(|l| l == "Trigger"));
    if start == 1 {
        columns.push(ColKind::Ignored);
    }
    for i in start..ncols {
        let label = labels.get(i).cloned().unwrap_or_default();
        if label == "Trigger" && i == ncols - 1 {
            columns.push(ColKind::Ignored);
            continue;
        }
        let channel_mode = has_labels && l0 == "time";
        let name = if channel_mode {
            label.clone()
        } else if names_match {
            names[i - start].clone()
        } else if is_logic[i] {
            format!("D{}", digital.len())
        } else {
            format!("A{}", analog.len())
        };
        let logic = if has_labels && !channel_mode { label == "logic" } else { is_logic[i] };
        if logic {
            columns.push(ColKind::Digital(digital.len()));
            digital.push(DigitalTrack::new(name, 0));
        } else {
            let unit = if has_labels && !channel_mode { label } else { String::new() };
            columns.push(ColKind::Analog(analog.len()));
            analog.push(Column { name, unit, values: Vec::new() });
        }
    }
    let channel_mode = has_labels && l0 == "time";
    if !(names.is_empty() || names_match || channel_mode) {
        diag.warn(format!(
            "the header lists {} channels but rows have {value_cols} value columns",
            names.len()
        ));
    }
    let row_period_ps = match (time, rate) {
        (None, Some(hz)) => Some(1e12 / hz),
        (None, None) => {
            diag.warn("no samplerate and no time column: times are sample numbers (1 sample = 1 s)");
            Some(PS_PER_S as f64)
        }
        _ => None,
    };
    Ok(Layout {
        dialect,
        time,
        columns,
        digital,
        analog,
        row_period_ps,
        header_lines,
        format: "sigrok-csv",
        metadata,
        echo_lines,
    })
}

/// Saleae protocol-analyzer tables become span tracks: Logic 2's
/// `name,type,start_time,duration,<fields>` (one track per analyzer name, the extra fields
/// as label), and `Time [s],<fields>` tables (one track, zero-length spans labelled
/// `field=value …`).
pub fn parse_analyzer(kind: CsvKind, data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let header =
        first_content_line(data).ok_or_else(|| ParseFailure::invalid(Position::Line(1), "empty file"))?;
    let mut fields = Vec::new();
    split_fields(header.text, b',', &mut fields);
    let names: Vec<String> = fields.iter().map(|f| unquote(f)).collect();
    let logic2 = kind == CsvKind::SaleaeLogic2Analyzer;
    let format = if logic2 { "saleae-logic2-analyzer-csv" } else { "saleae-analyzer-csv" };
    let mut source = Source::new("", format, SourceKind::File);
    let mut diag = Diagnostics::default();
    let mut progress = Progress::new(ctl);
    let mut clock = Clock::default();
    let mut tracks: Vec<SpanTrack> = Vec::new();
    let mut track_index: rustc_hash::FxHashMap<String, usize> = rustc_hash::FxHashMap::default();
    let mut rows = 0u64;
    let time_col = if logic2 { 2 } else { 0 };
    for line in Lines::new(data).skip(header.no as usize) {
        progress.tick(line.no, line.offset as usize + line.text.len())?;
        if line.too_long {
            diag.malformed(Some(line.no), line.offset, "line longer than 1 MiB");
            continue;
        }
        if trim(line.text).is_empty() {
            continue;
        }
        split_fields(line.text, b',', &mut fields);
        if fields.len() != names.len() {
            diag.malformed(
                Some(line.no),
                line.offset,
                format!("expected {} fields, found {}", names.len(), fields.len()),
            );
            continue;
        }
        let Some(start) = parse_time_ps(fields[time_col], 0, false) else {
            malformed_cell(&mut diag, &line, "time", fields[time_col]);
            continue;
        };
        let (track_name, end_abs, label) = if logic2 {
            let Some(dur) = parse_time_ps(fields[3], 0, false).filter(|d| *d >= 0) else {
                malformed_cell(&mut diag, &line, "duration", fields[3]);
                continue;
            };
            let label: Vec<String> =
                fields[4..].iter().map(|f| unquote(f)).filter(|s| !s.is_empty()).collect();
            (unquote(fields[0]), start.saturating_add(dur), label.join(" "))
        } else {
            let label: Vec<String> = names[1..]
                .iter()
                .zip(&fields[1..])
                .filter(|(_, v)| !trim(v).is_empty())
                .map(|(k, v)| format!("{k}={}", unquote(v)))
                .collect();
            ("analyzer".to_string(), start, label.join(" "))
        };
        // Spans are relative to the first row's start.
        let Some(rel) = clock.relative((0, start)) else { continue };
        let rel_end = rel.saturating_add(end_abs - start);
        let sym = source.strings.intern_str(&label);
        let k = *track_index.entry(track_name).or_insert_with_key(|name| {
            tracks.push(SpanTrack::new(name.clone()));
            tracks.len() - 1
        });
        tracks[k].push(rel, rel_end, sym, 0, 0);
        rows += 1;
    }
    for t in &mut tracks {
        t.sort();
    }
    source.origin = clock.origin();
    source.spans = tracks;
    source.records = Some(rows);
    source.metadata.push(("export".into(), "protocol analyzer table".into()));
    source.diagnostics = diag;
    Ok(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse() {
        assert_eq!(parse_rate("200 kHz"), Some(200e3));
        assert_eq!(parse_rate(" 4 MHz"), Some(4e6));
        assert_eq!(parse_rate("40000000"), Some(4e7));
        assert_eq!(parse_rate("2 mHz"), Some(2e-3));
        assert_eq!(parse_rate("fast"), None);
        assert_eq!(parse_rate("0 Hz"), None);
    }

    #[test]
    fn sigrok_echo_lines_are_recognised() {
        assert!(is_sigrok_echo(b"A0: -10.0000 V DC"));
        assert!(!is_sigrok_echo(b"0,1"));
    }
}
