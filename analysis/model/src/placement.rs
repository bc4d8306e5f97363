//! Where a source sits on the common timeline: its alignment, kept beside the source's data
//! rather than in it, so aligning (or un-aligning) a source never touches or copies its
//! columns, and analyses borrow sources with whatever placement the caller chose.
//!
//! The mapping is `t_common = t + offset + t * drift_ppm / 1e6` (source-relative
//! picoseconds in, common-timeline picoseconds out); [`Placement::from_common`] is its
//! inverse. Both are defined here once; every analysis, report and view uses them.
//!
//! Where a source sits before anyone aligns it is decided by its clock
//! ([`Placement::by_clock`]): a source whose clock is of the same kind as an earlier
//! source's (two ftrace captures of one machine) is placed by its clock values, so the
//! same instant reads the same on both; a source on a clock of its own starts at the
//! common timeline's zero, as its own origin puts it.

use super::source::Source;
use super::time::Ps;

/// A source's alignment onto the common timeline (the reference source has the identity).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Placement {
    /// Common time of the source's relative time zero, ps.
    pub offset: Ps,
    /// How much faster the common clock runs than the source's, parts per million.
    pub drift_ppm: f64,
}

impl Placement {
    /// The identity: the source on its own clock.
    pub const IDENTITY: Placement = Placement { offset: 0, drift_ppm: 0.0 };

    pub fn new(offset: Ps, drift_ppm: f64) -> Self {
        Self { offset, drift_ppm }
    }

    /// Whether this is the identity (offset 0, no drift).
    pub fn is_identity(&self) -> bool {
        self.offset == 0 && self.drift_ppm == 0.0
    }

    /// A source-relative time on the common timeline, rounded to the picosecond.
    pub fn to_common(&self, t: Ps) -> Ps {
        if self.drift_ppm == 0.0 {
            return t + self.offset;
        }
        t + self.offset + (t as f64 * self.drift_ppm / 1e6).round() as Ps
    }

    /// The inverse of [`Placement::to_common`]: a common time in source-relative ps.
    pub fn from_common(&self, c: Ps) -> Ps {
        if self.drift_ppm == 0.0 {
            return c - self.offset;
        }
        ((c - self.offset) as f64 / (1.0 + self.drift_ppm / 1e6)).round() as Ps
    }

    /// Where `source` sits when its clock decides: after the first of `earlier` (sources
    /// already placed) whose clock compares with its own, at the difference of their clock
    /// origins (and with that source's drift: they share one clock); else the identity.
    pub fn by_clock(earlier: &[Placed<'_>], source: &Source) -> Placement {
        earlier
            .iter()
            .find_map(|e| {
                let d = e.source.origin.offset_to(source.origin)?;
                Some(Placement::new(e.placement.to_common(d), e.placement.drift_ppm))
            })
            .unwrap_or_default()
    }

    /// The placements of `sources` (in order) when their clocks decide: the first source on
    /// each kind of clock is the identity, the others on that clock follow it.
    pub fn all_by_clock(sources: &[&Source]) -> Vec<Placement> {
        let mut placed: Vec<Placed<'_>> = Vec::with_capacity(sources.len());
        for s in sources {
            let p = Placement::by_clock(&placed, s);
            placed.push(Placed::new(s, p));
        }
        placed.into_iter().map(|p| p.placement).collect()
    }

    /// [`Placement::to_common`] in `f64`, unrounded: for drawing, where a fraction of a
    /// picosecond still moves a pixel at deep zoom.
    pub fn to_common_f64(&self, t: Ps) -> f64 {
        t as f64 + self.offset as f64 + t as f64 * self.drift_ppm / 1e6
    }

    /// The inverse of [`Placement::to_common_f64`].
    pub fn from_common_f64(&self, c: f64) -> f64 {
        (c - self.offset as f64) / (1.0 + self.drift_ppm / 1e6)
    }
}

/// A borrowed source with its placement: what analyses take. Copying one copies a
/// reference and two numbers, never the trace.
#[derive(Debug, Clone, Copy)]
pub struct Placed<'a> {
    pub source: &'a Source,
    pub placement: Placement,
}

impl<'a> Placed<'a> {
    pub fn new(source: &'a Source, placement: Placement) -> Self {
        Self { source, placement }
    }

