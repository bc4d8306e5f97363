//! Statistics kept up to date as samples arrive: a live analysis's summary at a cost of
//! what arrived and of its distinct latencies' buckets and keys, never of every sample.
//! After any pushes, [`RunningSummary::summary`] gives what [`crate::stats::summarize`] gives on
//! the same samples: the same count, quantiles, minimum, maximum, histograms, groups
//! (counts, quantiles, extremes) and worst samples. Means and standard deviations are summed
//! in the order the samples arrived rather than by start, so they may differ in the last
//! few digits.

use crate::outcome::Sample;
use crate::stats::{
    Bucket, GroupStats, MeanStd, QUANTILES, RunningLatencies, StatsNs, StatsOptions, Summary, edge_above,
    edge_at_or_below, linear_buckets, ps_to_ns, quantile_sorted,
};
use latscope_model::Ps;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;

/// A group keeps its latencies in a list until it holds this many, then in buckets: most
/// keys hold few samples (a key unique per request holds one), and buckets cost kilobytes.
const FEW: usize = 4096;

/// A live analysis's statistics (module doc).
#[derive(Debug, Clone)]
pub struct RunningSummary {
    opts: StatsOptions,
    latencies: RunningLatencies,
    mean: MeanStd,
    /// Whether any sample had a key: without, there are no groups.
    keyed: bool,
    groups: FxHashMap<String, GroupRun>,
    /// Groups of more than one sample: with none, every key is unique and none is shown.
    repeated: usize,
    /// The longest samples so far, longest first: latency, start, arrival, the sample.
    worst: Vec<(Reverse<Ps>, Ps, u64, Sample)>,
    arrived: u64,
}

#[derive(Debug, Clone, Default)]
struct GroupRun {
    count: u64,
    mean: MeanStd,
    latencies: GroupLatencies,
}

#[derive(Debug, Clone)]
enum GroupLatencies {
    Few { values: Vec<Ps>, sorted: bool },
    Many(Box<RunningLatencies>),
}

impl Default for GroupLatencies {
    fn default() -> Self {
        GroupLatencies::Few { values: Vec::new(), sorted: true }
    }
}

impl GroupRun {
    fn push(&mut self, latency: Ps) {
        self.count += 1;
        self.mean.push(ps_to_ns(latency));
        match &mut self.latencies {
            GroupLatencies::Few { values, sorted } => {
                *sorted &= values.last().is_none_or(|&l| l <= latency);
                values.push(latency);
                if values.len() >= FEW {
                    let mut many = RunningLatencies::default();
                    values.iter().for_each(|&v| many.push(v));
                    self.latencies = GroupLatencies::Many(Box::new(many));
                }
            }
            GroupLatencies::Many(many) => many.push(latency),
        }
    }

    /// The group's statistics, as [`crate::stats::summarize`] computes a group's.
    fn stats(&mut self) -> StatsNs {
        let (mean, stddev) = self.mean.finish();
        match &mut self.latencies {
            GroupLatencies::Few { values, sorted } => {
                if !*sorted {
                    values.sort_unstable();
                    *sorted = true;
                }
                let ns: Vec<f64> = values.iter().map(|&p| ps_to_ns(p)).collect();
                let [p50, p90, p99, p999] = QUANTILES.map(|p| quantile_sorted(&ns, p));
                StatsNs {
                    min: ns.first().copied(),
                    mean,
                    stddev,
                    p50,
                    p90,
                    p99,
                    p999,
                    max: ns.last().copied(),
                }
            }
            GroupLatencies::Many(many) => {
                let [p50, p90, p99, p999] = QUANTILES.map(|p| many.quantile_ns(p));
                StatsNs {
                    min: many.min_ps().map(ps_to_ns),
                    mean,
                    stddev,
                    p50,
                    p90,
                    p99,
                    p999,
                    max: many.max_ns(),
                }
            }
        }
    }
}

impl RunningSummary {
    pub fn new(opts: StatsOptions) -> Self {
        Self {
            opts,
            latencies: RunningLatencies::default(),
            mean: MeanStd::default(),
            keyed: false,
            groups: FxHashMap::default(),
            repeated: 0,
            worst: Vec::new(),
            arrived: 0,
        }
    }

    /// The summary of `samples`, pushed in their order.
    pub fn of(samples: &[Sample], opts: StatsOptions) -> Self {
        let mut s = Self::new(opts);
        samples.iter().for_each(|x| s.push(x));
        s
    }

    pub fn count(&self) -> u64 {
        self.latencies.count()
    }

    pub fn options(&self) -> StatsOptions {
        self.opts
    }

    /// The longest samples so far, longest first.
    pub fn worst_samples(&self) -> Vec<Sample> {
        self.worst.iter().map(|w| w.3.clone()).collect()
    }

