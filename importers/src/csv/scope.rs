//! Oscilloscope CSV and Saleae analog exports: each vendor's header is read
//! into a [`Spec`] (where the time comes from, which columns are channels, their SI units
//! and factors, metadata), then one shared row loop reads the data into a time axis and
//! value columns that [`super::table`] turns into analog tracks.
//!
//! Values are normalised to SI units (`mV` → `V` × 1e-3); the original unit is kept in the
//! metadata. Empty cells are "no sample" and stored as NaN; `∞`/`-∞` are stored as
//! infinities; both are counted in a warning. A row whose time or a value does not parse,
//! or that has too few fields, is counted as malformed with its line number.
//!
//! A large export (a scope's long record: tens of millions of rows) is read on all cores:
//! the rows are cut into slices at line starts, each slice parsed into its own window of
//! the columns, and the windows closed up. That path takes only plain rows; at the first row
//! that is not one (malformed, a blank or infinite value, a time out of range) the file is
//! read again one row at a time, so every diagnostic is exactly the row loop's.

use super::dialect::{ScopeVendor, sniff_dialect};
use super::logic::{Clock, TimeCol};
use super::numbers::{Cell, parse_time_ps, parse_value, split_unit, time_unit_exp, trim, value_unit};
use super::table::{self, Axis, Column};
use super::{CsvKind, Dialect, Line, Lines, Progress, split_fields, unquote};
use crate::{LoadControl, ParseFailure, Position};
use latscope_model::{Diagnostics, Ps, Source, SourceKind};
use rayon::prelude::*;

/// Where a row's time comes from.
#[derive(Debug, Clone, Copy)]
enum TimeSpec {
    /// A time cell.
    Column { col: usize, time: TimeCol },
    /// A sample-index cell: `start + round(index · inc)` (Rigol DS1000Z).
    Index { col: usize, start_ps: Ps, inc_ps: f64 },
    /// The row number: `start + round(row · inc)` (Rigol DHO `t0 =`/`tInc =`).
    Row { start_ps: Ps, inc_ps: f64 },
}

#[derive(Debug, Clone)]
struct Channel {
    col: usize,
    name: String,
    unit: String,
    factor: f64,
}

#[derive(Debug)]
struct Spec {
    format: &'static str,
    dialect: Dialect,
    /// Lines up to and including this one are header.
    header_lines: u64,
    time: TimeSpec,
    channels: Vec<Channel>,
    metadata: Vec<(String, String)>,
    warnings: Vec<String>,
    /// Record length the header announces, checked against the rows read.
    record_length: Option<u64>,
}

fn channel(col: usize, name: &str, unit: &str) -> Channel {
    let (si, factor) = value_unit(unit);
    Channel { col, name: name.to_string(), unit: si, factor }
}

fn cells(line: &[u8], delim: u8) -> Vec<String> {
    let mut f = Vec::new();
    split_fields(line, delim, &mut f);
    f.iter().map(|c| unquote(c)).collect()
}

/// Non-empty lines (with their numbers) of the first part of the file.
fn head_lines(data: &[u8], max: usize) -> Vec<Line<'_>> {
    Lines::new(data).filter(|l| !l.too_long && !trim(l.text).is_empty()).take(max).collect()
}

fn invalid(line: u64, msg: impl Into<String>) -> ParseFailure {
    ParseFailure::invalid(Position::Line(line), msg)
}

fn parse_f64(s: &str) -> Option<f64> {
    match parse_value(s.as_bytes(), false) {
        Cell::Number(v) if v.is_finite() => Some(v),
        _ => None,
    }
}

/// Drops a `CH1:` / `Analog:` channel prefix.
fn strip_channel_prefix(v: &str) -> &str {
    let v = v.trim();
    if let Some((left, right)) = v.split_once(':') {
        let l = left.trim();
        let is_chan = l.eq_ignore_ascii_case("analog")
            || l.eq_ignore_ascii_case("digital")
            || ((l.starts_with("CH") || l.starts_with("C"))
                && l.trim_start_matches("CH").trim_start_matches('C').chars().all(|c| c.is_ascii_digit()));
        if is_chan {
            return right.trim();
        }
    }
    v
}

pub fn parse(vendor: ScopeVendor, data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let spec = match vendor {
        ScopeVendor::Keysight => keysight(data)?,
        ScopeVendor::Rigol => rigol(data)?,
        ScopeVendor::Tektronix => tektronix(data)?,
        ScopeVendor::TektronixTds => tektronix_tds(data)?,
        ScopeVendor::Siglent => siglent(data)?,
        ScopeVendor::PicoScope => picoscope(data)?,
        ScopeVendor::Digilent => digilent(data)?,
        ScopeVendor::Generic => generic(data, "scope-csv/generic")?,
    };
    read(spec, data, ctl)
}

