//! Level of detail: what each pixel column of a lane holds, answered without visiting every
//! event. The timeline asks one question per column — how many events, which levels a
//! digital line took, the min/max of an analog waveform, which slice covers it — so the cost
//! of a frame follows the window width, not the trace size.
//!
//! Counts come from binary searches over the lane's sorted times (exact, no extra memory);
//! digital levels and analog samples use min/max pyramids (the analog one lives in the model).

use latscope_model::{AnalogTrack, DigitalTrack, Ps};
use latscope_shared::SharedVec;

/// Pixel columns over source-relative time: column `c` covers `[edge(c), edge(c + 1))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// Source-relative time of the left edge of column 0, in ps (f64: see `timeline`).
    pub t0: f64,
    pub ps_per_px: f64,
    pub columns: usize,
}

impl Grid {
    pub fn edge(&self, c: usize) -> Ps {
        let t = (self.t0 + c as f64 * self.ps_per_px).floor();
        t.clamp(Ps::MIN as f64, Ps::MAX as f64) as Ps
    }
}

/// The first index in `0..n` for which `is_before` is false (`is_before` must be monotonic).
pub fn lower_bound(n: usize, mut is_before: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if is_before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Number of items per column; `time(i)` must be sorted over `0..n`.
pub fn count_columns(n: usize, time: impl Fn(usize) -> Ps, grid: &Grid) -> Vec<u32> {
    let mut prev = lower_bound(n, |i| time(i) < grid.edge(0));
    (0..grid.columns)
        .map(|c| {
            let next = lower_bound(n, |i| time(i) < grid.edge(c + 1));
            let count = next.saturating_sub(prev);
            prev = next;
            u32::try_from(count).unwrap_or(u32::MAX)
        })
        .collect()
}

/// Where each of a lane's equal time buckets starts among its sorted times: a lower bound
/// then searches one bucket instead of the whole lane. At the full view of a 10M-event trace
/// a whole-lane binary search per column misses the cache on almost every probe; inside a
/// bucket the probes stay close together.
///
/// The index grows with its lane ([`TimeIndex::extend`]) and only ever appends: it lists a
/// bucket's start once an item at or after it exists, which no later item can change. A
/// clone (a live snapshot's) shares the list and reads it as it was.
#[derive(Clone, Default)]
pub struct TimeIndex {
    t0: Ps,
    width: Ps,
    /// `first[k]`: the first index whose time is at or after `t0 + k * width`, for the
    /// buckets that some item indexed reaches; the buckets after them start at the end.
    first: SharedVec<u32>,
    /// Items indexed when `width` was chosen.
    sized_for: usize,
}

/// The buckets and widths are how the index was grown, not what it answers: two indexes of
/// the same items answer alike (the lanes of a live run and of a whole prepare compare equal).
impl std::fmt::Debug for TimeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TimeIndex")
    }
}

/// Items per bucket the index aims at: 4 keeps a search to about two probes (each a cache
/// miss through `ts[events[i]]`) for 1 byte of index per lane entry.
const ITEMS_PER_BUCKET: usize = 4;
const MAX_BUCKETS: usize = 1 << 24;

impl TimeIndex {
    /// Indexes `time` over `0..n` (sorted, as for [`count_columns`]).
    pub fn new(n: usize, time: impl Fn(usize) -> Ps) -> Self {
        let mut index = Self::default();
        index.extend(n, time);
        index
    }

    /// Buckets aimed at for `n` items.
    fn buckets_for(n: usize) -> usize {
        (n / ITEMS_PER_BUCKET).clamp(1, MAX_BUCKETS)
    }

