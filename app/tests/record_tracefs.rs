//! `latscope record` on this machine's kernel (issue 30): what it saves is what
//! `trace-cmd report` reads, its live statistics are `latscope report`'s on the saved file,
//! tracefs is left exactly as found (after a recording, a refusal, an error and Ctrl-C),
//! and a trigger on a marker rule saves the window of the one slow request among hundreds.
//! Every test holds the tracefs lock: tests run in parallel and share one kernel buffer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Scratch, latscope_in};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const T: &str = "/sys/kernel/tracing";

fn write(file: &str, text: &str) {
    std::fs::write(format!("{T}/{file}"), text).unwrap_or_else(|e| panic!("{file}: {e}"));
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `trace-cmd report FILE`'s event lines (its `cpus=N` header left out).
fn trace_cmd_report(file: &Path) -> Vec<String> {
    let out = latscope_testkit::Need::TraceCmd.output(Command::new("trace-cmd").arg("report").arg(file));
    assert!(out.status.success(), "trace-cmd report {}: {}", file.display(), stderr(&out));
    assert!(out.stderr.is_empty(), "trace-cmd report {} warned: {}", file.display(), stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with("cpus="))
        .map(str::to_owned)
        .collect()
}

/// `latscope report FILE ARGS --format json`'s first analysis.
fn report_json(dir: &Path, file: &str, args: &[&str]) -> Value {
    let mut all = vec!["report", file];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = latscope_in(dir, &all);
    assert!(out.status.success(), "latscope {all:?}: {}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["analyses"][0].clone()
}

/// `latscope ARGS` in `dir`, with `player`'s sigrok-cli first on the `PATH` (a capture
/// played as a device).
fn latscope_playing(dir: &Path, player: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(dir)
        .env("PATH", latscope_testkit::path_with(player))
        .args(args)
        .output()
        .expect("latscope runs")
}

/// `latscope report` on a saved folder's `kernel.dat` and `logic.sr`, the logic placed
/// where the folder's session places it, with `args`: its first analysis.
fn report_placed(folder: &Path, args: &[&str]) -> Value {
    let session: Value =
        serde_json::from_slice(&std::fs::read(folder.join("session.latscope.json")).unwrap()).unwrap();
    let align = format!("1:{}ps", session["files"][1]["offset_ps"].as_i64().unwrap());
    let mut all = vec!["logic.sr", "--align", &align];
    all.extend_from_slice(args);
    report_json(folder, "kernel.dat", &all)
}

/// A live line's analysis `live` has the count, p50, p99 and max of the report's `a`.
fn assert_line_is_report(live: &Value, a: &Value) {
    assert_eq!(live["count"], a["count"], "{live} against {a}");
    for (l, r) in [("p50_ns", "p50"), ("p99_ns", "p99"), ("max_ns", "max")] {
        assert_eq!(live[l].as_f64(), a["stats_ns"][r].as_f64(), "{l}: {live} against {a}");
    }
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs trace-cmd: apt-get install trace-cmd"
)]
fn dd_recorded_with_preset_block_reads_back_in_trace_cmd_and_live_statistics_equal_the_report() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-dd");
    // A file on a disk (O_DIRECT reads each block from the device: block_rq_issue/complete).
    std::fs::write(dir.join("data.bin"), vec![0x5a; 8 << 20]).unwrap();
    let out = latscope_in(
        &dir,
        &[
            "record",
            "--preset",
            "block",
            "--format",
            "json",
            "--fail-if",
            "block.max>1ns",
            "-o",
            "run.dat",
            "--",
            "dd",
            "if=data.bin",
            "of=/dev/null",
            "bs=4k",
            "count=2000",
            "iflag=direct",
        ],
    );
    // --fail-if crossed: exit 3, and the capture is saved all the same.
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before, "tracefs is left as found");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON object a line: {l}: {e}")))
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "stats");
    assert_eq!(last["final"], true);
    assert_eq!(last["lost"], 0);
    let live = &last["analyses"][0];
    assert_eq!(live["analysis"], "block");
    assert!(live["count"].as_u64().unwrap() >= 2000, "{live}");
    // trace-cmd reads the saved file with the events latscope reads there, line for line.
    let file = dir.join("run.dat");
    let tc = trace_cmd_report(&file);
    let ours = latscope_in(&dir, &["events", "run.dat"]);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let ours: Vec<String> = String::from_utf8_lossy(&ours.stdout)
        .lines()
        .filter(|l| !l.starts_with("cpus="))
        .map(str::to_owned)
        .collect();
    assert_eq!(tc, ours);
    assert_eq!(tc.len() as u64, last["events"].as_u64().unwrap(), "the live count of events");
    let issues = tc.iter().filter(|l| l.contains(" block_rq_issue: ")).count();
    assert!(issues >= 2000, "{issues} block_rq_issue in trace-cmd report");
    assert!(tc.iter().any(|l| l.contains(" block_rq_issue: ") && l.contains("[dd]")), "dd issued them");
    // The live statistics are the report's on the saved file.
    let report = report_json(&dir, "run.dat", &["--preset", "block"]);
    assert_eq!(live["count"], report["count"]);
    for stat in ["p50", "p99", "max"] {
        assert_eq!(live[format!("{stat}_ns")], report["stats_ns"][stat], "{stat}");
    }
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs trace-cmd: apt-get install trace-cmd"
)]
fn a_busy_buffer_is_refused_without_force_and_recorded_with_it_and_tracefs_is_put_back() {
    let _lock = latscope_testkit::tracefs_lock();
    let _restore = latscope_testkit::TracefsRestore(latscope_testkit::tracefs_state());
    let dir = Scratch::new("record-busy");
    // Another tracer: tracing on with an event enabled.
    write("set_event", "sched:sched_wakeup\n");
    write("tracing_on", "1");
    let busy = latscope_testkit::tracefs_state();
    let args = ["record", "--events", "sched_switch", "--duration", "300ms", "-o", "x.dat"];
    let out = latscope_in(&dir, &args);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("in use") && err.contains("--force") && err.contains("sched:sched_wakeup"), "{err}");
    assert!(!dir.join("x.dat").exists());
    assert_eq!(latscope_testkit::tracefs_state(), busy, "a refusal changes nothing");
    let mut forced = args.to_vec();
    forced.push("--force");
    let out = latscope_in(&dir, &forced);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("--duration elapsed"), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), busy, "the other tracer's settings are back");
    let tc = trace_cmd_report(&dir.join("x.dat"));
    assert!(tc.iter().any(|l| l.contains(" sched_switch: ")), "{:?}", &tc[..tc.len().min(5)]);
    assert!(!tc.iter().any(|l| l.contains(" sched_wakeup: ")), "only the events asked for are recorded");
}

