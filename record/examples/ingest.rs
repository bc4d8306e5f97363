//! Live ingest bench: records this kernel with the given events and analyses while a
//! command runs, then prints events, events/s and the recorder's CPU time per event
//! (user + system of the whole process, readers and live statistics included).
//!
//! `ingest SECONDS EVENTS PRESETS -- COMMAND…` (EVENTS and PRESETS comma-separated, `-`
//! for none), as root: docs/PERFORMANCE.md "Recording".

use latscope_record::{Options, record};
use std::time::Duration;

fn cpu_seconds() -> f64 {
    // utime and stime (fields 14 and 15 of /proc/self/stat) in clock ticks (100 per second).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(") ").next().unwrap_or_default();
    let f: Vec<u64> = after.split_whitespace().map(|x| x.parse().unwrap_or(0)).collect();
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) as f64 / 100.0
}

fn list(s: &str) -> Vec<String> {
    s.split(',').filter(|x| !x.is_empty() && *x != "-").map(str::to_owned).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [secs, events, presets, dashdash, command @ ..] = &args[..] else {
        return Err("usage: ingest SECONDS EVENTS PRESETS -- COMMAND...".into());
    };
    if dashdash != "--" {
        return Err("usage: ingest SECONDS EVENTS PRESETS -- COMMAND...".into());
    }
    let specs = list(presets)
        .iter()
        .map(|p| latscope_analysis::spec::preset_spec(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut opts = Options {
        events: list(events),
        spec_texts: list(presets),
        duration: Some(Duration::from_secs_f64(secs.parse()?)),
        command: command.to_vec(),
        ..Options::default()
    };
    opts.events.extend(latscope_record::stats::events_for(&specs));
    opts.specs = specs;
    let rec = record(&opts, &mut |_| {})?;
    let cpu = cpu_seconds();
    let wall = rec.elapsed.as_secs_f64();
    println!(
        "events {} lost {} in {wall:.2} s: {:.0} events/s, recorder CPU {cpu:.2} s = {:.2} us/event ({:.0}% of a core)",
        rec.events,
        rec.lost,
        rec.events as f64 / wall,
        cpu * 1e6 / rec.events.max(1) as f64,
        100.0 * cpu / wall
    );
    Ok(())
}
