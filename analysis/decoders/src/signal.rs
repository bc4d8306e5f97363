//! The decoders' view of their inputs: a channel as its level changes on an integer tick
//! grid. On a sampled capture (a sigrok `.sr`, an analog track of one) a tick is a sample
//! number, so annotations land on the same sample numbers sigrok-cli prints; elsewhere (VCD,
//! CSV with time stamps, the simulator) a tick is a picosecond.

use latscope_model::{DigitalTrack, PS_PER_S, Ps};

/// How ticks map to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Ticks are sample numbers at this many samples per second.
    Samples(u64),
    /// Ticks are picoseconds.
    Picoseconds,
}

impl Clock {
    /// Tick of a time; on a sampled source the exact inverse of the importer's rounding of
    /// sample `i` to `round(i * 1e12 / rate)` ps.
    pub fn tick_of(self, t: Ps) -> i64 {
        match self {
            Clock::Picoseconds => t,
            // A whole, even number of ps a sample (10 MHz: 100,000): the same rounding in
            // i64, without the 128-bit division (a tenth of decoding a large capture).
            Clock::Samples(rate) => match even_period(rate) {
                Some(p) => tick_on_period(t, p).unwrap_or_else(|| tick_exact(rate, t)),
                None => tick_exact(rate, t),
            },
        }
    }

    /// Time of a tick: sample `i` at `round(i * 1e12 / rate)` ps.
    pub fn time_of(self, tick: i64) -> Ps {
        match self {
            Clock::Picoseconds => tick,
            Clock::Samples(rate) if let Some(p) = exact_period(rate) => tick.saturating_mul(p),
            Clock::Samples(rate) => {
                let r = i128::from(rate);
                let n = i128::from(tick) * i128::from(PS_PER_S);
                (if n >= 0 { (n + r / 2) / r } else { (n - r / 2) / r }) as Ps
            }
        }
    }

    /// Ticks per second.
    pub fn rate(self) -> f64 {
        match self {
            Clock::Samples(r) => r as f64,
            Clock::Picoseconds => PS_PER_S as f64,
        }
    }

    pub fn sample_numbers(self) -> bool {
        matches!(self, Clock::Samples(_))
    }

    /// The sample period when it is a whole number of ps, with which [`Self::time_of`] is
    /// one multiplication: found once per sink rather than per annotation (two divisions).
    pub(crate) fn exact_sample_period(self) -> Option<i64> {
        match self {
            Clock::Samples(rate) => exact_period(rate),
            Clock::Picoseconds => None,
        }
    }

    /// The period for [`Self::tick_fast`], found once per track rather than per edge.
    pub(crate) fn even_period(self) -> Option<i64> {
        match self {
            Clock::Samples(rate) => even_period(rate),
            Clock::Picoseconds => None,
        }
    }

    /// [`Self::tick_of`] with the period from [`Self::even_period`].
    #[inline]
    pub(crate) fn tick_fast(self, t: Ps, period: Option<i64>) -> i64 {
        period.and_then(|p| tick_on_period(t, p)).unwrap_or_else(|| self.tick_of(t))
    }
}

/// The sample period in ps when it is a whole number (rates that divide 10^12 Hz·ps).
fn exact_period(rate: u64) -> Option<i64> {
    (rate > 0 && (PS_PER_S as u64).is_multiple_of(rate)).then(|| PS_PER_S / rate as i64)
}

/// The sample period when it is a whole, even number of ps (10 MHz: 100,000), for which
/// [`tick_on_period`] rounds as [`tick_exact`] does.
fn even_period(rate: u64) -> Option<i64> {
    exact_period(rate).filter(|p| p % 2 == 0)
}

/// The tick of `t` on a grid of `p` ps (from [`even_period`]): `(t + p/2) / p`, computed in
/// `f64` (a 64-bit integer division is several times slower, and this runs once per edge).
/// Exact: `n = t + p/2` and `p` are integers below 2^53, so the quotient is correctly
/// rounded, and it cannot round up to the next integer `k + 1` since it lies at least `1/p`
/// below it while half an ulp there is `(k + 1) 2^-53 < 1/p` when `n + p < 2^53`. `None`
/// outside `0 <= t < 2^52` (beyond 75 minutes), where the integer path is used.
#[inline]
fn tick_on_period(t: Ps, p: i64) -> Option<i64> {
    (0..1 << 52).contains(&t).then(|| ((t + p / 2) as f64 / p as f64) as i64)
}

/// The tick of `t` at `rate`: `round(t * rate / 1e12)`, half away from zero, in 128 bits.
fn tick_exact(rate: u64, t: Ps) -> i64 {
    let r = i128::from(rate);
    let p = i128::from(PS_PER_S);
    let n = i128::from(t) * r;
    (if n >= 0 { (n + p / 2) / p } else { (n - p / 2) / p }) as i64
}

/// One input channel: its level at tick 0 and every change after it. A binary line's
/// level flips at each change, so the levels are not stored: after change `i` it is
/// `initial` flipped `i + 1` times ([`Line::level_after`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    pub name: String,
    pub initial: u8,
    /// Ticks of the level changes, strictly increasing.
    pub ticks: Vec<i64>,
    /// The last tick the capture holds.
    pub end: i64,
}

/// Levels a decoder sees: VCD's Z (3) reads high, as a pulled-up open-drain bus does; X (2)
/// reads low.
pub(crate) fn binary(level: u8) -> u8 {
    u8::from(level == 1 || level == 3)
}

