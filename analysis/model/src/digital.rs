//! Digital tracks: a channel stored as its initial level and a sorted list of transitions,
//! never per sample, so memory follows the number of edges.

use super::time::Ps;

/// Levels: 0 and 1, plus 2 for X (unknown) and 3 for Z (high impedance) from VCD.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DigitalTrack {
    pub name: String,
    pub initial: u8,
    /// Time of each level change, sorted.
    pub times: Vec<Ps>,
    /// Level after each change; `levels[i] != level before times[i]`.
    pub levels: Vec<u8>,
    /// Time the capture of this channel ends (its last sample).
    pub end: Ps,
}

impl DigitalTrack {
    pub fn new(name: impl Into<String>, initial: u8) -> Self {
        Self { name: name.into(), initial, ..Self::default() }
    }

    /// Records the level at `t`; only changes are stored. Times must not decrease.
    pub fn push(&mut self, t: Ps, level: u8) {
        let current = self.levels.last().copied().unwrap_or(self.initial);
        if level != current {
            self.times.push(t);
            self.levels.push(level);
        }
        self.end = self.end.max(t);
    }

    /// The number of level changes after the initial level.
    pub fn transitions(&self) -> usize {
        self.times.len()
    }

    /// The level at time `t`.
    pub fn level_at(&self, t: Ps) -> u8 {
        match self.times.partition_point(|&x| x <= t) {
            0 => self.initial,
            i => self.levels[i - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_changes_only() {
        let mut d = DigitalTrack::new("CMD", 0);
        for (t, l) in [(0, 0), (5, 1), (6, 1), (9, 0), (12, 0)] {
            d.push(t, l);
        }
        assert_eq!(d.times, [5, 9]);
        assert_eq!(d.transitions(), 2);
        assert_eq!((d.level_at(4), d.level_at(5), d.level_at(8), d.level_at(100)), (0, 1, 1, 0));
        assert_eq!(d.end, 12);
    }
}
