//! Time: `i64` picoseconds relative to a source's origin, and the origin itself.

/// Picoseconds relative to the origin of the source that holds them.
pub type Ps = i64;

pub const PS_PER_NS: Ps = 1_000;
pub const PS_PER_US: Ps = 1_000_000;
pub const PS_PER_S: Ps = 1_000_000_000_000;

/// A kernel trace clock, as `trace_clock` (or Perfetto's builtin clocks) name it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelClock {
    /// The file does not say (ftrace text): taken to be the clock of any other kernel trace.
    #[default]
    Unnamed,
    Local,
    Global,
    Counter,
    Uptime,
    Perf,
    Mono,
    MonoRaw,
    Boot,
    Tai,
    X86Tsc,
    /// A clock by a name not listed here: the same as no other named clock.
    Other,
}

impl KernelClock {
    /// The clock `trace_clock` calls `name` (`local`, `x86-tsc`, …; Perfetto's `boottime`,
    /// `monotonic`, `monotonic_raw` too).
    pub fn from_name(name: &str) -> KernelClock {
        match name.trim().trim_matches(['[', ']']) {
            "" => KernelClock::Unnamed,
            "local" => KernelClock::Local,
            "global" => KernelClock::Global,
            "counter" => KernelClock::Counter,
            "uptime" => KernelClock::Uptime,
            "perf" => KernelClock::Perf,
            "mono" | "monotonic" | "monotonic_coarse" => KernelClock::Mono,
            "mono_raw" | "monotonic_raw" => KernelClock::MonoRaw,
            "boot" | "boottime" => KernelClock::Boot,
            "tai" => KernelClock::Tai,
            "x86-tsc" => KernelClock::X86Tsc,
            _ => KernelClock::Other,
        }
    }

    /// The name `trace_clock` uses (empty when unnamed, `other` for an unknown one).
    pub fn name(self) -> &'static str {
        match self {
            KernelClock::Unnamed => "",
            KernelClock::Local => "local",
            KernelClock::Global => "global",
            KernelClock::Counter => "counter",
            KernelClock::Uptime => "uptime",
            KernelClock::Perf => "perf",
            KernelClock::Mono => "mono",
            KernelClock::MonoRaw => "mono_raw",
            KernelClock::Boot => "boot",
            KernelClock::Tai => "tai",
            KernelClock::X86Tsc => "x86-tsc",
            KernelClock::Other => "other",
        }
    }

    /// Whether two traces stamped by these clocks can be compared by their values.
    pub fn same_as(self, other: KernelClock) -> bool {
        match (self, other) {
            (KernelClock::Unnamed, _) | (_, KernelClock::Unnamed) => true,
            (KernelClock::Other, _) | (_, KernelClock::Other) => false,
            (a, b) => a == b,
        }
    }
}

/// What kind of clock a source's times were read from: which other sources' times can be
/// compared with them value for value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockDomain {
    /// The capture's own time base (a logic analyzer's or a simulation's time zero, a
    /// waveform's): comparable with no other source.
    #[default]
    Own,
    /// A kernel trace clock (ftrace, trace.dat, Perfetto's ftrace bundles): two traces of one
    /// machine on the same clock read the same value at the same instant.
    Kernel(KernelClock),
    /// Wall-clock time since the Unix epoch (UTC).
    Unix,
}

impl ClockDomain {
    /// Whether times of these two domains can be compared by their values.
    pub fn same_as(self, other: ClockDomain) -> bool {
        match (self, other) {
            (ClockDomain::Kernel(a), ClockDomain::Kernel(b)) => a.same_as(b),
            (ClockDomain::Unix, ClockDomain::Unix) => true,
            _ => false,
        }
    }

    /// How people read it: `kernel clock local`, `own clock`, `wall clock (UTC)`.
    pub fn describe(self) -> String {
        match self {
            ClockDomain::Own => "its own clock".into(),
            ClockDomain::Kernel(KernelClock::Unnamed) => "kernel trace clock".into(),
            ClockDomain::Kernel(k) => format!("kernel trace clock {}", k.name()),
            ClockDomain::Unix => "wall clock (UTC)".into(),
        }
    }
}

/// The source clock's value at time zero, kept exactly (whole seconds plus picoseconds) so
/// that `start_s` of an ftrace file prints the tracer's own seconds, and the kind of clock
/// it is (sources on the same kind of clock are placed by their clock values).
///
/// Kept split because a host up for more than ~106 days has ftrace timestamps whose
/// picosecond value no longer fits in an `i64`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClockOrigin {
    pub secs: i64,
    /// Sub-second part, `0..PS_PER_S`.
    pub ps: i64,
    #[serde(default)]
    pub domain: ClockDomain,
}

impl ClockOrigin {
    /// An origin on the source's own clock ([`ClockDomain::Own`]); see [`Self::on`].
    pub fn from_secs_ps(secs: i64, ps: i64) -> Self {
        let secs = secs + ps.div_euclid(PS_PER_S);
        Self { secs, ps: ps.rem_euclid(PS_PER_S), domain: ClockDomain::Own }
    }

    /// The same origin, read from a clock of `domain`.
    pub fn on(self, domain: ClockDomain) -> Self {
        Self { domain, ..self }
    }

    /// How far `other`'s time zero lies after this one's, ps, when both clocks can be
    /// compared by value (the same [`ClockDomain`]); `None` otherwise or beyond `i64`.
    pub fn offset_to(self, other: ClockOrigin) -> Option<Ps> {
        if !self.domain.same_as(other.domain) {
            return None;
        }
        let secs = other.secs.checked_sub(self.secs)?;
        secs.checked_mul(PS_PER_S)?.checked_add(other.ps - self.ps)
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
        assert_eq!(o, ClockOrigin { secs: 9, ps: PS_PER_S - 1, domain: ClockDomain::Own });
        assert_eq!(o.to_source_seconds(1), 10.0);
    }

    #[test]
    fn origins_on_one_kind_of_clock_compare_by_value() {
        let kernel = |c| ClockDomain::Kernel(c);
        let a = ClockOrigin::from_secs_ps(470, 0).on(kernel(KernelClock::Unnamed));
        let b = ClockOrigin::from_secs_ps(474, 5).on(kernel(KernelClock::Local));
        assert_eq!(a.offset_to(b), Some(4 * PS_PER_S + 5));
        assert_eq!(b.offset_to(a), Some(-4 * PS_PER_S - 5));
        let tsc = ClockOrigin::from_secs_ps(1, 0).on(kernel(KernelClock::X86Tsc));
        assert_eq!(b.offset_to(tsc), None, "local and x86-tsc are different clocks");
        assert_eq!(a.offset_to(tsc), Some(-469 * PS_PER_S), "an unnamed kernel clock is any");
        let own = ClockOrigin::from_secs_ps(0, 0);
        assert_eq!(own.offset_to(own), None, "two captures' own clocks never compare");
        assert_eq!(a.offset_to(own), None);
        let far = ClockOrigin::from_secs_ps(i64::MAX / 2, 0).on(kernel(KernelClock::Local));
        assert_eq!(a.offset_to(far), None, "beyond i64 picoseconds");
        assert_eq!(KernelClock::from_name("boottime"), KernelClock::Boot);
        assert_eq!(kernel(KernelClock::X86Tsc).describe(), "kernel trace clock x86-tsc");
    }

    #[test]
    fn durations_print_with_units() {
        assert_eq!(format_seconds(1_500_000), "1.500 us");
        assert_eq!(format_seconds(-2 * PS_PER_S), "-2.000000 s");
        assert_eq!(format_seconds(999), "999 ps");
    }
}
