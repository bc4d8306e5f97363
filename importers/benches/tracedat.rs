//! trace.dat import speed in events/s: whole-file parse (dominated by page decoding; the
//! page decoder has no public entry of its own) on every recorded `samples/ftrace/*.dat`
//! (v6, v7 uncompressed and v7 zstd), and on any file named by `LATSCOPE_BENCH_DAT` (e.g.
//! the ~350k-event recording from bench/record-big-trace.sh). Compare with
//! `trace-cmd report FILE > /dev/null`.
//!
//! `cargo bench -p latscope-importers --bench tracedat`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use latscope_importers::{Input, LoadControl, tracedat};
use std::hint::black_box;
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&samples)
        .map(|rd| {
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "dat")).collect()
        })
        .unwrap_or_default();
    v.sort();
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
        // The version byte follows "\x17\x08Dtracing"; v7 files name their codec next.
        let version = data.get(10).map(|&b| char::from(b)).unwrap_or('?');
        let codec = if version == '7' {
            data.get(18..22).map(|c| String::from_utf8_lossy(c).into_owned())
        } else {
            None
        };
        let name = match codec {
            Some(c) => format!("{name} (v7 {})", c.trim_end_matches('\0')),
            None => format!("{name} (v{version})"),
        };
        g.bench_function(format!("parse/{name}"), |b| {
            b.iter(|| tracedat::parse(black_box(data), &LoadControl::new()).map(|s| s.events.len()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
