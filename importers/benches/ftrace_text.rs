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

fn input() -> Option<Vec<u8>> {
    if let Some(p) = std::env::var_os("LATSCOPE_BENCH_TEXT") {
        return std::fs::read(&p).map_err(|e| eprintln!("skipped: {}: {e}", Path::new(&p).display())).ok();
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "txt")).collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut one = Vec::new();
    for f in &files {
        if let Ok(d) = std::fs::read(f) {
            one.extend_from_slice(&d);
            if !one.ends_with(b"\n") {
                one.push(b'\n');
            }
        }
    }
    if one.is_empty() {
        eprintln!("skipped: no ftrace text in {}", dir.display());
        return None;
    }
    let mut data = Vec::with_capacity(TARGET_BYTES + one.len());
    while data.len() < TARGET_BYTES {
        data.extend_from_slice(&one);
    }
    Some(data)
}

fn bench(c: &mut Criterion) {
    let Some(data) = input() else { return };
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