/// Saleae Logic 2 analog (`Time [s],<names>`) and MSO waveform (`Trigger [s],Time [s],…`)
/// exports. Values are volts.
pub fn parse_saleae_analog(kind: CsvKind, data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let head = head_lines(data, 4);
    let header = head.first().ok_or_else(|| invalid(1, "empty file"))?;
    let dialect = sniff_dialect(header.text, &head.iter().skip(1).map(|l| l.text).collect::<Vec<_>>());
    let names = cells(header.text, dialect.delimiter);
    let time_col = usize::from(kind == CsvKind::SaleaeMso);
    let iso = head.get(1).is_some_and(|l| {
        let mut f = Vec::new();
        split_fields(l.text, dialect.delimiter, &mut f);
        f.get(time_col).is_some_and(|c| super::numbers::parse_iso8601(c).is_some())
    });
    let time = if iso { TimeCol::Iso } else { TimeCol::Decimal { exp: 0 } };
    let channels = names.iter().enumerate().skip(time_col + 1).map(|(i, n)| channel(i, n, "V")).collect();
    let mut metadata = vec![
        (
            "instrument".to_string(),
            if kind == CsvKind::SaleaeLogic1Analog {
                "Saleae Logic 1.x (or a look-alike)"
            } else {
                "Saleae Logic 2"
            }
            .to_string(),
        ),
        ("export".to_string(), if time_col == 1 { "MSO waveform" } else { "analog" }.to_string()),
    ];
    if iso {
        metadata.push(("time".into(), "ISO-8601 wall clock; origin is Unix epoch seconds (UTC)".into()));
    }
    let spec = Spec {
        format: if kind == CsvKind::SaleaeLogic1Analog { "saleae-logic1-csv" } else { "saleae-logic2-csv" },
        dialect,
        header_lines: header.no,
        time: TimeSpec::Column { col: time_col, time },
        channels,
        metadata,
        warnings: Vec::new(),
        record_length: None,
    };
    read(spec, data, ctl)
}

/// `x-axis,1,2` / `second,Volt,Volt`.
fn keysight(data: &[u8]) -> Result<Spec, ParseFailure> {
    let head = head_lines(data, 2);
    let (Some(names), Some(units)) = (head.first(), head.get(1)) else {
        return Err(invalid(1, "Keysight CSV without its unit row"));
    };
    let n = cells(names.text, b',');
    let u = cells(units.text, b',');
    let exp = u.first().and_then(|s| time_unit_exp(s)).unwrap_or(0);
    let channels = n
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, name)| !name.is_empty())
        .map(|(i, name)| {
            // Keysight names analog channels by number; show them as the front panel does.
            let display =
                if name.chars().all(|c| c.is_ascii_digit()) { format!("CH{name}") } else { name.clone() };
            channel(i, &display, u.get(i).map_or("", String::as_str))
        })
        .collect();
    Ok(Spec {
        format: "scope-csv/keysight",
        dialect: Dialect::default(),
        header_lines: units.no,
        time: TimeSpec::Column { col: 0, time: TimeCol::Decimal { exp } },
        channels,
        metadata: vec![("instrument".into(), "Keysight/Agilent InfiniiVision".into())],
        warnings: Vec::new(),
        record_length: None,
    })
}

/// DS1000Z `X,CH1,Start,Increment,` / `Sequence,Volt,<start>,<inc>`, or DHO
/// `CH1V,CH2V,t0 =-X, tInc = Y,`.
fn rigol(data: &[u8]) -> Result<Spec, ParseFailure> {
    let head = head_lines(data, 2);
    let first = head.first().ok_or_else(|| invalid(1, "empty file"))?;
    let n = cells(first.text, b',');
    let key_value = |key: &str| {
        n.iter().find_map(|c| {
            let compact: String = c.chars().filter(|c| !c.is_whitespace()).collect();
            compact
                .strip_prefix(key)
                .and_then(|v| parse_time_ps(v.as_bytes(), 0, false).map(|ps| (ps, v.to_string())))
        })
    };
    if let (Some((start_ps, t0)), Some((_, tinc))) = (key_value("t0="), key_value("tInc=")) {
        let inc_ps =
            parse_f64(&tinc).ok_or_else(|| invalid(first.no, format!("invalid tInc `{tinc}`")))? * 1e12;
        let channels = n
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_empty() && !c.contains('='))
            .map(|(i, c)| {
                let (name, unit) = match c.strip_suffix('V') {
                    Some(name) if !name.is_empty() => (name, "V"),
                    _ => (c.as_str(), ""),
                };
                channel(i, name, unit)
            })
            .collect();
        return Ok(Spec {
            format: "scope-csv/rigol",
            dialect: Dialect::default(),
            header_lines: first.no,
            time: TimeSpec::Row { start_ps, inc_ps },
            channels,
            metadata: vec![("instrument".into(), "Rigol".into()), ("t0".into(), t0), ("tInc".into(), tinc)],
            warnings: Vec::new(),
            record_length: None,
        });
    }
    let second = head.get(1).ok_or_else(|| invalid(first.no + 1, "Rigol CSV without its Sequence row"))?;
    let u = cells(second.text, b',');
    let start_idx = n
        .iter()
        .position(|c| c.eq_ignore_ascii_case("start"))
        .ok_or_else(|| invalid(first.no, "Rigol header without `Start`"))?;
    let start_s = u.get(start_idx).cloned().unwrap_or_default();
    let inc_s = u.get(start_idx + 1).cloned().unwrap_or_default();
    let start_ps = parse_time_ps(start_s.as_bytes(), 0, false)
        .ok_or_else(|| invalid(second.no, format!("invalid Start `{start_s}`")))?;
    let inc_ps = parse_time_ps(inc_s.as_bytes(), 0, false)
        .filter(|v| *v > 0)
        .map(|v| v as f64)
        .or_else(|| parse_f64(&inc_s).map(|v| v * 1e12))
        .filter(|v| *v > 0.0)
        .ok_or_else(|| invalid(second.no, format!("invalid Increment `{inc_s}`")))?;
    let channels = (1..start_idx).map(|i| channel(i, &n[i], u.get(i).map_or("", String::as_str))).collect();
    Ok(Spec {
        format: "scope-csv/rigol",
        dialect: Dialect::default(),
        header_lines: second.no,
        time: TimeSpec::Index { col: 0, start_ps, inc_ps },
        channels,
        metadata: vec![
            ("instrument".into(), "Rigol DS1000Z".into()),
            ("start".into(), start_s),
            ("sample interval".into(), inc_s),
        ],
        warnings: Vec::new(),
        record_length: None,
    })
}

