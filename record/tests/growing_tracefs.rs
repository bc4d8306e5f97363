//! The live lines' growing source on this machine's kernel: at every tick it holds exactly
//! the saved file's events up to its newest, in the saved file's order, although the CPUs'
//! pages arrive out of order, and each tick's lines are what the whole runner gives on it.
//! With a small ring a successor source takes over from the one whose oldest pages the ring
//! dropped, and the same holds; at the end it lets go of what the ring dropped, and holds
//! what the saved file holds.
//! The tests hold the tracefs lock: tests run in parallel and share one kernel buffer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use latscope_analysis::spec::{Spec, parse_spec, preset_spec};
use latscope_model::{FieldValue, Source};
use latscope_record::{Live, LiveStat, Options, Ring, Snapshot, record_with};
use std::time::Duration;

/// One event as both sources can state it: its absolute time (ps of the trace clock), CPU,
/// task, name and fields.
type Row = (i128, u16, i32, String, Vec<(String, String)>);

fn rows(src: &Source) -> Vec<Row> {
    let origin = i128::from(src.origin.secs) * 1_000_000_000_000 + i128::from(src.origin.ps);
    src.events
        .iter()
        .map(|e| {
            let fields = e
                .fields()
                .map(|(n, v)| {
                    let v = match v {
                        FieldValue::Str(s) => src.strings.resolve(s).into_owned(),
                        FieldValue::Int(i) => i.to_string(),
                        FieldValue::UInt(u) => u.to_string(),
                    };
                    (src.strings.resolve(n).into_owned(), v)
                })
                .collect();
            (
                origin + i128::from(e.ts()),
                e.cpu(),
                e.pid(),
                src.strings.resolve(e.name()).into_owned(),
                fields,
            )
        })
        .collect()
}

/// Markers from a shell on each CPU, pausing every 200 requests, with the scheduler's
/// events around them: CPUs busy at different moments, so their pages arrive out of step.
fn workload(requests: u32) -> Vec<String> {
    let marker = "/sys/kernel/tracing/trace_marker";
    let one = |c: usize| {
        format!(
            "i=0; while [ $i -lt {requests} ]; do echo \"start id={c}x$i\" > {marker}; \
             echo \"done id={c}x$i\" > {marker}; i=$((i+1)); \
             [ $((i % 200)) -eq 0 ] && sleep 0.05; done"
        )
    };
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let all: Vec<String> = (0..cpus).map(|c| format!("taskset -c {c} sh -c '{}' &", one(c))).collect();
    vec!["sh".into(), "-c".into(), format!("{} wait", all.join(" "))]
}

fn specs() -> Vec<Spec> {
    vec![
        parse_spec("req=print[text~start] -> print[text~done] by id").unwrap(),
        preset_spec("wakeup").unwrap(),
        parse_spec("switch=sched_switch -> sched_switch by cpu").unwrap(),
    ]
}

/// What a tick said and handed on: its lines, its events, and whether they continue the
/// previous tick's.
struct Tick {
    lines: Vec<LiveStat>,
    src: Source,
    continues: bool,
}

struct Recorded {
    rec: latscope_record::Recording,
    ticks: Vec<Tick>,
}

fn record(ring: Ring, requests: u32) -> Recorded {
    let specs = specs();
    let mut opts = Options {
        events: latscope_record::stats::events_for(&specs),
        specs: specs.clone(),
        command: workload(requests),
        duration: Some(Duration::from_secs(20)),
        tick: Duration::from_millis(100),
        ring,
        ..Options::default()
    };
    opts.events.push("sched:sched_switch".into());
    let mut lines = Vec::new();
    let mut snaps = Vec::new();
    let rec = record_with(
        &opts,
        &mut |l| {
            if let Live::Stats { analyses, .. } = l {
                lines.push(analyses.clone());
            }
        },
        &mut |s| {
            if let Snapshot::Kernel(s, continues) = s {
                snaps.push((s, continues));
            }
        },
    )
    .expect("the recording");
    assert_eq!(lines.len(), snaps.len(), "a line and a snapshot each tick");
    let ticks = lines
        .into_iter()
        .zip(snaps)
        .map(|(lines, (src, continues))| Tick { lines, src, continues })
        .collect();
    Recorded { rec, ticks }
}