    /// Indexes the items `0..n`, of which those indexed before are unchanged and the new
    /// ones at or after them in time: it costs what is new, but for the rare resizing of the
    /// buckets (when items came much denser or sparser than the width was chosen for), which
    /// halves or rebuilds the list and happens once per doubling.
    pub fn extend(&mut self, n: usize, time: impl Fn(usize) -> Ps) {
        if n == 0 || u32::try_from(n).is_err() {
            return;
        }
        let t1 = time(n - 1);
        // Much denser than the width was chosen for: choose again, from all items.
        let dense = n >= 2 * self.sized_for && n / self.first.len().max(1) > 4 * ITEMS_PER_BUCKET;
        if self.first.is_empty() || dense {
            let t0 = time(0);
            let width = (t1.saturating_sub(t0) / Self::buckets_for(n) as Ps).max(1) + 1;
            *self = Self { t0, width, first: SharedVec::new(), sized_for: n };
            self.first.push(0);
        }
        // Much sparser: merge pairs of buckets (every other start is the start of a bucket
        // twice as wide) until the items span about as many buckets as aimed at.
        let spans = |width: Ps| (t1.saturating_sub(self.t0) / width) as usize + 1;
        let limit = 2 * Self::buckets_for(n) + 64;
        if spans(self.width) > limit {
            let mut width = self.width;
            let mut step = 1;
            while spans(width) > limit {
                width = width.saturating_mul(2);
                step *= 2;
            }
            self.first = self.first.iter().copied().step_by(step).collect();
            self.width = width;
        }
        // The buckets the new items reach, from the start of the last one listed.
        let mut i = self.first.last().map_or(0, |&f| f as usize);
        loop {
            let k = self.first.len() as Ps;
            let edge = self.t0.saturating_add(k.saturating_mul(self.width));
            while i < n && time(i) < edge {
                i += 1;
            }
            if i == n {
                break;
            }
            self.first.push(i as u32);
        }
    }

    /// The index range in which the lower bound of `t` lies, over `0..n`.
    fn range_of(&self, n: usize, t: Ps) -> (usize, usize) {
        let listed = self.first.len();
        if listed == 0 {
            return (0, n);
        }
        if t <= self.t0 {
            return (0, 0);
        }
        let k = usize::try_from((i128::from(t) - i128::from(self.t0)) / i128::from(self.width))
            .unwrap_or(usize::MAX);
        if k + 1 < listed {
            (self.first[k] as usize, self.first[k + 1] as usize)
        } else {
            // In or past the last bucket listed: no item indexed reaches the next one.
            (self.first[listed - 1] as usize, n)
        }
    }

    /// The first index in `0..n` whose time is at or after `t` (as [`lower_bound`]).
    pub fn lower_bound(&self, n: usize, time: impl Fn(usize) -> Ps, t: Ps) -> usize {
        let (lo, hi) = self.range_of(n, t);
        let hi = hi.clamp(lo, n.max(lo));
        lo + lower_bound(hi - lo, |i| time(lo + i) < t)
    }
}

/// Buckets at most this long are searched with a branch-free linear count rather than a
/// binary search: the loads of the count are independent, so the CPU overlaps their cache
/// misses, where each probe of a binary search waits for the previous one.
const LINEAR_SCAN_MAX: usize = 24;

impl TimeIndex {
    /// [`Self::lower_bound`] of each of `targets`, in two passes: the first reads every
    /// target's bucket bounds (independent loads of the index), the second searches inside
    /// each bucket. At the full view of a 10M-event trace every probe misses the cache;
    /// keeping the misses of many targets in flight together is most of the speed of a
    /// frame's per-column queries.
    pub fn lower_bounds(
        &self,
        n: usize,
        time: impl Fn(usize) -> Ps,
        targets: impl Iterator<Item = Ps>,
    ) -> Vec<usize> {
        // Pass 1: the index range `lo..hi` each target's lower bound lies in.
        let ranges: Vec<(usize, usize, Ps)> = targets
            .map(|t| {
                let (lo, hi) = self.range_of(n, t);
                (lo, hi, t)
            })
            .collect();
        // Pass 2: the lower bound inside each range.
        ranges
            .into_iter()
            .map(|(lo, hi, t)| {
                let hi = hi.clamp(lo, n.max(lo));
                if hi - lo <= LINEAR_SCAN_MAX {
                    lo + (lo..hi).map(|i| usize::from(time(i) < t)).sum::<usize>()
                } else {
                    lo + lower_bound(hi - lo, |i| time(lo + i) < t)
                }
            })
            .collect()
    }
}

