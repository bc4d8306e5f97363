//! Number and unit parsing shared by every CSV dialect: exact decimal → picosecond
//! conversion for time cells, tolerant `f64` parsing for value cells (explicit `+`,
//! engineering exponents, decimal commas, `∞`, blanks), unit names from headers and
//! ISO-8601 timestamps (Saleae "Use ISO8601 timestamps").
//!
//! Times are parsed from their decimal text to an integer count of picoseconds, never
//! through `f64`: `1725.700067` s or `-998.000E-06` s are exact in ps, and a 10⁷-row
//! export must not accumulate float error.

/// What one value cell held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell {
    Number(f64),
    /// Empty cell: "no data for this channel here" (Keysight, Saleae MSO), not zero.
    Blank,
    /// Text that is not a number.
    Invalid,
}

/// Trims ASCII spaces and tabs (Siglent pads times with a leading space, Logic 1.x
/// separates with `, `).
pub fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|b| *b != b' ' && *b != b'\t').unwrap_or(s.len());
    let end = s.iter().rposition(|b| *b != b' ' && *b != b'\t').map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

/// Parses a decimal number (`-12.5`, `+998.000E-06`, `1,5` with `decimal_comma`) scaled by
/// `10^scale_exp` into an integer, rounding half away from zero. `scale_exp = 12` turns
/// seconds into picoseconds. `None` for anything else or on overflow.
pub fn parse_scaled(s: &[u8], scale_exp: i32, decimal_comma: bool) -> Option<i64> {
    let s = trim(s);
    // A plain count (a sample index) in its own unit: the common cell of a long scope record.
    if scale_exp == 0 && (1..=18).contains(&s.len()) && s.iter().all(u8::is_ascii_digit) {
        return Some(s.iter().fold(0i64, |acc, &b| acc * 10 + i64::from(b - b'0')));
    }
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let sep = if decimal_comma { b',' } else { b'.' };
    let mut mantissa: i128 = 0;
    let mut digits = 0u32;
    let mut frac_digits: i32 = 0;
    let mut seen_sep = false;
    let mut i = 0;
    // Digits beyond 30 significant ones cannot change a picosecond result; they are
    // counted (for the exponent) but not accumulated, which keeps `mantissa` in range.
    let mut dropped_int_digits: i32 = 0;
    while i < s.len() {
        let b = s[i];
        if b.is_ascii_digit() {
            if digits < 30 {
                mantissa = mantissa * 10 + i128::from(b - b'0');
                if mantissa != 0 {
                    digits += 1;
                }
                if seen_sep {
                    frac_digits += 1;
                }
            } else if !seen_sep {
                dropped_int_digits += 1;
            }
            i += 1;
        } else if b == sep && !seen_sep {
            seen_sep = true;
            i += 1;
        } else {
            break;
        }
    }
    let had_digit = s[..i].iter().any(u8::is_ascii_digit);
    if !had_digit {
        return None;
    }
    let mut exp: i32 = 0;
    if i < s.len() {
        if s[i] != b'e' && s[i] != b'E' {
            return None;
        }
        let e = &s[i + 1..];
        let (eneg, e) = match e.first() {
            Some(b'-') => (true, &e[1..]),
            Some(b'+') => (false, &e[1..]),
            _ => (false, e),
        };
        if e.is_empty() || e.len() > 4 || !e.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let v: i32 = e.iter().fold(0, |a, &d| a * 10 + i32::from(d - b'0'));
        exp = if eneg { -v } else { v };
    }
    let shift = exp + scale_exp - frac_digits + dropped_int_digits;
    let value = if shift >= 0 {
        if shift > 38 {
            if mantissa == 0 {
                0
            } else {
                return None;
            }
        } else {
            mantissa.checked_mul(10i128.checked_pow(shift as u32)?)?
        }
    } else {
        let d = -shift;
        if d > 38 {
            0
        } else {
            let p = 10i128.pow(d as u32);
            let q = mantissa / p;
            let r = mantissa % p;
            if r * 2 >= p { q + 1 } else { q }
        }
    };
    let value = i64::try_from(value).ok()?;
    Some(if neg { -value } else { value })
}

/// Seconds (scaled by `10^unit_exp` first: `-3` for ms) to picoseconds, exactly.
pub fn parse_time_ps(s: &[u8], unit_exp: i32, decimal_comma: bool) -> Option<i64> {
    parse_scaled(s, 12 + unit_exp, decimal_comma)
}

