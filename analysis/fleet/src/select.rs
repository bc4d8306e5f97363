//! Exact statistics of more values than memory should hold: a group of a fleet can have
//! hundreds of millions of pairs. The values stream past (a polars scan, batch by batch) as
//! often as asked; nothing but counts and a bounded number of values is kept.
//!
//! The first pass gives the count, min, max, mean and stddev (the report's Kahan sum and
//! Welford variance, in scan order) and a histogram of the values' top 20 bits in their
//! total order (sign, exponent, 8 bits of mantissa: 1/256 of an octave per bucket). When the
//! group is small it also keeps the values, and the statistics are those of `report` over
//! them. Otherwise the quantiles' ranks are found by radix selection: each further pass
//! narrows every wanted rank's bucket by 20 more bits, or keeps the bucket's values once it
//! holds at most [`MAX_HELD`] of them; a bucket narrowed to all 64 bits holds one value.
//! So memory is bounded by the histogram and [`MAX_HELD`] values, whatever the group's size,
//! and the result is the value at each rank exactly, as a full sort would give it.

use latscope_analysis::stats::{MeanStd, QUANTILES, StatsNs, linear_quantile, quantile_ranks};
use std::collections::{BTreeMap, HashMap};

/// Values kept at once: 2^22 (32 MiB). Groups up to this size are done in one pass.
pub const MAX_HELD: usize = 1 << 22;

/// Bits of the key the first histogram splits on, and each later pass adds.
const STEP: u32 = 20;

/// The values' total order (`f64::total_cmp`) as unsigned integers.
fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

fn from_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The first pass over a group.
#[derive(Debug)]
pub struct FirstPass {
    pub count: u64,
    mean_std: MeanStd,
    min: f64,
    max: f64,
    /// Counts by the key's top [`STEP`] bits.
    hist: Vec<u64>,
    /// Every value, while there are at most [`MAX_HELD`].
    held: Option<Vec<f64>>,
}

impl Default for FirstPass {
    fn default() -> Self {
        Self {
            count: 0,
            mean_std: MeanStd::default(),
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            hist: vec![0; 1 << STEP],
            held: Some(Vec::new()),
        }
    }
}

impl FirstPass {
    pub fn push(&mut self, values: &[f64]) {
        for &v in values {
            self.mean_std.push(v);
            if v.total_cmp(&self.min).is_lt() {
                self.min = v;
            }
            if v.total_cmp(&self.max).is_gt() {
                self.max = v;
            }
            self.hist[(key(v) >> (64 - STEP)) as usize] += 1;
        }
        self.count += values.len() as u64;
        if let Some(held) = &mut self.held {
            if held.len() + values.len() <= MAX_HELD {
                held.extend_from_slice(values);
            } else {
                self.held = None;
            }
        }
    }

    /// Whether the statistics need more passes (the group was too large to keep).
    pub fn needs_selection(&self) -> bool {
        self.held.is_none()
    }

    /// `(latency, fraction of values at or below it)` at `points` evenly spaced ranks, for
    /// plots: from the kept values exactly, else from the histogram (each bucket's upper
    /// edge, within 1/256 of an octave, and never beyond the maximum).
    pub fn cdf(&mut self, points: usize) -> Vec<(f64, f64)> {
        let n = self.count;
        if n == 0 || points == 0 {
            return Vec::new();
        }
        let steps = (points as u64).min(n).max(1);
        let ranks: Vec<u64> = (0..=steps)
            .map(|i| (((i as f64 / steps as f64) * (n - 1) as f64).round() as u64).min(n - 1))
            .collect();
        if let Some(held) = &mut self.held {
            held.sort_unstable_by(f64::total_cmp);
            return ranks.iter().map(|&r| (held[r as usize], (r + 1) as f64 / n as f64)).collect();
        }
        let mut out = Vec::with_capacity(ranks.len());
        let (mut below, mut bucket) = (0u64, 0usize);
        for &r in &ranks {
            while bucket < self.hist.len() && below + self.hist[bucket] <= r {
                below += self.hist[bucket];
                bucket += 1;
            }
            let upper = from_key(((bucket as u64) << (64 - STEP)) | ((1u64 << (64 - STEP)) - 1));
            let x = if upper.total_cmp(&self.max).is_gt() { self.max } else { upper };
            let x = if x.total_cmp(&self.min).is_lt() { self.min } else { x };
            out.push((x, (r + 1) as f64 / n as f64));
        }
        out
    }
}

