#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Presets on real traces, checked against pairings computed here from a
//! hand-written line scan of the same text files.

mod common;

use common::{Line, abs, corpus, open, sample, samples, scan, spans};
use latscope_analysis::outcome::Outcome;
use latscope_analysis::runner::{AnalysisError, run_spec};
use latscope_analysis::spec::preset_spec;
use latscope_model::{PS_PER_US, Placed, Placement, Ps};
use std::collections::HashMap;

fn run(preset: &str, src: latscope_model::Source) -> (latscope_model::Source, Outcome) {
    let sources = vec![src];
    let mut out = run_spec(&preset_spec(preset).unwrap(), &Placed::all(&sources)).unwrap();
    assert_eq!(out.len(), 1);
    let o = out.remove(0);
    assert_eq!(o.source, 0);
    (sources.into_iter().next().unwrap(), o)
}

/// FIFO pairing by a string key over scanned lines: (pairs, unmatched starts, unmatched ends).
fn fifo<K: std::hash::Hash + Eq>(
    lines: &[Line],
    start: impl Fn(&Line) -> Option<K>,
    end: impl Fn(&Line) -> Option<K>,
) -> (Vec<(Ps, Ps)>, u64, u64) {
    let mut open: HashMap<K, std::collections::VecDeque<Ps>> = HashMap::new();
    let (mut pairs, mut ue) = (Vec::new(), 0);
    for l in lines {
        if let Some(k) = end(l) {
            match open.get_mut(&k).and_then(|q| q.pop_front()) {
                Some(s) => pairs.push((s, l.ts)),
                None => ue += 1,
            }
        }
        if let Some(k) = start(l) {
            open.entry(k).or_default().push_back(l.ts);
        }
    }
    pairs.sort_unstable();
    (pairs, open.values().map(|q| q.len() as u64).sum(), ue)
}

fn block_key(l: &Line, ev: &str) -> Option<String> {
    if l.event != ev {
        return None;
    }
    let t: Vec<&str> = l.payload.split_whitespace().collect();
    let plus = t.iter().position(|&x| x == "+")?;
    Some(format!("{} {}", t[0], t[plus - 1]))
}

#[test]
fn block_matches_a_line_scan_on_every_text_sample() {
    for name in [
        "virtio_blk_direct_read.txt",
        "blk_read.txt",
        "markers_around_requests.txt",
        "virtio_blk_direct_read_tgid.txt",
    ] {
        let path = samples().join("ftrace").join(name);
        let lines = scan(&path);
        let issues = lines.iter().filter(|l| l.event == "block_rq_issue").count();
        let (want, us, ue) =
            fifo(&lines, |l| block_key(l, "block_rq_issue"), |l| block_key(l, "block_rq_complete"));
        let (src, o) = run("block", open(&path));
        assert_eq!(spans(&src, &o), want, "{name}");
        assert_eq!((o.unmatched_start, o.unmatched_end), (us, ue), "{name}");
        assert_eq!(o.samples.len() as u64 + us, issues as u64, "{name}");
    }
    // The tgid sample starts and ends mid-run: one issue never completes in it.
    let (_, o) = run("block", sample("ftrace/virtio_blk_direct_read_tgid.txt"));
    assert_eq!((o.samples.len(), o.unmatched_start, o.unmatched_end), (103, 1, 0));
}