/// Parses a value cell. Accepts what scopes write: `+31.500101E-03`, ` 1.16000`,
/// `0,0123` (with `decimal_comma`), `∞`/`-∞`/`inf`, `nan`; blank → [`Cell::Blank`].
pub fn parse_value(s: &[u8], decimal_comma: bool) -> Cell {
    let s = trim(s);
    if s.is_empty() {
        return Cell::Blank;
    }
    let (neg, body) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body == "∞".as_bytes() {
        return Cell::Number(if neg { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    // Only digits, sign, separators and exponents go to `f64::from_str`, plus the
    // inf/nan words it knows; anything else (`0x3F`, `Read`) is not a number.
    let plain = s.iter().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b',' | b'e' | b'E'));
    let text: std::borrow::Cow<'_, [u8]> = if decimal_comma && s.contains(&b',') {
        if s.contains(&b'.') {
            return Cell::Invalid;
        }
        s.iter().map(|&b| if b == b',' { b'.' } else { b }).collect::<Vec<u8>>().into()
    } else {
        s.into()
    };
    let word = body.eq_ignore_ascii_case(b"inf")
        || body.eq_ignore_ascii_case(b"infinity")
        || body.eq_ignore_ascii_case(b"nan");
    if !plain && !word {
        return Cell::Invalid;
    }
    match std::str::from_utf8(&text).ok().and_then(|t| t.parse::<f64>().ok()) {
        Some(v) => Cell::Number(v),
        None => Cell::Invalid,
    }
}

/// A time unit name (`s`, `second`, `ms`, `us`, `µs`, `ns`, `ps`, sigrok's
/// `microseconds`…) as a power of ten of seconds.
pub fn time_unit_exp(unit: &str) -> Option<i32> {
    let u = unit.trim().to_ascii_lowercase();
    let u = u.trim_end_matches('.');
    Some(match u {
        "s" | "sec" | "second" | "seconds" | "secs" | "sekunde" | "sekunden" => 0,
        "ms" | "millisecond" | "milliseconds" => -3,
        "us" | "µs" | "μs" | "microsecond" | "microseconds" => -6,
        "ns" | "nanosecond" | "nanoseconds" => -9,
        "ps" | "picosecond" | "picoseconds" => -12,
        "fs" | "femtosecond" | "femtoseconds" => -15,
        "as" | "attosecond" | "attoseconds" => -18,
        _ => return None,
    })
}

/// A value unit as (SI unit, factor to it): `mV` → (`V`, 1e-3), `Volt` → (`V`, 1).
/// Unknown units are kept as written with factor 1.
pub fn value_unit(unit: &str) -> (String, f64) {
    let u = unit.trim();
    let lower = u.to_ascii_lowercase();
    match lower.as_str() {
        "v" | "volt" | "volts" => return ("V".into(), 1.0),
        "a" | "amp" | "ampere" | "amperes" | "amps" => return ("A".into(), 1.0),
        "w" | "watt" | "watts" => return ("W".into(), 1.0),
        "" => return (String::new(), 1.0),
        _ => {}
    }
    for (prefix, factor) in [("m", 1e-3), ("u", 1e-6), ("µ", 1e-6), ("μ", 1e-6), ("n", 1e-9), ("k", 1e3)] {
        if let Some(rest) = u.strip_prefix(prefix)
            && matches!(rest, "V" | "A" | "W")
        {
            return (rest.to_string(), factor);
        }
    }
    (u.to_string(), 1.0)
}

/// Splits `Name (unit)`, `Name [unit]` or `(unit)` into the name and the unit inside the
/// last bracket pair.
pub fn split_unit(header: &str) -> (&str, Option<&str>) {
    let h = header.trim();
    for (open, close) in [('(', ')'), ('[', ']')] {
        if h.ends_with(close)
            && let Some(i) = h.rfind(open)
        {
            return (h[..i].trim(), Some(h[i + 1..h.len() - 1].trim()));
        }
    }
    (h, None)
}