    /// `source` on its own clock.
    pub fn unaligned(source: &'a Source) -> Self {
        Self { source, placement: Placement::IDENTITY }
    }

    /// Every source of `sources` on its own clock, in order.
    pub fn all(sources: &'a [Source]) -> Vec<Placed<'a>> {
        sources.iter().map(Placed::unaligned).collect()
    }

    /// Every source of `sources` where its clock places it ([`Placement::all_by_clock`]).
    pub fn by_clock(sources: &'a [Source]) -> Vec<Placed<'a>> {
        let refs: Vec<&Source> = sources.iter().collect();
        sources.iter().zip(Placement::all_by_clock(&refs)).map(|(s, p)| Placed::new(s, p)).collect()
    }

    /// Whether any of `placed` sits elsewhere than its clock puts it (an alignment, or an
    /// offset restored from a session).
    pub fn any_off_clock(placed: &[Placed<'_>]) -> bool {
        (0..placed.len()).any(|i| placed[i].placement != Placement::by_clock(&placed[..i], placed[i].source))
    }

    /// `sources` with `placements` (a missing placement is the identity).
    pub fn with(sources: &'a [Source], placements: &[Placement]) -> Vec<Placed<'a>> {
        sources
            .iter()
            .enumerate()
            .map(|(i, s)| Placed::new(s, placements.get(i).copied().unwrap_or_default()))
            .collect()
    }

    pub fn to_common(&self, t: Ps) -> Ps {
        self.placement.to_common(t)
    }

    pub fn from_common(&self, c: Ps) -> Ps {
        self.placement.from_common(c)
    }
}

impl std::ops::Deref for Placed<'_> {
    type Target = Source;
    fn deref(&self) -> &Source {
        self.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClockDomain, ClockOrigin, KernelClock, PS_PER_S, SourceKind};

    fn source(secs: i64, domain: ClockDomain) -> Source {
        let mut s = Source::new("s", "test", SourceKind::File);
        s.origin = ClockOrigin::from_secs_ps(secs, 0).on(domain);
        s
    }

    #[test]
    fn sources_on_one_kind_of_clock_are_placed_by_their_clock_values() {
        let kernel = ClockDomain::Kernel(KernelClock::Unnamed);
        let (a, b) = (source(470, kernel), source(474, kernel));
        let wave = source(0, ClockDomain::Own);
        let c = source(480, ClockDomain::Kernel(KernelClock::Local));
        let all = Placement::all_by_clock(&[&wave, &a, &b, &wave, &c]);
        let at = |s: i64| Placement::new(s * PS_PER_S, 0.0);
        assert_eq!(all, [Placement::IDENTITY, Placement::IDENTITY, at(4), Placement::IDENTITY, at(10)]);
        // A source following one that was aligned shares its clock, so its alignment too.
        let moved = Placement::new(-3 * PS_PER_S, 100.0);
        let p = Placement::by_clock(&[Placed::new(&a, moved)], &b);
        assert_eq!(p, Placement::new(moved.to_common(4 * PS_PER_S), 100.0));
        assert_eq!(p.to_common(0), moved.to_common(4 * PS_PER_S));
        let sources = [a, b];
        assert!(!Placed::any_off_clock(&Placed::by_clock(&sources)));
        assert!(Placed::any_off_clock(&Placed::all(&sources)), "b on its own origin is 4 s off");
    }

    #[test]
    fn common_time_round_trips_with_and_without_drift() {
        let p = Placement::new(400, 0.0);
        assert_eq!((p.to_common(10), p.from_common(410)), (410, 10));
        let p = Placement::new(-3_000_000, 1e5);
        for t in [0, 1000, 123_456_789, -5_000] {
            assert_eq!(p.from_common(p.to_common(t)), t);
        }
        // 1e5 ppm = 10 %: 1000 ps of the source are 1100 ps of the common clock.
        assert_eq!(p.to_common(1000), 1000 - 3_000_000 + 100);
        assert!((p.to_common_f64(1000) - p.to_common(1000) as f64).abs() < 1.0);
        assert!((p.from_common_f64(p.to_common_f64(777)) - 777.0).abs() < 1e-6);
        assert!(Placement::default().is_identity() && !p.is_identity());
    }
}
