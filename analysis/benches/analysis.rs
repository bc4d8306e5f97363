//! Pairing, stall detection and statistics at 1M and 10M events (issue 8). The input is the
//! recorded `samples/ftrace/virtio_blk_direct_read.txt` (irq, block, sched events of direct
//! reads on a virtio disk), its events replicated back to back with shifted times until the
//! table holds the wanted count, so every event, field and key is real and only time repeats.
//! The big table is built once per size, outside the timed loops.
//!
//! * `pairing/PRESET/N`, `stall/block_rq_issue/N`: `run_spec` over N events;
//! * `stats/PRESET/N`: `stats::summarize` of an outcome of N samples, the preset's real
//!   samples (latencies and keys) replicated;
//! * `pair+stats/PRESET/N`: `run_spec` over N events and `summarize` of what it found, what a
//!   report of one analysis costs after the import.
//!
//! `cargo bench -p latscope-analysis --bench analysis` (a filter such as `-- pair+stats`
//! runs a part).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use latscope_analysis::outcome::{Outcome, Sample};
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::{Spec, parse_spec, preset_spec};
use latscope_analysis::stats::{StatsOptions, summarize};
use latscope_model::{Placed, Source};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

const SAMPLE: &str = "samples/ftrace/virtio_blk_direct_read.txt";
const SIZES: &[(usize, &str)] = &[(1_000_000, "1M"), (10_000_000, "10M")];

/// The sample; a bench without its input fails rather than timing nothing.
fn load_sample() -> Source {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(SAMPLE);
    latscope_importers::open(&path, &latscope_importers::LoadControl::new())
        .unwrap_or_else(|e| panic!("the bench input {}: {e}", path.display()))
}

fn replicate(real: &Source, events: usize) -> Source {
    real.replicated(events).unwrap_or_else(|e| panic!("replicating {}: {e}", real.name))
}

fn specs() -> Vec<(&'static str, Spec)> {
    ["irq-handler", "block", "wakeup"]
        .into_iter()
        .map(|name| (name, preset_spec(name).unwrap_or_else(|e| panic!("preset {name}: {e}"))))
        .collect()
}

/// `real`'s samples repeated until there are `samples`, each copy shifted past the previous
/// one, keys kept: real latencies and real group sizes, only more of them.
fn replicate_outcome(real: &Outcome, samples: usize) -> Outcome {
    let mut big = real.clone();
    big.samples = Vec::with_capacity(samples);
    let Some(span) = real.samples.iter().map(|s| s.end).max() else { return big };
    let period = span + 1_000_000_000;
    let mut copy = 0;
    while big.samples.len() < samples {
        let shift = copy * period;
        let room = samples - big.samples.len();
        big.samples.extend(
            real.samples
                .iter()
                .take(room)
                .map(|s| Sample::new(s.start + shift, s.end + shift, s.key.clone())),
        );
        copy += 1;
    }
    big
}

/// Sum of what a summary found, so the optimiser cannot drop any of it.
fn summary_weight(outcomes: &[Outcome], opts: &StatsOptions) -> u64 {
    outcomes
        .iter()
        .filter_map(|o| summarize(o, opts).ok())
        .map(|s| s.count + s.groups_total + s.histogram_log.len() as u64 + s.worst.len() as u64)
        .sum()
}

fn bench_stats(c: &mut Criterion, real: &Source, pair_specs: &[(&'static str, Spec)]) {
    let opts = StatsOptions::default();
    let small = [real.clone()];
    for (name, spec) in pair_specs.iter().filter(|(n, _)| matches!(*n, "irq-handler" | "block")) {
        let Some(found) = run_spec(spec, &Placed::all(&small)).ok().and_then(|o| o.into_iter().next()) else {
            eprintln!("stats {name}: the sample gives no outcome");
            continue;
        };
        for &(samples, label) in SIZES {
            let big = [replicate_outcome(&found, samples)];
            match summarize(&big[0], &opts) {
                Ok(s) => eprintln!("stats {name} {label}: {} samples, {} groups", s.count, s.groups_total),
                Err(e) => eprintln!("stats {name} {label}: {e}"),
            }
            let mut g = c.benchmark_group("stats");
            g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
            g.throughput(Throughput::Elements(samples as u64));
            g.bench_with_input(BenchmarkId::new(*name, label), &big, |b, o| {
                b.iter(|| summary_weight(black_box(o), &opts))
            });
            g.finish();
        }
    }
}

fn bench(c: &mut Criterion) {
    let real = load_sample();
    let pair_specs = specs();
    let stall = match parse_spec("stall:block_rq_issue") {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("stall spec: {e}");
            None
        }
    };
    for &(events, label) in SIZES {
        let sources = [replicate(&real, events)];
        // What each timed run finds, printed once so a bench that pairs nothing stands out.
        for (name, spec) in pair_specs.iter().map(|(n, s)| (*n, s)).chain(stall.iter().map(|s| ("stall", s)))
        {
            match run_spec(spec, &Placed::all(&sources)) {
                Ok(o) => eprintln!(
                    "{label} {name}: {} samples, {} windows",
                    o.iter().map(|o| o.samples.len()).sum::<usize>(),
                    o.iter().map(|o| o.windows.len()).sum::<usize>()
                ),
                Err(e) => eprintln!("{label} {name}: {e}"),
            }
        }
        let mut g = c.benchmark_group("pairing");
        g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
        g.throughput(Throughput::Elements(events as u64));
        for (name, spec) in &pair_specs {
            g.bench_with_input(BenchmarkId::new(*name, label), &sources, |b, s| {
                b.iter(|| {
                    run_spec(black_box(spec), &Placed::all(s))
                        .map(|o| o.iter().map(|o| o.samples.len()).sum::<usize>())
                })
            });
        }
        g.finish();
        let mut g = c.benchmark_group("pair+stats");
        g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
        g.throughput(Throughput::Elements(events as u64));
        let opts = StatsOptions::default();
        for (name, spec) in &pair_specs {
            g.bench_with_input(BenchmarkId::new(*name, label), &sources, |b, s| {
                b.iter(|| run_spec(black_box(spec), &Placed::all(s)).map(|o| summary_weight(&o, &opts)))
            });
        }
        g.finish();
        if let Some(spec) = &stall {
            let mut g = c.benchmark_group("stall");
            g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
            g.throughput(Throughput::Elements(events as u64));
            g.bench_with_input(BenchmarkId::new("block_rq_issue", label), &sources, |b, s| {
                b.iter(|| {
                    run_spec(black_box(spec), &Placed::all(s))
                        .map(|o| o.iter().map(|o| o.windows.len()).sum::<usize>())
                })
            });
            g.finish();
        }
    }
    bench_stats(c, &real, &pair_specs);
}

criterion_group!(benches, bench);
criterion_main!(benches);
