//! `latscope report --format perfetto`: the Trace Event JSON read back — every analysis
//! sample is a slice with the same start and end to the nanosecond as the analysis found,
//! joined start to end by a flow arrow, with its latency in the args and on a counter track
//! — and validated against the JSON schema written from the format's documentation
//! (docs/perfetto-trace-event.schema.json, checked by python `jsonschema`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::Scratch;
use latscope_analysis::outcome::Outcome;
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::preset_spec;
use latscope_importers::LoadControl;
use latscope_model::{PS_PER_NS, Source};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn export(input: &Path, presets: &[&str], out: &Path) {
    let mut args: Vec<String> = vec!["report".into(), input.display().to_string()];
    for p in presets {
        args.extend(["--preset".into(), (*p).into()]);
    }
    args.extend(["--format".into(), "perfetto".into(), "-o".into(), out.display().to_string()]);
    let o = Command::new(env!("CARGO_BIN_EXE_latscope")).args(&args).output().expect("latscope runs");
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

fn validate(json: &Path) {
    let schema = root().join("docs/perfetto-trace-event.schema.json");
    let o = latscope_testkit::Need::PythonJsonschema.output(
        Command::new("python3")
            .args([
                "-c",
                "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))",
            ])
            .arg(json)
            .arg(&schema),
    );
    assert!(
        o.status.success(),
        "{} is not valid Trace Event JSON (needs `pip install jsonschema`): {}",
        json.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// µs with three decimals → ns, exactly (the values are small enough for f64).
fn ns(v: &serde_json::Value) -> i64 {
    (v.as_f64().unwrap() * 1000.0).round() as i64
}

fn analyses(src: &Source, presets: &[&str]) -> Vec<Outcome> {
    let sources = [latscope_model::Placed::unaligned(src)];
    presets.iter().flat_map(|p| run_spec(&preset_spec(p).unwrap(), &sources).unwrap()).collect()
}

fn check(input: &Path, presets: &[&str]) -> serde_json::Value {
    let dir = Scratch::new(&format!("perfetto-export-{}", input.file_stem().unwrap().to_string_lossy()));
    let out = dir.join("out.json");
    export(input, presets, &out);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();

    let src = latscope_importers::open(input, &LoadControl::new()).unwrap();
    let outcomes = analyses(&src, presets);
    assert!(!outcomes.is_empty());
    // The export's times are relative to the source's origin (its only input).
    let floor_ns = |ps: i64| ps.div_euclid(PS_PER_NS);
    let mut by_name: BTreeMap<String, Vec<(i64, i64, f64)>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["cat"] == "pair") {
        let start = ns(&e["ts"]);
        let end = start + ns(&e["dur"]);
        by_name.entry(e["name"].as_str().unwrap().to_owned()).or_default().push((
            start,
            end,
            e["args"]["latency_ns"].as_f64().unwrap(),
        ));
    }
    for o in &outcomes {
        let mut want: Vec<(i64, i64, f64)> = o
            .samples
            .iter()
            .map(|s| (floor_ns(s.start), floor_ns(s.end), (s.end - s.start) as f64 / PS_PER_NS as f64))
            .collect();
        want.sort_by_key(|w| (w.0, w.1));
        let mut got = by_name.remove(&o.name).unwrap_or_default();
        got.sort_by_key(|g| (g.0, g.1));
        assert!(!want.is_empty(), "{}: the preset finds pairs in {}", o.name, input.display());
        assert_eq!(got.len(), want.len(), "{}: one slice per pair", o.name);
        assert!(got == want, "{}: slices differ from the pairs", o.name);
        // Latency over time: one counter sample per pair.
        let counter = format!("{} latency", o.name);
        let samples = events.iter().filter(|e| e["ph"] == "C" && e["name"] == counter.as_str()).count();
        assert_eq!(samples, o.samples.len());
    }
    // Flow arrows: each pair's start marker flows out to its end marker.
    let mut flows: BTreeMap<String, (Option<i64>, Option<i64>)> = BTreeMap::new();
    for e in events.iter().filter(|e| e.get("bind_id").is_some()) {
        let f = flows.entry(e["bind_id"].as_str().unwrap().to_owned()).or_default();
        if e["flow_out"] == true {
            f.0 = Some(ns(&e["ts"]));
        } else {
            assert_eq!(e["flow_in"], true);
            f.1 = Some(ns(&e["ts"]));
        }
    }
    let pairs: usize = outcomes.iter().map(|o| o.samples.len()).sum();
    assert_eq!(flows.len(), pairs);
    assert!(flows.values().all(|(a, b)| matches!((a, b), (Some(a), Some(b)) if a <= b)));
    // The source's events are there, one instant each, on CPU threads.
    let instants = events.iter().filter(|e| e["ph"] == "i").count();
    assert_eq!(instants, src.events.len());
    v
}

#[test]
fn ftrace_text_pairs_read_back_to_the_nanosecond() {
    let input = root().join("samples/ftrace/timer_wakeups_under_load.txt");
    check(&input, &["irq-handler", "softirq", "wakeup"]);
}

#[test]
fn perfetto_sample_round_trips_with_its_atrace_slices() {
    let input = root().join("samples/perfetto/synthetic_sched_irq.pftrace");
    let v = check(&input, &["irq-handler", "softirq", "wakeup", "idle"]);
    let src = latscope_importers::open(&input, &LoadControl::new()).unwrap();
    let spans: usize = src.spans.iter().map(|s| s.len()).sum();
    let slices = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "span").count();
    assert_eq!(slices, spans, "every atrace slice is exported");
}

/// A trace whose task and IRQ names hold quotes, `</script>` and a backslash.
fn evil_trace(dir: &Path) -> PathBuf {
    let input = dir.join("evil.txt");
    std::fs::write(
        &input,
        "# tracer: nop\n\
         a\"b</script>\\-12 [000] d.h1. 100.000001: irq_handler_entry: irq=5 name=x\"y\n\
         a\"b</script>\\-12 [000] d.h1. 100.000003: irq_handler_exit: irq=5 ret=handled\n",
    )
    .unwrap();
    input
}

/// The exports of the tests here validate against the schema written from the format's
/// documentation.
#[test]
#[cfg_attr(not(have_python_jsonschema), ignore = "needs python3 with jsonschema: pip install jsonschema")]
fn exports_are_valid_trace_event_json() {
    let dir = Scratch::new("perfetto-export-schema");
    for (input, presets) in [
        (
            root().join("samples/ftrace/timer_wakeups_under_load.txt"),
            &["irq-handler", "softirq", "wakeup"][..],
        ),
        (
            root().join("samples/perfetto/synthetic_sched_irq.pftrace"),
            &["irq-handler", "softirq", "wakeup", "idle"],
        ),
        (evil_trace(&dir), &["irq-handler"]),
    ] {
        let out = dir.join(format!("{}.json", input.file_stem().unwrap().to_string_lossy()));
        export(&input, presets, &out);
        validate(&out);
    }
}

#[test]
fn strings_from_traces_stay_escaped() {
    let dir = Scratch::new("perfetto-export-escape");
    let input = evil_trace(&dir);
    let out = dir.join("out.json");
    export(&input, &["irq-handler"], &out);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let inst = v["traceEvents"].as_array().unwrap().iter().find(|e| e["ph"] == "i").unwrap().clone();
    assert_eq!(inst["args"]["comm"], "a\"b</script>\\");
    assert_eq!(inst["args"]["name"], "x\"y");
    let pair = v["traceEvents"].as_array().unwrap().iter().find(|e| e["cat"] == "pair").unwrap().clone();
    assert_eq!(ns(&pair["dur"]), 2_000);
    assert_eq!(pair["args"]["latency_ns"], 2000.0);
}
