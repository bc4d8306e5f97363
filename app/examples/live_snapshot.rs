//! What one live snapshot of the simulator costs as its run grows: the workbench's
//! simulator job (`gui::workers::Accumulator`) fed the simulator's batches as fast as it
//! runs, with one snapshot timed (and the process's resident memory read) every CHECKPOINT
//! events. Today a snapshot clones, sorts and prepares everything so far, so its cost grows
//! with the run; issue 30's growing model is to make it flat.
//!
//! `cargo run --example live_snapshot -p latscope [--release] -- [EVENTS] [CHECKPOINT] [SCENARIO [KEY=VALUE...]]`
//! (defaults 2000000, 250000, litesdcard; `axienet-napi run_ms=3600000` runs long enough
//! for any count). Prints one line per checkpoint.

use latscope::gui::workers::Accumulator;
use latscope_sim::{Batch, Simulation, Speed};
use std::sync::mpsc::channel;
use std::time::Instant;

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
    let mut sim = Simulation::new(sc)?;
    let (tx, rx) = channel::<Batch>();
    sim.attach(tx);
    sim.set_speed(Speed::Max);
    let lines = sim.line_names();
    let mut acc = Accumulator::default();
    let mut next = every;
    let started = Instant::now();
    println!("events\tsnapshot_ms\trss_mib\trss_bytes_per_event\tsim_s\tdrop_ms");
    while acc.events() < total && !sim.is_finished() {
        sim.tick(50_000);
        while let Ok(b) = rx.try_recv() {
            acc.add(b);
        }
        if acc.events() >= next {
            let t = Instant::now();
            let snap = acc.snapshot(scenario, &lines);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let rss = rss_mib();
            // What the window pays when it lets the previous snapshot go.
            let t = Instant::now();
            drop(snap);
            let drop_ms = t.elapsed().as_secs_f64() * 1e3;
            println!(
                "{}\t{ms:.1}\t{rss:.0}\t{:.0}\t{:.3}\t{drop_ms:.1}",
                acc.events(),
                rss * f64::from(1u32 << 20) / acc.events() as f64,
                sim.now() as f64 / 1e12
            );
            next += every;
        }
    }
    eprintln!("{} events in {:.1} s of wall time", acc.events(), started.elapsed().as_secs_f64());
    Ok(())
}
