//! Where a source sits on the common timeline: its alignment, kept beside the source's data
//! rather than in it, so aligning (or un-aligning) a source never touches or copies its
//! columns, and analyses borrow sources with whatever placement the caller chose.
//!
//! The mapping is `t_common = t + offset + t * drift_ppm / 1e6` (source-relative
//! picoseconds in, common-timeline picoseconds out); [`Placement::from_common`] is its
//! inverse. Both are defined here once; every analysis, report and view uses them.

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