/// [`count_columns`] with the lane's [`TimeIndex`].
pub fn count_columns_indexed(
    n: usize,
    time: impl Fn(usize) -> Ps,
    index: &TimeIndex,
    grid: &Grid,
) -> Vec<u32> {
    let bounds = index.lower_bounds(n, time, (0..=grid.columns).map(|c| grid.edge(c)));
    let mut prev = bounds.first().copied().unwrap_or(0);
    bounds[1..]
        .iter()
        .map(|&b| {
            let next = b.max(prev);
            let count = next - prev;
            prev = next;
            u32::try_from(count).unwrap_or(u32::MAX)
        })
        .collect()
}

/// Min/max over fixed blocks of a slice, level by level (fan-out 16), answering the min/max
/// of any index range in O(log n) block visits.
///
/// Level `k` holds the (min, max) of each whole block of `FANOUT^(k+1)` values, in order: a
/// block is listed once all its values exist, so a growing track's pyramid only appends
/// ([`MinMaxPyramid::extend`]) and a clone (a live snapshot's) shares its levels. A query
/// never asks for a block that is not whole.
#[derive(Debug, Clone, Default)]
pub struct MinMaxPyramid {
    levels: Vec<SharedVec<(u8, u8)>>,
}

const FANOUT: usize = 16;

impl MinMaxPyramid {
    pub fn new(values: &[u8]) -> Self {
        let mut pyramid = Self::default();
        pyramid.extend(values);
        pyramid
    }

    /// Adds the blocks that `values` completes: the values the pyramid was built on, and
    /// more after them. It costs what is new.
    pub fn extend(&mut self, values: &[u8]) {
        let fold = |lo_hi: (u8, u8), (a, b): (u8, u8)| (lo_hi.0.min(a), lo_hi.1.max(b));
        for k in 0.. {
            let below = if k == 0 { values.len() } else { self.levels[k - 1].len() };
            let whole = below / FANOUT;
            if whole == 0 {
                break;
            }
            if self.levels.len() == k {
                self.levels.push(SharedVec::new());
            }
            let (lower, upper) = self.levels.split_at_mut(k);
            let level = &mut upper[0];
            for j in level.len()..whole {
                let block = j * FANOUT..(j + 1) * FANOUT;
                let min_max = match lower.last() {
                    None => values[block].iter().fold((u8::MAX, u8::MIN), |m, &v| fold(m, (v, v))),
                    Some(below) => below[block].iter().fold((u8::MAX, u8::MIN), |m, &ab| fold(m, ab)),
                };
                level.push(min_max);
            }
        }
    }

    /// (min, max) of `values[from..to]`; `values` must be the slice the pyramid was built on.
    pub fn min_max(&self, values: &[u8], from: usize, to: usize) -> Option<(u8, u8)> {
        let to = to.min(values.len());
        if from >= to {
            return None;
        }
        let (mut lo, mut hi) = (u8::MAX, u8::MIN);
        let mut i = from;
        while i < to {
            let mut size = 1usize;
            let mut found = None;
            for k in 0..self.levels.len() {
                let s = FANOUT.pow(k as u32 + 1);
                if i.is_multiple_of(s) && i + s <= to {
                    size = s;
                    found = Some(k);
                } else {
                    break;
                }
            }
            let (a, b) = match found.and_then(|k| self.levels.get(k)?.get(i / size)) {
                Some(&ab) => ab,
                None => {
                    size = 1;
                    let v = values.get(i).copied().unwrap_or(0);
                    (v, v)
                }
            };
            lo = lo.min(a);
            hi = hi.max(b);
            i += size;
        }
        Some((lo, hi))
    }
}

/// One column of a digital lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DigitalColumn {
    /// Level just before the column starts.
    pub level_in: u8,
    /// Transitions inside the column.
    pub transitions: u32,
    /// Lowest and highest level the line holds inside the column.
    pub min: u8,
    pub max: u8,
}

