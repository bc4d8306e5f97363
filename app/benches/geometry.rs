//! Timeline geometry per frame at 10M events, headless (no GPU, no window): what a frame
//! costs when the viewport changed and every visible lane's mesh is rebuilt
//! (`timeline::build_lanes`: `build_lane` over each lane of a `prepare`d source).
//!
//! The input is the recorded `samples/ftrace/virtio_blk_direct_read.txt` (irq, block,
//! sched events on 2 CPUs), its events replicated back to back with shifted times to 10M,
//! as the analysis bench does, so lanes, slices and event densities are real. Viewports: the
//! whole trace, 1% of it and 0.01% of it (centred), 1600 columns wide.
//!
//! `cargo bench -p latscope --bench geometry`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use latscope::gui::document::{DocSource, SourceId};
use latscope::gui::lod::{Grid, TimeIndex, count_columns, count_columns_indexed};
use latscope::gui::prepare::{LaneKind, prepare};
use latscope::gui::theme::ThemeKind;
use latscope::gui::view::{SourceView, Viewport, default_lanes};
use latscope::gui::views::timeline::build_lanes;
use latscope_model::{Placement, Source};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const SAMPLE: &str = "samples/ftrace/virtio_blk_direct_read.txt";
const EVENTS: usize = 10_000_000;
const WIDTH: f32 = 1600.0;
/// Fraction of the trace on screen, and the bench label.
const ZOOMS: &[(f64, &str)] = &[(1.0, "full"), (1e-2, "1%"), (1e-4, "0.01%")];

/// The sample; a bench without its input fails rather than timing nothing.
fn load_sample() -> Source {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(SAMPLE);
    latscope_importers::open(&path, &latscope_importers::LoadControl::new())
        .unwrap_or_else(|e| panic!("the bench input {}: {e}", path.display()))
}

fn replicate(real: &Source, events: usize) -> Source {
    real.replicated(events).unwrap_or_else(|e| panic!("replicating {}: {e}", real.name))
}

fn bench(c: &mut Criterion) {
    let real = load_sample();
    let big = replicate(&real, EVENTS);
    let (Some(&first), Some(&last)) = (big.events.ts.first(), big.events.ts.last()) else {
        panic!("{SAMPLE} has no events")
    };
    let prepared = Arc::new(prepare(big));
    let doc = DocSource {
        id: SourceId(1),
        prepared: prepared.clone(),
        placement: Placement::IDENTITY,
        data_generation: 1,
        growing: false,
        placed_by: None,
    };
    let lanes = default_lanes(&prepared, ThemeKind::Dark);
    let view = SourceView::of(&doc, &lanes);
    eprintln!("geometry: {} events, {} lanes", prepared.source.events.len(), prepared.lanes.len());
    let span = (last - first) as f64;
    let mut g = c.benchmark_group("geometry");
    g.sample_size(50).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Elements(1));
    for &(fraction, label) in ZOOMS {
        let shown = span * fraction;
        let vp = Viewport { start: first as f64 + (span - shown) / 2.0, ps_per_px: shown / f64::from(WIDTH) };
        eprintln!("geometry {label}: {} vertices and labels", build_lanes(&view, &vp, WIDTH));
        g.bench_with_input(BenchmarkId::new("frame 10M", label), &vp, |b, vp| {
            b.iter(|| build_lanes(&view, black_box(vp), WIDTH))
        });
    }
    // The per-column event counts alone, through each lane's bucket index (what frames
    // use) and by plain whole-lane binary searches (what they used before), full view.
    let vp = Viewport { start: first as f64, ps_per_px: span / f64::from(WIDTH) };
    let grid = Grid { t0: vp.start, ps_per_px: vp.ps_per_px, columns: WIDTH as usize };
    let ts = &prepared.source.events.ts;
    let lanes: Vec<(&[u32], &TimeIndex)> = prepared
        .lanes
        .iter()
        .filter_map(|l| match &l.kind {
            LaneKind::Cpu(c) => Some((&c.events[..], &c.index)),
            LaneKind::Events(e) => Some((&e.events[..], &e.index)),
            _ => None,
        })
        .collect();
    g.bench_function("counts full/indexed", |b| {
        b.iter(|| {
            lanes
                .iter()
                .map(|(ev, ix)| count_columns_indexed(ev.len(), |i| ts[ev[i] as usize], ix, &grid).len())
                .sum::<usize>()
        })
    });
    g.bench_function("counts full/binary search", |b| {
        b.iter(|| {
            lanes
                .iter()
                .map(|(ev, _)| count_columns(ev.len(), |i| ts[ev[i] as usize], &grid).len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
