//! Digital tracks: a channel's level changes, and the sample clock of sampled captures.
//!
//! A track stores its changes' times either in picoseconds (8 bytes each: VCD, CSV, the
//! simulator) or, for a sampled capture, as 32-bit sample numbers of its [`SampleClock`]
//! (4 bytes each). Logic analyzers' captures hold tens of millions of changes, so the
//! second halves what they cost; every reader goes through the methods below and sees
//! picoseconds either way. The changes are `SharedVec`s, so a clone of a growing track (a
//! live snapshot's) shares them.

use super::time::{PS_PER_S, Ps};
use latscope_shared::SharedVec;

/// Levels: 0 and 1, plus 2 for X (unknown) and 3 for Z (high impedance) from VCD.
#[derive(Debug, Clone, Default)]
pub struct DigitalTrack {
    pub name: String,
    pub initial: u8,
    times: Times,
    /// Level after each change; `levels[i] != level before change i`.
    levels: SharedVec<u8>,
    /// Time the capture of this channel ends (its last sample).
    pub end: Ps,
}

/// A capture's sample clock: sample `i` is at `i / rate` seconds, rounded to the nearest
/// picosecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleClock {
    rate: u64,
    /// The period in whole picoseconds when the rate divides 1 THz (every common rate
    /// does): times are then a multiplication, exactly what the rounded division gives.
    step: Option<u64>,
}

impl SampleClock {
    /// A clock of `rate` samples per second; 0 puts every sample at 0.
    pub fn new(rate: u64) -> Self {
        let ps = PS_PER_S as u64;
        Self { rate, step: (rate != 0 && ps.is_multiple_of(rate)).then(|| ps / rate) }
    }

    pub fn rate(self) -> u64 {
        self.rate
    }

    /// The time of sample `i`.
    pub fn time(self, i: u64) -> Ps {
        // `i * step + rate / 2` divided by `rate` is `i * step`: `rate / 2 < rate`.
        if let Some(step) = self.step {
            return (i128::from(i) * i128::from(step)) as Ps;
        }
        if self.rate == 0 {
            return 0;
        }
        // The 64-bit division when the product fits (an i128 division costs several times more).
        if let Some(n) = i.checked_mul(PS_PER_S as u64).and_then(|n| n.checked_add(self.rate / 2)) {
            return (n / self.rate) as Ps;
        }
        let rate = i128::from(self.rate);
        ((i128::from(i) * i128::from(PS_PER_S) + rate / 2) / rate) as Ps
    }

    pub fn period_ps(self) -> f64 {
        PS_PER_S as f64 / self.rate as f64
    }
}

/// Where a track's change times are kept.
#[derive(Debug, Clone)]
enum Times {
    Ps(SharedVec<Ps>),
    /// Sample numbers below 2^32 of a sampled capture.
    Samples {
        clock: SampleClock,
        at: SharedVec<u32>,
    },
}

impl Default for Times {
    fn default() -> Self {
        Times::Ps(SharedVec::new())
    }
}

impl Times {
    fn iter(&self) -> TimesIter<'_> {
        match self {
            Times::Ps(v) => TimesIter::Ps(v.iter()),
            Times::Samples { clock, at } => TimesIter::Samples(*clock, at.iter()),
        }
    }
    /// Turns sample numbers into picoseconds, for a change the samples cannot hold.
    fn as_ps_mut(&mut self) -> &mut SharedVec<Ps> {
        if let Times::Samples { clock, at } = self {
            let ps = at.iter().map(|&s| clock.time(u64::from(s))).collect();
            *self = Times::Ps(ps);
        }
        match self {
            Times::Ps(v) => v,
            Times::Samples { .. } => unreachable!("converted above"),
        }
    }
}

