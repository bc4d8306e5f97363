//! Inference about a change between a baseline and a candidate: for p50, p90, p99 and the
//! mean, the change with a confidence interval and a p-value, a verdict per statistic,
//! and a test of distribution shift. `report --baseline`, the A/B `comparison` of every
//! report and `fleet --baseline/--compare` and `--trend` all call [`compare`].
//!
//! **Why blocks of time.** Latency pairs are not independent: they come in bursts (a
//! storm of interrupts, a congested queue, a CPU held in a deep idle state for a while),
//! and neighbours in a burst resemble each other. Resampling single pairs as if they were
//! independent then understates the variability of every statistic and raises false
//! alarms. Each capture is therefore cut into consecutive windows of time ("blocks") and
//! whole blocks are resampled, so each burst stays together (the block bootstrap of
//! Carlstein 1986 and Künsch 1989, with blocks of equal duration rather than equal count:
//! a burst of many pairs in a short time is one unit, however many pairs it holds).
//!
//! **Block length.** In pairs, the larger of `n^(1/3)` (the order Hall, Horowitz and Jing
//! 1995 show is right for variance and interval estimation) and the automatic choice of
//! Politis and White (2004, with the correction of Patton, Politis and White 2009), which
//! grows with the autocorrelation of the latencies in time order; capped at `min(3√n, n/3)`
//! as Politis and White cap it. A capture of `n` pairs spanning `T` seconds with block
//! length `b` pairs is cut into `round(n/b)` windows of `T/round(n/b)` seconds.
//!
//! **Intervals.** A side (baseline or candidate) is one capture or several (a fleet's
//! group). A bootstrap replicate draws, for each side, its captures with replacement and
//! then, within each drawn capture, as many of its blocks as it has, with replacement (the
//! two-stage bootstrap of Davison and Hinkley 1997, §3.8: a side of one capture is the
//! plain block bootstrap; a side of several also carries the capture-to-capture
//! variation, conservatively). Each replicate's statistic is computed exactly as a report
//! computes it (linear quantiles over the pooled resampled pairs, `x = p (n - 1)`), and the
//! interval is the percentile interval of `candidate* - baseline*` over
//! [`Options::resamples`] replicates; the relative change's interval is that of
//! `candidate* / baseline* - 1`. A statistic's p-value is the two-sided bootstrap p-value
//! that inverts the same interval: twice the smaller share of replicates on either side of
//! zero. A verdict is `regressed` when the 95 % interval lies entirely above zero,
//! `improved` when entirely below, `inconclusive` otherwise, and `insufficient` when a side
//! has fewer than [`MIN_BLOCKS`] blocks or fewer than [`MIN_BEYOND`] pairs expected beyond
//! a quantile (a bootstrap of the largest few values is not reliable).
//!
//! **Shift test.** The two-sample Anderson–Darling statistic (Scholz and Stephens 1987,
//! `A²akN` with midranks for ties), which weighs the tails more than Kolmogorov–Smirnov and
//! so suits latencies, whose regressions show in the tail first. Its tabulated null
//! distribution assumes independent pairs, so the p-value comes from a block permutation
//! test instead: the blocks of both sides are pooled and [`Options::permutations`] times
//! the baseline's number of blocks is drawn from the pool at random; the p-value is the
//! share of relabellings whose statistic reaches the observed one (counting the observed
//! one). Under "no change" both sides' blocks are exchangeable, whatever the dependence
//! inside a block, which is what makes the test valid under burstiness.
//!
//! Everything is deterministic given [`Options::seed`]: each replicate and permutation
//! draws from its own PCG stream derived from the seed, the analysis name and its number,
//! so the same inputs give the same bytes with any number of threads.

use crate::stats;
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;

/// Bootstrap replicates per comparison.
pub const RESAMPLES: usize = 2000;
/// Relabellings of the shift test.
pub const PERMUTATIONS: usize = 2000;
/// The seed of every report's resampling (`latscope` in ASCII).
pub const DEFAULT_SEED: u64 = 0x6c61_7473_636f_7065;
/// A side needs at least this many blocks for any interval.
pub const MIN_BLOCKS: usize = 10;
/// A quantile `p` needs at least this many pairs beyond it on each side, `n (1 - p)`.
pub const MIN_BEYOND: f64 = 5.0;
/// The highest confidence a gate may ask for: with [`RESAMPLES`] replicates, a 99 %
/// interval's ends rest on the 10 most extreme on each side.
pub const MAX_CONFIDENCE: f64 = 0.99;

/// How many replicates and relabellings, and the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub resamples: usize,
    pub permutations: usize,
    pub seed: u64,
    /// A fixed block length in pairs instead of the automatic one (1: every pair on its own,
    /// the independent bootstrap and permutation test, which burstiness makes invalid).
    pub block_pairs: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Self { resamples: RESAMPLES, permutations: PERMUTATIONS, seed: DEFAULT_SEED, block_pairs: None }
    }
}

/// A statistic that has intervals and verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stat {
    Mean,
    P50,
    P90,
    P99,
}

impl Stat {
    pub const ALL: [Stat; 4] = [Stat::Mean, Stat::P50, Stat::P90, Stat::P99];