/// A bucket of the key space that holds wanted ranks: keys whose top `bits` bits are
/// `prefix`; `below` values of the group sort before it, `count` are in it.
#[derive(Debug, Clone)]
struct Bucket {
    prefix: u64,
    bits: u32,
    below: u64,
    count: u64,
    ranks: Vec<u64>,
}

impl Bucket {
    fn holds(&self, k: u64) -> bool {
        self.bits == 0 || k >> (64 - self.bits) == self.prefix
    }
}

/// What one later pass does with a bucket.
enum Work {
    Keep(Vec<f64>),
    Split(HashMap<u64, u64>),
}

/// The buckets of `counts` (sorted by sub-key, under `parent`) that hold `ranks`.
fn buckets_of(parent: &Bucket, step: u32, counts: &[(u64, u64)], ranks: &[u64]) -> Vec<Bucket> {
    let mut out: Vec<Bucket> = Vec::new();
    let mut below = parent.below;
    let mut ri = 0;
    for &(sub, c) in counts {
        let mut here = Vec::new();
        while ri < ranks.len() && ranks[ri] < below + c {
            here.push(ranks[ri]);
            ri += 1;
        }
        if !here.is_empty() {
            let prefix = if parent.bits == 0 { sub } else { (parent.prefix << step) | sub };
            out.push(Bucket { prefix, bits: parent.bits + step, below, count: c, ranks: here });
        }
        below += c;
    }
    out
}

