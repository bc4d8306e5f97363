//! Statistics of one analysis: count, min, mean, stddev, p50/p90/p99/p99.9,
//! max, a log (1-2-5 per decade) and a linear histogram, statistics per key, and the worst
//! samples with their times.
//!
//! Everything is computed here in plain Rust, so crates that run analyses (the simulator)
//! do not compile polars. The arithmetic is polars' own: quantiles, min and max read the
//! sorted latencies exactly as polars' `quantile_slice` does, and means and stddevs are the
//! compensated sum and Welford variance of polars' group aggregations (see
//! [`mean_and_stddev`]). The tests check the results against polars' eager API on a real
//! trace: bit for bit for quantiles and groups; the overall mean and stddev, which polars
//! reduces in a different summation order, agree to the last few ulps.
//! Conventions, fixed here for every report:
//! * durations are nanoseconds as `f64` (sub-ns survives: 1 ps = 0.001 ns);
//! * percentiles interpolate linearly between the closest ranks, `x = p * (n - 1)`, exactly
//!   numpy's default (`method="linear"`) and polars' `QuantileMethod::Linear`;
//! * `stddev` is the population standard deviation (ddof = 0, numpy's default): a report
//!   describes the samples it saw, it does not estimate a wider population;
//! * with no sample every statistic is `None` (JSON `null`).

use crate::outcome::{Outcome, Sample};
use latscope_model::{PS_PER_NS, Ps};

/// Duration statistics in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StatsNs {
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub stddev: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub max: Option<f64>,
}

impl StatsNs {
    /// A statistic by the name `--fail-if` uses (`min mean stddev p50 p90 p99 p999 max`).
    pub fn get(&self, stat: &str) -> Option<Option<f64>> {
        Some(match stat {
            "min" => self.min,
            "mean" => self.mean,
            "stddev" => self.stddev,
            "p50" => self.p50,
            "p90" => self.p90,
            "p99" => self.p99,
            "p999" => self.p999,
            "max" => self.max,
            _ => return None,
        })
    }
}

/// One histogram bucket: samples with `lo_ns <= latency < hi_ns` (the last bucket also
/// holds its upper edge).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bucket {
    pub lo_ns: f64,
    pub hi_ns: f64,
    pub count: u64,
}

/// Statistics of the samples that share one key (`cpu=0 irq=36`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupStats {
    /// The key as people read it (`dev=254,0`).
    pub key: String,
    /// The key as stored (`dev=266338304`): what rules and filters match.
    #[serde(default)]
    pub key_raw: String,
    pub count: u64,
    pub stats_ns: StatsNs,
}

/// Everything §4.5 asks of one analysis. Worst samples keep relative picoseconds; reports
/// convert them to the source's clock.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub stats_ns: StatsNs,
    /// 1-2-5 buckets per decade, from the bucket holding the minimum to the one holding the
    /// maximum, empty buckets included.
    pub histogram_log: Vec<Bucket>,
    /// Equal-width buckets from the minimum to the maximum.
    pub histogram_linear: Vec<Bucket>,
    /// By count (largest first), then key, at most `StatsOptions::max_groups`; empty when
    /// the analysis has no key.
    pub groups: Vec<GroupStats>,
    /// Number of distinct keys (also those beyond `max_groups`, and when every key is unique
    /// and `groups` is left empty).
    pub groups_total: u64,
    /// The longest samples, longest first (ties: earliest first).
    pub worst: Vec<Sample>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsOptions {
    /// How many worst samples to keep.
    pub worst: usize,
    /// Number of linear histogram buckets.
    pub linear_buckets: usize,
    /// How many groups to keep (the largest); keys such as `dev,sector` can be unique per
    /// sample, and a report of a million one-sample groups helps nobody.
    pub max_groups: usize,
}

impl Default for StatsOptions {
    fn default() -> Self {
        Self { worst: 10, linear_buckets: 20, max_groups: 100 }
    }
}

/// A failure inside the dataframe engine (never expected on well-formed outcomes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("statistics of {analysis}: {message}")]
pub struct StatsError {
    pub analysis: String,
    pub message: String,
}

pub(crate) fn ps_to_ns(ps: Ps) -> f64 {
    ps as f64 / PS_PER_NS as f64
}