/// The times of a track's changes, in order.
#[derive(Debug, Clone)]
pub enum TimesIter<'a> {
    Ps(std::slice::Iter<'a, Ps>),
    Samples(SampleClock, std::slice::Iter<'a, u32>),
}

impl Iterator for TimesIter<'_> {
    type Item = Ps;
    #[inline]
    fn next(&mut self) -> Option<Ps> {
        match self {
            TimesIter::Ps(it) => it.next().copied(),
            TimesIter::Samples(clock, it) => it.next().map(|&s| clock.time(u64::from(s))),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            TimesIter::Ps(it) => it.size_hint(),
            TimesIter::Samples(_, it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for TimesIter<'_> {
    fn next_back(&mut self) -> Option<Ps> {
        match self {
            TimesIter::Ps(it) => it.next_back().copied(),
            TimesIter::Samples(clock, it) => it.next_back().map(|&s| clock.time(u64::from(s))),
        }
    }
}

impl ExactSizeIterator for TimesIter<'_> {}

/// Tracks are equal when they name, start, change and end alike, however their times are kept.
impl PartialEq for DigitalTrack {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.initial == other.initial
            && self.end == other.end
            && self.levels == other.levels
            && self.times().eq(other.times())
    }
}

impl Eq for DigitalTrack {}

impl DigitalTrack {
    /// A track whose change times are kept in picoseconds.
    pub fn new(name: impl Into<String>, initial: u8) -> Self {
        Self { name: name.into(), initial, ..Self::default() }
    }

    /// A track of a sampled capture: its changes are kept as sample numbers of `clock`
    /// (4 bytes each) while they fit 32 bits, and in picoseconds after.
    pub fn sampled(name: impl Into<String>, initial: u8, clock: SampleClock) -> Self {
        Self { times: Times::Samples { clock, at: SharedVec::new() }, ..Self::new(name, initial) }
    }

    /// A track from its changes' times and levels (`times` sorted, each level a change).
    pub fn with_changes(
        name: impl Into<String>,
        initial: u8,
        times: Vec<Ps>,
        levels: Vec<u8>,
        end: Ps,
    ) -> Self {
        debug_assert_eq!(times.len(), levels.len());
        Self { name: name.into(), initial, times: Times::Ps(times.into()), levels: levels.into(), end }
    }

    /// Records the level at `t`; only changes are stored. Times must not decrease.
    pub fn push(&mut self, t: Ps, level: u8) {
        let current = self.levels.last().copied().unwrap_or(self.initial);
        if level != current {
            self.times.as_ps_mut().push(t);
            self.levels.push(level);
        }
        self.end = self.end.max(t);
    }

    /// Records the level at sample `sample` of `clock`, as [`Self::push`] does at its time.
    pub fn push_sample(&mut self, clock: SampleClock, sample: u64, level: u8) {
        let current = self.levels.last().copied().unwrap_or(self.initial);
        let t = clock.time(sample);
        if level != current {
            match &mut self.times {
                Times::Samples { clock: c, at } if *c == clock && u32::try_from(sample).is_ok() => {
                    at.push(sample as u32);
                }
                times => times.as_ps_mut().push(t),
            }
            self.levels.push(level);
        }
        self.end = self.end.max(t);
    }

    /// Takes back the last change.
    pub fn pop(&mut self) -> Option<(Ps, u8)> {
        let t = self.last_time()?;
        match &mut self.times {
            Times::Ps(v) => v.pop(),
            Times::Samples { at, .. } => at.pop().map(i64::from),
        };
        Some((t, self.levels.pop()?))
    }

    /// The number of level changes after the initial level.
    pub fn transitions(&self) -> usize {
        self.levels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }

    /// The time of change `i` (`i < transitions()`).
    #[inline]
    pub fn time(&self, i: usize) -> Ps {
        match &self.times {
            Times::Ps(v) => v[i],
            Times::Samples { clock, at } => clock.time(u64::from(at[i])),
        }
    }

    /// The level after change `i` (`i < transitions()`).
    #[inline]
    pub fn level(&self, i: usize) -> u8 {
        self.levels[i]
    }

    /// The level after each change.
    pub fn levels(&self) -> &[u8] {
        &self.levels
    }

    /// The changes' times, in order.
    pub fn times(&self) -> TimesIter<'_> {
        self.times.iter()
    }

    /// Each change: its time and the level after it.
    pub fn changes(&self) -> impl DoubleEndedIterator<Item = (Ps, u8)> + ExactSizeIterator + '_ {
        self.times().zip(self.levels.iter().copied())
    }

    pub fn first_time(&self) -> Option<Ps> {
        (!self.is_empty()).then(|| self.time(0))
    }

    pub fn last_time(&self) -> Option<Ps> {
        self.levels.len().checked_sub(1).map(|i| self.time(i))
    }

    /// The number of changes before `t` (the index of the first at or after it).
    pub fn changes_before(&self, t: Ps) -> usize {
        self.partition_point(|x| x < t)
    }

    /// The number of changes at or before `t`.
    pub fn changes_until(&self, t: Ps) -> usize {
        self.partition_point(|x| x <= t)
    }

    /// The first change for which `before` is false, `before` being true of a prefix.
    pub fn partition_point(&self, before: impl Fn(Ps) -> bool) -> usize {
        match &self.times {
            Times::Ps(v) => v.partition_point(|&x| before(x)),
            Times::Samples { clock, at } => at.partition_point(|&s| before(clock.time(u64::from(s)))),
        }
    }

    /// The level at time `t`.
    pub fn level_at(&self, t: Ps) -> u8 {
        match self.changes_until(t) {
            0 => self.initial,
            i => self.levels[i - 1],
        }
    }

    /// Moves every change by `by` picoseconds.
    pub fn shift(&mut self, by: Ps) {
        self.times.as_ps_mut().iter_mut().for_each(|t| *t += by);
    }

    /// The sample clock the times are kept in, when they are sample numbers.
    pub fn sample_clock(&self) -> Option<SampleClock> {
        match &self.times {
            Times::Samples { clock, .. } => Some(*clock),
            Times::Ps(_) => None,
        }
    }

    /// Changes the track has room for without reallocating.
    pub fn capacity(&self) -> usize {
        let times = match &self.times {
            Times::Ps(v) => v.capacity(),
            Times::Samples { at, .. } => at.capacity(),
        };
        times.min(self.levels.capacity())
    }

    /// Makes room for exactly `more` changes.
    pub fn reserve_exact(&mut self, more: usize) {
        match &mut self.times {
            Times::Ps(v) => v.reserve_exact(more),
            Times::Samples { at, .. } => at.reserve_exact(more),
        }
        self.levels.reserve_exact(more);
    }

    /// Heap bytes the changes hold (their capacity).
    pub fn heap_bytes(&self) -> usize {
        let times = match &self.times {
            Times::Ps(v) => v.capacity() * size_of::<Ps>(),
            Times::Samples { at, .. } => at.capacity() * size_of::<u32>(),
        };
        times + self.levels.capacity()
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
        assert_eq!(d.times().collect::<Vec<_>>(), [5, 9]);
        assert_eq!(d.transitions(), 2);
        assert_eq!((d.level_at(4), d.level_at(5), d.level_at(8), d.level_at(100)), (0, 1, 1, 0));
        assert_eq!(d.end, 12);
    }

    #[test]
    fn a_sampled_track_reads_as_the_same_times_in_half_the_bytes() {
        // 3 MHz does not divide 1 THz: times are rounded divisions, as the importer's were.
        for rate in [40_000_000, 3_000_000] {
            let clock = SampleClock::new(rate);
            let mut sampled = DigitalTrack::sampled("D0", 1, clock);
            let mut exact = DigitalTrack::new("D0", 1);
            sampled.reserve_exact(3);
            exact.reserve_exact(3);
            for (s, l) in [(0, 1), (7, 0), (8, 0), (1_000_003, 1), (u64::from(u32::MAX), 0)] {
                sampled.push_sample(clock, s, l);
                exact.push(clock.time(s), l);
            }
            assert_eq!(sampled, exact);
            assert!(sampled.sample_clock().is_some(), "every sample fits 32 bits");
            assert_eq!(sampled.heap_bytes() * 9, exact.heap_bytes() * 5);
            assert_eq!(sampled.changes_before(clock.time(8)), 1);
            assert_eq!(sampled.changes_until(clock.time(1_000_003)), 2);
            assert_eq!(sampled.pop(), Some((clock.time(u64::from(u32::MAX)), 0)));
            assert_eq!(sampled.last_time(), exact.times().nth(1));
        }
    }

    #[test]
    fn a_sample_past_32_bits_keeps_the_track_exact() {
        let clock = SampleClock::new(1_000_000_000);
        let mut d = DigitalTrack::sampled("CLK", 0, clock);
        d.push_sample(clock, 5, 1);
        d.push_sample(clock, 1 << 33, 0);
        assert_eq!(d.sample_clock(), None, "kept in picoseconds from then on");
        assert_eq!(d.times().collect::<Vec<_>>(), [5_000, (1 << 33) * 1_000]);
        assert_eq!(d.levels(), [1, 0]);
    }
}
