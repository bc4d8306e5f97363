//! The `metadata` member of a `.sr` file: a GLib key file (INI) with a `[device 1]` group,
//! and sigrok's samplerate strings.

/// The device group of a session's metadata, keys trimmed, in file order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DeviceMetadata {
    pub entries: Vec<(String, String)>,
}

impl DeviceMetadata {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Parses the key file and returns the first group other than `global` (libsigrok only
/// ever writes `device 1`). Keys and values are trimmed; a line is split at its first `=`
/// only, because channel names may contain `=`-free but space-rich text (`SCL analog`).
pub fn parse_metadata(text: &str) -> Result<DeviceMetadata, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut device: Option<DeviceMetadata> = None;
    let mut in_device = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(group) = line.strip_prefix('[') {
            let Some(name) = group.strip_suffix(']') else {
                return Err(format!("metadata line {}: unterminated group header", i + 1));
            };
            let is_device = name.trim() != "global";
            if is_device && device.is_some() {
                // A second device group: libsigrok never writes one; keep the first.
                in_device = false;
                continue;
            }
            in_device = is_device;
            if is_device {
                device = Some(DeviceMetadata::default());
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("metadata line {}: expected key=value, found {line:?}", i + 1));
        };
        if in_device && let Some(d) = device.as_mut() {
            d.entries.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    device.ok_or_else(|| "metadata has no device group".to_owned())
}

/// `sr_parse_sizestring()`: `DIGITS[.DIGITS] [k|m|g|t|p|e][Hz]`, where `m`/`M` is mega.
///
/// The fraction is computed exactly in integers and truncated, where libsigrok uses a
/// `double` (so `1.000498 MHz` is 1 000 498 Hz here and 1 000 497 Hz there).
pub fn parse_samplerate(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
    if int_len == 0 {
        return Err(format!("samplerate {s:?} does not start with a number"));
    }
    let int: u64 = s[..int_len].parse().map_err(|_| format!("samplerate {s:?} is too large"))?;
    let mut rest = &s[int_len..];
    let mut frac_digits = "";
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        frac_digits = &r[..n];
        rest = &r[n..];
    }
    let rest = rest.trim_start();
    let (mult, rest) = match rest.chars().next() {
        Some('k' | 'K') => (1_000u64, &rest[1..]),
        Some('m' | 'M') => (1_000_000, &rest[1..]),
        Some('g' | 'G') => (1_000_000_000, &rest[1..]),
        Some('t' | 'T') => (1_000_000_000_000, &rest[1..]),
        Some('p' | 'P') => (1_000_000_000_000_000, &rest[1..]),
        Some('e' | 'E') => (1_000_000_000_000_000_000, &rest[1..]),
        _ => (1, rest),
    };
    if !(rest.is_empty() || rest.eq_ignore_ascii_case("hz")) {
        return Err(format!("samplerate {s:?} has an unknown unit {rest:?}"));
    }
    let whole = int.checked_mul(mult).ok_or_else(|| format!("samplerate {s:?} is too large"))?;
    // Exact fraction: digits * mult / 10^len, truncated. Digits beyond 19 cannot matter.
    let digits = &frac_digits[..frac_digits.len().min(19)];
    let frac = if digits.is_empty() {
        0
    } else {
        let num: u128 = digits.parse().unwrap_or(0);
        (num * u128::from(mult) / 10u128.pow(digits.len() as u32)) as u64
    };
    whole.checked_add(frac).ok_or_else(|| format!("samplerate {s:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samplerates_as_libsigrok_reads_them() {
        assert_eq!(parse_samplerate("1 MHz"), Ok(1_000_000));
        assert_eq!(parse_samplerate("2 mHz"), Ok(2_000_000), "m is mega in sigrok");
        assert_eq!(parse_samplerate("1MHz"), Ok(1_000_000));
        assert_eq!(parse_samplerate("12.500000 MHz"), Ok(12_500_000));
        assert_eq!(parse_samplerate("31.5 kHz"), Ok(31_500));
        assert_eq!(parse_samplerate("40000000"), Ok(40_000_000));
        assert_eq!(parse_samplerate("250k"), Ok(250_000));
        assert_eq!(parse_samplerate("1.5"), Ok(1), "no multiplier: fraction truncated");
        assert_eq!(parse_samplerate("1.515151 MHz"), Ok(1_515_151));
        assert!(parse_samplerate("3 foo").is_err());
        assert!(parse_samplerate("MHz").is_err());
        assert!(parse_samplerate("99999999999999999999 GHz").is_err());
    }

    #[test]
    fn key_file_dialects() {
        let v1 = "[global]\nsigrok version = 0.2.0\n[device 1]\ndriver = fx2lafw\n capturefile = logic-1\nprobe1 = MOSI\n trigger2 = 0\n";
        let d = parse_metadata(v1).unwrap();
        assert_eq!(d.get("capturefile"), Some("logic-1"));
        assert_eq!(d.get("probe1"), Some("MOSI"));
        assert_eq!(d.get("trigger2"), Some("0"));
        assert_eq!(d.get("sigrok version"), None, "global keys are not device keys");
        let v2 = "\u{feff}[global]\nsigrok version=0.5.0\n\n[device 1]\nanalog9=SCL analog\nprobe1=a=b\n";
        let d = parse_metadata(v2).unwrap();
        assert_eq!(d.get("analog9"), Some("SCL analog"));
        assert_eq!(d.get("probe1"), Some("a=b"));
        assert!(parse_metadata("[global]\nx=1\n").is_err());
        assert!(parse_metadata("[device 1]\nnot a pair\n").is_err());
    }
}