/// An ISO-8601 timestamp (`2024-03-05T12:34:56.123456789Z`, `±hh:mm` offsets, a space
/// instead of `T`) as (Unix seconds, picoseconds into that second), in UTC. A timestamp
/// without a zone is taken as UTC.
pub fn parse_iso8601(s: &[u8]) -> Option<(i64, i64)> {
    let s = trim(s);
    let num = |b: &[u8]| -> Option<i64> {
        if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(b.iter().fold(0i64, |a, &d| a * 10 + i64::from(d - b'0')))
    };
    if s.len() < 19
        || s[4] != b'-'
        || s[7] != b'-'
        || !matches!(s[10], b'T' | b't' | b' ')
        || s[13] != b':'
        || s[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(&s[0..4])?, num(&s[5..7])?, num(&s[8..10])?);
    let (h, mi, sec) = (num(&s[11..13])?, num(&s[14..16])?, num(&s[17..19])?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut ps = 0i64;
    if let Some(frac) = rest.strip_prefix(b".").or_else(|| rest.strip_prefix(b",")) {
        let n = frac.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let mut text = b"0.".to_vec();
        text.extend_from_slice(&frac[..n]);
        ps = parse_time_ps(&text, 0, false)?;
        rest = &frac[n..];
    }
    let offset_s = match rest {
        b"" | b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), hh @ ..] => {
            let (oh, om) = match hh.len() {
                5 if hh[2] == b':' => (num(&hh[0..2])?, num(&hh[3..5])?),
                4 => (num(&hh[0..2])?, num(&hh[2..4])?),
                2 => (num(hh)?, 0),
                _ => return None,
            };
            let o = oh * 3600 + om * 60;
            if *sign == b'-' { -o } else { o }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    Some((days * 86_400 + h * 3600 + mi * 60 + sec - offset_s, ps))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_exact_picoseconds() {
        assert_eq!(parse_time_ps(b"-1.000000E-03", 0, false), Some(-1_000_000_000));
        assert_eq!(parse_time_ps(b"+998.000E-06", 0, false), Some(998_000_000));
        assert_eq!(parse_time_ps(b" 0.00000200000", 0, false), Some(2_000_000));
        assert_eq!(parse_time_ps(b"1725.700067", 0, false), Some(1_725_700_067_000_000));
        assert_eq!(parse_time_ps(b"-0,50000000", -3, true), Some(-500_000_000));
        assert_eq!(parse_time_ps(b"-0.34927999", -3, false), Some(-349_279_990));
        // 15 decimals round to the nearest picosecond.
        assert_eq!(parse_time_ps(b"8.006644551999999", 0, false), Some(8_006_644_552_000));
        assert_eq!(parse_time_ps(b"-0", 0, false), Some(0));
        assert_eq!(parse_time_ps(b"250", -9, false), Some(250_000));
        assert_eq!(parse_time_ps(b"1e400", 0, false), None);
        assert_eq!(parse_time_ps(b"99999999999", 0, false), None);
        for bad in [&b""[..], b"-", b".", b"1.2.3", b"1e", b"abc", b"1x", b"0x3F"] {
            assert_eq!(parse_time_ps(bad, 0, false), None, "{bad:?}");
        }
    }

    #[test]
    fn values_parse_like_scopes_write_them() {
        assert_eq!(parse_value(b"+31.500101E-03", false), Cell::Number(31.500101e-3));
        assert_eq!(parse_value(b"-0.0E+00", false), Cell::Number(-0.0));
        assert_eq!(parse_value(b"2,98623600", true), Cell::Number(2.986236));
        assert_eq!(parse_value("-∞".as_bytes(), false), Cell::Number(f64::NEG_INFINITY));
        assert_eq!(parse_value("∞".as_bytes(), false), Cell::Number(f64::INFINITY));
        assert_eq!(parse_value(b"  ", false), Cell::Blank);
        assert_eq!(parse_value(b"0x3F", false), Cell::Invalid);
        assert_eq!(parse_value(b"1,5", false), Cell::Invalid);
        assert!(matches!(parse_value(b"NaN", false), Cell::Number(v) if v.is_nan()));
    }

    #[test]
    fn units_normalise_to_si() {
        assert_eq!(time_unit_exp("second"), Some(0));
        assert_eq!(time_unit_exp("us"), Some(-6));
        assert_eq!(time_unit_exp("nanoseconds"), Some(-9));
        assert_eq!(value_unit("mV"), ("V".to_string(), 1e-3));
        assert_eq!(value_unit("Volt"), ("V".to_string(), 1.0));
        assert_eq!(value_unit("V DC"), ("V DC".to_string(), 1.0));
        assert_eq!(split_unit("Time (ms)"), ("Time", Some("ms")));
        assert_eq!(split_unit("Time [s]"), ("Time", Some("s")));
        assert_eq!(split_unit("(V)"), ("", Some("V")));
        assert_eq!(split_unit("Channel 0"), ("Channel 0", None));
    }

    #[test]
    fn iso8601_to_unix_seconds() {
        assert_eq!(parse_iso8601(b"1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(parse_iso8601(b"2024-03-05T12:34:56.123456789Z"), Some((1_709_642_096, 123_456_789_000)));
        assert_eq!(parse_iso8601(b"2024-03-05T14:34:56.5+02:00"), Some((1_709_642_096, 500_000_000_000)));
        assert_eq!(parse_iso8601(b"2024-03-05 12:34:56"), Some((1_709_642_096, 0)));
        assert_eq!(parse_iso8601(b"2024-13-05T12:34:56"), None);
        assert_eq!(parse_iso8601(b"0.125"), None);
    }
}