/// The statistics of `outcome` (its own samples; a chain's stages are summarised apart).
pub fn summarize(outcome: &Outcome, opts: &StatsOptions) -> Result<Summary, StatsError> {
    let mut lat_ps: Vec<Ps> = outcome.samples.iter().map(Sample::latency).collect();
    let lat: Vec<f64> = lat_ps.iter().map(|&p| ps_to_ns(p)).collect();
    let keyed = outcome.samples.iter().any(|s| !s.key.is_empty());
    let mut groups = if keyed { group_stats(&outcome.samples, &lat_ps) } else { Vec::new() };
    let mean_std = mean_and_stddev(&lat);
    let sorted = sorted_ns(&mut lat_ps, lat);
    let stats_ns = sorted_stats(&sorted, mean_std);
    let groups_total = groups.len() as u64;
    // A key unique to each sample (`dev,sector` of block requests) groups nothing: its
    // "groups" would only repeat the samples (the CSV export has them), so none are kept.
    if groups.iter().all(|g| g.count == 1) && groups.len() > 1 {
        groups.clear();
    }
    groups.truncate(opts.max_groups);
    for g in &mut groups {
        g.key_raw = outcome.raw_key(&g.key).to_owned();
    }
    Ok(Summary {
        count: outcome.samples.len() as u64,
        stats_ns,
        histogram_log: log_histogram(&sorted),
        histogram_linear: linear_histogram(&sorted, opts.linear_buckets),
        groups,
        groups_total,
        worst: worst(&outcome.samples, opts.worst),
    })
}

/// Statistics of bare latencies (picoseconds), without groups.
pub fn stats_of(latencies_ps: &[Ps]) -> Result<StatsNs, StatsError> {
    let lat: Vec<f64> = latencies_ps.iter().map(|&p| ps_to_ns(p)).collect();
    let mean_std = mean_and_stddev(&lat);
    let sorted = sorted_ns(&mut latencies_ps.to_vec(), lat);
    Ok(sorted_stats(&sorted, mean_std))
}

/// Statistics of nanoseconds gathered from many captures (a fleet's group), in any order:
/// mean and stddev as the per-key groups compute them, the rest over the values, which are
/// left sorted for the caller's plots. The same quantile rule as every report.
pub fn stats_of_ns(values: &mut [f64]) -> StatsNs {
    let mean_std = mean_and_stddev(values);
    values.sort_unstable_by(f64::total_cmp);
    sorted_stats(values, mean_std)
}

/// The nanoseconds sorted, reusing `buf`'s allocation: the picoseconds are sorted as
/// integers (several times faster than a float sort) and converted, which gives the same
/// array as sorting the floats since the conversion never reverses an order.
fn sorted_ns(ps: &mut [Ps], mut buf: Vec<f64>) -> Vec<f64> {
    ps.sort_unstable();
    buf.clear();
    buf.extend(ps.iter().map(|&p| ps_to_ns(p)));
    buf
}

/// The quantiles every report and fleet gives: p50, p90, p99, p99.9.
pub const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// The ranks (0-based, in ascending order) that the linear quantile `p` of `n` values
/// reads: its floor rank, and the next one when the rank is not whole.
pub fn quantile_ranks(n: u64, p: f64) -> Option<(u64, Option<u64>)> {
    match n {
        0 => None,
        1 => Some((0, None)),
        _ => {
            let float_idx = (n as f64 - 1.0) * p;
            let idx = (float_idx as u64).min(n - 1);
            let next = (float_idx.ceil() as u64 != idx).then_some(idx + 1);
            Some((idx, next))
        }
    }
}

/// The linear quantile `p` of `n` sorted values, reading the value at a rank through `at`
/// (only the ranks [`quantile_ranks`] names), computed exactly as polars' `quantile_slice`
/// does (`QuantileMethod::Linear`): rank `p * (n - 1)`, the values at its floor and the next
/// rank, `(rank - floor) * (upper - lower) + lower`. Bit for bit polars' result, without the
/// copy and selection polars makes for every quantile of every group.
pub fn linear_quantile(n: u64, p: f64, at: impl Fn(u64) -> f64) -> Option<f64> {
    let (idx, next) = quantile_ranks(n, p)?;
    let lower = at(idx);
    let Some(next) = next else { return Some(lower) };
    let upper = at(next);
    let float_idx = (n as f64 - 1.0) * p;
    Some(if lower == upper { lower } else { (float_idx - idx as f64) * (upper - lower) + lower })
}

pub(crate) fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    linear_quantile(sorted.len() as u64, p, |i| sorted[i as usize])
}

/// Overall statistics: min, max and quantiles read the sorted nanoseconds.
fn sorted_stats(sorted: &[f64], (mean, stddev): (Option<f64>, Option<f64>)) -> StatsNs {
    let [p50, p90, p99, p999] = QUANTILES.map(|p| quantile_sorted(sorted, p));
    StatsNs { min: sorted.first().copied(), mean, stddev, p50, p90, p99, p999, max: sorted.last().copied() }
}

