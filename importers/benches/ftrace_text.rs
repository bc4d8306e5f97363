//! ftrace text import throughput on real trace text: the corpus's irq/sched/softirq/block
//! and function-tracer captures (and recorded samples when present), concatenated and
//! repeated to a few MB. Nothing here is invented trace text.
//!
//! `CARGO_TARGET_DIR=/work/target-text cargo bench -p latscope-importers --bench ftrace_text`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use latscope_importers::{LoadControl, ftrace_text};
use std::path::Path;

const FILES: &[&str] = &[
    "tc_android_sched_irq.txt",
    "tc_android_sched_irq_syscall.txt",
    "rpi_softirq_timer_rcu_sched.txt",
    "rpi_irq_arch_timer_mailbox.txt",
    "rpi_irq_dwc_otg_shared.txt",
    "mail_excerpts/iomap_ext2_block_events.txt",
    "trappy_juno_thermal_ipa.txt",
    "rpi_function_sched_signal_large.txt",
];

fn input() -> Option<Vec<u8>> {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let corpus = root.join("../shared/corpus/ftrace_text");
    let mut one = Vec::new();
    for f in FILES {
        if let Ok(d) = std::fs::read(corpus.join(f)) {
            one.extend_from_slice(&d);
            if !one.ends_with(b"\n") {
                one.push(b'\n');
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir(root.join("samples/ftrace")) {
        for e in rd.flatten() {
            if e.path().extension().is_some_and(|x| x == "txt")
                && let Ok(d) = std::fs::read(e.path())
            {
                one.extend_from_slice(&d);
            }
        }
    }
    if one.is_empty() {
        return None;
    }
    let mut data = Vec::with_capacity(16 << 20);
    while data.len() < 16 << 20 {
        data.extend_from_slice(&one);
    }
    Some(data)
}

fn bench(c: &mut Criterion) {
    let Some(data) = input() else {
        eprintln!("skipped: no corpus or samples to build the input from");
        return;
    };
    let mut g = c.benchmark_group("ftrace_text");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function("parse (parallel)", |b| {
        b.iter(|| ftrace_text::parse(&data, &LoadControl::new()).map(|s| s.events.len()))
    });
    g.bench_function("parse (one chunk, one core)", |b| {
        b.iter(|| ftrace_text::parse_with_chunks(&data, &LoadControl::new(), 1).map(|s| s.events.len()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