/// The exact statistics of the group. `pass` streams the same values again each time it is
/// called (giving them to its argument batch by batch); it is called only when the group
/// was too large to keep. A stream that changed between passes is an error.
pub fn finish<E>(
    mut first: FirstPass,
    mut pass: impl FnMut(&mut dyn FnMut(&[f64])) -> Result<(), E>,
    changed: impl Fn() -> E,
) -> Result<StatsNs, E> {
    let n = first.count;
    let (mean, stddev) = first.mean_std.finish();
    if n == 0 {
        return Ok(StatsNs::default());
    }
    let mut wanted: Vec<u64> = Vec::new();
    for p in QUANTILES {
        if let Some((lo, hi)) = quantile_ranks(n, p) {
            wanted.push(lo);
            wanted.extend(hi);
        }
    }
    wanted.sort_unstable();
    wanted.dedup();
    let mut found: BTreeMap<u64, f64> = BTreeMap::new();
    if let Some(held) = &mut first.held {
        held.sort_unstable_by(f64::total_cmp);
        for &r in &wanted {
            found.insert(r, *held.get(r as usize).ok_or_else(&changed)?);
        }
    } else {
        let root = Bucket { prefix: 0, bits: 0, below: 0, count: n, ranks: Vec::new() };
        let counts: Vec<(u64, u64)> =
            first.hist.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| (i as u64, *c)).collect();
        let mut open = buckets_of(&root, STEP, &counts, &wanted);
        while !open.is_empty() {
            // A bucket narrowed to the whole key holds copies of one value.
            open.retain(|b| {
                if b.bits < 64 {
                    return true;
                }
                for &r in &b.ranks {
                    found.insert(r, from_key(b.prefix));
                }
                false
            });
            if open.is_empty() {
                break;
            }
            let mut budget = MAX_HELD as u64;
            let mut work: Vec<Work> = open
                .iter()
                .map(|b| {
                    if b.count <= budget {
                        budget -= b.count;
                        Work::Keep(Vec::with_capacity(b.count as usize))
                    } else {
                        Work::Split(HashMap::new())
                    }
                })
                .collect();
            pass(&mut |values: &[f64]| {
                for &v in values {
                    let k = key(v);
                    if let Some(i) = open.iter().position(|b| b.holds(k)) {
                        match &mut work[i] {
                            Work::Keep(vals) => vals.push(v),
                            Work::Split(h) => {
                                let step = STEP.min(64 - open[i].bits);
                                let shift = 64 - open[i].bits - step;
                                let sub = (k >> shift) & ((1u64 << step) - 1);
                                *h.entry(sub).or_insert(0) += 1;
                            }
                        }
                    }
                }
            })?;
            let mut next = Vec::new();
            for (b, w) in open.iter().zip(work) {
                match w {
                    Work::Keep(mut vals) => {
                        if vals.len() as u64 != b.count {
                            return Err(changed());
                        }
                        vals.sort_unstable_by(f64::total_cmp);
                        for &r in &b.ranks {
                            found.insert(r, vals[(r - b.below) as usize]);
                        }
                    }
                    Work::Split(h) => {
                        let mut counts: Vec<(u64, u64)> = h.into_iter().collect();
                        counts.sort_unstable();
                        if counts.iter().map(|c| c.1).sum::<u64>() != b.count {
                            return Err(changed());
                        }
                        next.extend(buckets_of(b, STEP.min(64 - b.bits), &counts, &b.ranks));
                    }
                }
            }
            open = next;
        }
    }
    let at = |r: u64| found.get(&r).copied().unwrap_or(f64::NAN);
    let [p50, p90, p99, p999] = QUANTILES.map(|p| linear_quantile(n, p, at));
    Ok(StatsNs { min: Some(first.min), mean, stddev, p50, p90, p99, p999, max: Some(first.max) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_analysis::stats::stats_of_ns;

    /// Runs the selection with `held` forced off, so even small inputs take the passes.
    fn selected(values: &[f64], batch: usize) -> StatsNs {
        let mut first = FirstPass::default();
        for c in values.chunks(batch) {
            first.push(c);
        }
        first.held = None;
        let mut passes = 0;
        let stats = finish(
            first,
            |f| -> Result<(), ()> {
                passes += 1;
                for c in values.chunks(batch) {
                    f(c);
                }
                Ok(())
            },
            || (),
        )
        .unwrap();
        assert!(passes <= 4, "{passes} passes");
        stats
    }

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn keys_keep_the_total_order() {
        let xs = [-1e300, -2.5, -0.0, 0.0, 1e-300, 1.0, 812.5, 1e300, f64::INFINITY];
        for w in xs.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{w:?}");
        }
        for x in xs {
            assert_eq!(from_key(key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn selection_equals_a_full_sort_bit_for_bit() {
        let mut seed = 7;
        // A long tail, many duplicates (whole nanoseconds) and a narrow cluster: buckets that
        // are split, kept, and narrowed to one repeated value.
        let mut values: Vec<f64> = (0..50_000)
            .map(|i| match i % 5 {
                0 => (lcg(&mut seed) * 1e6).round(),
                1 => 1000.0,
                2 => 1000.0 + lcg(&mut seed) * 1e-9,
                3 => (-lcg(&mut seed).ln() * 3e3).min(1e9),
                _ => lcg(&mut seed) * 50.0,
            })
            .collect();
        let got = selected(&values, 777);
        let want = stats_of_ns(&mut values.clone());
        for (g, w) in [
            (got.min, want.min),
            (got.p50, want.p50),
            (got.p90, want.p90),
            (got.p99, want.p99),
            (got.p999, want.p999),
            (got.max, want.max),
        ] {
            assert_eq!(g.map(f64::to_bits), w.map(f64::to_bits), "{got:?}\n{want:?}");
        }
        assert_eq!(got.mean, want.mean);
        assert_eq!(got.stddev, want.stddev);
        // One value repeated: every rank is that value.
        values.iter_mut().for_each(|v| *v = 42.0);
        assert_eq!(selected(&values, 1000).p999, Some(42.0));
    }

    #[test]
    fn a_stream_that_changes_between_passes_is_an_error() {
        let values: Vec<f64> = (0..1000).map(f64::from).collect();
        let mut first = FirstPass::default();
        first.push(&values);
        first.held = None;
        let r = finish(
            first,
            |f| -> Result<(), &str> {
                f(&values[..500]);
                Ok(())
            },
            || "changed",
        );
        assert_eq!(r.unwrap_err(), "changed");
    }

    #[test]
    fn the_histogram_cdf_stays_within_a_bucket_of_the_exact_one() {
        let mut seed = 3;
        let values: Vec<f64> = (0..20_000).map(|_| 100.0 + lcg(&mut seed) * 1e5).collect();
        let mut exact = FirstPass::default();
        exact.push(&values);
        let mut approx = FirstPass::default();
        approx.push(&values);
        approx.held = None;
        let (e, a) = (exact.cdf(100), approx.cdf(100));
        assert_eq!(e.len(), a.len());
        for (x, y) in e.iter().zip(&a) {
            assert_eq!(x.1, y.1);
            assert!(y.0 >= x.0 && y.0 <= x.0 * (1.0 + 1.0 / 256.0) + 1e-9, "{x:?} {y:?}");
        }
    }
}