/// Latencies that grow (a live analysis's samples), with the count, quantiles and maximum
/// [`summarize`] gives on all of them, at a cost that does not grow with the history:
/// a push files the value in a log-linear bucket (256 per octave, about 0.4 % wide), and a
/// quantile walks, inside the one bucket that holds its rank, the distinct values there
/// with their counts. Recorded times are quantized (a nanosecond, a logic analyzer's
/// sample), so a bucket holds few distinct values however many samples fall in it: a
/// source whose pairs all take the same time answers at once. The values are exact, the
/// same ranks of the same picoseconds as sorting everything.
#[derive(Debug, Clone, Default)]
pub struct RunningLatencies {
    /// Bucket `i` holds the values `bucket_of` maps to `i`.
    buckets: Vec<LatencyBucket>,
    count: u64,
    max: Option<Ps>,
}

/// The values of one bucket: counted by value once a quantile needed them, the newer
/// ones as they came.
#[derive(Debug, Clone, Default)]
struct LatencyBucket {
    len: u64,
    counted: std::collections::BTreeMap<Ps, u64>,
    fresh: Vec<Ps>,
    /// The largest value in the bucket (meaningful once `len > 0`).
    max: Ps,
}

impl LatencyBucket {
    /// The bucket's values with their counts, ascending.
    fn distinct(&mut self) -> &std::collections::BTreeMap<Ps, u64> {
        for v in self.fresh.drain(..) {
            *self.counted.entry(v).or_default() += 1;
        }
        &self.counted
    }
}

/// Sub-buckets per octave, as a power of two.
const SUB_BITS: u32 = 8;

/// The bucket of `v`, in the values' order: negatives (a latency across placed sources)
/// share bucket 0, values below 2^SUB_BITS ps have one each, and each octave above has
/// 2^SUB_BITS.
pub(crate) fn bucket_of(v: Ps) -> usize {
    let Ok(u) = u64::try_from(v) else { return 0 };
    let linear = 1u64 << SUB_BITS;
    if u < linear {
        return 1 + u as usize;
    }
    let octave = 63 - u.leading_zeros();
    let mantissa = (u >> (octave - SUB_BITS)) & (linear - 1);
    1 + ((octave - SUB_BITS + 1) as usize) * linear as usize + mantissa as usize
}

/// The least and the greatest value [`bucket_of`] maps to bucket `b`.
fn bucket_bounds(b: usize) -> (Ps, Ps) {
    let linear = 1usize << SUB_BITS;
    if b == 0 {
        return (Ps::MIN, -1);
    }
    if b <= linear {
        return ((b - 1) as Ps, (b - 1) as Ps);
    }
    let (group, mantissa) = ((b - 1) / linear, (b - 1) % linear);
    let shift = group as u32 - 1;
    let lo = ((linear + mantissa) as u64) << shift;
    let hi = lo + ((1u64 << shift) - 1);
    (lo as Ps, hi.min(Ps::MAX as u64) as Ps)
}