impl Line {
    /// The channel on the tick grid of `clock`. Changes that land on the same tick keep the
    /// last level there; changes that cancel out vanish.
    pub fn from_track(track: &DigitalTrack, clock: Clock) -> Line {
        let mut line = Line {
            name: track.name.clone(),
            initial: binary(track.initial),
            ticks: Vec::with_capacity(track.transitions()),
            end: clock.tick_of(track.end.max(track.last_time().unwrap_or(0))),
        };
        // The period is found once, not per edge.
        let period = clock.even_period();
        for (t, l) in track.changes() {
            line.push(clock.tick_fast(t, period), binary(l));
        }
        line
    }

    /// A line from the ticks where it flips (a sampled capture read as sample numbers:
    /// strictly increasing, each a change of level). Takes the ticks without copying.
    pub fn from_ticks(name: &str, initial: u8, ticks: Vec<i64>, end: i64) -> Line {
        debug_assert!(ticks.windows(2).all(|w| w[0] < w[1]));
        Line { name: name.into(), initial: binary(initial), ticks, end }
    }

    /// A line from explicit changes (tests, generators).
    pub fn new(name: &str, initial: u8, changes: &[(i64, u8)], end: i64) -> Line {
        let mut line = Line { name: name.into(), initial: binary(initial), end, ..Line::default() };
        for &(t, l) in changes {
            line.push(t, binary(l));
        }
        line
    }

    fn push(&mut self, tick: i64, level: u8) {
        if let Some(&last) = self.ticks.last() {
            if tick < last {
                return;
            }
            if tick == last {
                self.ticks.pop();
            }
        }
        let before = match self.ticks.len() {
            0 => self.initial,
            n => self.level_after(n - 1),
        };
        if level != before {
            self.ticks.push(tick);
        }
    }

    /// The level after change `i`.
    #[inline]
    pub fn level_after(&self, i: usize) -> u8 {
        self.initial ^ u8::from(i.is_multiple_of(2))
    }

    /// Each change's tick with the level it changes to.
    pub fn changes(&self) -> impl Iterator<Item = (i64, u8)> + '_ {
        self.ticks.iter().enumerate().map(|(i, &t)| (t, self.level_after(i)))
    }

    /// Level at tick `t` (after any change at `t`).
    pub fn level_at(&self, t: i64) -> u8 {
        match self.ticks.partition_point(|&x| x <= t) {
            0 => self.initial,
            i => self.level_after(i - 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_invert_the_importers_rounding() {
        for rate in [3_000_000u64, 24_000_000, 125_000_000, 1_000_000] {
            let c = Clock::Samples(rate);
            for i in [0i64, 1, 2, 7, 1_000_003, 12_000_000] {
                assert_eq!(c.tick_of(c.time_of(i)), i, "rate {rate} sample {i}");
            }
        }
        assert_eq!(Clock::Samples(3_000_000).time_of(2), 666_667);
    }

    #[test]
    fn lines_merge_same_tick_changes_and_read_levels() {
        let l = Line::new("A", 0, &[(5, 1), (5, 0), (7, 1), (9, 0), (9, 1)], 20);
        assert_eq!((l.ticks.clone(), l.changes().collect::<Vec<_>>()), (vec![7], vec![(7, 1)]));
        let l = Line::new("A", 1, &[(3, 0), (6, 1), (8, 0)], 20);
        let got: Vec<u8> = (0..10).map(|t| l.level_at(t)).collect();
        assert_eq!(got, [1, 1, 1, 0, 0, 0, 1, 1, 0, 0]);
    }

    /// The 128-bit roundings the fast paths replace.
    fn tick_ref(rate: u64, t: Ps) -> i64 {
        let (r, p) = (i128::from(rate), i128::from(PS_PER_S));
        let n = i128::from(t) * r;
        (if n >= 0 { (n + p / 2) / p } else { (n - p / 2) / p }) as i64
    }
    fn time_ref(rate: u64, tick: i64) -> Ps {
        let r = i128::from(rate);
        let n = i128::from(tick) * i128::from(PS_PER_S);
        (if n >= 0 { (n + r / 2) / r } else { (n - r / 2) / r }) as Ps
    }

    #[test]
    fn the_fast_tick_grid_rounds_as_the_exact_one() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for rate in [
            1_000_000,
            10_000_000,
            24_000_000,
            40_000_000,
            125_000_000,
            500_000_000,
            3_000_000,
            2_000_000_000,
        ] {
            let c = Clock::Samples(rate);
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let t = (x % 4_000_000_000_000) as i64 - 1_000_000_000;
                assert_eq!(c.tick_of(t), tick_ref(rate, t), "tick_of({t}) at {rate}");
                // Near the end of the f64 path's range, and half a period either side of a
                // sample (the rounding boundary).
                let far = (1i64 << 52) - (x % 3_000_000_000_000) as i64;
                assert_eq!(c.tick_of(far), tick_ref(rate, far), "tick_of({far}) at {rate}");
                let half = exact_period(rate).map_or(0, |p| ((x >> 20) % 1_000_000) as i64 * p + p / 2);
                for h in [half - 1, half, half + 1] {
                    assert_eq!(c.tick_of(h), tick_ref(rate, h), "tick_of({h}) at {rate}");
                }
                let tick = (x % 40_000_000_000) as i64 - 1_000_000;
                assert_eq!(c.time_of(tick), time_ref(rate, tick), "time_of({tick}) at {rate}");
            }
        }
    }
}