/// MDO/MSO: `Key,value[,value per channel]` preamble, then `TIME,CH1,CH2…`.
fn tektronix(data: &[u8]) -> Result<Spec, ParseFailure> {
    let mut metadata = Vec::new();
    let mut units: Vec<String> = Vec::new();
    let mut h_units = None;
    let mut record_length = None;
    for line in Lines::new(data).take(1000) {
        if line.too_long {
            continue;
        }
        let c = cells(line.text, b',');
        let key = c[0].as_str();
        if key.eq_ignore_ascii_case("time") {
            let exp = h_units.as_deref().and_then(time_unit_exp).unwrap_or(0);
            let channels = c
                .iter()
                .enumerate()
                .skip(1)
                .filter(|(_, n)| !n.is_empty())
                .map(|(i, n)| channel(i, n, units.get(i - 1).map_or("", String::as_str)))
                .collect();
            return Ok(Spec {
                format: "scope-csv/tektronix",
                dialect: Dialect::default(),
                header_lines: line.no,
                time: TimeSpec::Column { col: 0, time: TimeCol::Decimal { exp } },
                channels,
                metadata,
                warnings: Vec::new(),
                record_length,
            });
        }
        if key.is_empty() {
            continue;
        }
        let values: Vec<&String> = c[1..].iter().filter(|v| !v.is_empty()).collect();
        match key {
            "Vertical Units" => units = c[1..].to_vec(),
            "Horizontal Units" => h_units = values.first().map(|s| s.to_string()),
            "Record Length" => record_length = values.first().and_then(|v| parse_f64(v)).map(|v| v as u64),
            _ => {}
        }
        let meta_key = if key == "Model" { "instrument".to_string() } else { key.to_string() };
        metadata.push((meta_key, values.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")));
    }
    Err(invalid(1, "Tektronix CSV without a `TIME,…` header row in its first 1000 lines"))
}

/// TDS/TBS spreadsheet: every row is `label,value,,time,sample[,]`, repeated per channel.
fn tektronix_tds(data: &[u8]) -> Result<Spec, ParseFailure> {
    let mut metadata = Vec::new();
    let mut blocks: Vec<(Option<String>, Option<String>)> = Vec::new();
    let mut h_units = None;
    let mut record_length = None;
    let mut width = 0;
    for line in Lines::new(data).take(40) {
        if line.too_long {
            continue;
        }
        let c = cells(line.text, b',');
        width = width.max(c.len());
        for b in 0..c.len().div_ceil(6) {
            let key = c.get(6 * b).map_or("", String::as_str);
            let value = c.get(6 * b + 1).cloned().unwrap_or_default();
            if key.is_empty() {
                continue;
            }
            if blocks.len() <= b {
                blocks.resize(b + 1, (None, None));
            }
            match key {
                "Source" => blocks[b].0 = Some(value.clone()),
                "Vertical Units" => blocks[b].1 = Some(value.clone()),
                "Horizontal Units" if b == 0 => h_units = Some(value.clone()),
                "Record Length" if b == 0 => record_length = parse_f64(&value).map(|v| v as u64),
                _ => {}
            }
            if b == 0 {
                let k = if key == "Model Number" { "instrument" } else { key };
                metadata.push((k.to_string(), value));
            }
        }
    }
    let nblocks = blocks.len().max(1);
    let channels = (0..nblocks)
        .filter(|b| 6 * b + 4 < width.max(5))
        .map(|b| {
            let (name, unit) = blocks.get(b).cloned().unwrap_or_default();
            channel(
                6 * b + 4,
                &name.unwrap_or_else(|| format!("CH{}", b + 1)),
                unit.as_deref().unwrap_or("V"),
            )
        })
        .collect();
    let exp = h_units.as_deref().and_then(time_unit_exp).unwrap_or(0);
    Ok(Spec {
        format: "scope-csv/tektronix",
        dialect: Dialect::default(),
        header_lines: 0,
        time: TimeSpec::Column { col: 3, time: TimeCol::Decimal { exp } },
        channels,
        metadata,
        warnings: Vec::new(),
        record_length,
    })
}

/// `Record Length,Analog:140000` … `Source,CH1` / `Second,Volt`, or the PC-tool long form
/// with `Sample Rate`.
fn siglent(data: &[u8]) -> Result<Spec, ParseFailure> {
    let mut metadata = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    let mut record_length = None;
    for line in Lines::new(data).take(200) {
        if line.too_long || trim(line.text).is_empty() {
            continue;
        }
        let c = cells(line.text, b',');
        let key = c[0].as_str();
        if key.eq_ignore_ascii_case("second") || key.eq_ignore_ascii_case("time") {
            let exp = time_unit_exp(key).unwrap_or(0);
            let channels = c
                .iter()
                .enumerate()
                .skip(1)
                .filter(|(_, u)| !u.is_empty())
                .map(|(i, u)| {
                    let name = sources.get(i - 1).cloned().unwrap_or_else(|| format!("CH{i}"));
                    // `Second,Value` files give no unit; Siglent channels are volts.
                    let unit = if u.eq_ignore_ascii_case("value") { "V" } else { u.as_str() };
                    channel(i, &name, unit)
                })
                .collect();
            return Ok(Spec {
                format: "scope-csv/siglent",
                dialect: Dialect::default(),
                header_lines: line.no,
                time: TimeSpec::Column { col: 0, time: TimeCol::Decimal { exp } },
                channels,
                metadata,
                warnings: Vec::new(),
                record_length,
            });
        }
        let values: Vec<&str> =
            c[1..].iter().filter(|v| !v.is_empty()).map(|v| strip_channel_prefix(v)).collect();
        match key {
            "Source" => sources = c[1..].iter().filter(|v| !v.is_empty()).cloned().collect(),
            "Record Length" => record_length = values.first().and_then(|v| parse_f64(v)).map(|v| v as u64),
            _ => {}
        }
        let k = if key == "Model Number" { "instrument" } else { key };
        metadata.push((k.to_string(), values.join(", ")));
    }
    Err(invalid(1, "Siglent CSV without its `Second,Volt` header row"))
}

/// `Time,Channel A` / `(ms),(V)` / blank, any separator, decimal commas.
fn picoscope(data: &[u8]) -> Result<Spec, ParseFailure> {
    let head = head_lines(data, 6);
    let (Some(names), Some(units)) = (head.first(), head.get(1)) else {
        return Err(invalid(1, "PicoScope CSV without its unit row"));
    };
    let sample: Vec<&[u8]> = head.iter().skip(2).map(|l| l.text).collect();
    let dialect = sniff_dialect(names.text, &sample);
    let n = cells(names.text, dialect.delimiter);
    let u: Vec<String> = cells(units.text, dialect.delimiter)
        .iter()
        .map(|s| split_unit(s).1.unwrap_or("").to_string())
        .collect();
    let exp = u.first().and_then(|s| time_unit_exp(s)).ok_or_else(|| {
        invalid(units.no, format!("unknown time unit `{}`", u.first().map_or("", String::as_str)))
    })?;
    let channels = (1..n.len())
        .filter(|&i| !n[i].is_empty())
        .map(|i| channel(i, &n[i], u.get(i).map_or("", String::as_str)))
        .collect();
    let metadata = vec![
        ("instrument".into(), "PicoScope".into()),
        ("time unit".into(), u[0].clone()),
        ("units".into(), u[1..].join(", ")),
    ];
    Ok(Spec {
        format: "scope-csv/picoscope",
        dialect,
        header_lines: units.no,
        time: TimeSpec::Column { col: 0, time: TimeCol::Decimal { exp } },
        channels,
        metadata,
        warnings: Vec::new(),
        record_length: None,
    })
}

/// WaveForms: `#Key: value` comments, blank line, `Time (s),Channel 1 (V),…`.
fn digilent(data: &[u8]) -> Result<Spec, ParseFailure> {
    let mut metadata = Vec::new();
    for line in Lines::new(data).take(200) {
        if line.too_long || trim(line.text).is_empty() {
            continue;
        }
        if let Some(c) = line.text.strip_prefix(b"#") {
            let c = String::from_utf8_lossy(c);
            match c.split_once(':') {
                Some((k, v)) => metadata.push((k.trim().to_string(), v.trim().to_string())),
                None => metadata.push(("instrument".to_string(), c.trim().to_string())),
            }
            continue;
        }
        let c = cells(line.text, b',');
        let (first, unit) = split_unit(&c[0]);
        if !first.eq_ignore_ascii_case("time") {
            // Network Analyzer (Bode) and Spectrum exports: values against frequency. A track's
            // x axis is time, so they are refused, saying what to
            // export instead rather than misreading hertz as seconds.
            let instrument = metadata
                .iter()
                .find(|(k, _)| k == "instrument")
                .map_or("Digilent WaveForms".to_string(), |(_, v)| v.clone());
            let columns = c.iter().skip(1).map(|h| format!("`{h}`")).collect::<Vec<_>>().join(", ");
            return Err(invalid(
                line.no,
                format!(
                    "{instrument} export: {columns} against `{}` is a frequency-domain table (one row per \
                     frequency, not per instant), which latscope does not display, since its tracks are \
                     time series. For waveforms, export time-domain data from the WaveForms Scope \
                     instrument instead: a CSV whose first column is `Time (s)`",
                    c[0]
                ),
            ));
        }
        let exp = unit.and_then(time_unit_exp).unwrap_or(0);
        let channels = c
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, h)| {
                let (name, unit) = split_unit(h);
                channel(i, name, unit.unwrap_or(""))
            })
            .collect();
        return Ok(Spec {
            format: "scope-csv/digilent",
            dialect: Dialect::default(),
            header_lines: line.no,
            time: TimeSpec::Column { col: 0, time: TimeCol::Decimal { exp } },
            channels,
            metadata,
            warnings: Vec::new(),
            record_length: None,
        });
    }
    Err(invalid(1, "Digilent WaveForms file without a header row"))
}

