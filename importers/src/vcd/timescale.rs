//! `$timescale` values (`1 ns`, `1ns`, `100 ps`, `0.1ps`, `10 us`) to picoseconds.

use latscope_model::Ps;

/// Ticks to picoseconds as an exact ratio, so fractional timescales (`0.1ps`, `1 fs`)
/// round once per value instead of drifting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickScale {
    mul: i128,
    div: i128,
}

impl TickScale {
    pub const NS: TickScale = TickScale { mul: 1000, div: 1 };

    pub fn apply(self, ticks: u64) -> Ps {
        // Saturates: a hostile timescale times a huge tick count must not overflow.
        let v = i128::from(ticks).saturating_mul(self.mul);
        (v.saturating_add(self.div / 2) / self.div).min(i128::from(Ps::MAX)) as Ps
    }

    /// `apply` for a signed count (`$timezero` may be negative).
    pub fn apply_signed(self, ticks: i64) -> Ps {
        let magnitude = self.apply(ticks.unsigned_abs());
        if ticks < 0 { -magnitude } else { magnitude }
    }
}

/// The largest tick accepted: 1000 s. IEEE 1364 allows 1, 10 or 100 of a unit up to 1 s;
/// a larger (or overflowing) value is a corrupt or hostile header.
pub const MAX_TICK_PS: i128 = 1_000 * 1_000_000_000_000;

/// Parses a timescale; `None` for zero, negative or unknown units, and for ticks longer
/// than [`MAX_TICK_PS`].
pub fn parse_timescale(text: &str) -> Option<TickScale> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim();
    let exp: i32 = match unit {
        "s" => 12,
        "ms" => 9,
        "us" => 6,
        "ns" => 3,
        "ps" => 0,
        "fs" => -3,
        "as" => -6,
        "zs" => -9,
        _ => return None,
    };
    let number = if number.is_empty() { "1" } else { number };
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let digits = format!("{int}{frac}");
    let mantissa: i128 = digits.parse().ok()?;
    if mantissa == 0 || frac.len() > 18 {
        return None;
    }
    let exp = exp - frac.len() as i32;
    let scale = if exp >= 0 {
        TickScale { mul: mantissa.checked_mul(10i128.checked_pow(exp as u32)?)?, div: 1 }
    } else {
        TickScale { mul: mantissa, div: 10i128.checked_pow((-exp) as u32)? }
    };
    (scale.mul / scale.div <= MAX_TICK_PS).then_some(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timescales_in_all_spellings() {
        assert_eq!(parse_timescale("1 ns").map(|s| s.apply(3)), Some(3000));
        assert_eq!(parse_timescale("1ns").map(|s| s.apply(3)), Some(3000));
        assert_eq!(parse_timescale("\t1s").map(|s| s.apply(2)), Some(2_000_000_000_000));
        assert_eq!(parse_timescale("100 ps").map(|s| s.apply(12500)), Some(1_250_000));
        assert_eq!(parse_timescale("0.1ps").map(|s| s.apply(15)), Some(2), "1.5 ps rounds to 2");
        assert_eq!(parse_timescale("1 fs").map(|s| s.apply(1_499)), Some(1));
        assert_eq!(parse_timescale("10 us").map(|s| s.apply_signed(-2)), Some(-20_000_000));
        assert_eq!(parse_timescale("0ps"), None);
        assert_eq!(parse_timescale("1 parsec"), None);
        assert_eq!(parse_timescale("100 s").map(|s| s.apply(1)), Some(100_000_000_000_000));
        assert_eq!(parse_timescale("1000000000000000000000000000000000000000 s"), None);
        assert_eq!(parse_timescale("99999999999999999999999999 s"), None);
        assert_eq!(parse_timescale("10000 s"), None);
        let tiny = parse_timescale("0.000000000000000001 zs").unwrap();
        assert_eq!(tiny.apply(u64::MAX), 0);
    }
}