    pub fn push(&mut self, sample: &Sample) {
        let latency = sample.latency();
        self.latencies.push(latency);
        self.mean.push(ps_to_ns(latency));
        self.keyed |= !sample.key.is_empty();
        let group = match self.groups.get_mut(sample.key.as_str()) {
            Some(g) => g,
            None => self.groups.entry(sample.key.clone()).or_default(),
        };
        group.push(latency);
        if group.count == 2 {
            self.repeated += 1;
        }
        let rank = (Reverse(latency), sample.start, self.arrived);
        self.arrived += 1;
        let n = self.opts.worst;
        if n > 0 && (self.worst.len() < n || self.worst.last().is_some_and(|w| rank < (w.0, w.1, w.2))) {
            let at = self.worst.partition_point(|w| (w.0, w.1, w.2) < rank);
            self.worst.insert(at, (rank.0, rank.1, rank.2, sample.clone()));
            self.worst.truncate(n);
        }
    }

    /// The statistics of every sample pushed, as [`crate::stats::summarize`] gives them (module
    /// doc); `raw_key` gives a key as stored, from the key people read.
    pub fn summary(&mut self, raw_key: impl Fn(&str) -> String) -> Summary {
        let (mean, stddev) = self.mean.finish();
        let min = self.latencies.min_ps().map(ps_to_ns);
        let max = self.latencies.max_ns();
        let [p50, p90, p99, p999] = QUANTILES.map(|p| self.latencies.quantile_ns(p));
        Summary {
            count: self.count(),
            stats_ns: StatsNs { min, mean, stddev, p50, p90, p99, p999, max },
            histogram_log: self.log_histogram(),
            histogram_linear: self.linear_histogram(),
            groups: self.top_groups(raw_key),
            groups_total: if self.keyed { self.groups.len() as u64 } else { 0 },
            worst: self.worst_samples(),
        }
    }

    /// Points of the CDF ([`RunningLatencies::cdf_points`]).
    pub fn cdf_points(&mut self, max_points: usize) -> Vec<[f64; 2]> {
        self.latencies.cdf_points(max_points)
    }

    /// [`crate::stats::log_histogram`] over the latencies: the same edges and counts.
    fn log_histogram(&mut self) -> Vec<Bucket> {
        let (Some(min), Some(max)) = (self.latencies.min_ps(), self.latencies.max_ns()) else {
            return Vec::new();
        };
        let mut tops = Vec::new();
        if let Some(least) = self.latencies.least_above(0) {
            let mut lo = edge_at_or_below(ps_to_ns(least));
            loop {
                let hi = edge_above(lo);
                tops.push((lo, hi));
                if hi > max || !hi.is_finite() {
                    break;
                }
                lo = hi;
            }
        }
        // Class 0: zero or less; class k: the k-th 1-2-5 bucket.
        let classify = |v: f64| {
            if v <= 0.0 { 0 } else { (1 + tops.partition_point(|&(_, hi)| hi <= v)).min(tops.len()) }
        };
        let mut counts = vec![0u64; tops.len() + 1];
        self.latencies.count_by(classify, &mut counts);
        let mut out: Vec<Bucket> = tops
            .iter()
            .zip(&counts[1..])
            .map(|(&(lo_ns, hi_ns), &count)| Bucket { lo_ns, hi_ns, count })
            .collect();
        if counts[0] > 0 {
            let hi = out.first().map_or(0.0, |b| b.lo_ns);
            out.insert(0, Bucket { lo_ns: ps_to_ns(min), hi_ns: hi, count: counts[0] });
        }
        out
    }

    /// [`crate::stats::linear_histogram`] over the latencies: the same edges and counts.
    fn linear_histogram(&mut self) -> Vec<Bucket> {
        let (Some(min), Some(max)) = (self.latencies.min_ps().map(ps_to_ns), self.latencies.max_ns()) else {
            return Vec::new();
        };
        let (n, total, latencies) = (self.opts.linear_buckets, self.count(), &mut self.latencies);
        linear_buckets(min, max, n, total, |bucket_of, counts| latencies.count_by(bucket_of, counts))
    }