/// `time, ch1, ch2…` with optional units in the header, or headerless numeric rows.
fn generic(data: &[u8], format: &'static str) -> Result<Spec, ParseFailure> {
    let head: Vec<Line<'_>> = head_lines(data, 8).into_iter().filter(|l| !l.text.starts_with(b"#")).collect();
    let first = head.first().ok_or_else(|| invalid(1, "empty file"))?;
    let sample: Vec<&[u8]> = head.iter().skip(1).map(|l| l.text).collect();
    let dialect = sniff_dialect(first.text, &sample);
    let c = cells(first.text, dialect.delimiter);
    let numeric =
        c.iter().all(|v| matches!(parse_value(v.as_bytes(), dialect.decimal_comma), Cell::Number(_)));
    let mut warnings = vec!["generic CSV: the first column is taken as the time".to_string()];
    let (header_lines, exp, channels) = if numeric {
        warnings.push("no header row: time in seconds, channels named CH1, CH2…".into());
        (first.no - 1, 0, (1..c.len()).map(|i| channel(i, &format!("CH{i}"), "")).collect())
    } else {
        let (_, tu) = split_unit(&c[0]);
        let tu = tu
            .or_else(|| c[0].strip_prefix("Time").or_else(|| c[0].strip_prefix("time")).map(str::trim))
            .filter(|s| !s.is_empty());
        let exp = match tu.and_then(time_unit_exp) {
            Some(e) => e,
            None => {
                warnings.push("no time unit in the header: seconds assumed".into());
                0
            }
        };
        let channels = (1..c.len())
            .filter(|&i| !c[i].is_empty())
            .map(|i| {
                let (name, unit) = split_unit(&c[i]);
                channel(i, name, unit.unwrap_or(""))
            })
            .collect();
        (first.no, exp, channels)
    };
    Ok(Spec {
        format,
        dialect,
        header_lines,
        time: TimeSpec::Column { col: 0, time: TimeCol::Decimal { exp } },
        channels,
        metadata: Vec::new(),
        warnings,
        record_length: None,
    })
}