pub fn digital_columns(track: &DigitalTrack, pyramid: &MinMaxPyramid, grid: &Grid) -> Vec<DigitalColumn> {
    let level_before = |i: usize| if i == 0 { track.initial } else { track.level(i - 1) };
    let mut prev = track.changes_before(grid.edge(0));
    (0..grid.columns)
        .map(|c| {
            let next = track.changes_before(grid.edge(c + 1));
            let level_in = level_before(prev);
            let (lo, hi) = pyramid.min_max(track.levels(), prev, next).unwrap_or((level_in, level_in));
            let col = DigitalColumn {
                level_in,
                transitions: u32::try_from(next - prev).unwrap_or(u32::MAX),
                min: lo.min(level_in),
                max: hi.max(level_in),
            };
            prev = next;
            col
        })
        .collect()
}

/// Index range of the samples whose time lies in `[from, to)`.
pub fn analog_range(track: &AnalogTrack, from: Ps, to: Ps) -> (usize, usize) {
    let n = track.samples.len();
    let a = lower_bound(n, |i| track.time_of(i) < from);
    let b = lower_bound(n, |i| track.time_of(i) < to);
    (a, b.max(a))
}

/// Per column: min/max of the samples inside it, widened by the sample just before so that
/// neighbouring columns join into one continuous band. `None` before the first sample or
/// after the last.
pub fn analog_columns(track: &AnalogTrack, grid: &Grid) -> Vec<Option<(f32, f32)>> {
    let n = track.samples.len();
    let mut prev = analog_range(track, Ps::MIN, grid.edge(0)).1;
    (0..grid.columns)
        .map(|c| {
            let next = lower_bound(n, |i| track.time_of(i) < grid.edge(c + 1));
            let inside = track.min_max(prev, next);
            let held = prev.checked_sub(1).and_then(|i| track.samples.get(i)).copied();
            let out = match (inside, held) {
                (Some((lo, hi)), Some(h)) => Some((lo.min(h), hi.max(h))),
                (Some(r), None) => Some(r),
                // No sample inside: the held value, while the track lasts.
                (None, Some(h)) if next < n => Some((h, h)),
                _ => None,
            };
            prev = next;
            out
        })
        .collect()
}

/// Intervals of one row (non-nesting in practice; nesting is tolerated), sorted by start,
/// with a running maximum of the ends so "first interval still open at t" is a binary search.
///
/// A live lane's rows only grow: [`SliceRow::finish`] sorts and indexes what was pushed
/// since the last call, and clones (a snapshot's) share the lists.
#[derive(Debug, Clone, Default)]
pub struct SliceRow {
    pub start: SharedVec<Ps>,
    pub end: SharedVec<Ps>,
    /// Index into the lane's label table.
    pub label: SharedVec<u32>,
    /// The event that opened the slice (for the inspector), `u32::MAX` if none.
    pub event: SharedVec<u32>,
    max_end: SharedVec<Ps>,
    /// Bucket starts over `max_end`, so each column's search stays in one bucket.
    max_end_index: TimeIndex,
}

impl SliceRow {
    pub fn push(&mut self, start: Ps, end: Ps, label: u32, event: u32) {
        self.start.push(start);
        self.end.push(end.max(start));
        self.label.push(label);
        self.event.push(event);
    }

    /// Sorts by start and extends the running maximum and its index over the slices pushed
    /// since the last call. Slices pushed in order of start (as a lane's walk pushes them)
    /// cost only themselves; one pushed before an earlier start sorts the row again.
    pub fn finish(&mut self) {
        let done = self.max_end.len();
        let sorted = self.start[done.saturating_sub(1)..].windows(2).all(|w| w[0] <= w[1]);
        if !sorted {
            let mut order: Vec<usize> = (0..self.start.len()).collect();
            order.sort_by_key(|&i| self.start[i]);
            self.start = order.iter().map(|&i| self.start[i]).collect();
            self.end = order.iter().map(|&i| self.end[i]).collect();
            self.label = order.iter().map(|&i| self.label[i]).collect();
            self.event = order.iter().map(|&i| self.event[i]).collect();
            self.max_end = SharedVec::new();
            self.max_end_index = TimeIndex::default();
        }
        let mut m = self.max_end.last().copied().unwrap_or(Ps::MIN);
        for i in self.max_end.len()..self.end.len() {
            m = m.max(self.end[i]);
            self.max_end.push(m);
        }
        let max_end = &self.max_end;
        self.max_end_index.extend(max_end.len(), |i| max_end[i]);
    }

    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// The first slice (by start) that overlaps `[from, to)`.
    pub fn first_overlapping(&self, from: Ps, to: Ps) -> Option<usize> {
        Slices::of(self).first_overlapping(from, to)
    }
}

