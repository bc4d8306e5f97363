//! Live ingest bench: records this kernel with the given events and analyses while a
//! command runs, then prints events, events/s and the recorder's CPU time per event
//! (user + system of the whole process, readers and live statistics included), and the
//! CPU of the child processes it waited for: the command, and the ssh clients
//! (`SSH=USER@HOST:PORT` records over SSH), the growing source's restarts and handovers, and how far
//! apart the live lines came.
//!
//! `ingest SECONDS EVENTS SPECS -- COMMAND…` (EVENTS comma-separated, SPECS presets or
//! rules separated by `;`, `-` for none), as root: docs/PERFORMANCE.md "Recording".
//! `RING=SIZE` keeps a ring. `SIGROK=DRIVER[:k=v…]` records that logic analyzer alone
//! instead, with the decoder stacks of `DECODERS` (`;`-separated) and SPECS over their
//! annotations (EVENTS and COMMAND unused): its "events" are then annotations.
//! `BESIDE=DRIVER[:k=v…]` records that logic analyzer beside the kernel (with `DECODERS`
//! too). Each quarter of the run is also measured apart (events,
//! CPU per event, resident memory, the longest gap between lines), to show whether a
//! tick's cost and the memory per event stay flat as the recording grows.

use latscope_record::{Options, record_with};
use std::time::Duration;

/// CPU seconds of this process and of its children waited for (the ssh clients), from
/// /proc/self/stat (utime, stime, cutime, cstime in clock ticks of 1/100 s).
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(") ").next().unwrap_or_default();
    let f: Vec<u64> = after.split_whitespace().map(|x| x.parse().unwrap_or(0)).collect();
    let at = |i: usize| f.get(i).copied().unwrap_or(0) as f64 / 100.0;
    (at(11) + at(12), at(13) + at(14))
}

fn list(s: &str, sep: char) -> Vec<String> {
    s.split(sep).map(str::trim).filter(|x| !x.is_empty() && *x != "-").map(str::to_owned).collect()
}

/// This process's resident memory in MiB, from /proc/self/statm (pages of 4 KiB).
fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|x| x.parse().ok()).unwrap_or(0);
    pages as f64 * 4096.0 / (1 << 20) as f64
}

