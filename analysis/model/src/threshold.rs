//! Analog → digital: a Schmitt trigger over an [`AnalogTrack`] (a scope probe on a GPIO
//! becomes a digital channel whose edges the latency rules can pair).
//!
//! - [`Threshold::Auto`]: the level is midway between the 5th and 95th percentile of the
//!   finite samples (percentiles by linear interpolation between closest ranks, as
//!   numpy's default), so ringing and spikes do not move it; the hysteresis is
//!   [`DEFAULT_AUTO_HYSTERESIS`] (10 %) of that 5–95 % span, wide enough to ignore the
//!   noise on a clean logic level and narrow enough to keep every real edge.
//! - [`Threshold::AutoHysteresis`]: the same level with another fraction.
//! - [`Threshold::Fixed`]: a level and an absolute hysteresis in the track's unit.
//!
//! The output goes high at the first sample `>= level + h/2` and low at the first sample
//! `< level - h/2`; the edge is stamped with that sample's time (no interpolation, the same
//! answer a logic analyzer sampling at the scope's rate would give). The first finite
//! sample starts high when it is `>= level`. NaN samples (CSV gaps) give level 2
//! (unknown) until the next finite sample, which restarts the trigger the same way.

use super::analog::AnalogTrack;
use super::digital::DigitalTrack;

/// Hysteresis of [`Threshold::Auto`] as a fraction of the 5th–95th percentile span.
pub const DEFAULT_AUTO_HYSTERESIS: f64 = 0.1;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// Midway between the 5th and 95th percentile, hysteresis 10 % of their span.
    Auto,
    /// Midway between the 5th and 95th percentile, hysteresis `fraction` of their span.
    AutoHysteresis { fraction: f64 },
    /// `level` with an absolute `hysteresis` band (total width) around it.
    Fixed { level: f64, hysteresis: f64 },
}

/// Percentile `p` in `0..=1` of sorted values, linear between closest ranks.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let pos = p * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl Threshold {
    /// The (level, hysteresis) this threshold means for `track`; `None` when an automatic
    /// threshold has no finite sample to look at.
    pub fn resolve(self, track: &AnalogTrack) -> Option<(f64, f64)> {
        let fraction = match self {
            Threshold::Fixed { level, hysteresis } => return Some((level, hysteresis.abs())),
            Threshold::Auto => DEFAULT_AUTO_HYSTERESIS,
            Threshold::AutoHysteresis { fraction } => fraction.abs(),
        };
        let mut v: Vec<f64> = track.samples.iter().filter(|s| s.is_finite()).map(|&s| f64::from(s)).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let p5 = percentile(&v, 0.05);
        let p95 = percentile(&v, 0.95);
        Some(((p5 + p95) / 2.0, (p95 - p5) * fraction))
    }
}

impl AnalogTrack {
    /// A digital track with the same name from this analog track (see the module doc).
    pub fn to_digital(&self, threshold: Threshold) -> DigitalTrack {
        let Some((level, hysteresis)) = threshold.resolve(self) else {
            let mut d = DigitalTrack::new(self.name.clone(), 2);
            d.end = self.end();
            return d;
        };
        let high = level + hysteresis / 2.0;
        let low = level - hysteresis / 2.0;
        let fresh = |v: f64| u8::from(v >= level);
        let first = self.samples.first().map_or(2, |&v| if v.is_nan() { 2 } else { fresh(f64::from(v)) });
        let mut d = DigitalTrack::new(self.name.clone(), first);
        let mut state = first;
        for (i, &v) in self.samples.iter().enumerate() {
            let v = f64::from(v);
            state = if v.is_nan() {
                2
            } else {
                match state {
                    0 if v >= high => 1,
                    1 if v < low => 0,
                    2 => fresh(v),
                    s => s,
                }
            };
            d.push(self.time_of(i), state);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(samples: &[f32]) -> AnalogTrack {
        AnalogTrack::new("GPIO", "V", 1_000, 10.0, samples.to_vec())
    }

    #[test]
    fn auto_is_midway_between_the_5th_and_95th_percentile() {
        let t = track(&(0..=100).map(|i| i as f32).collect::<Vec<_>>());
        assert_eq!(Threshold::Auto.resolve(&t), Some((50.0, 9.0)));
        // Percentiles interpolate: [0, 10] → p5 = 0.5, p95 = 9.5.
        assert_eq!(
            Threshold::AutoHysteresis { fraction: 0.5 }.resolve(&track(&[0.0, 10.0])),
            Some((5.0, 4.5))
        );
        // Spikes beyond the 5–95 % range do not move the level.
        let mut s = vec![0.0f32; 50];
        s.extend(vec![3.3f32; 50]);
        s[10] = 100.0;
        s[60] = -100.0;
        let (level, _) = Threshold::Auto.resolve(&track(&s)).unwrap_or_default();
        assert!((level - 1.65).abs() < 1e-6, "{level}");
        assert_eq!(Threshold::Auto.resolve(&track(&[f32::NAN])), None);
    }

    #[test]
    fn hysteresis_ignores_noise_inside_the_band() {
        // Level 1.5, band 1.0..2.0.
        let samples = [0.0, 1.9, 1.2, 2.0, 1.1, 1.0, 0.99, 1.99, 3.0];
        let d = track(&samples).to_digital(Threshold::Fixed { level: 1.5, hysteresis: 1.0 });
        assert_eq!(d.initial, 0);
        assert_eq!(d.times().collect::<Vec<_>>(), [1_030, 1_060, 1_080]);
        assert_eq!(d.levels(), [1, 0, 1]);
        assert_eq!(d.end, 1_080);
        // Without hysteresis every crossing of the level is an edge.
        let d = track(&samples).to_digital(Threshold::Fixed { level: 1.5, hysteresis: 0.0 });
        assert_eq!(d.times().collect::<Vec<_>>(), [1_010, 1_020, 1_030, 1_040, 1_070]);
    }

    #[test]
    fn auto_threshold_on_a_square_wave() {
        let samples: Vec<f32> = (0..40).map(|i| if (i / 10) % 2 == 0 { 0.05 } else { 3.25 }).collect();
        let d = track(&samples).to_digital(Threshold::Auto);
        assert_eq!(
            (d.initial, d.times().collect::<Vec<_>>(), d.levels().to_vec()),
            (0, vec![1_100, 1_200, 1_300], vec![1, 0, 1])
        );
    }

    #[test]
    fn gaps_are_unknown_and_restart_the_trigger() {
        let d =
            track(&[3.0, f32::NAN, 1.6, 0.0]).to_digital(Threshold::Fixed { level: 1.5, hysteresis: 1.0 });
        assert_eq!(
            (d.initial, d.times().collect::<Vec<_>>(), d.levels().to_vec()),
            (1, vec![1_010, 1_020, 1_030], vec![2, 1, 0])
        );
        let d = track(&[f32::NAN, 0.0]).to_digital(Threshold::Auto);
        assert_eq!((d.initial, d.levels().to_vec()), (2, vec![1]));
        let d = track(&[]).to_digital(Threshold::Auto);
        assert_eq!((d.initial, d.transitions()), (2, 0));
    }
}