    /// The largest groups, as [`crate::stats::summarize`] keeps them: by count, then key; none when
    /// every key is unique. Only the kept groups' statistics are computed.
    fn top_groups(&mut self, raw_key: impl Fn(&str) -> String) -> Vec<GroupStats> {
        if !self.keyed || (self.repeated == 0 && self.groups.len() > 1) {
            return Vec::new();
        }
        let order = |a: &(&String, u64), b: &(&String, u64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0));
        let mut top: Vec<(&String, u64)> = self.groups.iter().map(|(k, g)| (k, g.count)).collect();
        let keep = self.opts.max_groups;
        if top.len() > keep && keep > 0 {
            top.select_nth_unstable_by(keep - 1, order);
        }
        top.truncate(keep);
        top.sort_unstable_by(order);
        let keys: Vec<String> = top.into_iter().map(|(k, _)| k.clone()).collect();
        keys.into_iter()
            .filter_map(|key| {
                let g = self.groups.get_mut(&key)?;
                let stats_ns = g.stats();
                Some(GroupStats { key_raw: raw_key(&key), count: g.count, stats_ns, key })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{AnalysisKind, Outcome};
    use crate::stats;

    /// Samples with latencies drawn to exercise every path: zeros, negatives, ties, spread
    /// over decades, repeated and unique keys; in a scrambled arrival order.
    fn samples(n: usize, seed: u64, keys: usize) -> Vec<Sample> {
        let mut x = seed;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        (0..n)
            .map(|i| {
                let r = next();
                let latency: Ps = match r % 7 {
                    0 => 0,
                    1 => -((r % 5000) as Ps),
                    2 => 1_000_000,
                    3 => (r % 1000) as Ps * 1000,
                    _ => (r % 40_000_000_000) as Ps,
                };
                let start = (next() % 1_000_000_000) as Ps;
                let key = if keys == 0 { String::new() } else { format!("cpu={}", next() as usize % keys) };
                let key = if keys == usize::MAX { format!("req={i}") } else { key };
                Sample { start, end: start + latency, key, start_event: None, end_event: None }
            })
            .collect()
    }

    fn assert_close(a: Option<f64>, b: Option<f64>, what: &str) {
        match (a, b) {
            (Some(a), Some(b)) => {
                assert!((a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0), "{what}: {a} vs {b}")
            }
            _ => assert_eq!(a, b, "{what}"),
        }
    }

    /// Everything but means and stddevs equal; those within rounding.
    fn assert_same(got: &Summary, want: &Summary, what: &str) {
        let strip = |s: &StatsNs| StatsNs { mean: None, stddev: None, ..*s };
        assert_eq!(got.count, want.count, "{what}");
        assert_eq!(strip(&got.stats_ns), strip(&want.stats_ns), "{what}");
        assert_close(got.stats_ns.mean, want.stats_ns.mean, what);
        assert_close(got.stats_ns.stddev, want.stats_ns.stddev, what);
        assert_eq!(got.histogram_log, want.histogram_log, "{what}: log histogram");
        assert_eq!(got.histogram_linear, want.histogram_linear, "{what}: linear histogram");
        assert_eq!(got.groups_total, want.groups_total, "{what}");
        assert_eq!(got.groups.len(), want.groups.len(), "{what}");
        for (g, w) in got.groups.iter().zip(&want.groups) {
            assert_eq!((&g.key, &g.key_raw, g.count), (&w.key, &w.key_raw, w.count), "{what}");
            assert_eq!(strip(&g.stats_ns), strip(&w.stats_ns), "{what}: group {}", g.key);
            assert_close(g.stats_ns.mean, w.stats_ns.mean, what);
            assert_close(g.stats_ns.stddev, w.stats_ns.stddev, what);
        }
        assert_eq!(got.worst, want.worst, "{what}: worst");
    }

    #[test]
    fn a_running_summary_equals_the_summary_of_the_samples_so_far() {
        for (n, keys) in
            [(0, 0), (1, 3), (2, usize::MAX), (300, 0), (5000, 3), (12_000, 2), (3000, usize::MAX)]
        {
            let all = samples(n, n as u64 + 7, keys);
            let opts = StatsOptions { linear_buckets: 40, ..StatsOptions::default() };
            let mut running = RunningSummary::new(opts);
            let mut checks = 0;
            for (i, s) in all.iter().enumerate() {
                running.push(s);
                let so_far = i + 1;
                if so_far.is_power_of_two() || so_far == n || so_far % 2999 == 0 {
                    // `summarize` reads samples by start, as an outcome holds them.
                    let mut o = Outcome::new("x", AnalysisKind::Pair, 0);
                    o.samples = all[..so_far].to_vec();
                    o.samples.sort_by_key(|s| (s.start, s.end));
                    o.raw_keys.insert("cpu=1".into(), "cpu=0x1".into());
                    let want = stats::summarize(&o, &opts).expect("statistics");
                    let got = running.summary(|k| o.raw_key(k).to_owned());
                    assert_same(&got, &want, &format!("{n} samples, keys {keys}, after {so_far}"));
                    checks += 1;
                }
            }
            assert!(n == 0 || checks > 0);
            assert_eq!(running.summary(|k| k.to_owned()).count, n as u64);
        }
    }

    #[test]
    fn every_cdf_point_lies_on_the_samples_cdf() {
        for keys in [0, 2] {
            let all = samples(20_000, 3, keys);
            let mut running = RunningSummary::of(&all, StatsOptions::default());
            let mut lat: Vec<Ps> = all.iter().map(Sample::latency).collect();
            lat.sort_unstable();
            let points = running.cdf_points(200);
            assert!(points.len() > 50 && points.len() <= 202, "{}", points.len());
            assert_eq!(points[0][0], ps_to_ns(lat[0]));
            assert_eq!(points.last().map(|p| p[1]), Some(1.0));
            assert_eq!(points.last().map(|p| p[0]), Some(ps_to_ns(lat[lat.len() - 1])));
            for &[x, y] in &points {
                let at_or_below = lat.partition_point(|&l| ps_to_ns(l) <= x);
                assert_eq!(y, at_or_below as f64 / lat.len() as f64, "at {x} ns");
                assert!(lat.iter().any(|&l| ps_to_ns(l) == x), "{x} ns is a sample's latency");
            }
            assert!(points.windows(2).all(|w| w[0][0] < w[1][0] && w[0][1] < w[1][1]));
        }
    }
}