#[test]
#[cfg_attr(
    not(have_tracefs),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted"
)]
fn an_event_the_kernel_lacks_is_named_and_nothing_is_changed_or_written() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-lacks");
    let out = latscope_in(&dir, &["record", "--events", "sched_switch,no_such_event_here", "-o", "y.dat"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("\"no_such_event_here\""), "{}", stderr(&out));
    assert!(!dir.join("y.dat").exists());
    assert_eq!(latscope_testkit::tracefs_state(), before);
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs trace-cmd: apt-get install trace-cmd"
)]
fn ctrl_c_saves_what_was_recorded_and_puts_tracefs_back() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-int");
    let child = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(&*dir)
        .args(["record", "--events", "sched_switch", "-o", "int.dat"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before);
    let tc = trace_cmd_report(&dir.join("int.dat"));
    assert!(tc.iter().filter(|l| l.contains(" sched_switch: ")).count() > 10, "{} lines", tc.len());
}

/// Seconds of a `trace-cmd report` line (`comm-pid [cpu] 123.456789: event: …`).
fn line_secs(line: &str) -> f64 {
    let before = line.split(": ").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_trace_cmd)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs trace-cmd: apt-get install trace-cmd"
)]
fn a_marker_trigger_saves_exactly_the_window_of_the_one_slow_request_among_hundreds() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-trigger");
    // 400 requests marked from user space; request 200 takes 30 ms, the others microseconds.
    let script = "M=/sys/kernel/tracing/trace_marker\n\
                  for i in $(seq 1 400); do\n\
                    printf 'req_start id=%d\\n' $i > $M\n\
                    if [ $i = 200 ]; then sleep 0.03; fi\n\
                    printf 'req_done id=%d\\n' $i > $M\n\
                  done\n";
    std::fs::write(dir.join("work.sh"), script).unwrap();
    let rule = "req=print[text~req_start] -> print[text~req_done] by id";
    let out = latscope_in(
        &dir,
        &[
            "record",
            "--rule",
            rule,
            "--trigger",
            "req>10ms",
            "--keep",
            "1ms",
            "-o",
            "win",
            "--",
            "bash",
            "work.sh",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 crossing(s), 1 window(s) saved"), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before);
    let windows: Vec<_> = std::fs::read_dir(dir.join("win")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(windows.len(), 1, "{windows:?}");
    let name = windows[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("0001-req-") && name.ends_with('s'), "{name}");
    // The window holds a run of the requests around request 200 and nothing else.
    let tc = trace_cmd_report(&windows[0].join("kernel.dat"));
    let texts: Vec<String> =
        tc.iter().map(|l| l.rsplit("tracing_mark_write: ").next().unwrap().to_owned()).collect();
    let sequence: Vec<String> =
        (1..=400).flat_map(|i| [format!("req_start id={i}"), format!("req_done id={i}")]).collect();
    let at = sequence.iter().position(|s| *s == texts[0]).unwrap_or_else(|| panic!("{}", texts[0]));
    assert_eq!(texts[..], sequence[at..at + texts.len()], "a contiguous run of the workload's markers");
    assert!(texts.contains(&"req_start id=200".to_owned()) && texts.contains(&"req_done id=200".to_owned()));
    assert!(at > 0 && at + texts.len() < sequence.len(), "the window is not the whole recording");
    let secs = |text: &str| line_secs(&tc[texts.iter().position(|t| t == text).unwrap()]);
    let (start, done) = (secs("req_start id=200"), secs("req_done id=200"));
    for l in &tc {
        let t = line_secs(l);
        assert!(t >= start - 0.001 - 1e-6 && t <= done + 0.001 + 1e-6, "{l} outside the window");
    }
    // The session reopens it with both cursors on the pair.
    let session: Value =
        serde_json::from_slice(&std::fs::read(windows[0].join("session.latscope.json")).unwrap()).unwrap();
    assert_eq!(session["latscope_session"], 1);
    assert_eq!(session["files"][0]["path"], "kernel.dat");
    assert_eq!(session["rules"][0], rule);
    let (a, b) = (session["cursor_a"].as_f64().unwrap(), session["cursor_b"].as_f64().unwrap());
    let file = windows[0].join("kernel.dat");
    let report = report_json(&dir, file.to_str().unwrap(), &["--rule", rule]);
    let worst = &report["worst"];
    assert_eq!((b - a) / 1e3, worst[0]["latency_ns"].as_f64().unwrap(), "the cursors span the slow pair");
    assert!(worst[1]["latency_ns"].as_f64().unwrap() < 10e6, "one slow request only: {worst}");
    // cursor_a counts from the file's whole second: the pair's start within that second.
    let frac = |s: f64| s - s.floor();
    assert!((frac(a / 1e12) - frac(start)).abs() < 1e-6, "cursor_a {a} vs start {start}");
}

#[test]
#[cfg_attr(
    not(have_tracefs),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted"
)]
fn every_crossing_is_counted_saves_stop_at_max_saves_and_the_ring_stays_bounded() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-max-saves");
    // Three slow requests among 600, over about two seconds, with every context switch
    // recorded beside them (far more data than the ring holds).
    let script = "M=/sys/kernel/tracing/trace_marker\n\
                  for i in $(seq 1 600); do\n\
                    printf 'req_start id=%d\\n' $i > $M\n\
                    case $i in 100|300|500) sleep 0.02;; esac\n\
                    printf 'req_done id=%d\\n' $i > $M\n\
                    [ $((i % 100)) = 0 ] && sleep 0.3\n\
                    /bin/true\n\
                  done\n";
    std::fs::write(dir.join("work.sh"), script).unwrap();
    let rule = "req=print[text~req_start] -> print[text~req_done] by id";
    let out = latscope_in(
        &dir,
        &[
            "record",
            "--rule",
            rule,
            "--events",
            "sched_switch",
            "--trigger",
            "req>10ms",
            "--keep",
            "2ms,1ms",
            "--max-saves",
            "2",
            "--ring",
            "64KiB",
            "--format",
            "json",
            "-o",
            "win",
            "--",
            "bash",
            "work.sh",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("3 crossing(s), 2 window(s) saved"), "{}", stderr(&out));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let crossings: Vec<&Value> = lines.iter().filter(|l| l["type"] == "crossing").collect();
    assert_eq!(crossings.len(), 2, "the saved ones are said as they are saved: {crossings:?}");
    let stats: Vec<&Value> = lines.iter().filter(|l| l["type"] == "stats").collect();
    assert!(stats.len() >= 2, "a line a second: {}", stats.len());
    for s in &stats {
        assert!(s["kept_bytes"].as_u64().unwrap() <= 64 << 10, "{s}");
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.join("win"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("0001-req-") && names[1].starts_with("0002-req-"), "{names:?}");
    // Each window holds its slow request (the first and the second) whole.
    for (name, id) in names.iter().zip([100, 300]) {
        let text = String::from_utf8_lossy(
            &latscope_in(&dir, &["events", &format!("win/{name}/kernel.dat"), "--filter", "print"]).stdout,
        )
        .into_owned();
        assert!(
            text.contains(&format!("req_start id={id}\n")) && text.contains(&format!("req_done id={id}\n")),
            "{name}: {text}"
        );
    }
    assert_eq!(latscope_testkit::tracefs_state(), before);
}

/// The time (s) of a `trace-cmd report` line (`comm-pid [cpu] 1234.567890: event: …`).
fn report_secs(line: &str) -> Option<f64> {
    line.split_whitespace().find_map(|w| w.strip_suffix(':').and_then(|n| n.parse::<f64>().ok()))
}

#[test]
#[cfg_attr(
    not(all(have_tracefs, have_trace_cmd, have_sigrok_cli)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs trace-cmd: apt-get install trace-cmd; needs sigrok-cli: apt-get install sigrok-cli"
)]
fn kernel_and_logic_recorded_together_are_placed_by_host_clocks_within_the_uncertainty_said() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-both");
    let out = latscope_in(
        &dir,
        &[
            "record",
            "--events",
            "sched:sched_process_exec",
            "--sigrok",
            "demo:analog_channels=0:samplerate=100k",
            "--duration",
            "1s",
            "--format",
            "json",
            "-o",
            "both",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before, "tracefs is left as found");
    let last: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .rfind(|v| v["type"] == "stats")
        .unwrap();
    assert_eq!(last["final"], true);
    let logic = &last["logic"];
    let samples = logic["samples"].as_u64().unwrap();
    let start_s = logic["start_s"].as_f64().unwrap();
    let u_s = logic["uncertainty_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!(samples > 1000, "{logic}");
    assert!(u_s < 1.0, "an uncertainty of a second says nothing: {logic}");
    // The folder holds both and a session placing the logic on the kernel's timeline.
    let both = dir.join("both");
    let session: Value =
        serde_json::from_slice(&std::fs::read(both.join("session.latscope.json")).unwrap()).unwrap();
    assert_eq!(session["files"][0]["path"], "kernel.dat");
    assert_eq!(session["files"][1]["path"], "logic.sr");
    let placed_by = session["files"][1]["placed_by"].as_str().unwrap();
    assert!(placed_by.starts_with("host clocks (±"), "{placed_by}");
    let offset_s = session["files"][1]["offset_ps"].as_i64().unwrap() as f64 / 1e12;
    // The kernel saw sigrok-cli start (trace-cmd reads its exec in the kernel's mono clock):
    // the first sample cannot be before it, and the placement's interval holds it.
    // Other tests run sigrok-cli at the same time, so the recording may hold their execs too:
    // one of them must be ours, inside the interval.
    let tc = trace_cmd_report(&both.join("kernel.dat"));
    let execs: Vec<f64> = tc
        .iter()
        .filter(|l| l.contains("sched_process_exec:") && l.contains("sigrok-cli"))
        .filter_map(|l| report_secs(l))
        .collect();
    assert!(!execs.is_empty(), "no exec of sigrok-cli in {} lines", tc.len());
    assert!(
        execs.iter().any(|&exec| start_s - u_s <= exec && exec <= start_s + u_s),
        "execs at {execs:?} s, placed at {start_s} ± {u_s} s"
    );
    // The session's offset is that start on the kernel file's clock: from its whole second.
    let first = tc.iter().filter_map(|l| report_secs(l)).fold(f64::MAX, f64::min);
    assert!((first.floor() + offset_s - start_s).abs() < 1e-6, "{first} + {offset_s} vs {start_s}");
    // sigrok-cli reads the logic with the samples the live line counted.
    let binary = latscope_testkit::Need::SigrokCli
        .output(Command::new("sigrok-cli").arg("-i").arg(both.join("logic.sr")).args(["-O", "binary"]));
    assert_eq!(binary.stdout.len() as u64, samples);
}

/// `--align` fits the logic capture on shared markers instead of the host's clocks: a GPIO
/// raised beside each of four `trace_marker` writes (a logic analyzer playing a capture whose
/// rises are as far apart as the writes). The session's offset is the least-squares one that
/// `trace-cmd report`'s marker times and the capture's rise times give.
#[test]
#[cfg_attr(
    not(all(have_tracefs, have_trace_cmd, have_sigrok_cli)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs trace-cmd: apt-get install trace-cmd; needs sigrok-cli: apt-get install sigrok-cli"
)]
fn align_fits_the_logic_capture_on_shared_markers_as_trace_cmds_times_give_it() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-align");
    // Rises 0.2 s, 0.4 s and 0.1 s apart, as the writes below are.
    let rises = [1_000, 3_000, 7_000, 8_000];
    // 1 s at 10 kHz, high for 100 samples from each rise.
    let mut levels = vec![0u8; 10_000];
    for r in rises {
        levels[r..r + 100].fill(1);
    }
    common::write_one_channel_sr(&dir.join("gpio.sr"), "GPIO", "10 kHz", &levels);
    let player = latscope_testkit::sigrok_player(&dir, &dir.join("gpio.sr"));
    let script = "M=/sys/kernel/tracing/trace_marker\n\
                  for d in 0 0.2 0.4 0.1; do sleep $d; echo sync > $M; done\n";
    std::fs::write(dir.join("markers.sh"), script).unwrap();
    let out = latscope_playing(
        &dir,
        &player,
        &[
            "record",
            "--events",
            "sched:sched_process_exec",
            "--sigrok",
            "demo:samplerate=10k",
            "--align",
            "print[text~sync] -> GPIO:rise",
            "-o",
            "both",
            "--",
            "sh",
            "markers.sh",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before, "tracefs is left as found");
    assert!(
        stderr(&out).contains("logic.sr placed on the kernel's timeline by 4 shared markers (rms "),
        "{}",
        stderr(&out)
    );
    let both = dir.join("both");
    let session: Value =
        serde_json::from_slice(&std::fs::read(both.join("session.latscope.json")).unwrap()).unwrap();
    let logic = &session["files"][1];
    assert_eq!(logic["path"], "logic.sr");
    assert!(logic["placed_by"].as_str().unwrap().starts_with("4 shared markers (rms "), "{logic}");
    assert!(logic.get("drift_ppm").is_none(), "no drift fitted unless asked: {logic}");
    let offset_s = logic["offset_ps"].as_i64().unwrap() as f64 / 1e12;
    // The oracle: trace-cmd's marker times less the rises' times, averaged; the session's
    // offset counts from the kernel file's whole second.
    let tc = trace_cmd_report(&both.join("kernel.dat"));
    let markers: Vec<f64> =
        tc.iter().filter(|l| l.contains("tracing_mark_write: sync")).filter_map(|l| report_secs(l)).collect();
    assert_eq!(markers.len(), rises.len(), "{tc:?}");
    let want = markers.iter().zip(rises).map(|(m, r)| m - r as f64 / 1e4).sum::<f64>() / rises.len() as f64;
    let first = tc.iter().filter_map(|l| report_secs(l)).fold(f64::MAX, f64::min);
    assert!((first.floor() + offset_s - want).abs() < 2e-6, "{} + {offset_s} vs {want}", first.floor());
}

