#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Aligning and analysing sources on the common timeline borrows them: the heap grows by
//! what the analysis finds, never by a copy of a trace. Measured with a counting allocator
//! (this file holds one test, so nothing else allocates in the process meanwhile).

mod common;

use latscope_analysis::align::{apply_align, parse_align};
use latscope_analysis::endpoint::{Endpoint, Pred, PredOp, endpoint_times};
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::parse_spec;
use latscope_model::{DigitalTrack, PS_PER_S, PS_PER_US, Placed, Placement, Source, SourceKind};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)] // a global allocator is unsafe by definition; it only forwards to System
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The most the heap grew above its level at the start while `f` ran.
fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

#[test]
fn aligning_and_analysing_across_sources_copies_no_trace() {
    // A real trace grown to 400k events, and a logic capture whose pin rises 3 us after
    // each first request marker (`id=1`, once per copy of the recording), 2 s later.
    let trace = common::sample("ftrace/markers_around_requests.txt").replicated(400_000).unwrap();
    let marker =
        Endpoint::event_where("tracing_mark_write", vec![Pred::new("text", PredOp::Contains, "req_start")]);
    let first = |ep: Endpoint| match ep {
        Endpoint::Event { name, mut preds } => {
            preds.push(Pred::new("id", PredOp::Eq, "1"));
            Endpoint::Event { name, preds }
        }
        other => other,
    };
    let marks = endpoint_times(&trace, "t", &first(marker)).unwrap();
    assert!(marks.len() > 100, "{} marks", marks.len());
    let mut gpio = DigitalTrack::new("GPIO", 0);
    for &t in &marks {
        gpio.push(t + 3 * PS_PER_US - 2 * PS_PER_S, 1);
        gpio.push(t + 4 * PS_PER_US - 2 * PS_PER_S, 0);
    }
    let mut scope = Source::new("scope", "test", SourceKind::File);
    scope.digital.push(gpio);
    // What a copy of the trace would cost at least: its fixed event columns.
    let trace_bytes = trace.events.len() * 30;

    let mut placements = [Placement::IDENTITY; 2];
    let spec = parse_align("1:match tracing_mark_write[text~req_start,id=1] -> GPIO:rise").unwrap();
    let (aligned, grew) = peak_growth(|| apply_align(&spec, &[&trace, &scope], &mut placements));
    let a = aligned.unwrap();
    assert_eq!(a.matched, marks.len());
    assert_eq!(placements[1].offset, 2 * PS_PER_S - 3 * PS_PER_US);
    assert!(grew < trace_bytes / 20, "aligning grew the heap by {grew} bytes; the trace is {trace_bytes}");
    eprintln!(
        "{} events ({trace_bytes} bytes of fixed columns): aligning grew the heap by {grew} bytes",
        trace.events.len()
    );

    let rule = parse_spec("lat=tracing_mark_write[text~req_start,id=1] -> GPIO:rise policy next").unwrap();
    let placed = [Placed::new(&trace, placements[0]), Placed::new(&scope, placements[1])];
    let (found, grew) = peak_growth(|| run_spec(&rule, &placed));
    let found = found.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].samples.len(), marks.len());
    assert!(found[0].latencies().iter().all(|&l| l == 0), "the fit absorbs the 3 us delay");
    assert!(grew < trace_bytes / 20, "analysing grew the heap by {grew} bytes; the trace is {trace_bytes}");
    eprintln!("analysing across both sources grew the heap by {grew} bytes");

    // The counter sees copies: taking the columns out of a table that is shared copies
    // them, and grows the heap by at least the columns.
    let (copy, grew) = peak_growth(|| trace.events.clone().into_parts());
    assert!(grew >= trace_bytes, "a copy grew the heap by only {grew} bytes");
    eprintln!("a copy of the trace's columns grew the heap by {grew} bytes");
    drop(copy);
    // A clone shares the columns (a live snapshot is one): it copies no trace.
    let (clone, grew) = peak_growth(|| trace.clone());
    assert!(grew < trace_bytes / 20, "a clone grew the heap by {grew} bytes; the trace is {trace_bytes}");
    assert!(clone.events.shares_memory_with(&trace.events));
}
