//! trace.dat import speed: whole-file parse (dominated by page decoding) on the committed
//! sample, and on any file named by `LATSCOPE_BENCH_DAT` (e.g. the ~350k-event recording
//! from bench/record-big-trace.sh). Compare with `trace-cmd report FILE > /dev/null`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use latscope_importers::{Input, LoadControl, tracedat};
use std::hint::black_box;
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace/blk_read_v6.dat")];
    if let Some(p) = std::env::var_os("LATSCOPE_BENCH_DAT") {
        v.extend(std::env::split_paths(&p));
    }
    v.retain(|p| p.exists());
    v
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("tracedat");
    g.sample_size(10);
    for path in files() {
        let Ok(input) = Input::open(&path) else { continue };
        let data = input.bytes();
        let events = tracedat::parse(data, &LoadControl::new()).map(|s| s.events.len()).unwrap_or(0);
        g.throughput(Throughput::Elements(events as u64));
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        g.bench_function(format!("parse/{name}"), |b| {
            b.iter(|| tracedat::parse(black_box(data), &LoadControl::new()).map(|s| s.events.len()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