/// A trigger on the kernel beside a logic analyzer saves the window from both: the
/// window's `logic.sr` holds the samples of the same span (its length at the rate, read by
/// sigrok-cli), placed in the session where the window starts on the kernel's timeline.
#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sigrok_cli)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sigrok-cli: apt-get install sigrok-cli"
)]
fn a_kernel_trigger_beside_a_logic_analyzer_saves_both_in_the_window() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-trigger-logic");
    let script = "M=/sys/kernel/tracing/trace_marker\n\
                  sleep 0.5\n\
                  for i in $(seq 1 100); do\n\
                    printf 'req_start id=%d\\n' $i > $M\n\
                    if [ $i = 50 ]; then sleep 0.03; fi\n\
                    printf 'req_done id=%d\\n' $i > $M\n\
                  done\n";
    std::fs::write(dir.join("work.sh"), script).unwrap();
    let rule = "req=print[text~req_start] -> print[text~req_done] by id";
    let out = latscope_in(
        &dir,
        &[
            "record",
            "--rule",
            rule,
            "--sigrok",
            "demo:analog_channels=0:samplerate=100k",
            "--trigger",
            "req>10ms",
            "--keep",
            "2ms",
            "-o",
            "win",
            "--",
            "bash",
            "work.sh",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 crossing(s), 1 window(s) saved"), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before);
    let windows: Vec<_> = std::fs::read_dir(dir.join("win")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(windows.len(), 1, "{windows:?}");
    let session: Value =
        serde_json::from_slice(&std::fs::read(windows[0].join("session.latscope.json")).unwrap()).unwrap();
    assert_eq!(session["files"][1]["path"], "logic.sr", "{session}");
    assert!(session["files"][1]["placed_by"].as_str().unwrap().starts_with("host clocks"), "{session}");
    let (a, b) = (session["cursor_a"].as_f64().unwrap(), session["cursor_b"].as_f64().unwrap());
    // The window is the pair and 2 ms each side: at 100 kHz one sample is 10 us.
    let samples = latscope_testkit::Need::SigrokCli
        .output(Command::new("sigrok-cli").arg("-i").arg(windows[0].join("logic.sr")).args(["-O", "binary"]))
        .stdout
        .len() as f64;
    let span_us = (b - a) / 1e6 + 4000.0;
    assert!((samples - span_us / 10.0).abs() <= 2.0, "{samples} samples for a {span_us} us window");
    // Its first sample is where the window starts on the kernel file's timeline.
    let offset = session["files"][1]["offset_ps"].as_f64().unwrap();
    assert!((offset - (a - 2e9)).abs() <= 1e7, "logic starts at {offset} ps, the window at {} ps", a - 2e9);
}

/// Beside the kernel, the decoders' presets read the logic analyzer's decoded stream: real
/// SD traffic (the corpus's i.MX6 capture, played as a device) gives the command-to-response
/// latencies `latscope report` finds in the original file, in the same live lines as the
/// kernel's analyses.
#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sigrok_cli)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sigrok-cli: apt-get install sigrok-cli"
)]
fn a_decoder_preset_beside_the_kernel_reads_the_decoded_logic_live() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-kernel-sd");
    let original =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/corpus/sigrok/sd_imx6_working_snippet.sr");
    let player = latscope_testkit::sigrok_player(&dir, &original);
    let out = latscope_playing(
        &dir,
        &player,
        &[
            "record",
            "--preset",
            "wakeup",
            "--sigrok",
            "player:samplerate=40M",
            "--decoder",
            "sd:clk=CLK,cmd=CMD",
            "--preset",
            "sd-cmd-resp",
            // Every event it names is one the sd decoder adds: it reads the logic too.
            "--rule",
            "cr=sd_cmd -> sd_resp by seq",
            // From a decoded command to the kernel: it reads both together.
            "--rule",
            "j=sd_cmd -> sched_switch policy next",
            "--duration",
            "1500ms",
            "--format",
            "json",
            "-o",
            "run",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before);
    let last: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let names: Vec<&str> =
        last["analyses"].as_array().unwrap().iter().filter_map(|a| a["analysis"].as_str()).collect();
    assert_eq!(names, ["wakeup", "sd-cmd-resp", "cr", "j"], "{last}");
    let live = &last["analyses"][1];
    let a = &report_json(
        &dir,
        original.to_str().unwrap(),
        &["--decoder", "sd:clk=CLK,cmd=CMD", "--preset", "sd-cmd-resp"],
    );
    assert!(a["count"].as_u64().unwrap() > 0, "{a}");
    assert_eq!(live["count"], a["count"], "{live} against {a}");
    assert_eq!(live["max_ns"].as_f64(), a["stats_ns"]["max"].as_f64(), "{live} against {a}");
    // The rule is the preset's own: the same pairs.
    let rule = &last["analyses"][2];
    assert_eq!((&rule["count"], &rule["max_ns"]), (&live["count"], &live["max_ns"]), "{last}");
    // The session lists both, and the folder holds the logic capture beside the kernel's.
    let session: Value =
        serde_json::from_slice(&std::fs::read(dir.join("run/session.latscope.json")).unwrap()).unwrap();
    assert_eq!(
        session["rules"],
        serde_json::json!([
            "wakeup",
            "j=sd_cmd -> sched_switch policy next",
            "sd-cmd-resp",
            "cr=sd_cmd -> sd_resp by seq"
        ]),
        "{session}"
    );
    // The joint rule's last line is the report of the two saved files, the logic decoded
    // and placed where the session says.
    let a = report_placed(
        &dir.join("run"),
        &["--decoder", "sd:clk=CLK,cmd=CMD", "--rule", "j=sd_cmd -> sched_switch policy next"],
    );
    assert!(a["count"].as_u64().unwrap() > 0, "{a}");
    assert_line_is_report(&last["analyses"][3], &a);
    // Reopened, the logic capture is decoded again, so the decoders' presets find their events.
    assert_eq!(session["files"][1]["decoders"], serde_json::json!(["sd:clk=CLK,cmd=CMD"]), "{session}");
    assert!(dir.join("run/logic.sr").exists());
}