/// Each tick's lines are the whole runner's on the events the tick held.
fn lines_are_the_whole_runners(ticks: &[Tick]) {
    for (n, t) in ticks.iter().enumerate() {
        assert!(t.src.events.ts.is_sorted(), "tick {n}: events in time order");
        let (_, whole) = latscope_record::stats::run(&specs(), &t.src);
        assert_eq!(t.lines, whole, "tick {n} ({} events)", t.src.events.len());
    }
}

/// Whether each tick continuing the previous one holds its rows first.
fn continued_ticks_hold_the_previous_rows(ticks: &[Tick]) {
    for (n, w) in ticks.windows(2).enumerate() {
        if w[1].continues {
            let (before, after) = (rows(&w[0].src), rows(&w[1].src));
            assert!(after.len() >= before.len() && after[..before.len()] == before[..], "tick {}", n + 1);
            assert!(w[1].src.events.len() >= w[0].src.events.len());
        }
    }
}

#[test]
#[cfg_attr(
    not(have_tracefs),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted"
)]
fn every_tick_holds_the_saved_files_events_up_to_its_newest_and_the_whole_runners_lines() {
    let _lock = latscope_testkit::tracefs_lock();
    let _restore = latscope_testkit::TracefsRestore(latscope_testkit::tracefs_state());
    let requests = 3000;
    let Recorded { rec, ticks } = record(Ring::All, requests);
    assert!(matches!(rec.stopped, latscope_record::Stopped::Exited(_)), "{:?}", rec.stopped);
    assert_eq!(
        rec.live_restarts, 0,
        "no record arrived behind the watermark (late by {} ns)",
        rec.late_by_ns
    );
    let whole = rows(&rec.source().unwrap());
    let cpus = std::thread::available_parallelism().map_or(1, usize::from) as u32;
    let markers = whole.iter().filter(|r| r.3 == "print").count() as u32;
    assert_eq!(rec.lost, 0, "nothing lost");
    assert_eq!(markers, 2 * requests * cpus, "every marker recorded");
    assert_eq!(rec.events_read, whole.len() as u64, "the live source read every event once");
    // The last tick reads the growing source to its end, with the task names of the
    // last saved_cmdlines: the saved file's events, named as it names them, without
    // decoding the pages again.
    let (live, last) = ticks.split_at(ticks.len() - 1);
    assert!(!rec.last_decoded_again, "the growing source held every kept page");
    assert_eq!(rows(&last[0].src), whole, "the last tick is the saved file");
    let saved = rec.source().unwrap();
    let tasks = |src: &latscope_model::Source| -> Vec<String> {
        src.events.comm.iter().map(|&c| src.strings.resolve(c).into_owned()).collect()
    };
    assert_eq!(tasks(&last[0].src), tasks(&saved), "the last tick names tasks as the saved file does");
    assert!(!last[0].continues, "the last tick is handed on whole");
    assert!(live.iter().skip(1).all(|t| t.continues), "without a ring every tick continues the first");
    continued_ticks_hold_the_previous_rows(&ticks);
    let grown: Vec<&Tick> = live.iter().filter(|t| !t.src.events.is_empty()).collect();
    assert!(grown.len() >= 3, "the source grew over several ticks ({} of {})", grown.len(), live.len());
    let mut before = 0;
    for (n, t) in grown.iter().enumerate() {
        let got = rows(&t.src);
        let newest = got.last().map(|r| r.0).unwrap();
        let expect: Vec<Row> = whole.iter().filter(|r| r.0 <= newest).cloned().collect();
        assert_eq!(got.len(), expect.len(), "tick {n}: the saved file's events up to the newest");
        assert!(got == expect, "tick {n}: the same events in the same order");
        assert!(got.len() >= before, "tick {n}: the source only grows");
        before = got.len();
    }
    lines_are_the_whole_runners(&ticks);
    // The marker rule's count grew with the source and ended at every request.
    let counts: Vec<u64> =
        ticks.iter().filter_map(|t| t.lines.iter().find(|l| l.analysis == "req")).map(|l| l.count).collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    assert_eq!(counts.last().copied(), Some(u64::from(requests * cpus)));
}

