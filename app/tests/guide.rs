//! The user guide's walkthroughs (docs/guide/walkthroughs/) cannot rot: each one's CLI steps
//! are a script in docs/guide/scripts/ that this test runs with the built binary, and the
//! results the guide states are asserted here within the tolerances it states. The guide
//! must also show every step line of its script verbatim. Where an independent oracle
//! exists the guide's figures are its figures: the Perfetto page's counts and latencies are
//! those of Perfetto's own protobuf decode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Scratch;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn guide_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/guide")
}

/// Runs `scripts/NAME.sh` into a fresh directory and returns it.
fn run_script(name: &str) -> Scratch {
    let out = Scratch::new(&format!("guide-{name}"));
    let script = guide_dir().join("scripts").join(format!("{name}.sh"));
    let status = Command::new("sh")
        .arg(&script)
        .env("LATSCOPE", env!("CARGO_BIN_EXE_latscope"))
        .env("OUT", &*out)
        .status()
        .unwrap();
    assert!(status.success(), "{} failed: {status}", script.display());
    out
}

/// The step lines of a script (after the `--- steps` marker) must appear in its walkthrough.
fn guide_shows_script(name: &str) {
    page_shows_script(name, &format!("walkthroughs/{name}.md"));
}

/// The step lines of `scripts/NAME.sh` must appear in `page` (relative to docs/guide/).
fn page_shows_script(name: &str, page: &str) {
    let script = std::fs::read_to_string(guide_dir().join("scripts").join(format!("{name}.sh"))).unwrap();
    let page = std::fs::read_to_string(guide_dir().join(page)).unwrap();
    let steps = script.split_once("# --- steps").map(|(_, s)| s).unwrap();
    for line in steps.lines().skip(1).map(str::trim).filter(|l| !l.is_empty()) {
        assert!(page.contains(line), "walkthroughs/{name}.md does not show the step `{line}`");
    }
}