/// A GPIO capture played as a device: rises every 50 ms for 3 s at 10 kHz, each high for
/// 1 ms, and a script writing `go` markers; returns the player's folder.
fn gpio_player(dir: &Path) -> std::path::PathBuf {
    let mut levels = vec![0u8; 30_000];
    for r in (250..30_000).step_by(500) {
        levels[r..r + 10].fill(1);
    }
    common::write_one_channel_sr(&dir.join("gpio.sr"), "GPIO", "10 kHz", &levels);
    let script = "M=/sys/kernel/tracing/trace_marker\n\
                  for i in $(seq 1 12); do echo go > $M; sleep 0.07; done\n";
    std::fs::write(dir.join("markers.sh"), script).unwrap();
    latscope_testkit::sigrok_player(dir, &dir.join("gpio.sr"))
}

/// A rule from a kernel marker to a GPIO edge reads the kernel and the logic analyzer
/// together while they record: its live lines are the report of the saved folder's two
/// files, placed as its session places them, and `--fail-if` judges it on both.
#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sigrok_cli)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sigrok-cli: apt-get install sigrok-cli"
)]
fn a_rule_from_a_marker_to_a_gpio_edge_runs_live_and_equals_the_report_of_the_saved_folder() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-joint");
    let player = gpio_player(&dir);
    let rule = "lat=print[text~go] -> GPIO:rise";
    // The same pairs as a cmd-irq: the marker the command, the GPIO's rise its IRQ.
    let cmd_irq = "cmd-irq:cmd=print[text~go],irq=GPIO:rise";
    // The GPIO's rises as commands, the IRQ number chosen from the kernel's as they come.
    let choosing = "cmd-irq:cmd=GPIO:rise";
    let out = latscope_playing(
        &dir,
        &player,
        &[
            "record",
            "--preset",
            "wakeup",
            "--preset",
            cmd_irq,
            "--preset",
            choosing,
            "--rule",
            rule,
            "--sigrok",
            "player:samplerate=10k",
            "--fail-if",
            "lat.max>1us",
            "--format",
            "json",
            "-o",
            "both",
            "--",
            "sh",
            "markers.sh",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "the joint rule's max crosses 1 us: {}", stderr(&out));
    assert!(stderr(&out).contains("lat"), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before, "tracefs is left as found");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "stats")
        .collect();
    for l in &lines {
        let names: Vec<&str> =
            l["analyses"].as_array().unwrap().iter().filter_map(|a| a["analysis"].as_str()).collect();
        assert_eq!(
            names,
            ["wakeup", cmd_irq, choosing, "lat"],
            "every line has the joint analyses, after the kernel's: {l}"
        );
    }
    let last = lines.last().unwrap();
    assert_eq!(last["final"], true);
    let live = &last["analyses"][3];
    // The oracle: `latscope report` on the two saved files, the logic placed where the
    // session says.
    let a = report_placed(&dir.join("both"), &["--rule", rule]);
    // Twelve markers, each before a rise: every one is paired.
    assert_eq!(a["count"], 12, "{a}");
    assert_line_is_report(live, &a);
    // The cmd-irq across the two: each marker to the next rise, as the report pairs it.
    let c = report_placed(&dir.join("both"), &["--preset", cmd_irq]);
    assert_eq!(c["count"], 12, "{c}");
    assert_line_is_report(&last["analyses"][1], &c);
    assert_eq!(c["stats_ns"], a["stats_ns"], "the same pairs as the rule");
    // Read as it arrives: its count only grows from line to line.
    let counts: Vec<u64> = lines.iter().map(|l| l["analyses"][1]["count"].as_u64().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    // The one choosing its IRQ ends as the report of the saved files says (whatever IRQs
    // this machine took meanwhile).
    let c = report_placed(&dir.join("both"), &["--preset", choosing]);
    assert_line_is_report(&last["analyses"][2], &c);
    // A marker waits for the next rise, at most 50 ms away (the host clocks' placement
    // moves where, not how far apart the rises are).
    assert!(a["stats_ns"]["max"].as_f64().unwrap() <= 50e6, "{a}");
}