/// At one live line: elapsed seconds, events so far, CPU seconds of this process, MiB resident.
#[derive(Clone, Copy)]
struct Point {
    at: f64,
    events: u64,
    cpu: f64,
    rss: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [secs, events, presets, dashdash, command @ ..] = &args[..] else {
        return Err("usage: ingest SECONDS EVENTS PRESETS -- COMMAND...".into());
    };
    if dashdash != "--" {
        return Err("usage: ingest SECONDS EVENTS PRESETS -- COMMAND...".into());
    }
    let specs = list(presets, ';')
        .iter()
        .map(|p| latscope_analysis::spec::parse_spec(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut opts = Options {
        events: list(events, ','),
        spec_texts: list(presets, ';'),
        duration: Some(Duration::from_secs_f64(secs.parse()?)),
        command: command.to_vec(),
        ..Options::default()
    };
    opts.events.extend(latscope_record::stats::events_for(&specs));
    opts.specs = specs;
    // `SSH=root@host:port`: the same over SSH.
    opts.ssh = std::env::var("SSH").ok();
    if let Ok(ring) = std::env::var("RING") {
        opts.ring = latscope_record::Ring::parse(&ring)?;
    }
    // `BESIDE=DRIVER[:k=v…]`: that logic analyzer recorded beside the kernel, so SPECS
    // naming its channels read both (joint analyses).
    // Its decoder stacks are `DECODERS`, as with `SIGROK`.
    if let Ok(device) = std::env::var("BESIDE") {
        let decoders = list(&std::env::var("DECODERS").unwrap_or_default(), ';');
        opts.sigrok = Some(latscope_record::sigrok::SigrokSpec::parse(&device)?.with_decoders(decoders));
    }
    // When each live line came (the last, over everything kept, aside): how fresh the
    // live statistics stay as the recording grows.
    let mut lines: Vec<f64> = Vec::new();
    let mut points: Vec<Point> = Vec::new();
    let mut on_line = |l: &latscope_record::Live| {
        if let latscope_record::Live::Stats { elapsed_s, last: false, events, .. } = l {
            lines.push(*elapsed_s);
            points.push(Point { at: *elapsed_s, events: *events, cpu: cpu_seconds().0, rss: rss_mib() });
        }
    };
    if let Ok(device) = std::env::var("SIGROK") {
        let decoders = list(&std::env::var("DECODERS").unwrap_or_default(), ';');
        let spec = latscope_record::sigrok::SigrokSpec::parse(&device)?.with_decoders(decoders);
        let (logic, _) = latscope_record::sigrok::record_logic(spec, &opts, &mut on_line)?;
        let (cpu, _) = cpu_seconds();
        let wall = opts.duration.map_or(0.0, |d| d.as_secs_f64());
        let annotations = points.last().map_or(0, |p| p.events);
        println!(
            "{} samples, {annotations} annotations by the last live line; CPU {cpu:.2} s ({:.0}% of a core); {} live lines",
            logic.data.len() / logic.unitsize.max(1),
            100.0 * cpu / wall,
            lines.len()
        );
        print_quarters(&points);
        return Ok(());
    }
    // How far each tick's newest final event trails now: this machine's monotonic clock is
    // the trace clock locally, and a board's over loopback.
    let mut trails: Vec<f64> = Vec::new();
    let rec = record_with(&opts, &mut on_line, &mut |snap| {
        if let latscope_record::Snapshot::Kernel(src, _) = snap
            && let Some(&last) = src.events.ts.last()
        {
            let newest_ns =
                src.origin.secs as i128 * 1_000_000_000 + i128::from((src.origin.ps + last) / 1000);
            let now_ns = i128::from(latscope_record::sigrok::mono_ns());
            trails.push((now_ns - newest_ns) as f64 / 1e9);
        }
    })?;
    // The last tick reads everything, after the end.
    trails.pop();
    trails.sort_by(f64::total_cmp);
    if let (Some(&max), false) = (trails.last(), trails.is_empty()) {
        println!(
            "the live source trailed now by {:.2} s at the median, {max:.2} s at most ({} ticks)",
            trails[trails.len() / 2],
            trails.len()
        );
    }
    let longest_gap = lines.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    let (cpu, children) = cpu_seconds();
    let wall = rec.elapsed.as_secs_f64();
    // With a ring the kept events are fewer than those read: rates count what was read.
    let read = rec.events_read.max(rec.events);
    println!(
        "events {read} read ({} kept) lost {} in {wall:.2} s: {:.0} events/s, recorder CPU {cpu:.2} s = {:.2} us/event ({:.0}% of a core), children (command, ssh) {children:.2} s, live restarts {} (late by up to {} ns), handovers {}; {} live lines, the longest {longest_gap:.2} s apart",
        rec.events,
        rec.lost,
        read as f64 / wall,
        cpu * 1e6 / read.max(1) as f64,
        100.0 * cpu / wall,
        rec.live_restarts,
        rec.late_by_ns,
        rec.live_handovers,
        lines.len()
    );
    print_quarters(&points);
    Ok(())
}

/// Each quarter of the run, by the live lines' times: what was read, the CPU it cost, the
/// longest gap between lines, and the memory resident at its end.
fn print_quarters(points: &[Point]) {
    let span = points.last().map_or(0.0, |p| p.at);
    let mut from = Point { at: 0.0, events: 0, cpu: 0.0, rss: 0.0 };
    for q in 1..=4 {
        let upto: Vec<&Point> =
            points.iter().filter(|p| p.at > from.at && p.at <= span * q as f64 / 4.0).collect();
        let Some(&&to) = upto.last() else { continue };
        let gaps = upto.windows(2).map(|w| w[1].at - w[0].at).fold(0.0, f64::max);
        // A ring's handovers shrink the live source: its event count then says nothing of
        // what was read in the quarter, but the share of a core does.
        let grew = upto.windows(2).all(|w| w[1].events >= w[0].events) && to.events >= from.events;
        let per_event = if grew {
            let n = (to.events - from.events).max(1) as f64;
            format!("{} events, {:.2} us CPU/event, ", to.events - from.events, (to.cpu - from.cpu) * 1e6 / n)
        } else {
            let share = 100.0 * (to.cpu - from.cpu) / (to.at - from.at).max(1e-9);
            format!(
                "{:.1} s CPU = {share:.0}% of a core (the live source was handed over), ",
                to.cpu - from.cpu
            )
        };
        println!(
            "quarter {q}: {:.0}-{:.0} s, {per_event}longest gap {gaps:.2} s, {:.0} MiB resident ({:.0} B per live event)",
            from.at,
            to.at,
            to.rss,
            to.rss * (1 << 20) as f64 / to.events.max(1) as f64
        );
        from = to;
    }
}
