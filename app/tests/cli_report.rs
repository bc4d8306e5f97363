//! `latscope report` end to end on the real samples: the JSON contract, counts
//! checked against independent counts (grep of the text, `trace-cmd report` of the .dat),
//! `--fail-if` exit codes, escaping, CSV/Parquet, atomic refusal to overwrite inputs, A/B.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::latscope;

use std::path::{Path, PathBuf};
use std::process::Command;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace").join(name)
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("latscope-report-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn report_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = latscope(&all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("report --format json prints JSON")
}

/// irq_handler_exit events counted without latscope: grep for text, trace-cmd for .dat.
fn independent_exit_count(path: &Path) -> usize {
    let text = if path.extension().is_some_and(|e| e == "dat") {
        let o = latscope_testkit::Need::TraceCmd.output(Command::new("trace-cmd").arg("report").arg(path));
        assert!(
            o.status.success(),
            "trace-cmd report {}: {}",
            path.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    } else {
        std::fs::read_to_string(path).unwrap()
    };
    text.lines().filter(|l| !l.starts_with('#') && l.contains(" irq_handler_exit: ")).count()
}

/// The recordings of the irq-handler test: (file, recording it is one form of).
const IRQ_FILES: [(&str, &str); 6] = [
    ("virtio_blk_direct_read.txt", "virtio"),
    ("virtio_blk_direct_read.dat", "virtio"),
    ("blk_read.txt", "blk"),
    ("blk_read_v6.dat", "blk"),
    ("blk_read_v7_none.dat", "blk"),
    ("blk_read_v7_zstd.dat", "blk"),
];

fn irq_handler_count(path: &Path) -> u64 {
    let v = report_json(&[path.to_str().unwrap(), "--preset", "irq-handler"]);
    v["analyses"][0]["count"].as_u64().unwrap()
}

/// The trace.dat forms' counts against `trace-cmd report`'s (the text forms are checked by
/// grep in the test below; both forms of a recording must agree there too).
#[test]
#[cfg_attr(not(have_trace_cmd), ignore = "needs trace-cmd: apt-get install trace-cmd")]
fn irq_handler_counts_of_trace_dat_match_trace_cmd() {
    for (file, _) in IRQ_FILES.iter().filter(|(f, _)| f.ends_with(".dat")) {
        let path = sample(file);
        assert_eq!(
            irq_handler_count(&path) as usize,
            independent_exit_count(&path),
            "{file}: every handler exit closes one entry"
        );
    }
}

#[test]
fn irq_handler_counts_match_grep_and_trace_cmd() {
    let mut by_recording: Vec<(&str, u64)> = Vec::new();
    for (file, recording) in IRQ_FILES {
        let path = sample(file);
        let v = report_json(&[path.to_str().unwrap(), "--preset", "irq-handler"]);
        for k in ["latscope_report", "inputs", "analyses", "windows", "metrics", "comparison"] {
            assert!(v.get(k).is_some(), "{file}: missing {k}");
        }
        assert_eq!(v["latscope_report"], 1);
        let input = &v["inputs"][0];
        for k in ["path", "format", "events", "start_s", "end_s"] {
            assert!(input.get(k).is_some(), "{file}: inputs[0] lacks {k}");
        }
        let analyses = v["analyses"].as_array().unwrap();
        assert_eq!(analyses.len(), 1, "{file}");
        let a = &analyses[0];
        for k in [
            "name",
            "kind",
            "count",
            "unmatched_start",
            "unmatched_end",
            "stats_ns",
            "histogram",
            "groups",
            "worst",
        ] {
            assert!(a.get(k).is_some(), "{file}: analysis lacks {k}");
        }
        assert_eq!((a["name"].as_str(), a["kind"].as_str()), (Some("irq-handler"), Some("pair")));
        let s = &a["stats_ns"];
        let stat = |k: &str| s[k].as_f64().unwrap_or_else(|| panic!("{file}: stats_ns.{k} = {}", s[k]));
        assert!(
            stat("min") <= stat("p50") && stat("p50") <= stat("p90") && stat("p99") <= stat("max"),
            "{file}: {s}"
        );
        // Text traces print microseconds: a handler shorter than that shows as 0.
        assert!(stat("min") >= 0.0, "{file}: {s}");
        let count = a["count"].as_u64().unwrap();
        // The .dat forms: irq_handler_counts_of_trace_dat_match_trace_cmd.
        if file.ends_with(".txt") {
            assert_eq!(
                count as usize,
                independent_exit_count(&path),
                "{file}: every handler exit closes one entry"
            );
        }
        assert_eq!(a["unmatched_end"], 0, "{file}");
        // The histogram holds every sample; groups are keyed by cpu and irq.
        let hist: u64 = a["histogram"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum();
        assert_eq!(hist, count, "{file}");
        let groups = a["groups"].as_array().unwrap();
        assert_eq!(groups.iter().map(|g| g["count"].as_u64().unwrap()).sum::<u64>(), count);
        assert!(groups.iter().all(|g| g["key"].as_str().unwrap().starts_with("cpu=")), "{file}");
        // Worst cases: longest first, times in the tracer's own clock inside the trace span.
        let worst = a["worst"].as_array().unwrap();
        assert_eq!(worst.len(), 10.min(count as usize));
        assert_eq!(worst[0]["latency_ns"].as_f64(), Some(stat("max")));
        let (t0, t1) = (input["start_s"].as_f64().unwrap(), input["end_s"].as_f64().unwrap());
        for w in worst {
            let (ws, we) = (w["start_s"].as_f64().unwrap(), w["end_s"].as_f64().unwrap());
            assert!(t0 <= ws && ws <= we && we <= t1, "{file}: {w}");
        }
        by_recording.push((recording, count));
    }
    // The text and the .dat of one ring buffer give the same count.
    for r in ["virtio", "blk"] {
        let counts: Vec<u64> = by_recording.iter().filter(|x| x.0 == r).map(|x| x.1).collect();
        assert!(counts.windows(2).all(|w| w[0] == w[1]), "{r}: {counts:?}");
    }
}

#[test]
fn fail_if_exits_3_when_crossed_and_0_otherwise() {
    let path = sample("virtio_blk_direct_read.txt");
    let p = path.to_str().unwrap();
    let ok = latscope(&[
        "report",
        p,
        "--preset",
        "irq-handler",
        "--fail-if",
        "irq-handler.max>1s",
        "--format",
        "json",
    ]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let dir = tempdir("failif");
    let out = dir.join("r.json");
    let crossed = latscope(&[
        "report",
        p,
        "--preset",
        "irq-handler",
        "--fail-if",
        "irq-handler.max>1s",
        "--fail-if",
        "irq-handler.p50>1ns",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(crossed.status.code(), Some(3));
    let err = String::from_utf8_lossy(&crossed.stderr);
    assert!(err.contains("irq-handler.p50") && err.contains("> 1 ns"), "{err}");
    assert!(!err.contains("irq-handler.max"), "only the crossed threshold is named: {err}");
    // The report is still written, as JSON (from the extension).
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["analyses"][0]["name"], "irq-handler");
    // `<` and count.
    let lt = latscope(&["report", p, "--preset", "irq-handler", "--fail-if", "irq-handler.count<1000"]);
    assert_eq!(lt.status.code(), Some(3));
    // Bad expressions and unknown analyses are errors (exit 1), not passes.
    for bad in ["irq-handler.p98>1ms", "irq-handler.p99>2", "irq-handler.p99", "block.p99>1ms"] {
        let o = latscope(&["report", p, "--preset", "irq-handler", "--fail-if", bad]);
        assert_eq!(o.status.code(), Some(1), "{bad}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--fail-if"), "{bad}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn html_is_self_contained_and_escapes_trace_strings() {
    // A tiny trace made of real lines of a sample, with a marker edited into a task name and
    // a marker text, in a file whose name carries a marker too.
    let dir = tempdir("html");
    let text = std::fs::read_to_string(sample("virtio_blk_direct_read.txt")).unwrap();
    let mut lines: Vec<String> = text.lines().take_while(|l| l.starts_with('#')).map(str::to_owned).collect();
    let body: Vec<&str> = text.lines().filter(|l| l.contains(" irq_handler_e")).take(40).collect();
    lines.extend(body.iter().map(|l| l.replacen("<idle>", "<script>", 1)));
    let path = dir.join("<script>marker.txt");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = latscope(&["report", path.to_str().unwrap(), "--preset", "irq-handler", "--format", "html"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "unescaped marker in the HTML");
    assert!(html.contains("&lt;script&gt;marker.txt"));
    assert!(html.contains("<svg") && html.contains("<title>histogram</title>"));
    assert!(!html.contains("<link") && !html.contains("src="), "the page fetches nothing");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn csv_and_parquet_hold_one_row_per_sample() {
    let path = sample("virtio_blk_direct_read.txt");
    let p = path.to_str().unwrap();
    let v = report_json(&[p, "--preset", "irq-handler", "--preset", "block"]);
    let total: u64 = v["analyses"].as_array().unwrap().iter().map(|a| a["count"].as_u64().unwrap()).sum();
    let out = latscope(&["report", p, "--preset", "irq-handler", "--preset", "block", "--format", "csv"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("analysis,key,start_s,end_s,latency_ns,input"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len() as u64, total);
    for r in &rows {
        let cells: Vec<&str> = r.split(',').collect();
        assert!(["irq-handler", "block"].contains(&cells[0]), "{r}");
        // No text cell can start a formula (CSV injection), and latencies are non-negative.
        assert!(!cells[1].starts_with(['=', '+', '-', '@']), "{r}");
        assert!(cells[cells.len() - 2].parse::<f64>().unwrap() >= 0.0, "{r}");
    }
    // Parquet is binary: stdout is refused, a file is written (PAR1 magic at both ends).
    let refused = latscope(&["report", p, "--preset", "irq-handler", "--format", "parquet"]);
    assert_eq!(refused.status.code(), Some(1));
    let dir = tempdir("parquet");
    let pq = dir.join("samples.parquet");
    let ok = latscope(&["report", p, "--preset", "irq-handler", "-o", pq.to_str().unwrap()]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let bytes = std::fs::read(&pq).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn output_onto_an_input_is_refused() {
    let dir = tempdir("refuse");
    let input = dir.join("trace.txt");
    std::fs::copy(sample("blk_read.txt"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let dotted = dir.join("x/../trace.txt");
    std::fs::create_dir_all(dir.join("x")).unwrap();
    for target in [&input, &dotted] {
        let out = latscope(&[
            "report",
            input.to_str().unwrap(),
            "--preset",
            "irq-handler",
            "-o",
            target.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("refusing to overwrite an input"), "{err}");
    }
    assert_eq!(std::fs::read(&input).unwrap(), before, "the input is untouched");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_inputs_are_compared() {
    let a = sample("virtio_blk_direct_read.txt");
    let b = sample("blk_read.txt");
    let v = report_json(&[a.to_str().unwrap(), b.to_str().unwrap(), "--preset", "irq-handler"]);
    assert_eq!(v["inputs"].as_array().unwrap().len(), 2);
    let analyses = v["analyses"].as_array().unwrap();
    assert_eq!(analyses.iter().map(|x| x["input"].as_u64().unwrap()).collect::<Vec<_>>(), vec![0, 1]);
    let c = v["comparison"].as_array().unwrap();
    assert_eq!(c.len(), 1);
    let c = &c[0];
    assert_eq!(c["analysis"], "irq-handler");
    let (ca, cb) = (analyses[0]["count"].as_i64().unwrap(), analyses[1]["count"].as_i64().unwrap());
    assert_eq!((c["a"]["count"].as_i64(), c["b"]["count"].as_i64()), (Some(ca), Some(cb)));
    assert_eq!(c["count_delta"].as_i64(), Some(cb - ca));
    for k in ["mean", "p50", "p99", "max"] {
        let (x, y) =
            (analyses[0]["stats_ns"][k].as_f64().unwrap(), analyses[1]["stats_ns"][k].as_f64().unwrap());
        assert!((c["delta_ns"][k].as_f64().unwrap() - (y - x)).abs() < 1e-6, "{k}");
        assert!((c["ratio"][k].as_f64().unwrap() - y / x).abs() < 1e-9, "{k}");
    }
    // Markdown and HTML show the side-by-side table.
    let md = latscope(&["report", a.to_str().unwrap(), b.to_str().unwrap(), "--preset", "irq-handler"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("## A/B comparison"));
}

#[test]
fn without_presets_every_preset_with_events_runs() {
    let path = sample("virtio_blk_direct_read.txt");
    let out = latscope(&["report", path.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("irq-handler") && err.contains("block"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> =
        v["analyses"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"irq-handler") && names.contains(&"block"), "{names:?}");
    // The block requests: every issue line completes in this recording (grep count).
    let text = std::fs::read_to_string(&path).unwrap();
    let issues = text.lines().filter(|l| l.contains(" block_rq_issue: ")).count() as u64;
    let block = v["analyses"].as_array().unwrap().iter().find(|a| a["name"] == "block").unwrap();
    assert_eq!(block["count"].as_u64().unwrap() + block["unmatched_start"].as_u64().unwrap(), issues);
}

#[test]
fn sim_reports_go_through_the_report_path() {
    let args = ["sim", "litesdcard", "--set", "file_mib=1", "--preset", "irq-handler", "--preset", "block"];
    let out = latscope(&[&args[..], &["--format", "json"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["metrics"]["read_kib_s"].as_f64().unwrap() > 0.0, "{}", v["metrics"]);
    let analyses = v["analyses"].as_array().unwrap();
    let names: Vec<&str> = analyses.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"block-read") && names.contains(&"irq-handler") && names.contains(&"block"),
        "{names:?}"
    );
    // The scenario's own analyses now carry histograms and worst cases too.
    let read = analyses.iter().find(|a| a["name"] == "block-read").unwrap();
    let hist: u64 = read["histogram"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(hist, read["count"].as_u64().unwrap());
    assert!(!read["worst"].as_array().unwrap().is_empty());
    // The `block` preset sees the same read and write requests as the scenario's rules.
    let count = |n: &str| analyses.iter().find(|a| a["name"] == n).unwrap()["count"].as_u64().unwrap();
    assert_eq!(count("block"), count("block-read") + count("block-write"));
    let html = latscope(&[&args[..], &["--format", "html"]].concat());
    assert!(html.status.success());
    let html = String::from_utf8(html.stdout).unwrap();
    assert!(html.contains("<h2>Metrics</h2>") && html.contains("read_kib_s") && html.contains("<svg"));
    let md = latscope(&[&args[..2], &["--set", "file_mib=1"]].concat());
    assert!(String::from_utf8_lossy(&md.stdout).contains("| read_kib_s |"));
}

#[test]
fn align_fits_two_files_of_one_recording() {
    // The text and the .dat are one recording: matching each block_rq_issue to itself must
    // fit with a residual below the text's microsecond resolution.
    let (txt, dat) = (sample("blk_read.txt"), sample("blk_read_v6.dat"));
    let issues =
        std::fs::read_to_string(&txt).unwrap().lines().filter(|l| l.contains(" block_rq_issue: ")).count();
    let j = report_json(&[
        txt.to_str().unwrap(),
        dat.to_str().unwrap(),
        "--align",
        "1:match block_rq_issue -> block_rq_issue",
        "--preset",
        "block",
    ]);
    let align = j["align"].as_str().unwrap();
    assert!(align.contains(&format!("{issues} matched")), "{align} (expected {issues} matched)");
    let rms: f64 = align.split("rms ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!(rms < 1000.0, "residual {rms} ns");
    // A malformed --align is a usage error naming the argument, before any file is read.
    let out = latscope(&["report", txt.to_str().unwrap(), "--align", "one:+2us"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--align"));
}

/// `report` decodes only the `.sr` channels its rules name: the analysis of one channel must
/// equal the same analysis when every channel is named (a full decode), and the inputs'
/// record count and time range must be those `info` gives.
#[test]
fn rules_naming_their_channels_report_as_a_full_decode_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/sigrok");
    let mut checked = 0;
    for name in ["demo_4ch_1mhz.sr", "mixed_100khz_2logic_1analog.sr", "sd_mode_imx6_snippet.sr"] {
        let path = dir.join(name);
        let file = path.to_str().unwrap();
        let out = latscope(&["info", file, "--json"]);
        assert!(out.status.success());
        let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let channels: Vec<String> = info["sources"][0]["tracks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["kind"] == "digital")
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert!(channels.len() > 1, "{name}");
        let rules: Vec<String> = channels.iter().map(|c| format!("pulse:\"{c}\"")).collect();
        let mut all = vec![file];
        for r in &rules {
            all.extend(["--rule", r.as_str()]);
        }
        let full = report_json(&all);
        for (i, rule) in rules.iter().enumerate() {
            let one = report_json(&[file, "--rule", rule]);
            assert_eq!(one["analyses"][0], full["analyses"][i], "{name} {rule}");
            assert_eq!(one["inputs"], full["inputs"], "{name} {rule}");
            assert_eq!(one["inputs"][0]["events"], info["events"], "{name} {rule}");
            assert_eq!(one["inputs"][0]["end_s"], info["end_s"], "{name} {rule}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked}");
}

/// Clock values (seconds) a text trace prints for `event` lines containing `has`, read
/// without latscope: the oracle for where a source's events are.
fn printed_times(name: &str, event: &str, has: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(sample(name)).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains(&format!(" {event}: ")) && l.contains(has))
        .map(|l| {
            let head = l.split_once(&format!(" {event}: ")).unwrap().0;
            head.trim_end_matches(':').split_whitespace().last().unwrap().parse().unwrap()
        })
        .collect()
}

#[test]
fn aligned_inputs_of_one_kernel_clock_are_moved_from_where_their_clocks_put_them() {
    let (a, b) = ("virtio_blk_direct_read.txt", "markers_around_requests.txt");
    let (pa, pb) = (sample(a), sample(b));
    // The last wakeup of the first trace and the first request marker of the second: a
    // pair only across the two files, on their common (kernel) clock.
    let wakeup = *printed_times(a, "sched_wakeup", "").last().unwrap();
    let mark = printed_times(b, "tracing_mark_write", "req_start")[0];
    assert!(mark - wakeup > 4.0, "the second recording followed the first by {} s", mark - wakeup);
    let rule = "gap=sched_wakeup -> tracing_mark_write[text~req_start] policy next";
    for (align, shift_ps) in [("1:+0ps", 0i64), ("1:+1ms", 1_000_000_000), ("1:-250us", -250_000_000)] {
        let shift_s = shift_ps as f64 / 1e12;
        let v = report_json(&[pa.to_str().unwrap(), pb.to_str().unwrap(), "--align", align, "--rule", rule]);
        let g = &v["analyses"][0];
        assert_eq!((g["name"].as_str(), g["count"].as_u64()), (Some("gap"), Some(1)), "{align}");
        let w = &g["worst"][0];
        // Times are the first input's clock, which the second shares: the marker reads as
        // its file prints it, moved by the alignment's offset only.
        let (start, end) = (w["start_s"].as_f64().unwrap(), w["end_s"].as_f64().unwrap());
        assert!((start - wakeup).abs() < 1e-9, "{align}: start {start} vs {wakeup}");
        assert!((end - (mark + shift_s)).abs() < 1e-9, "{align}: end {end} vs {}", mark + shift_s);
        let latency = w["latency_ns"].as_f64().unwrap();
        assert!((latency - (mark + shift_s - wakeup) * 1e9).abs() < 1.0, "{align}: {latency} ns");
        // The report says where the aligned input went: 4 s from the clocks, plus the offset.
        let offset_ns = (4_000_000_000_000 + shift_ps) as f64 / 1e3;
        let said = v["align"].as_str().unwrap();
        assert!(said.contains(&format!("offset {offset_ns} ns")), "{align}: {said}");
    }
}

#[test]
fn several_inputs_keep_their_own_clocks_in_reports_and_the_perfetto_trace() {
    let (a, b) = ("virtio_blk_direct_read.txt", "markers_around_requests.txt");
    let (pa, pb) = (sample(a), sample(b));
    let paths = [pa.to_str().unwrap(), pb.to_str().unwrap()];
    // A/B: each input's worst case in its own clock, as its file prints it.
    let v = report_json(&[paths[0], paths[1], "--preset", "irq-handler"]);
    for (input, name) in [(0u64, a), (1, b)] {
        let entries = printed_times(name, "irq_handler_entry", "");
        let an = v["analyses"].as_array().unwrap().iter().find(|x| x["input"] == input).unwrap();
        let start = an["worst"][0]["start_s"].as_f64().unwrap();
        assert!(
            entries.iter().any(|&t| (t - start).abs() < 1e-9),
            "input {input}: {start} not printed in {name}"
        );
    }
    // The Perfetto trace puts both on the first input's timeline by their clock values.
    let out = latscope(&["report", paths[0], paths[1], "--preset", "irq-handler", "--format", "perfetto"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let origin: f64 = t["otherData"]["origin_s"].as_str().unwrap().parse().unwrap();
    for (pid, name) in [(1u64, a), (2, b)] {
        let first = t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["ph"] == "i" && e["pid"] == pid && e["name"] == "irq_handler_entry")
            .unwrap();
        let at = origin + first["ts"].as_f64().unwrap() / 1e6;
        let printed = printed_times(name, "irq_handler_entry", "")[0];
        assert!((at - printed).abs() < 1e-9, "pid {pid}: {at} vs {printed}");
    }
}

#[test]
fn a_requested_preset_without_its_events_says_what_to_record() {
    // This recording has block and IRQ events but no scheduler events.
    let path = sample("markers_around_requests.txt");
    let out = latscope(&["report", path.to_str().unwrap(), "--preset", "wakeup"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "wakeup needs sched_wakeup and sched_switch: `trace-cmd record -e sched_wakeup -e sched_switch`"
        ),
        "{err}"
    );
    // Without --preset, the presets it cannot run are named with the same text.
    let out = latscope(&["report", path.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("latscope: not run: wakeup needs sched_wakeup and sched_switch: `trace-cmd record -e sched_wakeup -e sched_switch`"),
        "{err}"
    );
}

#[test]
fn reports_name_inputs_by_name_and_number_them_only_where_names_repeat() {
    let (a, b) = (sample("virtio_blk_direct_read.txt"), sample("markers_around_requests.txt"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = latscope(&["report", a, b, "--preset", "irq-handler", "--format", "md"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("## irq-handler (virtio_blk_direct_read.txt)"), "{md}");
    assert!(md.contains("## irq-handler (markers_around_requests.txt)"), "{md}");
    assert!(md.contains("| irq-handler | markers_around_requests.txt | "), "{md}");
    assert!(!md.contains("input 0") && !md.contains("input 1"), "{md}");
    let out = latscope(&["report", a, b, "--preset", "irq-handler", "--format", "html"]);
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(html.contains("<h2>irq-handler <small>(markers_around_requests.txt)</small></h2>"));
    assert!(!html.contains("input 1"));
    // The JSON keeps its numbers.
    let v = report_json(&[a, b, "--preset", "irq-handler"]);
    let inputs: Vec<u64> =
        v["analyses"].as_array().unwrap().iter().map(|x| x["input"].as_u64().unwrap()).collect();
    assert_eq!(inputs, [0, 1]);
    // Messages name the input: a threshold crossed, an analysis one input lacks.
    let out = latscope(&["report", a, b, "--preset", "irq-handler", "--fail-if", "irq-handler.max>1ns"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(--fail-if irq-handler.max>1ns, markers_around_requests.txt)"), "{err}");
    let sr = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/sigrok/demo_4ch_1mhz.sr");
    let out = latscope(&["report", a, sr.to_str().unwrap(), "--preset", "irq-handler"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("analysis irq-handler: not run on demo_4ch_1mhz.sr: "), "{err}");
    // The same file twice: the names agree, so the numbers tell them apart.
    let out = latscope(&["report", a, a, "--preset", "irq-handler", "--format", "md"]);
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains(&format!("## irq-handler ({a} (input 1))")), "{md}");
}

fn ghw_sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/ghw").join(name).display().to_string()
}

#[test]
fn track_names_resolve_exact_first_then_by_a_unique_suffix_in_rules_align_and_decoders() {
    let vcd = ghw_sample("counter.vcd");
    let count = |rule: &str| {
        let v = report_json(&[&vcd, "--rule", rule]);
        v["analyses"][0]["count"].as_u64().unwrap()
    };
    // `dut.clk` is `counter_tb.dut.clk`: the same pulses as by its full name.
    let full = count("pulse:counter_tb.dut.clk");
    assert_eq!(full, 50);
    assert_eq!(count("pulse:dut.clk"), full);
    assert_eq!(count("pulse:counter_tb.clk"), 50, "an exact name");
    assert_eq!(count("e=dut.en:rise -> dut.clk:rise"), 1);
    // Presets take them too.
    let v = report_json(&[&vcd, "--preset", "pulse:dut.clk"]);
    assert_eq!(v["analyses"][0]["count"].as_u64(), Some(full));
    // `clk` ends two names: an error naming both.
    let out = latscope(&["report", &vcd, "--rule", "pulse:clk"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"clk\" is ambiguous: it could be counter_tb.clk, counter_tb.dut.clk"), "{err}");
    // --align: fitted from edges named by their suffixes.
    let ghw = ghw_sample("counter.ghw");
    let v = report_json(&[
        &vcd,
        &ghw,
        "--align",
        "1:match dut.en:rise -> dut.en:rise",
        "--rule",
        "pulse:dut.clk",
    ]);
    assert!(v["align"].as_str().unwrap().contains("1 matched"), "{}", v["align"]);
    let out = latscope(&["report", &vcd, &ghw, "--align", "1:match en:rise -> en:rise"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("it could be counter_tb.en, counter_tb.dut.en"), "{err}");
    // Decoders resolve channels the same way.
    let out = latscope(&["decode", &vcd, "--decoder", "uart:rx=dut.en,baud=1000000", "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = latscope(&["decode", &vcd, "--decoder", "uart:rx=en,baud=1000000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("counter_tb.en, counter_tb.dut.en"), "{err}");
}

/// One device, one spelling: `dev="254,0"` and `dev=266338304` select the same 400 requests
/// in the text trace and the trace.dat of one recording (the .dat matched none of the
/// first), keys read `dev=254,0` with the stored `key_raw` beside them, and a task id in a
/// key comes with the task's name.
#[test]
fn a_device_reads_and_matches_the_same_in_every_format() {
    let issues = std::fs::read_to_string(sample("virtio_blk_direct_read.txt"))
        .unwrap()
        .lines()
        .filter(|l| l.contains(" block_rq_issue: 254,0 "))
        .count();
    assert_eq!(issues, 400);
    for file in ["virtio_blk_direct_read.txt", "virtio_blk_direct_read.dat"] {
        let path = sample(file);
        let p = path.to_str().unwrap();
        for dev in ["\"254,0\"", "266338304"] {
            let rule = format!("io=block_rq_issue[dev={dev}] -> block_rq_complete by dev");
            let j = report_json(&[p, "--rule", &rule]);
            let a = &j["analyses"][0];
            assert_eq!(
                a["count"].as_u64().unwrap() as usize + a["unmatched_start"].as_u64().unwrap() as usize,
                issues,
                "{file} {dev}"
            );
            let group = &a["groups"][0];
            assert_eq!(group["key"], "dev=254,0", "{file}");
            assert_eq!(group["key_raw"], "dev=266338304", "{file}");
        }
        let j = report_json(&[p, "--preset", "block", "--preset", "wakeup"]);
        let block = &j["analyses"][0];
        let worst = &block["worst"][0];
        assert!(worst["key"].as_str().unwrap().starts_with("dev=254,0 sector="), "{file}: {worst}");
        assert!(worst["key_raw"].as_str().unwrap().starts_with("dev=266338304 sector="), "{file}: {worst}");
        let wakeup = &j["analyses"][1];
        for w in wakeup["worst"].as_array().unwrap() {
            let (key, raw) = (w["key"].as_str().unwrap(), w["key_raw"].as_str().unwrap());
            assert!(
                key.starts_with(raw) && key.ends_with(')') && key.contains(" ("),
                "{file}: {key} / {raw}"
            );
        }
    }
}

/// An SD bus as VCD (1 ns steps, a 40 ns clock): each token's bits on CMD, changed while CLK
/// is low; `stop` stands the clock still for that many ns after bit 20 of the token.
fn sd_vcd(tokens: &[(Vec<u8>, u64)]) -> String {
    let mut out = String::from(
        "$timescale 1ns $end\n$scope module sd $end\n$var wire 1 ! CLK $end\n$var wire 1 \" CMD $end\n$upscope $end\n$enddefinitions $end\n#0\n0!\n1\"\n",
    );
    let mut t = 0u64;
    let clock = |t: &mut u64, cmd: u8, out: &mut String| {
        out.push_str(&format!("#{}\n{cmd}\"\n", *t + 5));
        out.push_str(&format!("#{}\n1!\n#{}\n0!\n", *t + 20, *t + 40));
        *t += 40;
    };
    for (bits, stop) in tokens {
        for _ in 0..16 {
            clock(&mut t, 1, &mut out);
        }
        for (i, &b) in bits.iter().enumerate() {
            if i == 20 {
                t += stop;
            }
            clock(&mut t, b, &mut out);
        }
    }
    for _ in 0..16 {
        clock(&mut t, 1, &mut out);
    }
    out
}

/// A command read across a stopped clock is a failed decode: its `sd-cmd-resp` pair is left
/// out of the statistics and counted as `excluded_errors` (it used to be the worst case, an
/// 8 ms "latency" of the clock stop), and `--include-errors` keeps it.
#[test]
fn pairs_at_a_failed_decode_are_counted_apart_unless_kept() {
    use latscope_decoders::sd::encode::token48;
    let dir = tempdir("excluded");
    let path = dir.join("cmd1_clock_stop.vcd");
    let tokens = vec![
        (token48(true, 1, 0x40ff_8000), 8_000_000),
        (token48(false, 63, 0x80ff_8000), 0),
        (token48(true, 1, 0x40ff_8000), 0),
        (token48(false, 63, 0x80ff_8000), 0),
    ];
    std::fs::write(&path, sd_vcd(&tokens)).unwrap();
    let p = path.to_str().unwrap();
    let args = [p, "--decoder", "sd:clk=CLK,cmd=CMD", "--preset", "sd-cmd-resp"];
    let j = report_json(&args);
    let a = &j["analyses"][0];
    assert_eq!((a["count"].as_u64(), a["excluded_errors"].as_u64()), (Some(1), Some(1)), "{a}");
    assert!(a["stats_ns"]["max"].as_f64().unwrap() < 1e4, "the stopped clock is not a latency: {a}");
    let mut kept = args.to_vec();
    kept.push("--include-errors");
    let j = report_json(&kept);
    let a = &j["analyses"][0];
    assert_eq!((a["count"].as_u64(), a["excluded_errors"].as_u64()), (Some(2), Some(0)), "{a}");
    assert!(a["stats_ns"]["max"].as_f64().unwrap() > 8e6, "{a}");
    // `decode` still lists it, marked.
    let out = latscope(&["decode", p, "--decoder", "sd:clk=CLK,cmd=CMD", "--format", "json"]);
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cmds: Vec<&serde_json::Value> =
        d["annotations"].as_array().unwrap().iter().filter(|a| a["row"] == "cmd").collect();
    assert_eq!(cmds.len(), 2);
    assert_eq!(cmds[0]["fields"]["error"], "clock-stopped");
    assert!(cmds[1]["fields"].get("error").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