/// A trigger on a rule from a marker to a GPIO edge saves the window from both sources:
/// `latscope report` on the window's files, placed as its session places them, finds the
/// pair the crossing line named.
#[test]
#[cfg_attr(
    not(all(have_tracefs, have_sigrok_cli)),
    ignore = "needs root and tracefs: run as root where /sys/kernel/tracing is mounted; needs sigrok-cli: apt-get install sigrok-cli"
)]
fn a_trigger_on_a_marker_to_gpio_rule_saves_a_window_whose_report_finds_the_pair() {
    let _lock = latscope_testkit::tracefs_lock();
    let before = latscope_testkit::tracefs_state();
    let _restore = latscope_testkit::TracefsRestore(before.clone());
    let dir = Scratch::new("record-joint-trigger");
    let player = gpio_player(&dir);
    let rule = "lat=print[text~go] -> GPIO:rise";
    let out = latscope_playing(
        &dir,
        &player,
        &[
            "record",
            "--rule",
            rule,
            "--sigrok",
            "player:samplerate=10k",
            "--format",
            "json",
            "--trigger",
            "lat>1us",
            "--max-saves",
            "1",
            "--keep",
            "5ms",
            "-o",
            "win",
            "--",
            "sh",
            "markers.sh",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(latscope_testkit::tracefs_state(), before, "tracefs is left as found");
    let crossing: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "crossing")
        .unwrap_or_else(|| panic!("no crossing line: {}", stderr(&out)));
    assert!(stderr(&out).contains("12 crossing(s), 1 window(s) saved"), "{}", stderr(&out));
    let window = dir.join(crossing["saved"].as_str().unwrap());
    let session: Value =
        serde_json::from_slice(&std::fs::read(window.join("session.latscope.json")).unwrap()).unwrap();
    assert_eq!(session["files"][1]["path"], "logic.sr", "{session}");
    let a = report_placed(&window, &["--rule", rule]);
    assert_eq!(a["count"], 1, "the window holds the one pair: {a}");
    let latency = crossing["latency_ns"].as_f64().unwrap();
    assert!((a["stats_ns"]["max"].as_f64().unwrap() - latency).abs() < 1.0, "{a} against {crossing}");
}