/// Exports at least this large are read on all cores (see the module docs).
const PARALLEL_BYTES: usize = 16 << 20;

/// Fields a data row needs: up to the last channel or time column.
fn needed_fields(spec: &Spec) -> usize {
    spec.channels
        .iter()
        .map(|c| c.col + 1)
        .chain(match spec.time {
            TimeSpec::Column { col, .. } | TimeSpec::Index { col, .. } => Some(col + 1),
            TimeSpec::Row { .. } => None,
        })
        .max()
        .unwrap_or(1)
}

/// The time of a plain row (`Column` and `Index` times; a row-number time depends on the
/// rows before it), before it is made relative.
fn row_time(spec: &Spec, fields: &[&[u8]]) -> Option<(i64, Ps)> {
    let dc = spec.dialect.decimal_comma;
    match spec.time {
        TimeSpec::Column { col, time } => Clock::absolute(time, fields[col], dc),
        TimeSpec::Index { col, start_ps, inc_ps } => parse_time_ps(fields[col], -12, false)
            .map(|i| times_rounded(i, inc_ps))
            .filter(|v| v.abs() < 4.0e18)
            .and_then(|v| start_ps.checked_add(v as Ps))
            .map(|ps| (0, ps)),
        TimeSpec::Row { .. } => None,
    }
}

/// `round(i · inc)` in `f64`; by integers when `inc` is whole and the product is below 2^53,
/// where the float product is exact and rounding it changes nothing (a library call per row
/// of a long record otherwise).
fn times_rounded(i: i64, inc: f64) -> f64 {
    const EXACT: i64 = 1 << 53;
    if inc.fract() == 0.0 && inc.abs() < EXACT as f64 {
        let inc = inc as i64;
        if let Some(p) = i.checked_mul(inc).filter(|p| p.abs() < EXACT) {
            return p as f64;
        }
    }
    (i as f64 * inc).round()
}