#[test]
#[cfg_attr(
    not(have_tracefs),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted"
)]
fn with_a_small_ring_a_successor_source_takes_over_and_the_live_source_stays_bounded() {
    let _lock = latscope_testkit::tracefs_lock();
    let _restore = latscope_testkit::TracefsRestore(latscope_testkit::tracefs_state());
    let Recorded { rec, ticks } = record(Ring::Bytes(64 << 10), 10_000);
    assert!(rec.live_handovers > 0, "the ring dropped pages the source had read");
    // The last tick holds what the saved file holds, at the same times: the growing
    // source let go of what the ring dropped (or, where it could not tell, the kept pages
    // were decoded again).
    let saved = rec.source().unwrap();
    let last = &ticks[ticks.len() - 1].src;
    assert_eq!((last.origin.secs, last.origin.ps), (saved.origin.secs, saved.origin.ps));
    assert_eq!(last.events.len(), saved.events.len());
    assert!(rows(last) == rows(&saved), "the last tick's events are the saved file's");
    assert_eq!(&last.events.ts[..], &saved.events.ts[..]);
    // It let go of them unless records came late (a restart): the ring hands over only
    // once every CPU's pages from before the successor are gone, so the source holds every
    // kept page, and a CPU's records from pages dropped and kept differ in time.
    assert!(!rec.last_decoded_again || rec.live_restarts > 0, "the last line decoded the kept pages again");
    // The ring kept few of them, but the live sources read every marker, across handovers.
    let cpus = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    assert!(rec.events_read >= 2 * 10_000 * cpus, "read {} events", rec.events_read);
    assert!(rec.events < rec.events_read, "kept {} of {}", rec.events, rec.events_read);
    lines_are_the_whole_runners(&ticks);
    // The last tick holds the ring as saved (lines above); those before it are the
    // growing sources, each about two rings' worth and what arrived since the last tick
    // (which here, with ticks every 100 ms and a 64 KiB ring, may be several rings).
    let (live, _) = ticks.split_at(ticks.len() - 1);
    let sizes: Vec<usize> = live.iter().map(|t| t.src.events.len()).collect();
    assert!(sizes.windows(2).any(|w| w[1] < w[0]), "a successor holds less: {sizes:?}");
    let most = sizes.iter().copied().max().unwrap_or(0) as u64;
    assert!(
        2 * most <= rec.events_read,
        "the live source let go of the oldest: {most} of {} events",
        rec.events_read
    );
    let anew = live.iter().skip(1).filter(|t| !t.continues).count() as u64;
    assert_eq!(
        anew,
        rec.live_restarts + rec.live_handovers,
        "a tick after a restart or a handover does not continue the one before"
    );
    continued_ticks_hold_the_previous_rows(&ticks);
    // A successor takes over with the newest events: its first tick's events are all
    // newer than the first events of the source it replaced.
    for w in live.windows(2).filter(|w| !w[1].continues && !w[1].src.events.is_empty()) {
        let (before, after) = (&w[0].src, &w[1].src);
        let first = |s: &Source| rows(s).first().map(|r| r.0);
        if !before.events.is_empty() {
            assert!(first(after) > first(before), "the successor starts later");
        }
    }
}
