//! Analog tracks: uniformly sampled `f32` values with a min/max pyramid for drawing.

use super::time::Ps;

/// Uniform tracks: sample `i` is at `t0 + round(i * dt_ps)`. `dt_ps` is fractional because
/// sample rates such as 3 MHz have no whole-picosecond period, and rounding it would drift.
///
/// Sample-and-hold tracks (VCD vectors and reals, which change at arbitrary times) carry
/// the time of each sample in `times` instead; `t0`/`dt_ps` are then unused.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnalogTrack {
    pub name: String,
    pub unit: String,
    pub t0: Ps,
    pub dt_ps: f64,
    pub samples: Vec<f32>,
    /// Per-sample times for sample-and-hold tracks; empty for uniform ones.
    pub times: Vec<Ps>,
    /// Level k holds (min, max) over blocks of `PYRAMID_FANOUT^(k+1)` samples.
    pyramid: Vec<Vec<(f32, f32)>>,
}

pub const PYRAMID_FANOUT: usize = 16;

impl AnalogTrack {
    pub fn new(
        name: impl Into<String>,
        unit: impl Into<String>,
        t0: Ps,
        dt_ps: f64,
        samples: Vec<f32>,
    ) -> Self {
        let mut track = Self {
            name: name.into(),
            unit: unit.into(),
            t0,
            dt_ps,
            samples,
            times: Vec::new(),
            pyramid: Vec::new(),
        };
        track.build_pyramid();
        track
    }

    /// A sample-and-hold track: `samples[i]` holds from `times[i]` to the next change.
    /// `times` must be sorted and as long as `samples`.
    pub fn with_times(
        name: impl Into<String>,
        unit: impl Into<String>,
        times: Vec<Ps>,
        samples: Vec<f32>,
    ) -> Self {
        debug_assert_eq!(times.len(), samples.len());
        let t0 = times.first().copied().unwrap_or(0);
        let mut track = Self {
            name: name.into(),
            unit: unit.into(),
            t0,
            dt_ps: 0.0,
            samples,
            times,
            pyramid: Vec::new(),
        };
        track.build_pyramid();
        track
    }

    pub fn is_uniform(&self) -> bool {
        self.times.is_empty()
    }

    fn build_pyramid(&mut self) {
        self.pyramid.clear();
        let mut level: Vec<(f32, f32)> = self
            .samples
            .chunks(PYRAMID_FANOUT)
            .map(|c| c.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v))))
            .collect();
        while level.len() > 1 {
            let next = level
                .chunks(PYRAMID_FANOUT)
                .map(|c| {
                    c.iter()
                        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &(a, b)| (lo.min(a), hi.max(b)))
                })
                .collect();
            self.pyramid.push(std::mem::replace(&mut level, next));
        }
        self.pyramid.push(level);
    }

    pub fn time_of(&self, i: usize) -> Ps {
        if let Some(&t) = self.times.get(i) {
            return t;
        }
        self.t0 + (i as f64 * self.dt_ps).round() as Ps
    }

    pub fn end(&self) -> Ps {
        self.time_of(self.samples.len().saturating_sub(1))
    }

    /// (min, max) of the samples in `[from, to)` using the coarsest pyramid level that fits.
    pub fn min_max(&self, from: usize, to: usize) -> Option<(f32, f32)> {
        let to = to.min(self.samples.len());
        if from >= to {
            return None;
        }
        let mut lo = f32::INFINITY;
        let mut hi = f32::NEG_INFINITY;
        let mut i = from;
        while i < to {
            // Largest aligned block starting at i that ends by `to`.
            let mut block = 1usize;
            let mut level = None;
            for (k, _) in self.pyramid.iter().enumerate() {
                let size = PYRAMID_FANOUT.pow(k as u32 + 1);
                if i.is_multiple_of(size) && i + size <= to {
                    block = size;
                    level = Some(k);
                } else {
                    break;
                }
            }
            let (a, b) = match level {
                Some(k) => self.pyramid[k][i / block],
                None => (self.samples[i], self.samples[i]),
            };
            lo = lo.min(a);
            hi = hi.max(b);
            i += block;
        }
        Some((lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_matches_a_scan() {
        let samples: Vec<f32> = (0..10_000).map(|i| ((i * 7919) % 1000) as f32).collect();
        let t = AnalogTrack::new("V", "V", 0, 333_333.333, samples.clone());
        for (a, b) in [(0, 10_000), (17, 4099), (256, 512), (9_999, 10_000), (5, 6)] {
            let scan = samples[a..b]
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
            assert_eq!(t.min_max(a, b), Some(scan));
        }
        assert_eq!(t.time_of(3), 1_000_000);
        assert_eq!(t.min_max(5, 5), None);
    }
}