/// A run of columns covered by the same slice: `[first, last]` columns and the slice index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceRun {
    pub first: usize,
    pub last: usize,
    pub slice: usize,
    /// Whether more than one slice starts within the run's columns (drawn denser).
    pub crowded: bool,
}

/// Which slice covers each column, merged into runs of equal slices.
pub fn slice_runs(row: Slices<'_>, grid: &Grid) -> Vec<SliceRun> {
    let mut runs: Vec<SliceRun> = Vec::new();
    let done = row.done;
    // Every column's search start at once (see `TimeIndex::lower_bounds`).
    let firsts = done.max_end_index.lower_bounds(
        done.max_end.len(),
        |i| done.max_end[i],
        (0..grid.columns).map(|c| grid.edge(c).saturating_add(1)),
    );
    for (c, &first) in firsts.iter().enumerate() {
        let (from, to) = (grid.edge(c), grid.edge(c + 1));
        let Some(i) = row.first_open_from(row.past_done(first, from), from, to) else { continue };
        let crowded = row.start(i + 1).is_some_and(|s| s < to);
        match runs.last_mut() {
            Some(r) if r.slice == i && r.last + 1 == c => {
                r.last = c;
                r.crowded |= crowded;
            }
            _ => runs.push(SliceRun { first: c, last: c, slice: i, crowded }),
        }
    }
    runs
}

/// One row as it is drawn and hit: its final slices (`done`) and after them those not final
/// yet (`open`: a live lane keeps them apart so that `done` only appends). Every slice of
/// `open` starts at or after every slice of `done`, so together they are one row sorted by
/// start, indexed `done` first: what one `SliceRow` holding both would be.
#[derive(Debug, Clone, Copy)]
pub struct Slices<'a> {
    pub done: &'a SliceRow,
    pub open: Option<&'a SliceRow>,
}

impl<'a> Slices<'a> {
    pub fn of(done: &'a SliceRow) -> Self {
        Self { done, open: None }
    }

    /// The row that holds slice `i`, and its index there.
    fn part(&self, i: usize) -> Option<(&'a SliceRow, usize)> {
        match i.checked_sub(self.done.len()) {
            None => Some((self.done, i)),
            Some(k) => self.open.map(|o| (o, k)),
        }
    }

    pub fn start(&self, i: usize) -> Option<Ps> {
        self.part(i).and_then(|(r, k)| r.start.get(k).copied())
    }
    pub fn end(&self, i: usize) -> Option<Ps> {
        self.part(i).and_then(|(r, k)| r.end.get(k).copied())
    }
    pub fn label(&self, i: usize) -> Option<u32> {
        self.part(i).and_then(|(r, k)| r.label.get(k).copied())
    }
    pub fn event(&self, i: usize) -> Option<u32> {
        self.part(i).and_then(|(r, k)| r.event.get(k).copied())
    }

    /// The first slice (by start) that overlaps `[from, to)`.
    pub fn first_overlapping(&self, from: Ps, to: Ps) -> Option<usize> {
        let done = self.done;
        let n = done.max_end.len();
        let i = done.max_end_index.lower_bound(n, |i| done.max_end[i], from.saturating_add(1));
        self.first_open_from(self.past_done(i, from), from, to)
    }

    /// `i`, the first slice of `done` whose running maximum end is after `from`, or if there
    /// is none, the first such slice of `open` (whose running maximum is its own then).
    fn past_done(&self, i: usize, from: Ps) -> usize {
        match self.open {
            Some(open) if i >= self.done.len() => {
                let n = open.max_end.len();
                self.done.len() + lower_bound(n, |k| open.max_end[k] <= from)
            }
            _ => i,
        }
    }