/// One window of the columns a slice of rows is read into.
struct Window<'a> {
    rows: &'a [u8],
    times: &'a mut [Ps],
    values: Vec<&'a mut [f32]>,
}

/// A plain data row of `line` into slot `at` of `w`: `Some(true)` stored, `Some(false)` a
/// line the row loop skips silently (blank, a comment), `None` anything else.
fn plain_row<'f>(
    spec: &Spec,
    line: &'f [u8],
    fields: &mut Vec<&'f [u8]>,
    clock: &mut Clock,
    w: &mut Window<'_>,
    at: usize,
) -> Option<bool> {
    if trim(line).is_empty() || line.starts_with(b"#") {
        return Some(false);
    }
    split_fields(line, spec.dialect.delimiter, fields);
    if fields.len() < needed_fields(spec) {
        return None;
    }
    let t = clock.relative(row_time(spec, fields)?)?;
    for (k, ch) in spec.channels.iter().enumerate() {
        match parse_value(fields[ch.col], spec.dialect.decimal_comma) {
            Cell::Number(v) if v.is_finite() => *w.values[k].get_mut(at)? = (v * ch.factor) as f32,
            _ => return None,
        }
    }
    *w.times.get_mut(at)? = t;
    Some(true)
}

/// The rows read: the time column, each channel's values, and the clock the times are
/// relative to.
type Columns = (Vec<Ps>, Vec<Vec<f32>>, Clock);

/// The rows of a clean export read on all cores; `None` at the first row the row loop would
/// report.
fn read_parallel(spec: &Spec, data: &[u8], ctl: &LoadControl) -> Result<Option<Columns>, ParseFailure> {
    if matches!(spec.time, TimeSpec::Row { .. }) || data.len() < PARALLEL_BYTES {
        return Ok(None);
    }
    // The rows start after the header's lines.
    let Some(body_start) = (spec.header_lines == 0).then_some(0).or_else(|| {
        memchr::memchr_iter(b'\n', data).nth(usize::try_from(spec.header_lines).ok()? - 1).map(|i| i + 1)
    }) else {
        return Ok(None);
    };
    if data.starts_with(b"\xEF\xBB\xBF") && body_start == 0 {
        return Ok(None);
    }
    let body = &data[body_start..];
    // The clock's origin is the first row's time, as in the row loop.
    let mut fields = Vec::new();
    let mut clock = Clock::default();
    let first = Lines::new(body).map(|l| l.text).find(|t| !(trim(t).is_empty() || t.starts_with(b"#")));
    let Some(first) = first else { return Ok(None) };
    split_fields(first, spec.dialect.delimiter, &mut fields);
    if fields.len() < needed_fields(spec) {
        return Ok(None);
    }
    let Some(origin) = row_time(spec, &fields) else { return Ok(None) };
    clock.first = Some(origin);
    // Slices cut after a line break, a few per thread; each one's lines bound its rows.
    let parts = rayon::current_num_threads().max(1) * 4;
    let mut cuts = vec![0usize];
    for k in 1..parts {
        let guess = body.len() * k / parts;
        let last = *cuts.last().unwrap_or(&0);
        if guess <= last {
            continue;
        }
        match memchr::memchr(b'\n', &body[guess..]) {
            Some(i) if guess + i + 1 < body.len() => cuts.push(guess + i + 1),
            _ => break,
        }
    }
    cuts.push(body.len());
    let slices: Vec<&[u8]> = cuts.windows(2).map(|w| &body[w[0]..w[1]]).collect();
    let lines: Vec<usize> = slices
        .iter()
        .map(|s| memchr::memchr_iter(b'\n', s).count() + usize::from(!s.ends_with(b"\n")))
        .collect();
    let total: usize = lines.iter().sum();
    let mut times: Vec<Ps> = vec![0; total];
    let mut values: Vec<Vec<f32>> = vec![vec![0.0; total]; spec.channels.len()];
    let mut windows: Vec<Window<'_>> = Vec::with_capacity(slices.len());
    {
        let mut rest_t: &mut [Ps] = &mut times;
        let mut rest_v: Vec<&mut [f32]> = values.iter_mut().map(|v| v.as_mut_slice()).collect();
        for (rows, &n) in slices.iter().zip(&lines) {
            let (t, tail) = std::mem::take(&mut rest_t).split_at_mut(n);
            rest_t = tail;
            let mut vs = Vec::with_capacity(rest_v.len());
            for r in &mut rest_v {
                let (v, tail) = std::mem::take(r).split_at_mut(n);
                *r = tail;
                vs.push(v);
            }
            windows.push(Window { rows, times: t, values: vs });
        }
    }
    let origin = clock.first;
    let stored: Vec<Result<Option<usize>, ParseFailure>> = windows
        .into_par_iter()
        .map(|mut w| {
            let mut fields = Vec::new();
            let mut clock = Clock { first: origin };
            let mut at = 0;
            for (i, line) in Lines::new(w.rows).enumerate() {
                if i % 65_536 == 0 && ctl.is_cancelled() {
                    return Err(ParseFailure::Cancelled);
                }
                if line.too_long {
                    return Ok(None);
                }
                match plain_row(spec, line.text, &mut fields, &mut clock, &mut w, at) {
                    Some(true) => at += 1,
                    Some(false) => {}
                    None => return Ok(None),
                }
            }
            ctl.advance(w.rows.len() as u64);
            Ok(Some(at))
        })
        .collect();
    let mut counts = Vec::with_capacity(stored.len());
    for s in stored {
        match s? {
            Some(n) => counts.push(n),
            None => return Ok(None),
        }
    }
    // Close the gaps skipped lines left, window by window.
    let (mut to, mut from) = (0usize, 0usize);
    for (&n, &room) in counts.iter().zip(&lines) {
        if to != from {
            times.copy_within(from..from + n, to);
            for v in &mut values {
                v.copy_within(from..from + n, to);
            }
        }
        to += n;
        from += room;
    }
    times.truncate(to);
    for v in &mut values {
        v.truncate(to);
    }
    Ok(Some((times, values, clock)))
}

