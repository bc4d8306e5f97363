//! ftrace text import throughput (MB/s) on real trace text: every `samples/ftrace/*.txt`
//! (recorded on this machine: irq, sched, block, timer events and trace_marker writes, plus
//! `trace-cmd report` output of the same kind), concatenated in name order and repeated to
//! 8 MiB in memory. Nothing here is invented trace text. "one chunk" is the line parser on
//! one core; "parallel" is the importer as `latscope` runs it.
//!
//! `LATSCOPE_BENCH_TEXT=FILE` times that file as it is instead (e.g. the 40 MB recording of
//! bench/record-big-trace.sh, the peer comparison's input).
//!
//! `cargo bench -p latscope-importers --bench ftrace_text`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use latscope_importers::{LoadControl, ftrace_text};
use std::hint::black_box;
use std::path::Path;

const TARGET_BYTES: usize = 8 << 20;

/// The input; a bench without it fails rather than timing nothing.
fn input() -> Vec<u8> {
    if let Some(p) = std::env::var_os("LATSCOPE_BENCH_TEXT") {
        return std::fs::read(&p)
            .unwrap_or_else(|e| panic!("LATSCOPE_BENCH_TEXT {}: {e}", Path::new(&p).display()));
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    let mut one = Vec::new();
    for f in &files {
        one.extend_from_slice(&std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display())));
        if !one.ends_with(b"\n") {
            one.push(b'\n');
        }
    }
    assert!(!one.is_empty(), "no ftrace text in {}", dir.display());
    let mut data = Vec::with_capacity(TARGET_BYTES + one.len());
    while data.len() < TARGET_BYTES {
        data.extend_from_slice(&one);
    }
    data
}

fn bench(c: &mut Criterion) {
    let data = input();
    let mut g = c.benchmark_group("ftrace_text");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    let mib = data.len() >> 20;
    g.bench_function(format!("parse {mib} MiB (parallel)"), |b| {
        b.iter(|| ftrace_text::parse(black_box(&data), &LoadControl::new()).map(|s| s.events.len()))
    });
    g.bench_function(format!("parse {mib} MiB (one chunk, one core)"), |b| {
        b.iter(|| {
            ftrace_text::parse_with_chunks(black_box(&data), &LoadControl::new(), 1).map(|s| s.events.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
