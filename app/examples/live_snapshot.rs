//! What the live snapshots of the simulator cost as its run grows: the workbench's simulator
//! job (`gui::workers::Accumulator`) fed the simulator's batches as fast as it runs, with a
//! snapshot taken every SNAPSHOT_EVERY events (10,000: the window's 200 ms at 50,000
//! events/s) and the last one held while the next is taken, as the window holds it. Every
//! CHECKPOINT events it prints the snapshots' mean and largest time since the last line, the
//! process's resident memory, what letting a snapshot go cost, and what the live statistics
//! job costs on the held snapshot: its analyses (a `LiveReport` that read the snapshot at
//! the last checkpoint, so it reads what is new since; then again, reading nothing new, which
//! is what every update pays beside the new events), as the window asks for them while a run
//! goes on (`glance`: rules that grow answer with the statistics they keep and a spread of
//! samples), and the panel's results made of them. With `WHOLE=1` in the environment it also times the whole report
//! the job ran before. Snapshots are flat since the growing model shares what is old
//! (`SharedVec`).
//!
//! `cargo run --example live_snapshot -p latscope [--release] -- [EVENTS] [CHECKPOINT] [SCENARIO [KEY=VALUE...]]`
//! (defaults 2000000, 250000, litesdcard; `axienet-napi run_ms=3600000` runs long enough
//! for any count; `SNAPSHOT_EVERY` in the environment changes the spacing). Prints one line
//! per checkpoint.

use latscope::gui::analysis;
use latscope::gui::document::{DocSource, SourceId};
use latscope::gui::prepare::Prepared;
use latscope::gui::theme::ThemeKind;
use latscope::gui::view::{SourceView, Viewport, default_lanes};
use latscope::gui::views::timeline::build_lanes;
use latscope::gui::workers::Accumulator;
use latscope_analysis::live::Glance;
use latscope_model::Placement;
use latscope_sim::{Batch, Simulation, Speed};
use std::sync::Arc;
use std::sync::mpsc::channel;
use std::time::Instant;

const WIDTH: f32 = 1600.0;
/// What the window shows while it follows a live run: about 20 ms, ending at the head.
const SHOWN_PS: f64 = 20e9;