/// The shared row loop.
fn read(spec: Spec, data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let mut diag = Diagnostics::default();
    for w in &spec.warnings {
        diag.warn(w.clone());
    }
    let (times, values, clock) = match read_parallel(&spec, data, ctl)? {
        Some(read) => read,
        None => read_rows(&spec, data, ctl, &mut diag)?,
    };
    Ok(finish(spec, times, values, clock, diag))
}

/// The row loop one row at a time, with every diagnostic.
fn read_rows(
    spec: &Spec,
    data: &[u8],
    ctl: &LoadControl,
    diag: &mut Diagnostics,
) -> Result<Columns, ParseFailure> {
    let dc = spec.dialect.decimal_comma;
    let needed = needed_fields(spec);
    let mut values: Vec<Vec<f32>> = vec![Vec::new(); spec.channels.len()];
    let mut times: Vec<Ps> = Vec::new();
    let mut clock = Clock::default();
    let mut progress = Progress::new(ctl);
    let mut fields = Vec::new();
    let mut parsed = vec![0f32; spec.channels.len()];
    let (mut blanks, mut infinite) = (0u64, 0u64);
    for line in Lines::new(data) {
        progress.tick(line.no, line.offset as usize + line.text.len())?;
        if line.no <= spec.header_lines {
            continue;
        }
        if line.too_long {
            diag.malformed(Some(line.no), line.offset, "line longer than 1 MiB");
            continue;
        }
        if trim(line.text).is_empty() || line.text.starts_with(b"#") {
            continue;
        }
        split_fields(line.text, spec.dialect.delimiter, &mut fields);
        if fields.len() < needed {
            if fields.iter().all(|f| trim(f).is_empty()) {
                continue;
            }
            diag.malformed(
                Some(line.no),
                line.offset,
                format!("expected at least {needed} fields, found {}", fields.len()),
            );
            continue;
        }
        let abs = match spec.time {
            TimeSpec::Column { col, time } => Clock::absolute(time, fields[col], dc),
            TimeSpec::Index { col, start_ps, inc_ps } => parse_time_ps(fields[col], -12, false)
                .map(|i| times_rounded(i, inc_ps))
                .filter(|v| v.abs() < 4.0e18)
                .and_then(|v| start_ps.checked_add(v as Ps))
                .map(|ps| (0, ps)),
            TimeSpec::Row { start_ps, inc_ps } => Some((times.len() as f64 * inc_ps).round())
                .filter(|v| v.abs() < 4.0e18)
                .and_then(|v| start_ps.checked_add(v as Ps))
                .map(|ps| (0, ps)),
        };
        let Some(t) = abs.and_then(|a| clock.relative(a)) else {
            let col = match spec.time {
                TimeSpec::Column { col, .. } | TimeSpec::Index { col, .. } => col,
                TimeSpec::Row { .. } => 0,
            };
            let cell = String::from_utf8_lossy(&fields[col][..fields[col].len().min(40)]).into_owned();
            diag.malformed(Some(line.no), line.offset, format!("invalid time `{cell}`"));
            continue;
        };
        let mut bad = None;
        for (k, ch) in spec.channels.iter().enumerate() {
            parsed[k] = match parse_value(fields[ch.col], dc) {
                Cell::Number(v) => {
                    if v.is_infinite() {
                        infinite += 1;
                    }
                    (v * ch.factor) as f32
                }
                Cell::Blank => {
                    blanks += 1;
                    f32::NAN
                }
                Cell::Invalid => {
                    bad = Some(ch.col);
                    break;
                }
            };
        }
        if let Some(col) = bad {
            let cell = String::from_utf8_lossy(&fields[col][..fields[col].len().min(40)]).into_owned();
            diag.malformed(
                Some(line.no),
                line.offset,
                format!("invalid value `{cell}` in column {}", col + 1),
            );
            continue;
        }
        for (k, v) in parsed.iter().enumerate() {
            values[k].push(*v);
        }
        times.push(t);
    }
    if blanks > 0 {
        diag.warn(format!("{blanks} empty value cell(s) stored as gaps (NaN)"));
    }
    if infinite > 0 {
        diag.warn(format!("{infinite} over-range value(s) (∞/-∞)"));
    }
    Ok((times, values, clock))
}