    pub fn name(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P99 => "p99",
        }
    }

    /// The statistic named `text` (`mean p50 p90 p99`).
    pub fn parse(text: &str) -> Option<Stat> {
        Stat::ALL.into_iter().find(|s| s.name() == text)
    }

    /// The quantile's `p`; `None` for the mean.
    pub fn quantile(self) -> Option<f64> {
        match self {
            Stat::Mean => None,
            Stat::P50 => Some(0.5),
            Stat::P90 => Some(0.9),
            Stat::P99 => Some(0.99),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One value per statistic; JSON `{"mean": …, "p50": …, "p90": …, "p99": …}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PerStat<T> {
    pub mean: T,
    pub p50: T,
    pub p90: T,
    pub p99: T,
}

impl<T> PerStat<T> {
    pub fn from_fn(mut f: impl FnMut(Stat) -> T) -> Self {
        PerStat { mean: f(Stat::Mean), p50: f(Stat::P50), p90: f(Stat::P90), p99: f(Stat::P99) }
    }

    pub fn get(&self, stat: Stat) -> &T {
        match stat {
            Stat::Mean => &self.mean,
            Stat::P50 => &self.p50,
            Stat::P90 => &self.p90,
            Stat::P99 => &self.p99,
        }
    }
}

/// What the 95 % interval of a statistic's change says (latency: larger is worse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The interval lies entirely above zero.
    Regressed,
    /// The interval lies entirely below zero.
    Improved,
    /// The interval holds zero: no change shown either way.
    Inconclusive,
    /// Too little data for an interval (see `method.note`).
    Insufficient,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Insufficient => "insufficient",
        }
    }
}

/// How one side was resampled.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct SideMethod {
    pub captures: usize,
    pub samples: u64,
    /// Blocks holding at least one pair, over all captures.
    pub blocks: usize,
    /// The block duration in seconds (the median over the side's captures).
    pub block_s: f64,
}

/// Which method gave the intervals and the shift test, with its parameters; in every
/// comparison so a report says how it reached its verdicts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Method {
    pub interval: &'static str,
    pub shift_test: &'static str,
    pub why: &'static str,
    pub resamples: usize,
    pub permutations: usize,
    pub seed: u64,
    pub baseline: SideMethod,
    pub candidate: SideMethod,
    /// Why some statistics have no interval, when they have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The `interval` of [`Method`].
pub const INTERVAL_METHOD: &str = "percentile interval of a block bootstrap: per side, captures resampled with \
     replacement, then each capture's blocks of time with replacement";
/// The `shift_test` of [`Method`].
pub const SHIFT_METHOD: &str = "two-sample Anderson-Darling (midranks), p-value by permuting whole blocks of \
     time between the sides";
/// The `why` of [`Method`].
pub const WHY: &str = "pairs come in bursts, so neighbours are not independent: whole blocks of time are \
     resampled and permuted, keeping each burst together; block length max(n^(1/3), \
     Politis-White) pairs, as a duration";

/// The replicates of one statistic, sorted: the change in ns and the relative change.
#[derive(Debug, Clone, Default, PartialEq)]
struct Replicates {
    delta_ns: Vec<f64>,
    change: Vec<f64>,
}

/// The inference of one comparison: flattened into a report's `comparison` entry and a
/// fleet's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Inference {
    /// 95 % interval of candidate minus baseline, nanoseconds.
    pub ci95_ns: PerStat<Option<[f64; 2]>>,
    /// 95 % interval of candidate / baseline − 1 (a fraction: 0.05 is +5 %).
    pub ci95_change: PerStat<Option<[f64; 2]>>,
    /// Two-sided bootstrap p-value of "this statistic did not change".
    pub p_value: PerStat<Option<f64>>,
    /// Block-permutation p-value of "the two sides have one distribution".
    pub shift_p_value: Option<f64>,
    pub verdict: PerStat<Verdict>,
    pub method: Method,
    #[serde(skip)]
    replicates: PerStat<Replicates>,
}

impl Inference {
    /// The interval of the change of `stat` at `confidence` (0.95 for 95 %): in ns, or as a
    /// fraction of the baseline's value when `relative`. `None` where there is none.
    pub fn interval(&self, stat: Stat, confidence: f64, relative: bool) -> Option<[f64; 2]> {
        let r = self.replicates.get(stat);
        let v = if relative { &r.change } else { &r.delta_ns };
        percentile_interval(v, confidence)
    }
}

fn percentile_interval(sorted: &[f64], confidence: f64) -> Option<[f64; 2]> {
    if sorted.is_empty() || !(0.0..1.0).contains(&confidence) {
        return None;
    }
    let n = sorted.len() as u64;
    let at = |i: u64| sorted[i as usize];
    let lo = stats::linear_quantile(n, (1.0 - confidence) / 2.0, at)?;
    let hi = stats::linear_quantile(n, (1.0 + confidence) / 2.0, at)?;
    (lo.is_finite() && hi.is_finite()).then_some([lo, hi])
}

/// One capture's pairs: start time (seconds, on any clock of the capture) and latency
/// (nanoseconds), in any order.
pub type Points = [(f64, f64)];

// ---------------------------------------------------------------------------------------
// Block length (Politis and White 2004; Patton, Politis and White 2009).

/// The flat-top lag window of Politis and Romano.
fn flat_top(t: f64) -> f64 {
    let t = t.abs();
    if t <= 0.5 {
        1.0
    } else if t <= 1.0 {
        2.0 * (1.0 - t)
    } else {
        0.0
    }
}

/// The autocovariance `(1/n) Σ e_t e_{t+k}` of demeaned values.
fn autocovariance(e: &[f64], k: usize) -> f64 {
    if k >= e.len() {
        return 0.0;
    }
    let s: f64 = e.iter().zip(&e[k..]).map(|(a, b)| a * b).sum();
    s / e.len() as f64
}

/// Politis and White's estimate of the stationary bootstrap's optimal expected block
/// length, in values, for the series `x` in time order (at least 1, at most
/// `min(3√n, n/3)`). Lags are examined only while `n × lags` stays below 2^28 (a
/// million values: up to 268 lags), which bounds the work on long captures.
pub fn politis_white_block_length(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 8 {
        return 1.0;
    }
    let nf = n as f64;
    let mean = x.iter().sum::<f64>() / nf;
    let e: Vec<f64> = x.iter().map(|v| v - mean).collect();
    let var = autocovariance(&e, 0);
    let b_max = (3.0 * nf.sqrt()).min(nf / 3.0).ceil().max(1.0);
    if var <= 0.0 || !var.is_finite() {
        return 1.0;
    }
    // K_N = max(5, sqrt(log10 n)) insignificant lags in a row end the search.
    let kn = 5usize.max(nf.log10().sqrt().ceil() as usize);
    let work_cap = ((1usize << 28) / n).max(kn + 1);
    let m_max = (nf.sqrt().ceil() as usize + kn).min(n - 1).min(work_cap);
    let bound = 2.0 * (nf.log10() / nf).sqrt();
    let mut acv = vec![var];
    let mut m_hat = None;
    let mut insignificant_run = 0usize;
    for k in 1..=m_max {
        let c = autocovariance(&e, k);
        acv.push(c);
        if (c / var).abs() < bound {
            insignificant_run += 1;
            if insignificant_run == kn {
                m_hat = Some(k - kn);
                break;
            }
        } else {
            insignificant_run = 0;
        }
    }
    let m = match m_hat {
        Some(m) => (2 * m.max(1)).min(m_max),
        None => m_max,
    };
    while acv.len() <= m {
        acv.push(autocovariance(&e, acv.len()));
    }
    let (mut g, mut spectral) = (0.0, var);
    for (k, &c) in acv.iter().enumerate().take(m + 1).skip(1) {
        let lambda = flat_top(k as f64 / m as f64);
        g += 2.0 * lambda * k as f64 * c;
        spectral += 2.0 * lambda * c;
    }
    if spectral <= 0.0 || !spectral.is_finite() {
        return 1.0;
    }
    // D_SB = 2 g(0)^2 for the stationary bootstrap.
    let d = 2.0 * spectral * spectral;
    let b = (2.0 * g * g / d).cbrt() * nf.cbrt();
    if b.is_finite() { b.clamp(1.0, b_max) } else { 1.0 }
}

/// The block length in pairs used for `n` pairs whose latencies in time order are `x`.
pub fn block_length(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let floor = n.cbrt();
    let b_max = (3.0 * n.sqrt()).min(n / 3.0).ceil().max(1.0);
    politis_white_block_length(x).max(floor).min(b_max).max(1.0)
}

/// One capture cut into blocks of time: the block of each pair (numbered from 0 in time
/// order, empty windows skipped) and the window's duration.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocks {
    /// Pairs sorted by start time (then latency).
    pub points: Vec<(f64, f64)>,
    /// The block of each of `points`.
    pub block: Vec<u32>,
    /// Number of non-empty blocks.
    pub count: usize,
    /// Duration of each window, seconds.
    pub block_s: f64,
}

/// Cuts a capture's pairs into blocks of time (see the module documentation), of
/// `block_pairs` pairs on average when given, else of the automatic length.
pub fn blocks_of(points: &Points, block_pairs: Option<u32>) -> Blocks {
    let mut points = points.to_vec();
    points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let n = points.len();
    if n == 0 {
        return Blocks { points, block: Vec::new(), count: 0, block_s: 0.0 };
    }
    let lat: Vec<f64> = points.iter().map(|p| p.1).collect();
    let b = block_pairs.map_or_else(|| block_length(&lat), |b| f64::from(b.max(1)));
    let windows = ((n as f64 / b).round() as usize).max(1);
    let (t0, t1) = (points[0].0, points[n - 1].0);
    let span = t1 - t0;
    if !(span > 0.0 && span.is_finite()) {
        return Blocks { points, block: vec![0; n], count: 1, block_s: 0.0 };
    }
    let mut block = Vec::with_capacity(n);
    let (mut last, mut next_id) = (usize::MAX, 0u32);
    for p in &points {
        let w = (((p.0 - t0) / span * windows as f64) as usize).min(windows - 1);
        if w != last {
            if last != usize::MAX {
                next_id += 1;
            }
            last = w;
        }
        block.push(next_id);
    }
    Blocks { points, block, count: next_id as usize + 1, block_s: span / windows as f64 }
}

// ---------------------------------------------------------------------------------------
// A side prepared for resampling.

/// A side's pairs sorted by latency with their block, the blocks' counts and sums, and
/// which blocks belong to which capture (blocks are numbered capture by capture).
#[derive(Debug)]
struct Side {
    values: Vec<f64>,
    block_of: Vec<u32>,
    block_n: Vec<u64>,
    block_sum: Vec<f64>,
    captures: Vec<std::ops::Range<u32>>,
    method: SideMethod,
}

impl Side {
    fn new(captures: &[&Points], block_pairs: Option<u32>) -> Side {
        let mut tagged: Vec<(f64, u32)> = Vec::new();
        let (mut block_n, mut block_sum) = (Vec::new(), Vec::new());
        let mut ranges = Vec::new();
        let mut durations = Vec::new();
        for pts in captures {
            if pts.is_empty() {
                continue;
            }
            let b = blocks_of(pts, block_pairs);
            let first = block_n.len() as u32;
            block_n.resize(block_n.len() + b.count, 0);
            block_sum.resize(block_sum.len() + b.count, 0.0);
            for (p, &k) in b.points.iter().zip(&b.block) {
                let id = first + k;
                block_n[id as usize] += 1;
                block_sum[id as usize] += p.1;
                tagged.push((p.1, id));
            }
            ranges.push(first..first + b.count as u32);
            durations.push(b.block_s);
        }
        tagged.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        durations.sort_by(f64::total_cmp);
        let method = SideMethod {
            captures: ranges.len(),
            samples: tagged.len() as u64,
            blocks: block_n.len(),
            block_s: durations.get(durations.len() / 2).copied().unwrap_or(0.0),
        };
        Side {
            values: tagged.iter().map(|t| t.0).collect(),
            block_of: tagged.iter().map(|t| t.1).collect(),
            block_n,
            block_sum,
            captures: ranges,
            method,
        }
    }

    /// Fills `w` with one replicate's block multiplicities: the side's captures drawn with
    /// replacement, then each drawn capture's blocks with replacement.
    fn draw(&self, rng: &mut Pcg64Mcg, w: &mut Vec<u64>) {
        w.clear();
        w.resize(self.block_n.len(), 0);
        let m = self.captures.len();
        for i in 0..m {
            let c = if m == 1 { i } else { below(rng, m as u64) as usize };
            let r = &self.captures[c];
            let k = (r.end - r.start) as u64;
            for _ in 0..k {
                w[(r.start as u64 + below(rng, k)) as usize] += 1;
            }
        }
    }

    /// The four statistics of the pairs weighted by block multiplicities `w`: exactly
    /// what a report computes over the concatenated resampled pairs (the mean up to
    /// summation order).
    fn stats(&self, w: &[u64]) -> [f64; 4] {
        let total: u64 = self.block_n.iter().zip(w).map(|(n, w)| n * w).sum();
        let sum: f64 = self.block_sum.iter().zip(w).map(|(s, &w)| s * w as f64).sum();
        let mean = sum / total as f64;
        // The ranks each quantile reads, and their values found by walking the sorted
        // pairs with their weights: from the bottom up to the median, from the top down to
        // p90 (a tenth of the pairs), never a sort.
        let mut wanted: Vec<u64> = Vec::with_capacity(6);
        for s in [Stat::P50, Stat::P90, Stat::P99] {
            if let Some((lo, hi)) = s.quantile().and_then(|p| stats::quantile_ranks(total, p)) {
                wanted.push(lo);
                wanted.extend(hi);
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let values = self.values_at(w, total, &wanted);
        let at = |r: u64| wanted.iter().position(|&x| x == r).map_or(f64::NAN, |i| values[i]);
        let q = |p: f64| stats::linear_quantile(total, p, at).unwrap_or(f64::NAN);
        [mean, q(0.5), q(0.9), q(0.99)]
    }

    /// The values at `ranks` (ascending) of the pairs weighted by `w`, `total` in all.
    fn values_at(&self, w: &[u64], total: u64, ranks: &[u64]) -> Vec<f64> {
        let mut out = vec![f64::NAN; ranks.len()];
        let half = total / 2;
        let (mut cum, mut i) = (0u64, 0usize);
        for (slot, &r) in ranks.iter().enumerate().filter(|(_, r)| **r < half) {
            while cum + w[self.block_of[i] as usize] <= r {
                cum += w[self.block_of[i] as usize];
                i += 1;
            }
            out[slot] = self.values[i];
        }
        let (mut cum, mut j) = (0u64, self.values.len() - 1);
        for (slot, &r) in ranks.iter().enumerate().rev().filter(|(_, r)| **r >= half) {
            let from_top = total - 1 - r;
            while cum + w[self.block_of[j] as usize] <= from_top {
                cum += w[self.block_of[j] as usize];
                j -= 1;
            }
            out[slot] = self.values[j];
        }
        out
    }
}

/// A uniform integer below `k` (`k > 0`), by Lemire's multiply-and-reject: unbiased and
/// fixed by this code, not by a library's choice of algorithm.
fn below(rng: &mut Pcg64Mcg, k: u64) -> u64 {
    let threshold = k.wrapping_neg() % k;
    loop {
        let m = (rng.next_u64() as u128) * (k as u128);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// SplitMix64's finaliser: spreads a seed's bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of one comparison: the options' seed and the analysis name (FNV-1a), so a
/// comparison's numbers do not depend on which other analyses ran.
pub fn seed_for(seed: u64, analysis: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in analysis.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    mix(seed ^ h)
}

/// The generator of draw `index` of purpose `what` (0 bootstrap, 1 permutation).
fn stream(seed: u64, what: u64, index: u64) -> Pcg64Mcg {
    let hi = mix(seed ^ mix(what.wrapping_add(1)));
    let lo = mix(hi ^ index);
    Pcg64Mcg::new(((hi as u128) << 64) | lo as u128)
}

// ---------------------------------------------------------------------------------------
// The Anderson-Darling shift test.

/// The pooled pairs of both sides, sorted, with their block (the baseline's blocks first)
/// and the distinct values' multiplicities.
#[derive(Debug)]
struct Pooled {
    block_of: Vec<u32>,
    block_n: Vec<u64>,
    /// For each distinct value: its multiplicity `l_j`, and `B_aj` = the number of pooled
    /// values below it plus half its multiplicity.
    ties: Vec<(u64, f64)>,
    /// The index into `ties` of each pooled pair.
    tie_of: Vec<u32>,
}

impl Pooled {
    fn new(a: &Side, b: &Side) -> Pooled {
        let offset = a.block_n.len() as u32;
        let mut all: Vec<(f64, u32)> = a.values.iter().copied().zip(a.block_of.iter().copied()).collect();
        all.extend(b.values.iter().copied().zip(b.block_of.iter().map(|k| k + offset)));
        all.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let mut ties: Vec<(u64, f64)> = Vec::new();
        let mut tie_of = Vec::with_capacity(all.len());
        let mut below = 0u64;
        let mut i = 0;
        while i < all.len() {
            let mut j = i;
            while j < all.len() && all[j].0 == all[i].0 {
                j += 1;
            }
            let l = (j - i) as u64;
            ties.push((l, below as f64 + l as f64 / 2.0));
            tie_of.extend(std::iter::repeat_n(ties.len() as u32 - 1, j - i));
            below += l;
            i = j;
        }
        let mut block_n = a.block_n.clone();
        block_n.extend(&b.block_n);
        Pooled { block_of: all.iter().map(|x| x.1).collect(), block_n, ties, tie_of }
    }

    /// `A²akN` of Scholz and Stephens (1987) for two samples, the first being the pooled
    /// pairs whose block is marked in `first`.
    fn statistic(&self, first: &[bool], counts: &mut Vec<u64>) -> f64 {
        let n = self.block_of.len() as f64;
        let n_a: u64 = self.block_n.iter().zip(first).filter(|(_, f)| **f).map(|(c, _)| c).sum();
        let n_b = self.block_of.len() as u64 - n_a;
        if n_a == 0 || n_b == 0 {
            return 0.0;
        }
        counts.clear();
        counts.resize(self.ties.len(), 0);
        for (&blk, &t) in self.block_of.iter().zip(&self.tie_of) {
            if first[blk as usize] {
                counts[t as usize] += 1;
            }
        }
        let mut below_a = 0u64;
        let mut sum = 0.0;
        for (&(l, b), &f) in self.ties.iter().zip(counts.iter()) {
            // M_aAj: baseline values below z_j plus half of those equal to it.
            let m = below_a as f64 + f as f64 / 2.0;
            let d = n * m - n_a as f64 * b;
            let denom = b * (n - b) - n * l as f64 / 4.0;
            if denom > 0.0 {
                sum += l as f64 / n * d * d / denom;
            }
            below_a += f;
        }
        (n - 1.0) / n * sum * (1.0 / n_a as f64 + 1.0 / n_b as f64)
    }
}

/// The two-sample Anderson–Darling statistic `A²akN` (midranks) of `a` and `b`, as
/// [`compare`] computes it for the shift test.
pub fn anderson_darling(a: &[f64], b: &[f64]) -> f64 {
    // The statistic does not depend on the blocks: one pair each, no block length to find.
    let one = |v: &[f64]| {
        Side::new(&[&v.iter().enumerate().map(|(i, &x)| (i as f64, x)).collect::<Vec<_>>()], Some(1))
    };
    let (sa, sb) = (one(a), one(b));
    let pooled = Pooled::new(&sa, &sb);
    let mut first = vec![true; sa.block_n.len()];
    first.resize(pooled.block_n.len(), false);
    pooled.statistic(&first, &mut Vec::new())
}

/// The block-permutation p-value of the shift test.
fn shift_p_value(a: &Side, b: &Side, opts: &Options, seed: u64) -> f64 {
    let pooled = Pooled::new(a, b);
    let (ka, k) = (a.block_n.len(), pooled.block_n.len());
    let mut observed_first = vec![true; ka];
    observed_first.resize(k, false);
    let observed = pooled.statistic(&observed_first, &mut Vec::new());
    let reached: usize = (0..opts.permutations as u64)
        .into_par_iter()
        .map_init(
            || (Vec::<u32>::new(), vec![false; k], Vec::new()),
            |(order, first, counts), index| {
                let mut rng = stream(seed, 1, index);
                // A uniformly random set of `ka` blocks: a partial Fisher-Yates shuffle.
                order.clear();
                order.extend(0..k as u32);
                for i in 0..ka {
                    let j = i + below(&mut rng, (k - i) as u64) as usize;
                    order.swap(i, j);
                }
                first.iter_mut().for_each(|f| *f = false);
                for &blk in &order[..ka] {
                    first[blk as usize] = true;
                }
                let s = pooled.statistic(first, counts);
                usize::from(s >= observed * (1.0 - 1e-12))
            },
        )
        .sum();
    (1 + reached) as f64 / (1 + opts.permutations) as f64
}

// ---------------------------------------------------------------------------------------
// The comparison.

/// Compares the candidate's captures with the baseline's (each capture's pairs as
/// [`Points`]); `analysis` names the comparison's random streams. Statistics whose
/// intervals cannot be trusted get the verdict `insufficient` and no interval.
pub fn compare(baseline: &[&Points], candidate: &[&Points], analysis: &str, opts: &Options) -> Inference {
    let (a, b) = (Side::new(baseline, opts.block_pairs), Side::new(candidate, opts.block_pairs));
    let seed = seed_for(opts.seed, analysis);
    let mut method = Method {
        interval: INTERVAL_METHOD,
        shift_test: SHIFT_METHOD,
        why: WHY,
        resamples: opts.resamples,
        permutations: opts.permutations,
        seed,
        baseline: a.method,
        candidate: b.method,
        note: None,
    };
    let nothing = |method: Method| Inference {
        ci95_ns: PerStat::default(),
        ci95_change: PerStat::default(),
        p_value: PerStat::default(),
        shift_p_value: None,
        verdict: PerStat::from_fn(|_| Verdict::Insufficient),
        method,
        replicates: PerStat::default(),
    };
    let few = [("baseline", &a), ("candidate", &b)]
        .into_iter()
        .filter(|(_, s)| s.method.blocks < MIN_BLOCKS)
        .map(|(name, s)| {
            format!("the {name} has {} blocks of time, fewer than {MIN_BLOCKS}", s.method.blocks)
        })
        .collect::<Vec<_>>();
    if !few.is_empty() {
        method.note = Some(few.join("; "));
        return nothing(method);
    }
    let shift = (opts.permutations > 0).then(|| shift_p_value(&a, &b, opts, seed));
    if opts.resamples == 0 {
        method.note = Some("no resamples asked for".to_owned());
        return Inference { shift_p_value: shift, ..nothing(method) };
    }
    // Which statistics can have an interval: a quantile needs pairs beyond it on both sides.
    let usable = PerStat::from_fn(|s| match s.quantile() {
        None => true,
        Some(p) => [&a, &b].iter().all(|side| side.method.samples as f64 * (1.0 - p) >= MIN_BEYOND),
    });
    let short: Vec<&str> = Stat::ALL.into_iter().filter(|s| !usable.get(*s)).map(Stat::name).collect();
    if !short.is_empty() {
        method.note = Some(format!(
            "{}: fewer than {MIN_BEYOND} pairs beyond the quantile on a side",
            short.join(", ")
        ));
    }
    let draws: Vec<([f64; 4], [f64; 4])> = (0..opts.resamples as u64)
        .into_par_iter()
        .map_init(
            || (Vec::new(), Vec::new()),
            |(wa, wb), index| {
                let mut rng = stream(seed, 0, index);
                a.draw(&mut rng, wa);
                b.draw(&mut rng, wb);
                (a.stats(wa), b.stats(wb))
            },
        )
        .collect();
    let replicates = PerStat::from_fn(|s| {
        if !usable.get(s) {
            return Replicates::default();
        }
        let i = s.index();
        let mut delta_ns: Vec<f64> = draws.iter().map(|(x, y)| y[i] - x[i]).collect();
        let mut change: Vec<f64> = draws.iter().map(|(x, y)| relative(x[i], y[i])).collect();
        delta_ns.sort_by(f64::total_cmp);
        change.sort_by(f64::total_cmp);
        Replicates { delta_ns, change }
    });
    let ci95_ns = PerStat::from_fn(|s| percentile_interval(&replicates.get(s).delta_ns, 0.95));
    let ci95_change = PerStat::from_fn(|s| percentile_interval(&replicates.get(s).change, 0.95));
    let p_value = PerStat::from_fn(|s| {
        let d = &replicates.get(s).delta_ns;
        if d.is_empty() {
            return None;
        }
        let at_or_below = d.partition_point(|&x| x <= 0.0);
        let at_or_above = d.len() - d.partition_point(|&x| x < 0.0);
        let r = d.len() as f64;
        Some((2.0 * (1 + at_or_below.min(at_or_above)) as f64 / (r + 1.0)).min(1.0))
    });
    let verdict = PerStat::from_fn(|s| match ci95_ns.get(s) {
        None => Verdict::Insufficient,
        Some([lo, _]) if *lo > 0.0 => Verdict::Regressed,
        Some([_, hi]) if *hi < 0.0 => Verdict::Improved,
        Some(_) => Verdict::Inconclusive,
    });
    Inference { ci95_ns, ci95_change, p_value, shift_p_value: shift, verdict, method, replicates }
}

/// `y / x - 1`, with a zero baseline giving 0 (both zero) or infinity.
fn relative(x: f64, y: f64) -> f64 {
    if x == 0.0 { if y == 0.0 { 0.0 } else { f64::INFINITY.copysign(y) } } else { y / x - 1.0 }
}

/// Holm's step-down adjustment of p-values (family-wise error), in the given order.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let m = p.len();
    let mut out = vec![1.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u64) -> Pcg64Mcg {
        stream(seed, 9, 0)
    }

    fn unit(r: &mut Pcg64Mcg) -> f64 {
        (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn normal(r: &mut Pcg64Mcg) -> f64 {
        // Box-Muller.
        let (u, v) = (unit(r).max(1e-300), unit(r));
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// An AR(1) series `x_t = φ x_{t-1} + ε_t`, one value per second.
    fn ar1(n: usize, phi: f64, seed: u64) -> Vec<(f64, f64)> {
        let mut r = rng(seed);
        let mut x = normal(&mut r) / (1.0 - phi * phi).sqrt();
        (0..n)
            .map(|t| {
                x = phi * x + normal(&mut r);
                (t as f64, 1000.0 + 10.0 * x)
            })
            .collect()
    }

    #[test]
    fn weighted_statistics_with_unit_weights_are_the_reports() {
        let pts: Vec<(f64, f64)> =
            (0..997).map(|i| (i as f64 * 1e-3, ((i * 7919) % 1013) as f64 * 1.5)).collect();
        let side = Side::new(&[&pts], None);
        let w = vec![1u64; side.block_n.len()];
        let got = side.stats(&w);
        let ps: Vec<i64> = pts.iter().map(|p| (p.1 * 1000.0) as i64).collect();
        let want = stats::stats_of(&ps).unwrap();
        assert!((got[0] - want.mean.unwrap()).abs() < 1e-9);
        assert_eq!(got[1], want.p50.unwrap());
        assert_eq!(got[2], want.p90.unwrap());
        assert_eq!(got[3], want.p99.unwrap());
        // Weights 2 on every block: every pair twice, which a report of the doubled list gives.
        let w2 = vec![2u64; side.block_n.len()];
        let doubled: Vec<i64> = ps.iter().chain(&ps).copied().collect();
        let want2 = stats::stats_of(&doubled).unwrap();
        let got2 = side.stats(&w2);
        assert_eq!((got2[1], got2[2], got2[3]), (want2.p50.unwrap(), want2.p90.unwrap(), want2.p99.unwrap()));
    }

    #[test]
    fn weighted_quantiles_equal_a_sort_of_the_resampled_pairs() {
        let pts: Vec<(f64, f64)> = (0..500).map(|i| (i as f64, ((i * 31) % 97) as f64)).collect();
        let side = Side::new(&[&pts], None);
        let mut r = rng(3);
        let mut w = Vec::new();
        for _ in 0..50 {
            side.draw(&mut r, &mut w);
            let mut pool: Vec<i64> = Vec::new();
            for (v, &blk) in side.values.iter().zip(&side.block_of) {
                for _ in 0..w[blk as usize] {
                    pool.push((*v * 1000.0) as i64);
                }
            }
            let want = stats::stats_of(&pool).unwrap();
            let got = side.stats(&w);
            assert_eq!((got[1], got[2], got[3]), (want.p50.unwrap(), want.p90.unwrap(), want.p99.unwrap()));
            assert!((got[0] - want.mean.unwrap()).abs() < 1e-9);
        }
    }

    #[test]
    fn block_length_follows_the_autocorrelation() {
        // AR(1): the stationary bootstrap's optimal block is (2φ/(1-φ²))^(2/3) n^(1/3)
        // (G / g(0) = 2φ / (1 - φ²) for an AR(1)).
        for (phi, n) in [(0.5, 20_000), (0.8, 20_000)] {
            let x: Vec<f64> = ar1(n, phi, 11).iter().map(|p| p.1).collect();
            let want = (2.0 * phi / (1.0 - phi * phi)).powf(2.0 / 3.0) * (n as f64).cbrt();
            let got = politis_white_block_length(&x);
            assert!((got / want - 1.0).abs() < 0.35, "phi {phi}: {got} vs {want}");
        }
        // Independent values: the floor n^(1/3) wins.
        let x: Vec<f64> = ar1(8000, 0.0, 5).iter().map(|p| p.1).collect();
        assert!(politis_white_block_length(&x) < 8000f64.cbrt());
        assert!((block_length(&x) - 20.0).abs() < 1e-9);
    }

    #[test]
    fn the_block_bootstrap_sees_the_dependence_that_single_pairs_hide() {
        // The mean of an AR(1) with φ = 0.8 has the long-run standard error
        // σ_ε / (1 - φ) / √n; treating the values as independent gives σ_x / √n, 2.4x less.
        let (n, phi) = (4000, 0.8);
        let pts = ar1(n, phi, 7);
        let truth = 10.0 / (1.0 - phi) / (n as f64).sqrt();
        let naive = 10.0 / (1.0 - phi * phi).sqrt() / (n as f64).sqrt();
        let half = |inf: &Inference| {
            let [lo, hi] = inf.ci95_ns.mean.unwrap();
            (hi - lo) / 2.0 / 1.96 / std::f64::consts::SQRT_2
        };
        let opts = Options { permutations: 0, ..Options::default() };
        let inf = compare(&[&pts], &[&pts], "ar1", &opts);
        let se = half(&inf);
        assert!(se > 0.75 * truth && se < 1.25 * truth, "block bootstrap se {se}, long-run {truth}");
        assert!(se > 1.8 * naive, "{se} vs naive {naive}");
    }

    /// Bursty pairs with no change (two AR(1) series of one process, φ = 0.8, 600 pairs a
    /// side): blocks of time keep false alarms near the level, while resampling and
    /// permuting single pairs, as if they were independent, raises them many times over. The
    /// ground truth is that the two sides never differ.
    #[test]
    fn under_burstiness_false_alarms_stay_near_the_level_only_with_blocks() {
        let rates = |block_pairs: Option<u32>| {
            let opts = Options { resamples: 400, permutations: 400, block_pairs, ..Options::default() };
            let (mut shift, mut mean) = (0, 0);
            for k in 0..60 {
                let (a, b) = (ar1(600, 0.8, 1000 + 2 * k), ar1(600, 0.8, 1001 + 2 * k));
                let inf = compare(&[&a], &[&b], "ar1", &opts);
                shift += usize::from(inf.shift_p_value.unwrap() < 0.05);
                mean += usize::from(inf.verdict.mean != Verdict::Inconclusive);
            }
            (shift, mean)
        };
        let (shift, mean) = rates(None);
        let (shift1, mean1) = rates(Some(1));
        eprintln!("false alarms of 60: blocks {shift} (shift) {mean} (mean); single pairs {shift1} {mean1}");
        // Measured: 7 and 8 of 60 with blocks (26 blocks a side: the block bootstrap misses the
        // covariance across block edges, so it runs somewhat hot at this size), 39 and 35
        // with single pairs. docs/REGRESSIONS.md records both.
        assert!(shift <= 10 && mean <= 10, "blocks of time: {shift} and {mean} of 60 false alarms at 5 %");
        assert!(shift1 >= 30 && mean1 >= 30, "single pairs: {shift1} and {mean1} of 60");
    }

    #[test]
    fn same_seed_same_numbers_and_known_shifts_are_found() {
        let mut r = rng(1);
        let base: Vec<(f64, f64)> = (0..2000).map(|i| (i as f64, 900.0 + 100.0 * unit(&mut r))).collect();
        let same: Vec<(f64, f64)> = (0..2000).map(|i| (i as f64, 900.0 + 100.0 * unit(&mut r))).collect();
        let slower: Vec<(f64, f64)> = same.iter().map(|p| (p.0, p.1 * 1.05)).collect();
        let opts = Options::default();
        let x = compare(&[&base], &[&same], "t", &opts);
        assert_eq!(x, compare(&[&base], &[&same], "t", &opts));
        assert_eq!(x.verdict.p50, Verdict::Inconclusive, "{x:?}");
        assert!(x.shift_p_value.unwrap() > 0.01, "{x:?}");
        let y = compare(&[&base], &[&slower], "t", &opts);
        for s in Stat::ALL {
            assert_eq!(*y.verdict.get(s), Verdict::Regressed, "{s:?} {y:?}");
            let [lo, hi] = y.interval(s, 0.95, true).unwrap();
            assert!(lo < 0.05 + 0.03 && hi > 0.05 - 0.03, "{s:?} [{lo}, {hi}]");
        }
        assert!(y.shift_p_value.unwrap() < 0.001);
        assert!(y.p_value.p50.unwrap() < 0.01);
        let z = compare(&[&slower], &[&base], "t", &opts);
        assert_eq!(z.verdict.mean, Verdict::Improved);
        // Too few pairs: no interval, and the reason.
        let tiny = &base[..12];
        let t = compare(&[tiny], &[tiny], "t", &opts);
        assert_eq!(t.verdict.p50, Verdict::Insufficient);
        assert!(t.method.note.as_deref().unwrap_or("").contains("fewer than 10"), "{:?}", t.method);
        // p99 of 300 pairs has 3 beyond it: insufficient, while the rest has intervals.
        let short = compare(&[&base[..300]], &[&same[..300]], "t", &opts);
        assert_eq!(short.verdict.p99, Verdict::Insufficient);
        assert!(short.ci95_ns.p90.is_some());
    }

    #[test]
    fn holm_adjusts_in_steps() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        assert_eq!(adj, vec![0.03, 0.06, 0.06, 0.02]);
    }
}
