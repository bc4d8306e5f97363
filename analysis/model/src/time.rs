//! Time: `i64` picoseconds relative to a source's origin, and the origin itself.

/// Picoseconds relative to the origin of the source that holds them.
pub type Ps = i64;

pub const PS_PER_NS: Ps = 1_000;
pub const PS_PER_US: Ps = 1_000_000;
pub const PS_PER_S: Ps = 1_000_000_000_000;

/// The source clock's value at time zero, kept exactly (whole seconds plus picoseconds) so
/// that `start_s` of an ftrace file prints the tracer's own seconds.
///
/// Kept split because a host up for more than ~106 days has ftrace timestamps whose
/// picosecond value no longer fits in an `i64`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClockOrigin {
    pub secs: i64,
    /// Sub-second part, `0..PS_PER_S`.
    pub ps: i64,
}

impl ClockOrigin {
    pub fn from_secs_ps(secs: i64, ps: i64) -> Self {
        let secs = secs + ps.div_euclid(PS_PER_S);
        Self { secs, ps: ps.rem_euclid(PS_PER_S) }
    }

    /// The source clock value of `t` (relative picoseconds) as `f64` seconds: for display
    /// and reports only, never for storage.
    pub fn to_source_seconds(self, t: Ps) -> f64 {
        let extra = self.ps + t;
        let secs = self.secs + extra.div_euclid(PS_PER_S);
        let frac = extra.rem_euclid(PS_PER_S);
        secs as f64 + frac as f64 / PS_PER_S as f64
    }
}

/// Formats a picosecond duration with a unit chosen for a human (`1.234 ms`).
pub fn format_seconds(ps: Ps) -> String {
    let a = ps.unsigned_abs() as f64;
    let sign = if ps < 0 { "-" } else { "" };
    if a >= PS_PER_S as f64 {
        format!("{sign}{:.6} s", a / PS_PER_S as f64)
    } else if a >= 1e9 {
        format!("{sign}{:.3} ms", a / 1e9)
    } else if a >= 1e6 {
        format!("{sign}{:.3} us", a / 1e6)
    } else if a >= 1e3 {
        format!("{sign}{:.3} ns", a / 1e3)
    } else {
        format!("{sign}{a} ps")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_normalises_and_converts_exactly() {
        let o = ClockOrigin::from_secs_ps(852_655, 67_718_000_000);
        assert_eq!(o.to_source_seconds(0), 852_655.067718);
        let o = ClockOrigin::from_secs_ps(10, -1);
        assert_eq!(o, ClockOrigin { secs: 9, ps: PS_PER_S - 1 });
        assert_eq!(o.to_source_seconds(1), 10.0);
    }

    #[test]
    fn durations_print_with_units() {
        assert_eq!(format_seconds(1_500_000), "1.500 us");
        assert_eq!(format_seconds(-2 * PS_PER_S), "-2.000000 s");
        assert_eq!(format_seconds(999), "999 ps");
    }
}