/// Pairs name the events they were matched at: for block, irq-handler and wakeup on a real
/// trace, each end's event has the pair's time and the endpoint's name, and the line scan
/// finds those two lines with the same key (block: dev and sector; wakeup: the pid woken
/// and switched in; irq: the irq number).
#[test]
fn pairs_name_their_events_and_the_line_scan_agrees() {
    let path = samples().join("ftrace/virtio_blk_direct_read.txt");
    let lines = scan(&path);
    let at = |src: &latscope_model::Source, t: Ps, name: &str| -> Vec<&Line> {
        lines.iter().filter(|l| l.ts == abs(src, t) && l.event == name).collect()
    };
    // The key a line of a pair's start (or end) event carries.
    type KeyOf = fn(&Line) -> Option<String>;
    let cases: [(&str, &str, &[&str], KeyOf, KeyOf); 3] = [
        (
            "block",
            "block_rq_issue",
            &["block_rq_complete"],
            |l| block_key(l, "block_rq_issue"),
            |l| block_key(l, "block_rq_complete"),
        ),
        (
            "irq-handler",
            "irq_handler_entry",
            &["irq_handler_exit"],
            |l| l.field("irq").map(str::to_owned),
            |l| l.field("irq").map(str::to_owned),
        ),
        (
            "wakeup",
            "sched_wakeup",
            &["sched_switch"],
            |l| l.field("pid").map(str::to_owned),
            |l| l.field("next_pid").map(str::to_owned),
        ),
    ];
    for (preset, start_name, end_names, start_key, end_key) in cases {
        let (src, o) = run(preset, open(&path));
        assert!(!o.samples.is_empty(), "{preset}");
        for s in &o.samples {
            let ev = |e: Option<latscope_analysis::outcome::EventAt>| {
                let e = e.unwrap_or_else(|| panic!("{preset}: a pair at events names them"));
                assert_eq!(e.source, 0);
                src.events.get(e.index as usize).unwrap()
            };
            let (a, b) = (ev(s.start_event), ev(s.end_event));
            assert_eq!((a.ts(), b.ts()), (s.start, s.end), "{preset}");
            let (an, bn) =
                (src.strings.resolve(a.name()).into_owned(), src.strings.resolve(b.name()).into_owned());
            assert!(an == start_name || (preset == "wakeup" && an == "sched_waking"), "{preset}: {an}");
            assert!(end_names.contains(&bn.as_str()), "{preset}: {bn}");
            let starts: Vec<String> = at(&src, s.start, &an).into_iter().filter_map(start_key).collect();
            let ends: Vec<String> = at(&src, s.end, &bn).into_iter().filter_map(end_key).collect();
            assert!(starts.iter().any(|k| ends.contains(k)), "{preset}: {starts:?} vs {ends:?} at {s:?}");
        }
    }
}

#[test]
fn block_hand_picked_requests() {
    // blk_read.txt: `518.789735: block_rq_issue: 254,0 RA 4096 () 12581480 + 8` completes at
    // `518.789923`; `518.790394 … 24018944 + 128` completes at `518.790552`.
    let (src, o) = run("block", sample("ftrace/blk_read.txt"));
    let find = |start_us: i64| {
        o.samples
            .iter()
            .find(|s| abs(&src, s.start) == 518_000_000 * PS_PER_US + start_us * PS_PER_US)
            .unwrap()
    };
    let a = find(789_735);
    assert_eq!((a.latency(), a.key.as_str()), (188 * PS_PER_US, "dev=254,0 sector=12581480"));
    assert_eq!(find(790_394).latency(), 158 * PS_PER_US);
}

#[test]
fn block_text_and_trace_dat_agree() {
    let (_, t) = run("block", sample("ftrace/blk_read.txt"));
    for dat in ["blk_read_v7_zstd.dat", "blk_read_v6.dat", "blk_read_v7_none.dat"] {
        let (_, d) = run("block", sample(&format!("ftrace/{dat}")));
        assert_eq!(d.samples.len(), t.samples.len(), "{dat}");
        // The text rounds to microseconds; trace.dat keeps nanoseconds.
        for (a, b) in t.samples.iter().zip(&d.samples) {
            assert!((a.latency() - b.latency()).abs() <= 2 * PS_PER_US, "{dat}: {a:?} {b:?}");
        }
    }
}

/// A fixture trace file, removed when dropped (also when its test fails).
struct Fixture(std::path::PathBuf);