    /// The first slice at or after `i` that overlaps `[from, to)`, where `i` is the first
    /// slice whose running maximum end is after `from`.
    fn first_open_from(&self, mut i: usize, from: Ps, to: Ps) -> Option<usize> {
        // The running maximum may come from an earlier, longer slice: step to one that is open.
        while let (Some(s), Some(e)) = (self.start(i), self.end(i)) {
            if s >= to {
                break;
            }
            if e > from || (e == s && s >= from) {
                return Some(i);
            }
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyramid_matches_scan() {
        let values: Vec<u8> = (0..5000u32).map(|i| ((i * 7919) % 4) as u8).collect();
        let p = MinMaxPyramid::new(&values);
        for (a, b) in [(0, 5000), (17, 4099), (256, 512), (4999, 5000), (3, 4), (16, 32)] {
            let scan = values[a..b].iter().fold((u8::MAX, 0), |(l, h), &v| (l.min(v), h.max(v)));
            assert_eq!(p.min_max(&values, a, b), Some(scan), "{a}..{b}");
        }
        assert_eq!(p.min_max(&values, 9, 9), None);
        // Grown a few values at a time (a live track), it is the same pyramid, and a clone
        // keeps answering for the values it was made on.
        let mut grown = MinMaxPyramid::default();
        let mut kept = Vec::new();
        for n in (0..values.len()).step_by(37).chain([values.len()]) {
            grown.extend(&values[..n]);
            kept.push((grown.clone(), n));
        }
        assert_eq!(format!("{grown:?}"), format!("{p:?}"));
        for (pyramid, n) in kept {
            assert_eq!(format!("{pyramid:?}"), format!("{:?}", MinMaxPyramid::new(&values[..n])));
        }
    }

    #[test]
    fn indexed_counts_equal_plain_binary_search() {
        // Bursty times with repeats, gaps and a long quiet stretch.
        let mut times: Vec<Ps> = Vec::new();
        let mut t = -5_000;
        for i in 0..20_000u64 {
            t += match i % 97 {
                0 => 1_000_000,
                1..=10 => 0,
                _ => (i * 7919 % 13) as Ps,
            };
            times.push(t);
        }
        let time = |i: usize| times[i];
        let index = TimeIndex::new(times.len(), time);
        let span = (times[times.len() - 1] - times[0]) as f64;
        for (t0, px, columns) in [
            (times[0] as f64 - 10.0, span / 1600.0, 1602),
            (-1e9, 1e7, 300),
            (times[5000] as f64, 3.0, 1000),
            (times[19_990] as f64, 50.0, 500),
        ] {
            let grid = Grid { t0, ps_per_px: px, columns };
            assert_eq!(
                count_columns_indexed(times.len(), time, &index, &grid),
                count_columns(times.len(), time, &grid)
            );
        }
        for &t in times.iter().step_by(37).chain(&[Ps::MIN, Ps::MAX, times[0] - 1]) {
            for d in [-1, 0, 1] {
                let t = t.saturating_add(d);
                assert_eq!(
                    index.lower_bound(times.len(), time, t),
                    lower_bound(times.len(), |i| times[i] < t)
                );
            }
        }
        let empty = TimeIndex::new(0, time);
        assert_eq!(empty.lower_bound(0, time, 5), 0);
    }

    /// An index grown a few items at a time, as a live lane's is, through a dense start, a
    /// long silence and a dense burst again (each forces the buckets to be resized): at
    /// every size it answers as a binary search does, and a clone taken at one size goes on
    /// answering for that size while the original grows.
    #[test]
    fn an_index_grown_piece_by_piece_answers_as_a_binary_search() {
        let mut times: Vec<Ps> = Vec::new();
        let mut t: Ps = 7;
        for i in 0..60_000u64 {
            t += match i {
                0..=999 => (i % 3) as Ps,
                1000 => 5_000_000_000,
                1001..=29_999 => 1_000 + (i * 7919 % 5000) as Ps,
                30_000 => 1,
                _ => (i % 2) as Ps,
            };
            times.push(t);
        }
        let time = |i: usize| times[i];
        let check = |index: &TimeIndex, n: usize| {
            let probes = times[..n].iter().step_by((n / 200).max(1)).chain(&[Ps::MIN, Ps::MAX]);
            for &t in probes.chain(times[..n].last()) {
                for d in [-1, 0, 1] {
                    let t = t.saturating_add(d);
                    let plain = lower_bound(n, |i| times[i] < t);
                    assert_eq!(index.lower_bound(n, time, t), plain, "{n} items, t = {t}");
                    assert_eq!(index.lower_bounds(n, time, [t].into_iter()), [plain], "{n} items, t = {t}");
                }
            }
        };
        let mut index = TimeIndex::default();
        let mut kept: Vec<(TimeIndex, usize)> = Vec::new();
        let mut n = 0;
        let mut step = 1;
        while n < times.len() {
            n = (n + step).min(times.len());
            step = step % 700 + 13;
            index.extend(n, time);
            check(&index, n);
            if n % 5 == 0 {
                kept.push((index.clone(), n));
            }
            // Buckets stay near the aim: about four items each, never a bucket per picosecond.
            assert!(index.first.len() <= 2 * TimeIndex::buckets_for(n) + 65, "{n}: {}", index.first.len());
        }
        assert!(kept.len() > 10);
        for (index, n) in &kept {
            check(index, *n);
        }
    }

    /// A row kept as final slices and open ones is drawn and hit as the one row holding both.
    #[test]
    fn final_and_open_slices_answer_as_one_row() {
        let mut one = SliceRow::default();
        let mut done = SliceRow::default();
        let mut open = SliceRow::default();
        let mut t: Ps = 0;
        for i in 0..3_000u32 {
            let len = if i % 40 == 0 { 9_000 } else { (i % 5) as Ps * 70 };
            let row = if i < 2_990 { &mut done } else { &mut open };
            row.push(t, t + len, i % 3, i);
            one.push(t, t + len, i % 3, i);
            t += 100 + (i % 7) as Ps;
        }
        // An open handler with one closed inside it, both reaching past the last start.
        for (s, e) in [(t, t + 5_000), (t + 10, t + 20)] {
            open.push(s, e, 1, 0);
            one.push(s, e, 1, 0);
        }
        for r in [&mut one, &mut done, &mut open] {
            r.finish();
        }
        let both = Slices { done: &done, open: Some(&open) };
        let alone = Slices::of(&one);
        for from in (0..t + 6_000).step_by(61) {
            for width in [1, 30, 400] {
                let (a, b) =
                    (both.first_overlapping(from, from + width), alone.first_overlapping(from, from + width));
                assert_eq!(a, b, "[{from}, +{width})");
                if let Some(i) = a {
                    assert_eq!(
                        (both.start(i), both.end(i), both.label(i)),
                        (one.start.get(i).copied(), one.end.get(i).copied(), one.label.get(i).copied())
                    );
                }
            }
        }
        for (t0, px) in [(0.0, t as f64 / 1500.0), (t as f64 - 900.0, 3.0), (t as f64 - 50.0, 0.5)] {
            let grid = Grid { t0, ps_per_px: px, columns: 1600 };
            assert_eq!(format!("{:?}", slice_runs(both, &grid)), format!("{:?}", slice_runs(alone, &grid)));
        }
    }

    /// A row pushed and finished a few slices at a time (a live lane) is the row pushed and
    /// finished once, and its clones keep reading what they read.
    #[test]
    fn a_row_finished_piece_by_piece_is_the_row_finished_once() {
        let mut whole = SliceRow::default();
        let mut grown = SliceRow::default();
        let mut kept = Vec::new();
        let mut t: Ps = 0;
        for i in 0..5_000u32 {
            let len = if i % 50 == 0 { 40_000 } else { (i % 7) as Ps * 100 };
            whole.push(t, t + len, i % 4, i);
            grown.push(t, t + len, i % 4, i);
            t += 150 + (i % 11) as Ps;
            if i % 37 == 0 {
                grown.finish();
                kept.push((grown.clone(), format!("{grown:?}")));
            }
        }
        whole.finish();
        grown.finish();
        assert_eq!(format!("{grown:?}"), format!("{whole:?}"));
        for from in (0..t).step_by(997) {
            assert_eq!(grown.first_overlapping(from, from + 500), whole.first_overlapping(from, from + 500));
        }
        for (row, seen) in kept {
            assert_eq!(format!("{row:?}"), seen);
        }
    }

    #[test]
    fn indexed_slice_search_equals_the_whole_row_search() {
        // Task-like slices with long nested ones, zero-length ones and gaps.
        let mut row = SliceRow::default();
        let mut t: Ps = 1_000;
        for i in 0..30_000u32 {
            let len = match i % 50 {
                0 => 200_000,
                1 => 0,
                _ => Ps::from(i % 17) * 10,
            };
            row.push(t, t + len, i % 5, i);
            t += Ps::from(i % 23) * 7 + if i % 1000 == 0 { 500_000 } else { 0 };
        }
        row.finish();
        let reference = |from: Ps, to: Ps| {
            let n = row.max_end.len();
            let mut i = lower_bound(n, |i| row.max_end[i] <= from);
            while i < n && row.start[i] < to {
                if row.end[i] > from || (row.end[i] == row.start[i] && row.start[i] >= from) {
                    return Some(i);
                }
                i += 1;
            }
            None
        };
        for from in (0..t + 300_000).step_by(997) {
            for width in [1, 50, 5_000] {
                assert_eq!(
                    row.first_overlapping(from, from + width),
                    reference(from, from + width),
                    "{from}"
                );
            }
        }
    }

    #[test]
    fn batched_lower_bounds_equal_single_searches() {
        // Dense stretches (short buckets, the linear count) and bursts of equal times (long
        // buckets, the binary search).
        let mut times: Vec<Ps> = Vec::new();
        let mut t = 0;
        for i in 0..50_000u64 {
            t += if (i / 1000) % 3 == 0 { 0 } else { (i * 7919 % 29) as Ps };
            times.push(t);
        }
        let time = |i: usize| times[i];
        let index = TimeIndex::new(times.len(), time);
        let targets: Vec<Ps> = (-3..t + 40).step_by(13).chain([Ps::MIN, Ps::MAX, 0, t, t + 1]).collect();
        let batched = index.lower_bounds(times.len(), time, targets.iter().copied());
        for (&t, &b) in targets.iter().zip(&batched) {
            assert_eq!(b, index.lower_bound(times.len(), time, t), "{t}");
            assert_eq!(b, lower_bound(times.len(), |i| times[i] < t), "{t}");
        }
    }

    #[test]
    fn slice_runs_equal_a_search_per_column() {
        let mut row = SliceRow::default();
        let mut t: Ps = 500;
        for i in 0..20_000u32 {
            let len = match i % 40 {
                0 => 90_000,
                1 => 0,
                _ => Ps::from(i % 13) * 11,
            };
            row.push(t, t + len, i % 3, i);
            t += Ps::from(i % 19) * 5 + if i % 700 == 0 { 300_000 } else { 0 };
        }
        row.finish();
        for (t0, px, columns) in [(0.0, t as f64 / 1600.0, 1600), (40_000.0, 3.0, 900), (-1e6, 1e4, 300)] {
            let grid = Grid { t0, ps_per_px: px, columns };
            let expected: Vec<Option<usize>> =
                (0..columns).map(|c| row.first_overlapping(grid.edge(c), grid.edge(c + 1))).collect();
            let mut from_runs = vec![None; columns];
            for r in slice_runs(Slices::of(&row), &grid) {
                for slot in &mut from_runs[r.first..=r.last] {
                    *slot = Some(r.slice);
                }
            }
            assert_eq!(from_runs, expected, "{t0} {px}");
        }
    }

    #[test]
    fn slices_cover_their_columns() {
        let mut row = SliceRow::default();
        row.push(10, 20, 0, 0);
        row.push(40, 100, 1, 1);
        row.push(41, 42, 2, 2);
        row.finish();
        let grid = Grid { t0: 0.0, ps_per_px: 10.0, columns: 12 };
        let runs = slice_runs(Slices::of(&row), &grid);
        assert_eq!(runs[0], SliceRun { first: 1, last: 1, slice: 0, crowded: false });
        assert_eq!((runs[1].first, runs[1].last, runs[1].slice, runs[1].crowded), (4, 9, 1, true));
        assert_eq!(row.first_overlapping(20, 40), None);
    }
}