fn json(dir: &Path, file: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn metric(dir: &Path, file: &str, name: &str) -> f64 {
    json(dir, file)["metrics"][name].as_f64().unwrap_or_else(|| panic!("{file}: no metric {name}"))
}

fn within(value: f64, target: f64, tolerance: f64, what: &str) {
    let err = (value - target).abs() / target;
    assert!(
        err <= tolerance,
        "{what}: {value:.1} is {:.1}% from {target} (allowed {:.0}%)",
        err * 100.0,
        tolerance * 100.0
    );
}

#[test]
fn e1000e_flush_interval_table() {
    guide_shows_script("e1000e");
    let out = run_script("e1000e");
    let d = &*out;
    // The published table (shared/context/e1000e), within 5% as the guide states.
    for (n, us) in [(0, 106.0), (1, 429.0), (2, 266.0), (4, 180.0), (8, 141.0), (16, 121.0)] {
        within(metric(d, &format!("flush-{n}.json"), "mta_update_us"), us, 0.05, &format!("flush_every={n}"));
    }
    within(metric(d, "flush-0.json", "max_dma_delay_us"), 50.0, 0.10, "DMA delay, one flush");
    assert!(metric(d, "flush-8.json", "max_dma_delay_us") < 10.0, "flush_every=8 keeps DMA delays short");
    // The VCD the guide opens in a waveform viewer has the FLUSH and DMA lines.
    let info = json(d, "flush-0-vcd.json");
    let names: Vec<&str> =
        info["sources"][0]["tracks"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(
        names.iter().any(|n| n.ends_with("DMA")) && names.iter().any(|n| n.ends_with("FLUSH")),
        "{names:?}"
    );
}

#[test]
fn litesdcard_poll_or_irq() {
    guide_shows_script("litesdcard");
    let out = run_script("litesdcard");
    let d = &*out;
    // KiB/s read/write of the 32 MiB copy on rocket-chip at 50 MHz, within 15%.
    for (mode, read, write) in [
        ("cmd-irq", 737.0, 651.0),
        ("dma-irq", 664.0, 706.0),
        ("all-irq", 691.0, 651.0),
        ("poll-5us", 373.0, 182.0),
        ("poll-0us", 851.0, 948.0),
    ] {
        let f = format!("{mode}.json");
        within(metric(d, &f, "read_kib_s"), read, 0.15, &format!("{mode} read"));
        within(metric(d, &f, "write_kib_s"), write, 0.15, &format!("{mode} write"));
        let errors = metric(d, &f, "cmd_errors");
        assert_eq!(errors > 0.0, mode.starts_with("poll"), "{mode}: cmd_errors {errors}");
    }
    // The 100 MHz breakdown the discussion measured with a scope.
    let m = |k| metric(d, "microwatt.json", k);
    within(m("read_kib_s"), 3000.0, 0.15, "microwatt read");
    within(m("write_kib_s"), 1300.0, 0.15, "microwatt write");
    assert!((75.0..=90.0).contains(&m("cmd_polled_us_p50")), "polled command {}", m("cmd_polled_us_p50"));
    assert!((400.0..=700.0).contains(&m("read_issue_to_irq_us_p50")));
    assert!((1750.0..=2000.0).contains(&m("write_issue_to_irq_us_p50")));
    within(m("irq_to_thread_us_p50"), 120.0, 0.15, "IRQ to thread p50");
    assert!(m("irq_to_thread_us_max") <= 520.0);
    // The old driver: fine on level-triggered gateware, errors (then right data) on edge.
    assert_eq!(metric(d, "old-level.json", "cmd_errors"), 0.0);
    assert!(metric(d, "old-edge.json", "cmd_errors") > 1000.0);
    let edge = json(d, "old-edge.json");
    let block_write =
        edge["analyses"].as_array().unwrap().iter().find(|a| a["name"] == "block-write").unwrap();
    assert_eq!(block_write["count"], 8192, "every 4 KiB write of the 32 MiB file completes");
    assert_eq!(block_write["unmatched_start"], 0);
}

#[test]
fn imx8mq_idle_exit_on_the_wake_path() {
    guide_shows_script("imx8mq");
    let out = run_script("imx8mq");
    let d = &*out;
    let read = |f: &str| metric(d, f, "read_mib_s");
    let drop8mq = 1.0 - read("imx8mq-0.8.json") / read("imx8mq-0.25.json");
    let drop93 = 1.0 - read("imx93-0.8.json") / read("imx93-0.25.json");
    within(drop8mq, 0.30, 0.15, "imx8mq throughput drop");
    assert!(drop93 < 0.10, "imx93 drop {drop93}");
    assert!(read("imx8mq-0.8-qos.json") >= 0.95 * read("imx8mq-0.25.json"), "PM QoS restores throughput");
    within(metric(d, "imx8mq-0.8.json", "idle_exit_us_p50"), 500.0, 0.10, "imx8mq idle exit");
    within(metric(d, "imx93-0.8.json", "idle_exit_us_p50"), 60.0, 0.10, "imx93 idle exit");
}

#[test]
fn axienet_hard_irq_or_napi() {
    guide_shows_script("axienet");
    let out = run_script("axienet");
    let d = &*out;
    let (h, n) = ("hardirq.json", "napi.json");
    within(metric(d, h, "tx_mbps"), 941.0, 0.02, "hard-IRQ throughput");
    within(metric(d, n, "tx_mbps"), 941.0, 0.02, "NAPI throughput");
    within(metric(d, h, "hardirq_cpu_pct"), 12.0, 0.10, "hard-IRQ CPU");
    assert!(metric(d, n, "hardirq_cpu_pct") < 1.0);
    within(metric(d, h, "irq_total_cpu_pct"), 56.0, 0.05, "hard+soft, hard-IRQ completion");
    within(metric(d, n, "irq_total_cpu_pct"), 48.0, 0.05, "hard+soft, NAPI");
    assert!(metric(d, h, "max_irqs_off_us") >= 100.0);
    assert!(metric(d, n, "max_irqs_off_us") < 10.0);
    // The written trace re-reads as ftrace text with the IRQ events the guide points at.
    let info = json(d, "hardirq-info.json");
    assert_eq!(info["format"], "ftrace-text");
    let tracks = info["sources"][0]["tracks"].as_array().unwrap();
    assert!(tracks.iter().any(|t| t["name"] == "irq_handler_entry"));
}

#[test]
fn virtio_real_capture_command_to_wakeup() {
    guide_shows_script("virtio");
    let out = run_script("virtio");
    let d = &*out;
    // Counted without latscope: the text twin of the .dat (one recording).
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace/virtio_blk_direct_read.txt"),
    )
    .unwrap();
    let count = |event: &str| text.lines().filter(|l| l.contains(&format!(" {event}: "))).count() as u64;
    let info = json(d, "info.json");
    assert_eq!(info["events"].as_u64().unwrap(), text.lines().filter(|l| !l.starts_with('#')).count() as u64);

    let report = json(d, "report.json");
    let analysis = |name: &str| {
        report["analyses"].as_array().unwrap().iter().find(|a| a["name"] == name).unwrap().clone()
    };
    let block = analysis("block");
    assert_eq!(block["count"].as_u64().unwrap(), count("block_rq_complete"));
    let p50 = |a: &Value| a["stats_ns"]["p50"].as_f64().unwrap();
    // The guide's table: block p50 ~166 us, the device dominates, the chain adds the guest's path.
    assert!((150e3..180e3).contains(&p50(&block)), "block p50 {}", p50(&block));
    let cmd_irq = analysis("cmd-irq");
    assert_eq!(cmd_irq["count"].as_u64().unwrap(), count("block_rq_issue"));
    assert!(cmd_irq["notes"][0]["what"].as_str().unwrap().starts_with("irq 36 chosen"));
    let chain = analysis("chain");
    assert_eq!((chain["count"].as_u64(), chain["unmatched_start"].as_u64()), (Some(399), Some(1)));
    let stages: Vec<String> =
        chain["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect();
    assert_eq!(
        stages,
        ["chain/cmd->irq", "chain/irq handler", "chain/exit->wakeup", "chain/wakeup->switch-in"]
    );
    let stage_p50: f64 = chain["stages"].as_array().unwrap().iter().map(p50).sum();
    assert!(p50(&chain) > p50(&cmd_irq) && stage_p50 > 0.8 * p50(&chain), "{stage_p50} vs {}", p50(&chain));

    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert!(html.contains("<svg") && !html.contains("<script"), "self-contained, no scripts");

    // Text and .dat of one recording agree, to the text's microsecond resolution.
    let ab = json(d, "ab.json");
    let cmp = &ab["comparison"][0];
    assert_eq!(cmp["a"]["count"], cmp["b"]["count"]);
    assert!(cmp["delta_ns"]["p50"].as_f64().unwrap().abs() < 1000.0, "{cmp}");
    assert!(std::fs::read_to_string(d.join("gate.md")).unwrap().contains("| block |"));
}

/// Perfetto's own decode of a trace (importers/tests/perfetto_oracle.py: Google's protobuf
/// runtime with the message classes Perfetto publishes, and pairing written from the
/// presets' documented rules), which the Perfetto page's numbers must equal.
fn perfetto_oracle(trace: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../importers/tests/perfetto_oracle.py");
    let out = latscope_testkit::Need::PythonPerfetto.output(Command::new("python3").arg(&script).arg(trace));
    assert!(out.status.success(), "{}: {}", script.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The linear quantile `p` of sorted values (numpy's default: rank `p * (n - 1)`, the values
/// around it interpolated).
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let rank = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// `n` with thousands separators, as the page writes counts (`6,409`).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn perfetto_page_shows_its_script() {
    page_shows_script("perfetto", "perfetto.md");
}

/// Every figure of the Perfetto page is the oracle's, and latscope's output says the same.
#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn perfetto_open_presets_and_export() {
    let out = run_script("perfetto");
    let d = &*out;
    let page = std::fs::read_to_string(guide_dir().join("perfetto.md")).unwrap();
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/perfetto/synthetic_sched_irq.pftrace");
    let oracle = perfetto_oracle(&trace);
    let counts = oracle["counts"].as_object().unwrap();
    let events: u64 = counts.values().map(|c| c.as_u64().unwrap()).sum();

    // What info.txt says, every event type and atrace thread as the oracle counts them.
    let info = std::fs::read_to_string(d.join("info.txt")).unwrap();
    let line = |name: &str, kind: &str| {
        info.lines()
            .find_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                let [head @ .., k, n] = w.as_slice() else { return None };
                (head.join(" ") == name && *k == kind).then(|| (*n).to_owned())
            })
            .unwrap_or_else(|| panic!("info.txt has no {name} {kind}: {info}"))
    };
    for (name, count) in counts {
        assert_eq!(line(name, "events"), count.to_string(), "{name} events");
    }
    let slices = &oracle["slices"];
    for (tid, t) in slices["threads"].as_object().unwrap() {
        let track = format!("atrace {}-{tid}", t["name"].as_str().unwrap());
        assert_eq!(line(&track, "spans"), t["begun"].to_string(), "{track}");
    }
    let (unmatched, unended) =
        (slices["unmatched_end"].as_u64().unwrap(), slices["never_ended"].as_u64().unwrap());
    let (no_open, never) =
        (format!("{unmatched} slice end(s) with no open slice"), format!("{unended} slice(s) never ended"));
    assert!(info.contains(&no_open) && info.contains(&never), "{info}");
    assert_eq!(json(d, "info.json")["events"].as_u64(), Some(events));
    // As the page quotes them: "`irq_handler_entry events 713`", "`atrace worker/0-1000
    // spans 16`", the two warnings and the event total.
    let quoted: Vec<&str> = page.split('`').skip(1).step_by(2).collect();
    let mut quotes = 0;
    for q in &quoted {
        let w: Vec<&str> = q.split_whitespace().collect();
        if let [head @ .., kind @ ("events" | "spans"), n] = w.as_slice()
            && n.parse::<u64>().is_ok()
        {
            assert_eq!(line(&head.join(" "), kind), *n, "the page quotes `{q}`");
            quotes += 1;
        }
    }
    assert!(quotes >= 4, "the page quotes {quotes} counts of info.txt");
    let unwrapped = page.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(unwrapped.contains(&no_open) && unwrapped.contains(&never), "the page's warnings");
    assert!(page.contains(&format!("{} ftrace events", thousands(events))), "the page's event total");

    // The table of the presets: the oracle's pairs, their unmatched ends and latencies.
    let report = json(d, "presets.json");
    let analysis = |name: &str| {
        report["analyses"].as_array().unwrap().iter().find(|a| a["name"] == name).unwrap().clone()
    };
    let us = |ns: f64| format!("{:.3} us", ns / 1e3);
    let mut pairs = Vec::new();
    for name in ["irq-handler", "softirq", "wakeup"] {
        let want = &oracle["pairs"][name];
        let mut latencies: Vec<f64> = want["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[1].as_i64().unwrap() - p[0].as_i64().unwrap()) as f64)
            .collect();
        latencies.sort_by(f64::total_cmp);
        let (count, p50, max) =
            (latencies.len() as u64, quantile(&latencies, 0.5), latencies[latencies.len() - 1]);
        let (us_n, ue_n) =
            (want["unmatched_start"].as_u64().unwrap(), want["unmatched_end"].as_u64().unwrap());
        let a = analysis(name);
        assert_eq!(a["count"].as_u64(), Some(count), "{name}");
        assert_eq!(a["unmatched_start"].as_u64(), Some(us_n), "{name}");
        assert_eq!(a["unmatched_end"].as_u64(), Some(ue_n), "{name}");
        assert_eq!(a["stats_ns"]["p50"].as_f64(), Some(p50), "{name} p50");
        assert_eq!(a["stats_ns"]["max"].as_f64(), Some(max), "{name} max");
        let row = format!("| {name} | {count} | {us_n} / {ue_n} | {} | {} |", us(p50), us(max));
        assert!(page.contains(&row), "the page's table lacks `{row}`");
        // The sample has sched_wakeup (the oracle pairs from it): no fallback note.
        if name == "wakeup" {
            assert_eq!(want["from"], "sched_wakeup");
        }
        assert!(
            a["notes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|n| !n["what"].as_str().unwrap().contains("sched_waking"))
        );
        pairs.push((name, count));
    }
    // The counts the page repeats for the workbench and for ui.perfetto.dev.
    let [(_, irq), (_, softirq), (_, wakeup)] = pairs[..] else { unreachable!() };
    for phrase in [
        format!("here `irq-handler` {irq}, `softirq` {softirq}, `wakeup` {wakeup}"),
        format!("here {irq} `irq-handler`, {softirq} `softirq` and {wakeup} `wakeup` slices"),
    ] {
        assert!(unwrapped.contains(&phrase), "the page lacks `{phrase}`");
    }

    // The Perfetto trace: one pair slice per oracle pair, and the latency counter.
    let trace = json(d, "irq.json");
    let events = trace["traceEvents"].as_array().unwrap();
    for (name, count) in pairs {
        let slices = events.iter().filter(|e| e["cat"] == "pair" && e["name"] == name).count() as u64;
        assert_eq!(slices, count, "{name} slices");
    }
    assert!(events.iter().any(|e| e["ph"] == "C" && e["name"] == "irq-handler latency"));
    assert!(events.iter().any(|e| e["ph"] == "M" && e["args"]["name"] == "CPU 0"));
}

#[test]
fn query_page_shows_its_script() {
    page_shows_script("query", "query.md");
}

/// docs/guide/query.md: the figures it states are what its script's queries give, and the
/// pairs' statistics are `latscope report`'s.
#[test]
fn query_page_figures() {
    let d = run_script("query");
    let page = std::fs::read_to_string(guide_dir().join("query.md")).unwrap();
    let counts = std::fs::read_to_string(d.join("counts.csv")).unwrap();
    assert!(counts.starts_with("name,n\nsched_switch,423\n"), "{counts}");
    for name in ["block_rq_issue", "block_rq_complete", "irq_handler_entry"] {
        assert!(counts.contains(&format!("\n{name},400\n")), "{name}: {counts}");
    }
    assert!(page.contains("423 `sched_switch`") && page.contains("400 of each block and IRQ event"));
    let block = json(&d, "block.json");
    let report = json(&d, "report.json");
    let stats = &report["analyses"][0]["stats_ns"];
    let row = &block[0];
    assert_eq!(row["n"], report["analyses"][0]["count"]);
    assert_eq!(row["p50_ns"].as_f64(), stats["p50"].as_f64());
    assert_eq!(row["p99_ns"].as_f64(), stats["p99"].as_f64());
    let us = |v: &Value| format!("{:.1} µs", v.as_f64().unwrap() / 1e3);
    let stated = format!("{} requests, p50 {}, p99 {}", row["n"], us(&row["p50_ns"]), us(&row["p99_ns"]));
    assert!(page.contains(&stated), "the page lacks `{stated}`");
    let slowest = std::fs::read_to_string(d.join("slowest.csv")).unwrap();
    let rows: Vec<Vec<&str>> = slowest.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r[1] == "128"), "{slowest}");
    let worst: f64 = rows[0][2].parse().unwrap();
    assert_eq!(worst, stats["max"].as_f64().unwrap());
    assert!(page.contains(&format!("The slowest took {:.1} µs", worst / 1e3)));
    assert!(std::fs::metadata(d.join("issues.parquet")).unwrap().len() > 1000);
}