impl std::ops::Deref for Fixture {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn write_fixture(name: &str, body: &str) -> Fixture {
    let p = std::env::temp_dir().join(format!("latscope-rules-{}-{name}", std::process::id()));
    let header = "# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |\n";
    std::fs::write(&p, format!("{header}{body}")).unwrap();
    Fixture(p)
}

#[test]
fn block_flushes_pair_by_dev_and_double_completions_are_noted() {
    // Flush requests print `0 + 0` at issue and complete with sector 18446744073709551615
    // (kernel block trace format); a request completed twice is a double completion.
    let p = write_fixture(
        "flush.txt",
        "  kworker/0:1H-9   [000] .....   10.000100: block_rq_issue: 8,0 FF 0 () 0 + 0 [kworker/0:1H]
  kworker/0:1H-9   [000] .....   10.000200: block_rq_issue: 8,0 WS 4096 () 2048 + 8 [kworker/0:1H]
  <idle>-0         [000] d.h2.   10.000900: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 [0]
  <idle>-0         [000] d.h2.   10.001000: block_rq_complete: 8,0 WS () 2048 + 8 [0]
  <idle>-0         [000] d.h2.   10.001100: block_rq_complete: 8,0 WS () 2048 + 8 [0]
  <idle>-0         [000] d.h2.   10.001200: block_rq_complete: 8,0 R () 99 + 8 [0]
",
    );
    let (_, o) = run("block", open(&p));
    let got: Vec<(Ps, &str)> = o.samples.iter().map(|s| (s.latency(), s.key.as_str())).collect();
    assert_eq!(got, [(800 * PS_PER_US, "dev=8,0 sector=-"), (800 * PS_PER_US, "dev=8,0 sector=2048")]);
    assert_eq!((o.unmatched_start, o.unmatched_end), (0, 2));
    let note = |w: &str| o.notes.iter().find(|n| n.what.contains(w)).map(|n| n.count);
    assert_eq!(note("double completion"), Some(1));
    assert_eq!(note("flush"), Some(1));
}

/// Per-key LIFO over scanned lines: nested entries close innermost first.
fn lifo(lines: &[Line], start: &str, end: &str, field: &str) -> (Vec<(Ps, Ps)>, u64, u64) {
    let mut open: HashMap<(u32, i64), Vec<Ps>> = HashMap::new();
    let (mut pairs, mut ue) = (Vec::new(), 0);
    for l in lines {
        if l.event == end {
            match open.get_mut(&(l.cpu, l.int(field).unwrap())).and_then(Vec::pop) {
                Some(s) => pairs.push((s, l.ts)),
                None => ue += 1,
            }
        } else if l.event == start {
            open.entry((l.cpu, l.int(field).unwrap())).or_default().push(l.ts);
        }
    }
    pairs.sort_unstable();
    (pairs, open.values().map(|q| q.len() as u64).sum(), ue)
}

#[test]
fn irq_handler_and_softirq_match_a_line_scan() {
    let files: Vec<std::path::PathBuf> = ["timer_wakeups_under_load.txt", "virtio_blk_direct_read.txt"]
        .iter()
        .map(|f| samples().join("ftrace").join(f))
        .collect();
    irq_handler_and_softirq_match_a_line_scan_of(files);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn irq_handler_and_softirq_match_a_line_scan_on_the_shared_corpus() {
    irq_handler_and_softirq_match_a_line_scan_of(vec![
        corpus("ftrace_text/tc_android_sched_irq.txt"),
        corpus("ftrace_text/rpi_softirq_timer_rcu_sched.txt"),
    ]);
}

fn irq_handler_and_softirq_match_a_line_scan_of(files: Vec<std::path::PathBuf>) {
    for path in files {
        let lines = scan(&path);
        for (preset, start, end, field) in [
            ("irq-handler", "irq_handler_entry", "irq_handler_exit", "irq"),
            ("softirq", "softirq_entry", "softirq_exit", "vec"),
        ] {
            let (want, us, ue) = lifo(&lines, start, end, field);
            let sources = vec![open(&path)];
            match run_spec(&preset_spec(preset).unwrap(), &Placed::all(&sources)) {
                Ok(o) => {
                    assert_eq!(spans(&sources[0], &o[0]), want, "{} {preset}", path.display());
                    assert_eq!(
                        (o[0].unmatched_start, o[0].unmatched_end),
                        (us, ue),
                        "{} {preset}",
                        path.display()
                    );
                }
                Err(AnalysisError::Missing { .. }) => assert!(want.is_empty() && us + ue == 0),
                Err(e) => panic!("{e}"),
            }
        }
    }
}

/// The wakeup preset by hand: a switch-in closes the task's oldest open wakeup and drops the
/// others; a task seen running (an event of its own) drops its open wakeups, whose switch-in
/// was not recorded. Returns (pairs, unmatched starts, unmatched ends, wakeups dropped by running).
fn scan_wakeups(lines: &[Line]) -> (Vec<(Ps, Ps)>, u64, u64, u64) {
    let mut open: HashMap<i64, Vec<Ps>> = HashMap::new();
    let (mut want, mut us, mut ue, mut ran) = (Vec::new(), 0u64, 0u64, 0u64);
    for l in lines {
        if let Some(v) = open.remove(&i64::from(l.pid)) {
            us += v.len() as u64;
            ran += v.len() as u64;
        }
        if l.event == "sched_switch" {
            let p = l.int("next_pid").unwrap();
            match open.remove(&p).filter(|v| !v.is_empty()) {
                Some(v) => {
                    want.push((v[0], l.ts));
                    us += v.len() as u64 - 1;
                }
                None => ue += 1,
            }
        } else if l.event == "sched_wakeup" {
            open.entry(l.int("pid").unwrap()).or_default().push(l.ts);
        }
    }
    us += open.values().map(|v| v.len() as u64).sum::<u64>();
    want.sort_unstable();
    (want, us, ue, ran)
}

#[test]
fn wakeup_closes_the_oldest_and_drops_the_rest() {
    for name in ["timer_wakeups_under_load.txt", "blk_read.txt", "virtio_blk_direct_read.txt"] {
        let path = samples().join("ftrace").join(name);
        let (want, us, ue, ran) = scan_wakeups(&scan(&path));
        let (src, o) = run("wakeup", open_path(&path));
        assert_eq!(spans(&src, &o), want, "{name}");
        assert_eq!((o.unmatched_start, o.unmatched_end), (us, ue), "{name}");
        let note = o.notes.iter().find(|n| n.what.contains("no recorded switch-in")).map_or(0, |n| n.count);
        assert_eq!(note, ran, "{name}");
        if name.starts_with("timer") {
            assert!(want.len() > 600, "{}", want.len());
        } else {
            // The block samples lose most switch-ins out of idle.
            assert!(ran * 2 > us, "{name}: {ran} of {us}");
        }
    }
}

fn open_path(p: &std::path::Path) -> latscope_model::Source {
    open(p)
}

#[test]
fn idle_pairs_exits_with_entries_per_cpu() {
    let files =
        vec![samples().join("ftrace/blk_read.txt"), corpus("ftrace_text/trappy_cpu_idle_unsorted.txt")];
    for path in files {
        let lines = scan(&path);
        // next policy per cpu: a new entry replaces an open one.
        let mut open: HashMap<u32, Ps> = HashMap::new();
        let (mut want, mut us, mut ue) = (Vec::new(), 0u64, 0u64);
        for l in lines.iter().filter(|l| l.event == "cpu_idle") {
            let exit = matches!(l.field("state"), Some("4294967295" | "-1"));
            if exit {
                match open.remove(&l.cpu) {
                    Some(s) => want.push((s, l.ts)),
                    None => ue += 1,
                }
            } else if open.insert(l.cpu, l.ts).is_some() {
                us += 1;
            }
        }
        us += open.len() as u64;
        want.sort_unstable();
        let (src, o) = run("idle", open_path(&path));
        assert_eq!(spans(&src, &o), want, "{}", path.display());
        assert_eq!((o.unmatched_start, o.unmatched_end), (us, ue), "{}", path.display());
        assert!(!want.is_empty());
    }
    // A kernel printing the exit as `state=-1` pairs the same way.
    let p = write_fixture(
        "idle_signed.txt",
        "  <idle>-0  [001] d..1.  5.000010: cpu_idle: state=2 cpu_id=1
  <idle>-0  [001] d..1.  5.000050: cpu_idle: state=-1 cpu_id=1
",
    );
    let (_, o) = run("idle", open(&p));
    assert_eq!(o.latencies(), [40 * PS_PER_US]);
}

#[test]
fn cmd_irq_takes_the_irq_that_follows_commands() {
    let path = samples().join("ftrace/virtio_blk_direct_read.txt");
    let lines = scan(&path);
    // Independently: each issue's first irq 36 entry before the next issue.
    let mut want = Vec::new();
    let mut pending: Option<Ps> = None;
    let mut ue = 0u64;
    let mut us = 0u64;
    for l in &lines {
        if l.event == "irq_handler_entry" && l.int("irq") == Some(36) {
            match pending.take() {
                Some(s) => want.push((s, l.ts)),
                None => ue += 1,
            }
        } else if l.event == "block_rq_issue" && pending.replace(l.ts).is_some() {
            us += 1;
        }
    }
    us += u64::from(pending.is_some());
    let (src, o) = run("cmd-irq", open(&path));
    assert_eq!(spans(&src, &o), want);
    assert_eq!((o.unmatched_start, o.unmatched_end), (us, ue));
    assert!(o.notes.iter().any(|n| n.what.starts_with("irq 36 chosen")), "{:?}", o.notes);
    // An explicit IRQ that never follows: every command stays open, every IRQ is noted.
    let (_, o) = run("cmd-irq:irq=32", sample("ftrace/markers_around_requests.txt"));
    let irq32 = scan(&samples().join("ftrace/markers_around_requests.txt"))
        .iter()
        .filter(|l| l.event == "irq_handler_entry" && l.int("irq") == Some(32))
        .count() as u64;
    assert!(irq32 > 0);
    assert_eq!(o.samples.len() as u64 + o.unmatched_end, irq32);
    assert!(o.notes.iter().any(|n| n.what == "irq without command"));
    // A marker as the command.
    let (_, o) = run(
        "cmd-irq:cmd=tracing_mark_write[text~req_start],irq=36",
        sample("ftrace/markers_around_requests.txt"),
    );
    assert!(o.samples.len() > 250, "{}", o.samples.len());
}

/// Each command paired with the first IRQ after it, a later command replacing an open one
/// (policy next), over times on one timeline: (pairs, unmatched commands, unmatched IRQs).
fn first_irq_after(commands: &[Ps], irqs: &[Ps]) -> (Vec<(Ps, Ps)>, u64, u64) {
    let mut all: Vec<(Ps, bool)> =
        commands.iter().map(|&t| (t, true)).chain(irqs.iter().map(|&t| (t, false))).collect();
    // At one instant an IRQ closes before a command opens, as the pairing orders them.
    all.sort_by_key(|&(t, is_cmd)| (t, is_cmd));
    let (mut pairs, mut us, mut ue, mut open) = (Vec::new(), 0, 0, None);
    for (t, is_cmd) in all {
        match (is_cmd, open) {
            (true, was) => {
                us += u64::from(was.is_some());
                open = Some(t);
            }
            (false, Some(c)) => {
                pairs.push((c, t));
                open = None;
            }
            (false, None) => ue += 1,
        }
    }
    (pairs, us + u64::from(open.is_some()), ue)
}

/// A logic analyzer's GPIO edge as the command and the kernel's IRQs (or back): no source
/// holds both, so `cmd-irq` pairs across them where they are placed, as a pair rule across
/// sources does, instead of finding no IRQ beside the commands. The oracle scans the
/// kernel's text by hand and reads the capture's edges.
#[test]
fn cmd_irq_pairs_a_logic_analyzers_edges_with_the_kernels_irqs_across_sources() {
    let path = samples().join("ftrace/markers_around_requests.txt");
    let kernel = open(&path);
    // A busy I2C bus's data line stands for a GPIO: thousands of edges under the 0.2 s
    // trace's 300 IRQs.
    let logic = open(&corpus("sigrok/i2c_dds120_scl_analog.sr"));
    let zero = abs(&kernel, 0);
    let lines = scan(&path);
    // The 0.75 s capture placed from 0.1 s before the trace's first event.
    let at = kernel.events.ts[0] - 100_000_000_000;
    let sources = [Placed::new(&kernel, Placement::IDENTITY), Placed::new(&logic, Placement::new(at, 0.0))];
    let sda = logic.digital.iter().find(|d| d.name == "SDA").unwrap();
    let edges = |level: u8| -> Vec<Ps> {
        (0..sda.transitions()).filter(|&i| sda.level(i) == level).map(|i| sda.time(i) + at).collect()
    };
    let irq_entries: Vec<(Ps, i64)> = lines
        .iter()
        .filter(|l| l.event == "irq_handler_entry")
        .map(|l| (l.ts - zero, l.int("irq").unwrap()))
        .collect();
    // The IRQ most often first after an SDA fall.
    let falls = edges(0);
    let mut firsts: HashMap<i64, u64> = HashMap::new();
    for &c in &falls {
        if let Some(&(_, n)) = irq_entries.iter().find(|&&(t, _)| t > c) {
            *firsts.entry(n).or_default() += 1;
        }
    }
    let (&n, &times) = firsts.iter().max_by_key(|&(n, c)| (*c, std::cmp::Reverse(*n))).unwrap();
    let irqs: Vec<Ps> = irq_entries.iter().filter(|e| e.1 == n).map(|e| e.0).collect();
    let (want, us, ue) = first_irq_after(&falls, &irqs);
    assert!(want.len() > 200, "a test of something: {} pairs", want.len());

    let mut out = run_spec(&preset_spec("cmd-irq:cmd=SDA:fall").unwrap(), &sources).unwrap();
    assert_eq!(out.len(), 1, "one outcome across the two");
    let o = out.remove(0);
    assert_eq!(o.source, 1, "times on the clock of the commands' source");
    let got: Vec<(Ps, Ps)> = o.samples.iter().map(|s| (s.start + at, s.end + at)).collect();
    assert_eq!(got, want);
    assert_eq!((o.unmatched_start, o.unmatched_end), (us, ue));
    let chosen = format!("irq {n} chosen: the first IRQ after {times} of {} commands", falls.len());
    assert!(o.notes.iter().any(|x| x.what == chosen), "{chosen}: {:?}", o.notes);
    assert!(
        o.notes.iter().any(|x| x.what == "across sources [0, 1] on the common timeline"),
        "{:?}",
        o.notes
    );

    // Back: the kernel's block issues as commands, a channel's rise as the IRQ.
    let issues: Vec<Ps> = lines.iter().filter(|l| l.event == "block_rq_issue").map(|l| l.ts - zero).collect();
    let (want, us, ue) = first_irq_after(&issues, &edges(1));
    assert!(want.len() > 200, "a test of something: {} pairs", want.len());
    let o = run_spec(&preset_spec("cmd-irq:cmd=block_rq_issue,irq=SDA:rise").unwrap(), &sources)
        .unwrap()
        .remove(0);
    assert_eq!(o.source, 0);
    let got: Vec<(Ps, Ps)> = o.samples.iter().map(|s| (s.start, s.end)).collect();
    assert_eq!((got, o.unmatched_start, o.unmatched_end), (want, us, ue));

    // A source that holds both still pairs on its own: the kernel alone, as before.
    let o = run_spec(&preset_spec("cmd-irq").unwrap(), &sources).unwrap();
    assert_eq!(o.len(), 1);
    assert!(o[0].notes.iter().all(|x| !x.what.starts_with("across")), "{:?}", o[0].notes);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn mmc_pairs_wrapped_mail_excerpts() {
    let p = corpus("ftrace_text/mail_excerpts/emmc_cmd25_crc_error_wrapped.txt");
    let (_, o) = run("mmc", open(&p));
    // Two starts and two dones, cmd_opcode 25 then 13 on mmc0 (checked by eye in the file).
    let keys: Vec<&str> = o.samples.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["host=mmc0 cmd_opcode=25", "host=mmc0 cmd_opcode=13"]);
    assert_eq!((o.unmatched_start, o.unmatched_end), (0, 0));
}

#[test]
fn presets_name_what_is_missing() {
    let sources = vec![sample("ftrace/markers_around_requests.txt")];
    let e = run_spec(&preset_spec("wakeup").unwrap(), &Placed::all(&sources)).unwrap_err();
    assert_eq!(e.to_string(), "wakeup: no source has an event \"sched_wakeup\"");
    let e = run_spec(&preset_spec("pulse:D9").unwrap(), &Placed::all(&sources)).unwrap_err();
    assert_eq!(e.to_string(), "pulse:D9: no source has a digital or analog track \"D9\"");
}

/// `trace-cmd report -t FILE` lines (nanosecond timestamps), scanned like a text trace.
fn trace_cmd_report(path: &std::path::Path) -> Vec<Line> {
    let out = latscope_testkit::Need::TraceCmd
        .output(std::process::Command::new("trace-cmd").args(["report", "-t"]).arg(path));
    assert!(
        out.status.success(),
        "trace-cmd report {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let tmp = std::env::temp_dir().join(format!("latscope-rules-report-{}.txt", std::process::id()));
    std::fs::write(&tmp, &out.stdout).unwrap();
    let lines = scan(&tmp);
    std::fs::remove_file(&tmp).ok();
    lines
}

#[test]
#[cfg_attr(not(have_trace_cmd), ignore = "needs trace-cmd: apt-get install trace-cmd")]
fn trace_dat_presets_match_trace_cmd_report() {
    let dat = samples().join("ftrace/virtio_blk_direct_read.dat");
    let lines = trace_cmd_report(&dat);
    let (want, us, ue) =
        fifo(&lines, |l| block_key(l, "block_rq_issue"), |l| block_key(l, "block_rq_complete"));
    assert_eq!(want.len(), 400);
    let (src, o) = run("block", open(&dat));
    assert_eq!(spans(&src, &o), want);
    assert_eq!((o.unmatched_start, o.unmatched_end), (us, ue));
    let idle = corpus("tracedat/trappy_trace_idle.dat");
    let lines = trace_cmd_report(&idle);
    let mut open_at: HashMap<u32, Ps> = HashMap::new();
    let mut want = Vec::new();
    for l in lines.iter().filter(|l| l.event == "cpu_idle") {
        if l.field("state") == Some("4294967295") {
            if let Some(s) = open_at.remove(&l.cpu) {
                want.push((s, l.ts));
            }
        } else {
            open_at.insert(l.cpu, l.ts);
        }
    }
    want.sort_unstable();
    assert!(!want.is_empty());
    let (src, o) = run("idle", open(&idle));
    assert_eq!(spans(&src, &o), want);
}

#[test]
fn irqs_off_and_nested_softirqs_on_a_hand_checked_fixture() {
    // preemptirq events (not enabled on the recording machine): a disable with no enable
    // before the next disable is replaced (policy next); per-CPU.
    let p = write_fixture(
        "irqs_off.txt",
        "  bash-1  [000] d....  1.000010: irq_disable: caller=a+0x1 parent=b+0x2
  bash-1  [001] d....  1.000015: irq_disable: caller=a+0x1 parent=b+0x2
  bash-1  [000] .....  1.000030: irq_enable: caller=a+0x3 parent=b+0x2
  bash-1  [000] d....  1.000040: irq_disable: caller=a+0x1 parent=b+0x2
  bash-1  [000] d....  1.000045: irq_disable: caller=a+0x1 parent=b+0x2
  bash-1  [000] .....  1.000050: irq_enable: caller=a+0x3 parent=b+0x2
  bash-1  [001] .....  1.000060: irq_enable: caller=a+0x3 parent=b+0x2
  bash-1  [001] .....  1.000070: irq_enable: caller=a+0x3 parent=b+0x2
  bash-1  [000] ..s..  1.000100: softirq_entry: vec=1 [action=TIMER]
  bash-1  [000] ..s..  1.000110: softirq_entry: vec=1 [action=TIMER]
  bash-1  [000] ..s..  1.000120: softirq_exit: vec=1 [action=TIMER]
  bash-1  [000] ..s..  1.000150: softirq_exit: vec=1 [action=TIMER]
",
    );
    let (_, o) = run("irqs-off", open(&p));
    let got: Vec<(Ps, &str)> = o.samples.iter().map(|s| (s.latency(), s.key.as_str())).collect();
    assert_eq!(got, [(20 * PS_PER_US, "cpu=0"), (45 * PS_PER_US, "cpu=1"), (5 * PS_PER_US, "cpu=0")]);
    assert_eq!((o.unmatched_start, o.unmatched_end), (1, 1));
    let (_, o) = run("softirq", open(&p));
    // Nested: the inner entry closes first.
    assert_eq!(o.latencies(), [50 * PS_PER_US, 10 * PS_PER_US]);
}

#[test]
fn marker_rules_pair_by_their_key_value_tokens() {
    // markers_around_requests.txt: `tracing_mark_write: req_start id=N` … `req_done id=N`.
    let path = samples().join("ftrace/markers_around_requests.txt");
    let lines = scan(&path);
    let id = |l: &Line, word: &str| {
        (l.event == "tracing_mark_write" && l.payload.starts_with(word)).then(|| l.int("id")).flatten()
    };
    let (want, us, ue) = fifo(&lines, |l| id(l, "req_start"), |l| id(l, "req_done"));
    assert_eq!(want.len(), 300);
    for text in [
        "req=tracing_mark_write[text~req_start] -> tracing_mark_write[text~req_done] by id",
        "req=tracing_mark_write[text~req_start] -> tracing_mark_write[text!~req_start] by id:id policy fifo",
    ] {
        let sources = vec![open(&path)];
        let o = &run_spec(&latscope_analysis::spec::parse_spec(text).unwrap(), &Placed::all(&sources))
            .unwrap()[0];
        assert_eq!(spans(&sources[0], o), want, "{text}");
        assert_eq!((o.unmatched_start, o.unmatched_end), (us, ue));
        assert_eq!(o.samples[0].key, "id=1");
    }
    // trace.dat stores the same markers as `print` events with the same fields; the text
    // prints them as `tracing_mark_write`. Either name answers in either file.
    let dat = vec![sample("ftrace/markers_around_requests.dat")];
    assert!(dat[0].tracks().iter().any(|t| t.name == "print"));
    assert!(!dat[0].tracks().iter().any(|t| t.name == "tracing_mark_write"));
    let txt = vec![open(&path)];
    let mut answers = Vec::new();
    for name in ["tracing_mark_write", "print"] {
        let spec = format!("req={name}[text~req_start] -> {name}[text~req_done] by id");
        let rule = latscope_analysis::spec::parse_spec(&spec).unwrap();
        let o = &run_spec(&rule, &Placed::all(&txt)).unwrap()[0];
        assert_eq!(spans(&txt[0], o), want, "{spec} on the text");
        let o = &run_spec(&rule, &Placed::all(&dat)).unwrap()[0];
        assert_eq!(o.samples.len(), 300, "{spec} on trace.dat");
        assert_eq!((o.unmatched_start, o.unmatched_end), (us, ue));
        answers.push(spans(&dat[0], o));
    }
    assert_eq!(answers[0], answers[1], "both names, one answer");
    // The text shows trace.dat's nanoseconds rounded to the microsecond: the same pairs.
    let to_us = |t: Ps| (t + PS_PER_US / 2) / PS_PER_US * PS_PER_US;
    let rounded: Vec<(Ps, Ps)> = answers[0].iter().map(|&(a, b)| (to_us(a), to_us(b))).collect();
    assert_eq!(rounded, want);
}

#[test]
fn presets_that_lack_events_say_which_and_how_to_record_them() {
    use latscope_analysis::presets::missing_events;
    use latscope_analysis::runner::{Scope, default_presets};
    // Block and IRQ events with markers, no scheduler or idle events.
    let markers = sample("ftrace/markers_around_requests.txt");
    let virtio = sample("ftrace/virtio_blk_direct_read.txt");
    assert_eq!(
        missing_events("wakeup", &[&markers]).as_deref(),
        Some(
            "wakeup needs sched_wakeup and sched_switch: `trace-cmd record -e sched_wakeup -e sched_switch`"
        )
    );
    assert_eq!(
        missing_events("idle", &[&markers]).as_deref(),
        Some("idle needs cpu_idle: `trace-cmd record -e cpu_idle`")
    );
    // Part of a chain is there: the hint names the rest.
    assert_eq!(
        missing_events("chain", &[&markers]).as_deref(),
        Some(
            "chain needs block_rq_issue (or mmc_request_start), irq_handler_entry, irq_handler_exit, \
             sched_wakeup and sched_switch: `trace-cmd record -e block_rq_issue -e irq_handler_entry \
             -e irq_handler_exit -e sched_wakeup -e sched_switch`, missing here: sched_wakeup and sched_switch"
        )
    );
    // Options do not change what a preset reads; a source that has it all needs nothing.
    assert!(missing_events("cmd-irq:irq=36", &[&markers]).is_none());
    assert!(missing_events("wakeup", &[&markers, &virtio]).is_none());
    assert!(missing_events("block", &[&virtio]).is_none());

    // Without a preset asked for: the ones that find something run, the others are named.
    let placed = Placed::all(std::slice::from_ref(&markers));
    let found = default_presets(&placed, Scope::Each);
    let lines = scan(&samples().join("ftrace/markers_around_requests.txt"));
    let has = |e: &str| lines.iter().any(|l| l.event == e);
    assert!(has("block_rq_issue") && has("irq_handler_entry") && !has("sched_switch") && !has("cpu_idle"));
    assert_eq!(found.names, ["block", "irq-handler", "cmd-irq", "chain"]);
    let missing: Vec<&str> = found.missing.iter().map(|m| m.split(' ').next().unwrap()).collect();
    assert_eq!(missing, ["softirq", "wakeup", "idle", "irqs-off", "mmc"]);
}