/// The geometry of every lane of `prepared` at its head, as a frame of the following window
/// builds it; returns the vertices and labels, so nothing is optimised away.
fn frame_at_head(prepared: &Arc<Prepared>) -> usize {
    let doc = DocSource {
        id: SourceId(1),
        prepared: prepared.clone(),
        placement: Placement::IDENTITY,
        data_generation: 1,
        growing: true,
        placed_by: None,
    };
    let lanes = default_lanes(prepared, ThemeKind::Dark);
    let view = SourceView::of(&doc, &lanes);
    let head = prepared.source.events.ts.last().copied().unwrap_or(0) as f64;
    let vp = Viewport { start: head - SHOWN_PS, ps_per_px: SHOWN_PS / f64::from(WIDTH) };
    build_lanes(&view, &vp, WIDTH)
}

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0.0);
    pages * 4096.0 / f64::from(1u32 << 20)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let total: usize = args.first().map_or(Ok(2_000_000), |a| a.parse())?;
    let every: usize = args.get(1).map_or(Ok(250_000), |a| a.parse())?;
    let scenario = args.get(2).map_or("litesdcard", String::as_str);
    // Long enough a run never to end before `total` events.
    let sets: Vec<String> = args.iter().skip(3).cloned().collect();
    let sc = latscope_sim::prepare(scenario, &sets, None, Some("3600s"))?;
    let analysed = sc.clone();
    let mut sim = Simulation::new(sc)?;
    let (tx, rx) = channel::<Batch>();
    sim.attach(tx);
    sim.set_speed(Speed::Max);
    let lines = sim.line_names();
    let mut acc = Accumulator::default();
    let spacing: usize = std::env::var("SNAPSHOT_EVERY").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let mut next_line = every;
    let mut next_snapshot = spacing;
    let mut held = None;
    let (mut count, mut sum_ms, mut max_ms, mut max_drop_ms) = (0usize, 0.0f64, 0.0f64, 0.0f64);
    let (mut frame_ms, mut drawn) = (0.0f64, 0usize);
    let mut live = latscope_sim::scenarios::LiveReport::new(&analysed)?;
    let whole = std::env::var_os("WHOLE").is_some();
    let (mut live_ms, mut summary_ms, mut whole_ms, mut samples) = (0.0f64, 0.0f64, None, 0usize);
    let (mut again_ms, mut results_drop_ms) = (0.0f64, 0.0f64);
    let started = Instant::now();
    println!(
        "events\tsnapshots\tmean_ms\tmax_ms\trss_mib\trss_bytes_per_event\tsim_s\tmax_drop_ms\tframe_ms\tdrawn\tlive_ms\tagain_ms\tsummary_ms\tsamples\twhole_ms\tresults_drop_ms"
    );
    while acc.events() < total && !sim.is_finished() {
        sim.tick(50_000);
        while let Ok(b) = rx.try_recv() {
            acc.add(b);
        }
        if acc.events() >= next_snapshot {
            let t = Instant::now();
            let snap = Arc::new(acc.snapshot(scenario, &lines));
            let ms = t.elapsed().as_secs_f64() * 1e3;
            // What the window pays when it lets the previous snapshot go.
            let t = Instant::now();
            drop(held.replace(snap));
            max_drop_ms = max_drop_ms.max(t.elapsed().as_secs_f64() * 1e3);
            count += 1;
            sum_ms += ms;
            max_ms = max_ms.max(ms);
            next_snapshot = acc.events() + spacing;
        }
        if acc.events() >= next_line {
            let rss = rss_mib();
            if let Some(snap) = &held {
                let t = Instant::now();
                drawn = frame_at_head(snap);
                frame_ms = t.elapsed().as_secs_f64() * 1e3;
                // The live statistics job's work: the scenario's analyses of the snapshot,
                // rules that grow answering with the statistics they keep and a spread of
                // samples, then the results the panel shows.
                let (opts, keep) = (analysis::panel_stats_options(), analysis::MAX_SCATTER);
                let t = Instant::now();
                let answers = live.glance(&snap.source, opts, keep, analysis::MAX_CDF_POINTS);
                live_ms = t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                drop(live.glance(&snap.source, opts, keep, analysis::MAX_CDF_POINTS));
                again_ms = t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                let summaries: Vec<analysis::AnalysisResult> = answers
                    .unwrap_or_default()
                    .into_iter()
                    .flat_map(|answer| match answer {
                        Glance::Whole(outcomes) => outcomes.into_iter().map(analysis::summarize).collect(),
                        Glance::Grown(g) => vec![analysis::of_glanced(*g)],
                    })
                    .collect();
                samples = summaries.iter().map(|r| r.count() as usize).sum();
                summary_ms = t.elapsed().as_secs_f64() * 1e3;
                // What the window pays when these results replace the ones it shows.
                let t = Instant::now();
                drop(summaries);
                results_drop_ms = t.elapsed().as_secs_f64() * 1e3;
                if whole {
                    let t = Instant::now();
                    let report = latscope_sim::scenarios::report(&analysed, &snap.source);
                    whole_ms = Some(t.elapsed().as_secs_f64() * 1e3);
                    drop(report);
                }
            }
            println!(
                "{}\t{count}\t{:.2}\t{max_ms:.1}\t{rss:.0}\t{:.0}\t{:.3}\t{max_drop_ms:.1}\t{frame_ms:.2}\t{drawn}\t{live_ms:.1}\t{again_ms:.1}\t{summary_ms:.0}\t{samples}\t{}\t{results_drop_ms:.1}",
                acc.events(),
                sum_ms / count.max(1) as f64,
                rss * f64::from(1u32 << 20) / acc.events() as f64,
                sim.now() as f64 / 1e12,
                whole_ms.map_or_else(|| "-".to_owned(), |ms| format!("{ms:.0}"))
            );
            (count, sum_ms, max_ms, max_drop_ms) = (0, 0.0, 0.0, 0.0);
            next_line += every;
        }
    }
    eprintln!("{} events in {:.1} s of wall time", acc.events(), started.elapsed().as_secs_f64());
    Ok(())
}