impl RunningLatencies {
    pub fn push(&mut self, latency: Ps) {
        let b = bucket_of(latency);
        if b >= self.buckets.len() {
            self.buckets.resize_with(b + 1, LatencyBucket::default);
        }
        let bucket = &mut self.buckets[b];
        bucket.max = if bucket.len == 0 { latency } else { bucket.max.max(latency) };
        bucket.fresh.push(latency);
        bucket.len += 1;
        self.count += 1;
        self.max = Some(self.max.map_or(latency, |m| m.max(latency)));
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Takes out one `latency` pushed before (a value counted only while asked about, as a
    /// polling run still going is); `false` if none is held.
    pub fn remove(&mut self, latency: Ps) -> bool {
        let Some(bucket) = self.buckets.get_mut(bucket_of(latency)) else { return false };
        if let Some(i) = bucket.fresh.iter().rposition(|&v| v == latency) {
            bucket.fresh.swap_remove(i);
        } else {
            match bucket.counted.get_mut(&latency) {
                Some(n) if *n > 1 => *n -= 1,
                Some(_) => {
                    bucket.counted.remove(&latency);
                }
                None => return false,
            }
        }
        bucket.len -= 1;
        self.count -= 1;
        if bucket.max == latency && bucket.len > 0 {
            let counted = bucket.counted.keys().next_back().copied();
            bucket.max = bucket.fresh.iter().copied().chain(counted).max().unwrap_or(latency);
        }
        if self.max == Some(latency) {
            self.max = self.buckets.iter().rev().find(|b| b.len > 0).map(|b| b.max);
        }
        true
    }

    pub fn max_ns(&self) -> Option<f64> {
        self.max.map(ps_to_ns)
    }

    /// The linear quantile `p` in nanoseconds, as [`summarize`] computes it.
    pub fn quantile_ns(&mut self, p: f64) -> Option<f64> {
        let (idx, next) = quantile_ranks(self.count, p)?;
        let lower = self.at(idx);
        let upper = next.map_or(lower, |n| self.at(n));
        linear_quantile(self.count, p, |rank| if rank == idx { lower } else { upper })
    }

    /// The smallest value, in picoseconds.
    pub fn min_ps(&mut self) -> Option<Ps> {
        let bucket = self.buckets.iter_mut().find(|b| b.len > 0)?;
        bucket.distinct().keys().next().copied()
    }

    /// The smallest value above `floor`, in picoseconds.
    pub fn least_above(&mut self, floor: Ps) -> Option<Ps> {
        for (b, bucket) in self.buckets.iter_mut().enumerate() {
            if bucket.len == 0 || bucket_bounds(b).1 <= floor {
                continue;
            }
            if let Some((&v, _)) = bucket.distinct().range(floor.saturating_add(1)..).next() {
                return Some(v);
            }
        }
        None
    }

    /// How many values each class holds, for a `classify` of nanoseconds that never
    /// decreases as its argument grows (a histogram's bucket): `counts[classify(v)]` counts
    /// `v`. A bucket whose bounds classify alike is counted whole; only the few that
    /// straddle a class edge are read value by value.
    pub fn count_by(&mut self, classify: impl Fn(f64) -> usize, counts: &mut [u64]) {
        for (b, bucket) in self.buckets.iter_mut().enumerate().filter(|(_, b)| b.len > 0) {
            let (lo, hi) = bucket_bounds(b);
            let class = classify(ps_to_ns(lo));
            if class == classify(ps_to_ns(hi)) {
                if let Some(c) = counts.get_mut(class) {
                    *c += bucket.len;
                }
                continue;
            }
            for (&v, &n) in bucket.distinct() {
                if let Some(c) = counts.get_mut(classify(ps_to_ns(v))) {
                    *c += n;
                }
            }
        }
    }

    /// Points of the empirical CDF, `[latency ns, fraction of values at or below it]`:
    /// the minimum, then the largest value of each bucket (about 0.4 % apart), at most about
    /// `max_points` of them evenly spread, the maximum at 1.0 always. Every point lies on the
    /// CDF that [`RunningLatencies`] holds, at a cost of its buckets, not its values.
    pub fn cdf_points(&mut self, max_points: usize) -> Vec<[f64; 2]> {
        let n = self.count as f64;
        let Some(min) = self.min_ps() else { return Vec::new() };
        let first = self.buckets.iter_mut().find(|b| b.len > 0).and_then(|b| b.distinct().get(&min).copied());
        let first = first.unwrap_or(0);
        let mut points = vec![[ps_to_ns(min), first as f64 / n]];
        let filled: Vec<(Ps, u64)> =
            self.buckets.iter().filter(|b| b.len > 0).map(|b| (b.max, b.len)).collect();
        let step = filled.len().div_ceil(max_points.max(1)).max(1);
        let mut below = 0u64;
        for (i, &(max, len)) in filled.iter().enumerate() {
            below += len;
            let last = i + 1 == filled.len();
            if (i % step == step - 1 || last) && max > min {
                points.push([ps_to_ns(max), below as f64 / n]);
            }
        }
        points
    }

    /// The value of 0-based `rank` in ascending order, in nanoseconds.
    fn at(&mut self, rank: u64) -> f64 {
        self.nth(rank).map_or(f64::NAN, ps_to_ns)
    }

    /// The value of 0-based `rank` in ascending order, if there are that many.
    pub fn nth(&mut self, rank: u64) -> Option<Ps> {
        let mut before = 0u64;
        for bucket in &mut self.buckets {
            if rank < before + bucket.len {
                for (&v, &n) in bucket.distinct() {
                    before += n;
                    if rank < before {
                        return Some(v);
                    }
                }
                return None;
            }
            before += bucket.len;
        }
        None
    }
}

/// Statistics per key, largest group first (then by key). Computed here rather than with
/// polars' group-by, which hashed the keys once per aggregation's column copy and selected
/// each quantile apart; the arithmetic is polars' own, so the numbers are identical: a
/// compensated (Kahan) sum in sample order for the mean, Welford's online variance
/// (ddof 0) for the stddev, and [`quantile_sorted`] over the sorted group.
fn group_stats(samples: &[Sample], lat_ps: &[Ps]) -> Vec<GroupStats> {
    // Group ids in order of first appearance, and each sample's group.
    let mut ids: rustc_hash::FxHashMap<&str, u32> = Default::default();
    let mut keys: Vec<&str> = Vec::new();
    // Neighbouring samples mostly share their key: compare with the last before hashing.
    let mut last: Option<(&str, u32)> = None;
    let group_of: Vec<u32> = samples
        .iter()
        .map(|s| {
            let key = s.key.as_str();
            if let Some((k, g)) = last
                && k == key
            {
                return g;
            }
            let g = *ids.entry(key).or_insert_with(|| {
                keys.push(key);
                (keys.len() - 1) as u32
            });
            last = Some((key, g));
            g
        })
        .collect();
    // Counting sort of the latencies by group, keeping sample order inside each group.
    let mut start = vec![0usize; keys.len() + 1];
    for &g in &group_of {
        start[g as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut fill = start.clone();
    let mut values: Vec<Ps> = vec![0; lat_ps.len()];
    for (&g, &v) in group_of.iter().zip(lat_ps) {
        values[fill[g as usize]] = v;
        fill[g as usize] += 1;
    }
    let mut ns: Vec<f64> = Vec::new();
    let mut groups: Vec<GroupStats> = keys
        .iter()
        .enumerate()
        .map(|(g, key)| {
            let group = &mut values[start[g]..start[g + 1]];
            ns.clear();
            ns.extend(group.iter().map(|&p| ps_to_ns(p)));
            let (mean, stddev) = mean_and_stddev(&ns);
            let vals = sorted_ns(group, std::mem::take(&mut ns));
            let [p50, p90, p99, p999] = QUANTILES.map(|p| quantile_sorted(&vals, p));
            let stats = GroupStats {
                key: (*key).to_owned(),
                key_raw: String::new(),
                count: vals.len() as u64,
                stats_ns: StatsNs {
                    min: vals.first().copied(),
                    mean,
                    stddev,
                    p50,
                    p90,
                    p99,
                    p999,
                    max: vals.last().copied(),
                },
            };
            ns = vals;
            stats
        })
        .collect();
    groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
    groups
}

/// Mean and population stddev of values in sample order, as polars' group aggregations
/// compute them (`agg_mean`: one value is itself, more are a Kahan sum over the count;
/// `agg_std(0)`: the square root of Welford's online variance).
fn mean_and_stddev(vals: &[f64]) -> (Option<f64>, Option<f64>) {
    let mut acc = MeanStd::default();
    for &v in vals {
        acc.push(v);
    }
    acc.finish()
}

/// [`mean_and_stddev`] one value at a time, for values that stream past (a fleet's scan):
/// the same Kahan sum and Welford variance, so the same results for the same order.
#[derive(Debug, Clone, Copy, Default)]
pub struct MeanStd {
    sum: f64,
    err: f64,
    first: f64,
    m2: f64,
    running: f64,
    count: u64,
}

impl MeanStd {
    pub fn push(&mut self, v: f64) {
        if self.count == 0 {
            self.first = v;
        }
        let y = v - self.err;
        let new_sum = self.sum + y;
        let new_err = (new_sum - self.sum) - y;
        self.sum = new_sum;
        if new_err.is_finite() {
            self.err = new_err;
        }
        let new_count = self.count + 1;
        let delta_1 = v - self.running;
        let new_mean = delta_1 / new_count as f64 + self.running;
        let delta_2 = v - new_mean;
        self.m2 += delta_1 * delta_2;
        self.count = new_count;
        self.running = new_mean;
    }

    /// `(mean, stddev)`; `None` for no value.
    pub fn finish(&self) -> (Option<f64>, Option<f64>) {
        if self.count == 0 {
            return (None, None);
        }
        let mean = if self.count == 1 { self.first } else { self.sum / self.count as f64 };
        (Some(mean), Some((self.m2 / self.count as f64).sqrt()))
    }
}

/// The 1-2-5 edge at or below `v` (`v > 0`).
pub(crate) fn edge_at_or_below(v: f64) -> f64 {
    let decade = 10f64.powi(v.log10().floor() as i32);
    let m = v / decade;
    // `m` is in [1, 10) up to rounding; step down on rounding so the edge never exceeds `v`.
    let edge = if m >= 5.0 {
        5.0 * decade
    } else if m >= 2.0 {
        2.0 * decade
    } else {
        decade
    };
    if edge > v { edge_below(edge) } else { edge }
}

/// The 1-2-5 edge right above `edge` (an edge).
pub(crate) fn edge_above(edge: f64) -> f64 {
    let decade = 10f64.powi(edge.log10().floor() as i32);
    let m = (edge / decade).round();
    if m < 2.0 {
        2.0 * decade
    } else if m < 5.0 {
        5.0 * decade
    } else if m < 10.0 {
        10.0 * decade
    } else {
        // log10 rounded a power of ten down: `edge` is 10 x decade.
        20.0 * decade
    }
}

/// The 1-2-5 edge right below `edge` (an edge).
fn edge_below(edge: f64) -> f64 {
    let decade = 10f64.powi(edge.log10().floor() as i32);
    let m = (edge / decade).round();
    if m > 5.0 {
        5.0 * decade
    } else if m > 2.0 {
        2.0 * decade
    } else if m > 1.0 {
        decade
    } else {
        0.5 * decade
    }
}

/// Log buckets with 1-2-5 edges per decade over sorted nanoseconds. Samples of zero (or
/// less) go into one leading bucket from the minimum to the first edge.
pub fn log_histogram(sorted_ns: &[f64]) -> Vec<Bucket> {
    let Some(&max) = sorted_ns.last() else { return Vec::new() };
    let nonpos = sorted_ns.partition_point(|&v| v <= 0.0);
    let mut out = Vec::new();
    if nonpos < sorted_ns.len() {
        let mut lo = edge_at_or_below(sorted_ns[nonpos]);
        let mut i = nonpos;
        loop {
            let hi = edge_above(lo);
            let end =
                if hi > max { sorted_ns.len() } else { i + sorted_ns[i..].partition_point(|&v| v < hi) };
            out.push(Bucket { lo_ns: lo, hi_ns: hi, count: (end - i) as u64 });
            i = end;
            if i >= sorted_ns.len() {
                break;
            }
            lo = hi;
        }
    }
    if nonpos > 0 {
        let hi = out.first().map_or(0.0, |b| b.lo_ns);
        out.insert(0, Bucket { lo_ns: sorted_ns[0], hi_ns: hi, count: nonpos as u64 });
    }
    out
}

/// `n` equal-width buckets from the minimum to the maximum of sorted nanoseconds (one bucket
/// when they are all equal).
pub fn linear_histogram(sorted_ns: &[f64], n: usize) -> Vec<Bucket> {
    let (Some(&min), Some(&max)) = (sorted_ns.first(), sorted_ns.last()) else { return Vec::new() };
    linear_buckets(min, max, n, sorted_ns.len() as u64, |bucket_of, counts| {
        for &v in sorted_ns {
            counts[bucket_of(v)] += 1;
        }
    })
}

/// `n` equal-width buckets from `min` to `max` over `total` values; `count` adds each value
/// to `counts[bucket_of(value)]`. Shared by [`linear_histogram`] and the running summary, so
/// both draw the same edges and file a value in the same bucket.
pub(crate) fn linear_buckets(
    min: f64,
    max: f64,
    n: usize,
    total: u64,
    count: impl FnOnce(&dyn Fn(f64) -> usize, &mut [u64]),
) -> Vec<Bucket> {
    let n = n.max(1);
    let width = (max - min) / n as f64;
    if width <= 0.0 || !width.is_finite() {
        return vec![Bucket { lo_ns: min, hi_ns: max, count: total }];
    }
    let mut counts = vec![0u64; n];
    count(&|v| (((v - min) / width) as usize).min(n - 1), &mut counts);
    counts
        .into_iter()
        .enumerate()
        .map(|(i, count)| Bucket {
            lo_ns: min + i as f64 * width,
            hi_ns: if i + 1 == n { max } else { min + (i + 1) as f64 * width },
            count,
        })
        .collect()
}

/// The `n` longest samples, longest first; among equal latencies the earliest first (and
/// among samples equal in both, the first in sample order).
pub fn worst(samples: &[Sample], n: usize) -> Vec<Sample> {
    if n == 0 {
        return Vec::new();
    }
    // One pass keeping the best `n` sorted: after the first few thousand samples almost every
    // sample loses the single comparison with the current n-th, so this is a scan, where a
    // selection over all samples moved them around.
    let rank = |s: &Sample| (std::cmp::Reverse(s.latency()), s.start);
    let mut best: Vec<(std::cmp::Reverse<Ps>, Ps, usize)> = Vec::with_capacity(n + 1);
    for (i, s) in samples.iter().enumerate() {
        let (lat, start) = rank(s);
        if best.len() == n && best.last().is_some_and(|&(l, t, _)| (lat, start) >= (l, t)) {
            continue;
        }
        let at = best.partition_point(|&(l, t, _)| (l, t) <= (lat, start));
        best.insert(at, (lat, start, i));
        best.truncate(n);
    }
    best.into_iter().map(|(_, _, i)| samples[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::AnalysisKind;

    /// numpy's `percentile(a, q)` (linear), written from its definition, for cross-checks.
    fn numpy_linear(sorted: &[f64], p: f64) -> f64 {
        let x = p * (sorted.len() - 1) as f64;
        let lo = x.floor() as usize;
        let hi = (lo + 1).min(sorted.len() - 1);
        sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo as f64)
    }

    fn outcome(lat_ps: &[Ps], keys: &[&str]) -> Outcome {
        let mut o = Outcome::new("t", AnalysisKind::Pair, 0);
        let mut t = 0;
        for (i, &l) in lat_ps.iter().enumerate() {
            o.samples.push(Sample::new(
                t,
                t + l,
                keys.get(i % keys.len().max(1)).map_or(String::new(), |k| (*k).to_owned()),
            ));
            t += 1_000_000;
        }
        o
    }

    #[test]
    fn hand_computed_percentiles_and_population_stddev() {
        // [1, 2, 3, 4] us: p50 = 2.5, p90 at rank 2.7 = 3.7, p99 at 2.97 = 3.97, mean 2.5,
        // population variance 1.25.
        let s = stats_of(&[4_000_000, 1_000_000, 3_000_000, 2_000_000]).unwrap();
        assert_eq!(s.min, Some(1000.0));
        assert_eq!(s.max, Some(4000.0));
        assert_eq!(s.mean, Some(2500.0));
        assert!((s.p50.unwrap() - 2500.0).abs() < 1e-9);
        assert!((s.p90.unwrap() - 3700.0).abs() < 1e-9);
        assert!((s.p99.unwrap() - 3970.0).abs() < 1e-9);
        assert!((s.p999.unwrap() - 3997.0).abs() < 1e-9);
        assert!((s.stddev.unwrap() - 1.25f64.sqrt() * 1000.0).abs() < 1e-9);
        assert_eq!(stats_of(&[]).unwrap(), StatsNs::default());
        let one = stats_of(&[1500]).unwrap();
        assert_eq!((one.p50, one.p999, one.stddev), (Some(1.5), Some(1.5), Some(0.0)));
    }

    #[test]
    fn running_latencies_give_the_sorted_quantiles_as_they_grow() {
        use rand_core::Rng;
        let mut rng = rand_pcg::Pcg64Mcg::new(7);
        let mut running = RunningLatencies::default();
        let mut all: Vec<Ps> = Vec::new();
        // Mostly around 800 ns with a long tail, a few exact repeats, zero and negatives.
        for batch in 0..60 {
            for _ in 0..(batch * 37 % 500) {
                let r = rng.next_u64();
                let v = match r % 100 {
                    0 => -(((r >> 8) % 5_000) as Ps),
                    1 => 0,
                    2..=4 => ((r >> 8) % 2_000_000_000) as Ps,
                    5..=9 => 791_000,
                    _ => 700_000 + ((r >> 8) % 200_000) as Ps,
                };
                running.push(v);
                all.push(v);
            }
            let whole = stats_of(&all).unwrap();
            assert_eq!(running.count(), all.len() as u64);
            assert_eq!(running.max_ns(), whole.max, "batch {batch}");
            for (p, want) in [(0.5, whole.p50), (0.9, whole.p90), (0.99, whole.p99), (0.999, whole.p999)] {
                let got = running.quantile_ns(p);
                assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "batch {batch}, p{p}");
            }
        }
        assert!(all.len() > 10_000);
    }

    /// The first 15 block request latencies (ns; issue -> complete by dev,sector, fifo) of
    /// samples/ftrace/virtio_blk_direct_read.txt, extracted with a regex in Python. Expected
    /// values from Python's `statistics.quantiles(xs, n=1000, method="inclusive")` (numpy's
    /// linear method) and `statistics.pstdev`.
    const REAL_NS: [f64; 15] = [
        300000.0, 182000.0, 143000.0, 152000.0, 147000.0, 176000.0, 148000.0, 154000.0, 150000.0, 164000.0,
        172000.0, 146000.0, 155000.0, 149000.0, 271000.0,
    ];

    #[test]
    fn polars_quantiles_match_numpy_linear_on_a_real_list() {
        let ps: Vec<Ps> = REAL_NS.iter().map(|&n| (n * 1000.0) as Ps).collect();
        let s = stats_of(&ps).unwrap();
        let close =
            |got: Option<f64>, want: f64| assert!((got.unwrap() - want).abs() < 1e-6, "{got:?} != {want}");
        close(s.p50, 154000.0);
        close(s.p90, 235400.0);
        close(s.p99, 295940.0);
        close(s.p999, 299594.0);
        close(s.mean, 173933.33333333334);
        close(s.stddev, 45499.401705468124);
        let mut sorted = REAL_NS.to_vec();
        sorted.sort_by(f64::total_cmp);
        for (got, p) in [(s.p50, 0.5), (s.p90, 0.9), (s.p99, 0.99), (s.p999, 0.999)] {
            close(got, numpy_linear(&sorted, p));
        }
    }

    #[test]
    fn groups_worst_and_histograms() {
        let o = outcome(&[5_000, 1_000, 9_000, 2_000, 7_000, 9_000], &["irq=1", "irq=2", "irq=1"]);
        let s = summarize(&o, &StatsOptions { worst: 3, linear_buckets: 4, max_groups: 5 }).unwrap();
        assert_eq!(s.count, 6);
        // irq=1 holds samples 0, 2, 3, 5: 5, 9, 2, 9 ns; irq=2 holds 1 and 4: 1, 7 ns.
        assert_eq!(s.groups.len(), 2);
        assert_eq!((s.groups[0].key.as_str(), s.groups[0].count), ("irq=1", 4));
        assert_eq!(s.groups[0].stats_ns.max, Some(9.0));
        assert_eq!(s.groups[0].stats_ns.p50, Some(7.0));
        assert_eq!(s.groups[1].stats_ns.mean, Some(4.0));
        // Worst: the two 9 ns samples (earliest first), then 7 ns.
        let w: Vec<(Ps, Ps)> = s.worst.iter().map(|x| (x.latency(), x.start)).collect();
        assert_eq!(w, vec![(9_000, 2_000_000), (9_000, 5_000_000), (7_000, 4_000_000)]);
        // Log buckets 1-2-5: [1,2) [2,5) [5,10): 1 | 2 | 5 7 9 9.
        let log: Vec<(f64, f64, u64)> = s.histogram_log.iter().map(|b| (b.lo_ns, b.hi_ns, b.count)).collect();
        assert_eq!(log, vec![(1.0, 2.0, 1), (2.0, 5.0, 1), (5.0, 10.0, 4)]);
        // Linear: width 2 over [1, 9]: [1,3) 2 | [3,5) 0 | [5,7) 1 | [7,9] 3.
        let lin: Vec<u64> = s.histogram_linear.iter().map(|b| b.count).collect();
        assert_eq!(lin, vec![2, 0, 1, 3]);
        assert_eq!(s.histogram_linear.iter().map(|b| b.count).sum::<u64>(), 6);
        let capped = summarize(&o, &StatsOptions { max_groups: 1, ..StatsOptions::default() }).unwrap();
        assert_eq!((capped.groups.len(), capped.groups_total), (1, 2));
        assert_eq!(capped.groups[0].key, "irq=1");
    }

    #[test]
    fn log_buckets_span_decades_and_zero() {
        let v = [0.0, 0.0, 3.0, 150.0, 1999.0, 2000.0];
        let h = log_histogram(&v);
        assert_eq!((h[0].lo_ns, h[0].hi_ns, h[0].count), (0.0, 2.0, 2));
        assert_eq!(h.iter().map(|b| b.count).sum::<u64>(), 6);
        let last = h.last().unwrap();
        assert_eq!((last.lo_ns, last.hi_ns, last.count), (2000.0, 5000.0, 1));
        // Edges are contiguous 1-2-5 steps.
        for w in h.windows(2) {
            assert_eq!(w[0].hi_ns, w[1].lo_ns);
        }
        // The zero bucket, then [2,5) [5,10) [10,20) ... [1000,2000) [2000,5000): 10 edges.
        assert_eq!(h.len(), 1 + 10);
        assert!(log_histogram(&[]).is_empty());
        // Powers of ten over 12 decades: 3 buckets per decade, each value at a bucket's start.
        let p: Vec<f64> = (-3..=9).map(|e| 10f64.powi(e)).collect();
        let h = log_histogram(&p);
        assert_eq!(h.len(), 12 * 3 + 1);
        assert_eq!(h.iter().map(|b| b.count).sum::<u64>(), 13);
        assert!(h.windows(2).all(|w| w[0].hi_ns == w[1].lo_ns && w[0].lo_ns < w[0].hi_ns));
        assert_eq!(linear_histogram(&[4.0, 4.0], 10), vec![Bucket { lo_ns: 4.0, hi_ns: 4.0, count: 2 }]);
    }

    #[test]
    fn unkeyed_outcomes_have_no_groups() {
        let o = outcome(&[1_000, 2_000], &[]);
        let s = summarize(&o, &StatsOptions::default()).unwrap();
        assert!(s.groups.is_empty());
        assert_eq!(s.stats_ns.p50, Some(1.5));
    }
}
