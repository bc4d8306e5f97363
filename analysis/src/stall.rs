//! Stall detection: gaps in a periodic stream of occurrences longer than a
//! factor times its median period.

use crate::endpoint::{Edge, edge_times};
use latscope_model::{DigitalTrack, Ps};

/// A stall window: a gap in a periodic stream longer than `factor` x its median period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallWindow {
    pub start: Ps,
    pub end: Ps,
    /// The gap minus the median period.
    pub excess: Ps,
}

/// Stall windows in a sorted list of occurrence times. Returns the median
/// period (the upper median for an even count; 0 with fewer than two times) and the windows.
pub fn stall_windows_in(times: &[Ps], factor: f64) -> (Ps, Vec<StallWindow>) {
    if times.len() < 2 {
        return (0, Vec::new());
    }
    let mut gaps: Vec<Ps> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let mut sorted = gaps.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    let limit = factor * median as f64;
    let windows = times
        .windows(2)
        .zip(gaps.drain(..))
        .filter(|&(_, g)| g as f64 > limit)
        .map(|(w, g)| StallWindow { start: w[0], end: w[1], excess: g - median })
        .collect();
    (median, windows)
}

/// Stall windows between selected edges of a digital track.
pub fn stall_windows(track: &DigitalTrack, edge: Edge, factor: f64) -> (Ps, Vec<StallWindow>) {
    stall_windows_in(&edge_times(track, edge), factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_windows_measure_excess_over_median() {
        let times = [0, 10, 20, 30, 75, 85, 95, 110];
        let (median, w) = stall_windows_in(&times, 1.5);
        assert_eq!(median, 10);
        assert_eq!(w, [StallWindow { start: 30, end: 75, excess: 35 }]);
        let (_, w) = stall_windows_in(&times, 1.4);
        assert_eq!(w.len(), 2);
        assert_eq!(stall_windows_in(&[5], 1.5), (0, Vec::new()));
    }
}
