#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `stats::summarize` computes every statistic itself; quantiles and groups must be bit for bit what
//! polars' eager API gives (the implementation it replaced, kept here as the reference), on
//! the outcomes of a recorded trace; its worst samples those of a full sort.

use latscope_analysis::outcome::Sample;
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::preset_spec;
use latscope_analysis::stats::{GroupStats, StatsNs, StatsOptions, summarize};
use latscope_model::{PS_PER_NS, Placed};
use polars::prelude::*;

const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

fn scalar_f64(s: PolarsResult<Scalar>) -> Option<f64> {
    match s.unwrap().value() {
        AnyValue::Float64(v) => Some(*v),
        _ => None,
    }
}

/// The statistics as polars' eager API computes them (the implementation before
/// `group_stats` and `quantile_sorted` replaced it), to check those bit for bit.
#[allow(deprecated)]
fn polars_reference(samples: &[Sample]) -> (StatsNs, Vec<GroupStats>) {
    let lat: Vec<f64> = samples.iter().map(|s| s.latency() as f64 / PS_PER_NS as f64).collect();
    let lat_col = Column::new("lat".into(), &lat);
    let q = |p: f64| scalar_f64(lat_col.quantile_reduce(p, QuantileMethod::Linear));
    let stats = StatsNs {
        min: scalar_f64(lat_col.min_reduce()),
        mean: scalar_f64(lat_col.mean_reduce()),
        stddev: scalar_f64(lat_col.std_reduce(0)),
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        p999: q(0.999),
        max: scalar_f64(lat_col.max_reduce()),
    };
    let keys: Vec<&str> = samples.iter().map(|s| s.key.as_str()).collect();
    let df = DataFrame::new_infer_height(vec![Column::new("key".into(), keys), lat_col]).unwrap();
    let gb = df.group_by(["key"]).unwrap().select(["lat"]);
    let values = |df: DataFrame| -> Vec<Option<f64>> {
        let col = df.columns()[1].cast(&DataType::Float64).unwrap();
        let ca = col.f64().unwrap();
        (0..ca.len()).map(|i| ca.get(i)).collect()
    };
    let counts = gb.count().unwrap();
    let key_col = counts.column("key").unwrap().str().unwrap().clone();
    let count = values(counts.clone());
    let (min, max) = (values(gb.min().unwrap()), values(gb.max().unwrap()));
    let (mean, std) = (values(gb.mean().unwrap()), values(gb.std(0).unwrap()));
    let qs: Vec<Vec<Option<f64>>> =
        QUANTILES.iter().map(|&p| values(gb.quantile(p, QuantileMethod::Linear).unwrap())).collect();
    let mut groups: Vec<GroupStats> = (0..counts.height())
        .map(|r| GroupStats {
            key: key_col.get(r).unwrap().to_owned(),
            key_raw: key_col.get(r).unwrap().to_owned(),
            count: count[r].unwrap() as u64,
            stats_ns: StatsNs {
                min: min[r],
                mean: mean[r],
                stddev: std[r],
                p50: qs[0][r],
                p90: qs[1][r],
                p99: qs[2][r],
                p999: qs[3][r],
                max: max[r],
            },
        })
        .collect();
    groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
    (stats, groups)
}

/// Every preset that pairs something in the recorded virtio trace, and its outcome with
/// each sample's key replaced by one of a few (so groups hold many samples each).
#[test]
fn statistics_match_polars_on_a_real_trace() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace/virtio_blk_direct_read.txt");
    let src = latscope_importers::open(&path, &latscope_importers::LoadControl::new())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let sources = [src];
    let mut checked = 0;
    for preset in ["irq-handler", "block", "wakeup"] {
        let spec = preset_spec(preset).unwrap();
        for o in run_spec(&spec, &Placed::all(&sources)).unwrap() {
            let mut few = o.clone();
            for (i, s) in few.samples.iter_mut().enumerate() {
                s.key = format!("k{}", (s.start / 7 + i as i64) % 5);
            }
            for o in [o, few] {
                assert!(o.samples.len() > 10, "{preset}: {} samples", o.samples.len());
                let (stats, mut groups) = polars_reference(&o.samples);
                // The stored key beside the one people read (`pid=1234 (dd)`), as the outcome keeps it.
                for g in &mut groups {
                    g.key_raw = o.raw_key(&g.key).to_owned();
                }
                let s =
                    summarize(&o, &StatsOptions { max_groups: usize::MAX, ..Default::default() }).unwrap();
                // The overall mean and stddev are the compensated sum and Welford variance
                // that polars uses per group; polars' whole-column reductions sum in chunks
                // the compiler may reassociate, so they may differ in the last bits.
                let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
                    (Some(a), Some(b)) => (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
                    (a, b) => a == b,
                };
                assert!(
                    close(s.stats_ns.mean, stats.mean),
                    "{preset}: mean {:?} vs {:?}",
                    s.stats_ns.mean,
                    stats.mean
                );
                assert!(
                    close(s.stats_ns.stddev, stats.stddev),
                    "{preset}: stddev {:?} vs {:?}",
                    s.stats_ns.stddev,
                    stats.stddev
                );
                let exact = |x: StatsNs| StatsNs { mean: None, stddev: None, ..x };
                assert_eq!(exact(s.stats_ns), exact(stats), "{preset}");
                assert_eq!(s.groups_total, groups.len() as u64, "{preset}");
                if !s.groups.is_empty() {
                    assert_eq!(s.groups, groups, "{preset}");
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 6);
}