/// The columns read, as the source's analog tracks.
fn finish(spec: Spec, times: Vec<Ps>, values: Vec<Vec<f32>>, clock: Clock, mut diag: Diagnostics) -> Source {
    let mut source = Source::new("", spec.format, SourceKind::File);
    if let Some(n) = spec.record_length
        && n != times.len() as u64
    {
        diag.warn(format!(
            "the header says Record Length {n}, the file has {} rows; using the rows",
            times.len()
        ));
    }
    if times.is_empty() {
        diag.warn("no data rows");
    }
    source.origin = clock.origin();
    source.records = Some(times.len() as u64);
    let mut metadata = spec.metadata;
    let columns: Vec<Column> = spec
        .channels
        .into_iter()
        .zip(values)
        .map(|(ch, v)| Column { name: ch.name, unit: ch.unit, values: v })
        .collect();
    let tracks = table::build(&Axis::Times(times), columns, &mut diag);
    if let Some(first) = tracks.first() {
        metadata.push(("sample interval (ps)".to_string(), format!("{}", first.dt_ps)));
    }
    let units: Vec<String> = tracks.iter().map(|t| format!("{}={}", t.name, t.unit)).collect();
    metadata.push(("units".to_string(), units.join(", ")));
    source.analog = tracks.into();
    source.metadata = metadata;
    source.diagnostics = diag;
    source
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_prefixes_are_dropped_only_for_channels() {
        assert_eq!(strip_channel_prefix("CH1:0.50"), "0.50");
        assert_eq!(strip_channel_prefix("Analog:140000"), "140000");
        assert_eq!(strip_channel_prefix("C2: 0.05"), "0.05");
        assert_eq!(strip_channel_prefix("FV:v24.26"), "FV:v24.26");
    }

    /// A Rigol DS1000Z export of `rows` rows (index, value), with a comment and a blank line
    /// in it, and `bad` (a malformed row) at row 1000 when given.
    fn rigol_rows(rows: usize, bad: Option<&str>) -> Vec<u8> {
        let mut out = String::from("X,CH1,Start,Increment,\nSequence,Volt,-1.000000e-03,2.000000e-09\n");
        for i in 0..rows {
            if i == 1000
                && let Some(b) = bad
            {
                out.push_str(b);
                out.push('\n');
            }
            if i == rows / 2 {
                out.push_str("# a note\n\n");
            }
            let v = ((i % 977) as f64 - 400.0) * 1.25e-3;
            out.push_str(&format!("{i},{v:.5e},\n"));
        }
        out.into_bytes()
    }

    #[test]
    fn a_large_export_read_on_all_cores_equals_the_row_loop() {
        for bad in [None, Some("1000,oops,"), Some("1000,,"), Some("x,1.0,")] {
            let data = rigol_rows(1_200_000, bad);
            assert!(data.len() >= PARALLEL_BYTES, "{}", data.len());
            let ctl = LoadControl::new();
            let spec = || rigol(&data).unwrap();
            let parallel = read_parallel(&spec(), &data, &ctl).unwrap();
            assert_eq!(parallel.is_some(), bad.is_none(), "{bad:?}: only a clean export is read in slices");
            let mut diag = Diagnostics::default();
            for w in &spec().warnings {
                diag.warn(w.clone());
            }
            let (times, values, clock) = read_rows(&spec(), &data, &ctl, &mut diag).unwrap();
            if let Some((pt, pv, pc)) = parallel {
                assert_eq!((pt.len(), pc.first), (times.len(), clock.first));
                assert!(pt == times && pv == values, "the same columns");
            }
            // Either way the source is the row loop's, diagnostics included.
            let source = read(spec(), &data, &ctl).unwrap();
            let mut expected = finish(spec(), times, values, clock, diag);
            expected.name = source.name.clone();
            // Bit for bit: a blank cell is NaN, which equals nothing.
            let bits = |s: &Source| -> Vec<(String, Ps, u64, Vec<u32>)> {
                s.analog
                    .iter()
                    .map(|a| {
                        (
                            a.name.clone(),
                            a.t0,
                            a.dt_ps.to_bits(),
                            a.samples.iter().map(|v| v.to_bits()).collect(),
                        )
                    })
                    .collect()
            };
            assert_eq!(bits(&source), bits(&expected), "{bad:?}");
            assert_eq!(source.diagnostics.summary(), expected.diagnostics.summary(), "{bad:?}");
            assert_eq!(source.records, expected.records);
        }
    }

    #[test]
    fn whole_increments_round_as_the_float_product_does() {
        let mut x: u64 = 0x853C_49E6_748F_EA9B;
        for inc in [2000.0, 1.0, 0.0, 4e-1, 2.5, 1e9, 7.0, -3.0, 1e15, 8e18] {
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x >> 8) as i64 % 5_000_000_000 - (x % 3) as i64 * 1_000_000_000;
                let want = (i as f64 * inc).round();
                // Equal values (a zero may differ in sign, which `as Ps` drops).
                assert_eq!(times_rounded(i, inc), want, "{i} × {inc}");
            }
        }
    }
}
