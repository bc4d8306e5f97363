#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Perfetto protobuf traces: real traces from the corpus and synthetic ones written
//! with Perfetto's own message classes (bench/perfetto_gen.py), each checked against an
//! independent decode (tests/perfetto_oracle.py: Google's protobuf runtime with the
//! descriptors Perfetto publishes) — event counts per type, every event's timestamp and pid,
//! atrace markers — plus hand-built hostile inputs.
//!
//! The oracle needs `python3` with the PyPI packages `perfetto` and `protobuf` (.ci/run
//! installs them; the tests using it are marked `have_python_perfetto`); the corpus traces
//! are in samples/corpus/perfetto.

use latscope_importers::{Format, LoadControl, detect, import_bytes, perfetto};
use latscope_model::{FieldValue, Source};
use latscope_testkit::{Need, corpus};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn python(args: &[&Path]) -> Vec<u8> {
    let out = Need::PythonPerfetto.output(Command::new("python3").args(args));
    assert!(
        out.status.success(),
        "{} failed (needs `pip install perfetto protobuf`): {}",
        args[0].display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn oracle(trace: &Path) -> serde_json::Value {
    let script = root().join("tests/perfetto_oracle.py");
    serde_json::from_slice(&python(&[&script, trace])).expect("oracle JSON")
}

fn generate(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let script = root().join("../bench/perfetto_gen.py");
    let mut cmd = Command::new("python3");
    cmd.arg(&script).arg(&out).args(["--events", "6000"]).args(extra);
    let status = Need::PythonPerfetto.output(&mut cmd);
    assert!(status.status.success(), "generator failed: {}", String::from_utf8_lossy(&status.stderr));
    out
}

fn load(path: &Path) -> Source {
    let data = std::fs::read(path).unwrap();
    assert_eq!(detect(&data), Some(Format::Perfetto), "{} detected as Perfetto", path.display());
    latscope_importers::open(path, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"))
}

/// Absolute trace-clock nanoseconds of relative picoseconds `t`.
fn abs_ns(s: &Source, t: i64) -> i128 {
    let ps = i128::from(s.origin.secs) * 1_000_000_000_000 + i128::from(s.origin.ps) + i128::from(t);
    assert_eq!(ps % 1000, 0, "Perfetto times are whole nanoseconds");
    ps / 1000
}

/// latscope's events as the oracle lists them: name → sorted [ts_ns, pid].
fn events_by_name(s: &Source) -> BTreeMap<String, Vec<(i128, i64)>> {
    let mut m: BTreeMap<String, Vec<(i128, i64)>> = BTreeMap::new();
    for ev in s.events.iter() {
        m.entry(s.strings.resolve(ev.name()).into_owned())
            .or_default()
            .push((abs_ns(s, ev.ts()), ev.pid().into()));
    }
    for v in m.values_mut() {
        v.sort_unstable();
    }
    m
}

fn oracle_by_name(o: &serde_json::Value) -> BTreeMap<String, Vec<(i128, i64)>> {
    let mut m = BTreeMap::new();
    for (name, list) in o["events"].as_object().unwrap() {
        let v: Vec<(i128, i64)> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (i128::from(p[0].as_u64().unwrap()), p[1].as_i64().unwrap()))
            .collect();
        m.insert(name.clone(), v);
    }
    m
}

fn check_against_oracle(path: &Path) -> (Source, serde_json::Value) {
    let s = load(path);
    let o = oracle(path);
    let ours = events_by_name(&s);
    let theirs = oracle_by_name(&o);
    let counts = |m: &BTreeMap<String, Vec<(i128, i64)>>| {
        m.iter().map(|(k, v)| (k.clone(), v.len())).collect::<Vec<_>>()
    };
    assert_eq!(counts(&ours), counts(&theirs), "{}: events per type", path.display());
    for (name, list) in &theirs {
        assert!(
            ours[name] == *list,
            "{}: {name}: timestamps and pids differ from the oracle",
            path.display()
        );
    }
    (s, o)
}

fn atrace_spans(s: &Source) -> usize {
    // Thread slices (B/E); `atrace async` tracks hold the S/F slices.
    s.spans
        .iter()
        .filter(|t| t.name.starts_with("atrace ") && !t.name.starts_with("atrace async"))
        .map(|t| t.len())
        .sum()
}

#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn corpus_traces_match_an_independent_decode() {
    let android = corpus("perfetto/nowinandroid_android_atrace_ftrace.perfetto-trace");
    let (s, o) = check_against_oracle(&android);
    assert_eq!(s.events.len(), 6246, "NOTES: 6246 print events");
    // Every B marker is a slice (closed by its E, or drawn to the trace's end and counted).
    assert_eq!(atrace_spans(&s), o["atrace"]["B"].as_u64().unwrap() as usize);
    assert_eq!(o["atrace"]["B"], o["atrace"]["E"]);
    assert!(
        !s.diagnostics.summary().iter().any(|w| w.contains("never ended") || w.contains("no open slice"))
    );
    // The packets of field 76 (a type this schema does not know) are counted, not dropped silently.
    assert!(
        s.diagnostics
            .summary()
            .iter()
            .any(|w| w.contains("TracePacket field 76 (not in Perfetto's published protos) ×7475")),
        "{:?}",
        s.diagnostics.summary()
    );
    // Times are the boot clock Perfetto shows: the first event's second.
    assert_eq!(s.origin.secs, 578_089);
    // print fields as the trace.dat importer names them.
    let first = s.events.iter().next().unwrap();
    let text = first.field(s.strings.lookup(b"text").unwrap()).unwrap();
    assert!(matches!(text, FieldValue::Str(t) if s.strings.resolve(t).starts_with(['B', 'E'])));

    let systing = corpus("perfetto/systing_compact_sched_irq.pb");
    let (s, _) = check_against_oracle(&systing);
    // Compact sched: the prev task of each switch is the previous switch's next task.
    let switch = s.strings.lookup(b"sched_switch").unwrap();
    let (prev_pid, next_pid, next_comm) = (
        s.strings.lookup(b"prev_pid").unwrap(),
        s.strings.lookup(b"next_pid").unwrap(),
        s.strings.lookup(b"next_comm").unwrap(),
    );
    let mut last: BTreeMap<u16, i64> = BTreeMap::new();
    for ev in s.events.iter().filter(|e| e.name() == switch) {
        let prev = ev.field(prev_pid).and_then(FieldValue::as_i64).unwrap();
        assert_eq!(prev, last.get(&ev.cpu()).copied().unwrap_or(-1));
        assert_eq!(i64::from(ev.pid()), prev, "a switch is executed by its prev task");
        last.insert(ev.cpu(), ev.field(next_pid).and_then(FieldValue::as_i64).unwrap());
        assert!(matches!(ev.field(next_comm), Some(FieldValue::Str(_))));
    }
    // Interned comms reach the comm column (the swapper tasks are named by the kernel).
    let named = s.events.iter().filter(|e| s.strings.resolve(e.comm()).starts_with("swapper/")).count();
    assert!(named > 0);
    // Process names from the process tree reach the names of running tasks.
    assert!(s.metadata.iter().any(|(k, v)| k == "cpus" && v.parse::<u32>().unwrap() > 8));
}

#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn synthetic_traces_plain_and_compact_match_the_oracle() {
    let dir = tempdir();
    for (name, extra) in [("plain.pftrace", &[][..]), ("compact.pftrace", &["--compact"][..])] {
        let path = generate(&dir, name, extra);
        let (s, o) = check_against_oracle(&path);
        assert!(s.events.len() > 5000);
        assert_eq!(atrace_spans(&s), o["atrace"]["B"].as_u64().unwrap() as usize);
        // `C|tgid|queue|n` counters are counter tracks with every sample.
        let samples: usize = s.analog.iter().map(|a| a.samples.len()).sum();
        assert_eq!(samples, o["atrace"]["C"].as_u64().unwrap() as usize);
        // Process-tree names name the tasks.
        assert!(s.events.iter().any(|e| s.strings.resolve(e.comm()) == "RenderThread"));
        assert!(s.diagnostics.malformed == 0, "{:?}", s.diagnostics.summary());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "latscope-perfetto-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ---- hand-built traces and hostile input ----

fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn field_varint(n: u32, v: u64, out: &mut Vec<u8>) {
    varint(u64::from(n) << 3, out);
    varint(v, out);
}

fn field_bytes(n: u32, b: &[u8], out: &mut Vec<u8>) {
    varint(u64::from(n) << 3 | 2, out);
    varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// An FtraceEvent with timestamp, pid and one payload field.
fn ftrace_event(ts: u64, pid: u64, field: u32, payload: &[u8]) -> Vec<u8> {
    let mut e = Vec::new();
    field_varint(1, ts, &mut e);
    field_varint(2, pid, &mut e);
    field_bytes(field, payload, &mut e);
    e
}

fn bundle_packet(cpu: u64, events: &[Vec<u8>]) -> Vec<u8> {
    let mut b = Vec::new();
    field_varint(1, cpu, &mut b);
    for e in events {
        field_bytes(2, e, &mut b);
    }
    let mut p = Vec::new();
    field_bytes(1, &b, &mut p);
    field_varint(10, 1, &mut p);
    let mut t = Vec::new();
    field_bytes(1, &p, &mut t);
    t
}

fn irq_entry(irq: u64, name: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    field_varint(1, irq, &mut m);
    field_bytes(2, name, &mut m);
    m
}

fn parse(data: &[u8]) -> Result<Source, latscope_importers::ParseFailure> {
    import_bytes(Format::Perfetto, data, &LoadControl::new())
}

#[test]
fn unknown_event_types_are_kept_with_their_field_numbers_and_counted() {
    let mut payload = Vec::new();
    field_varint(1, 42, &mut payload);
    field_bytes(2, b"hello", &mut payload);
    let mut data = bundle_packet(1, &[ftrace_event(5_000_000_123, 7, 36, &irq_entry(9, b"eth0"))]);
    data.extend(bundle_packet(1, &[ftrace_event(5_000_000_200, 7, 9999, &payload)]));
    assert_eq!(detect(&data), Some(Format::Perfetto));
    let s = parse(&data).unwrap();
    assert_eq!(s.events.len(), 2);
    let unknown = s.events.iter().find(|e| s.strings.resolve(e.name()) == "ftrace_event_9999").unwrap();
    assert_eq!(unknown.field(s.strings.lookup(b"f1").unwrap()), Some(FieldValue::UInt(42)));
    let f2 = unknown.field(s.strings.lookup(b"f2").unwrap());
    assert!(matches!(f2, Some(FieldValue::Str(x)) if s.strings.resolve(x) == "hello"));
    let summary = s.diagnostics.summary().join("\n");
    assert!(
        summary.contains("1 ftrace event(s) of a type latscope has no schema for, FtraceEvent field 9999:"),
        "{summary}"
    );
    let irq = s.events.iter().find(|e| s.strings.resolve(e.name()) == "irq_handler_entry").unwrap();
    assert_eq!(irq.cpu(), 1);
    assert_eq!(abs_ns(&s, irq.ts()), 5_000_000_123);
    assert_eq!(irq.field(s.strings.lookup(b"irq").unwrap()), Some(FieldValue::Int(9)));
}

#[test]
fn truncated_and_malformed_input_loads_what_it_holds_with_offsets() {
    let good = bundle_packet(0, &[ftrace_event(1_000, 1, 36, &irq_entry(1, b"a"))]);
    // Truncated: a second packet cut in the middle.
    let mut data = good.clone();
    let second = bundle_packet(0, &[ftrace_event(2_000, 1, 36, &irq_entry(2, b"b"))]);
    data.extend_from_slice(&second[..second.len() - 3]);
    let s = parse(&data).unwrap();
    assert_eq!(s.events.len(), 1, "the whole packet before the cut loads");
    let summary = s.diagnostics.summary().join("\n");
    assert!(summary.contains(&format!("byte offset {}", good.len())), "{summary}");
    assert!(summary.contains("truncated"), "{summary}");

    // A varint longer than 10 bytes as an event's pid: that event is skipped, its offset said.
    let mut e = Vec::new();
    field_varint(1, 3_000, &mut e);
    e.push(2 << 3);
    e.extend_from_slice(&[0xff; 11]);
    e.push(0);
    let mut data = good.clone();
    data.extend(bundle_packet(0, &[e, ftrace_event(4_000, 1, 36, &irq_entry(3, b"c"))]));
    let s = parse(&data).unwrap();
    assert_eq!(s.events.len(), 2, "the good events before and after load");
    assert_eq!(s.diagnostics.malformed, 1);
    let d = &s.diagnostics.first_malformed[0];
    assert!(d.message.contains("varint longer than 10 bytes"), "{}", d.message);
    assert!(d.offset > good.len() as u64);

    // A wrong wire type: irq (a varint) written as a string; prost refuses that event only.
    let mut bad = Vec::new();
    field_bytes(1, b"x", &mut bad);
    let mut data = good.clone();
    data.extend(bundle_packet(0, &[ftrace_event(5_000, 1, 36, &bad)]));
    let s = parse(&data).unwrap();
    assert_eq!(s.events.len(), 1);
    assert_eq!(s.diagnostics.malformed, 1);
    assert!(s.diagnostics.first_malformed[0].message.contains("field 36"));

    // A nesting bomb: 2,000 nested length-delimited fields inside an unknown event. The
    // importer never recurses into fields it has no schema for, so it is one generic event.
    let mut nest: Vec<u8> = b"x".to_vec();
    for _ in 0..2_000 {
        let mut outer = Vec::new();
        field_bytes(1, &nest, &mut outer);
        nest = outer;
    }
    let mut data = good.clone();
    data.extend(bundle_packet(0, &[ftrace_event(6_000, 1, 777, &nest)]));
    let s = parse(&data).unwrap();
    assert_eq!(s.events.len(), 2);

    // Not a trace at all.
    assert!(perfetto::parse(b"\x0a\x05hello", &LoadControl::new()).is_ok_and(|s| s.events.is_empty()));
    assert!(perfetto::parse(b"", &LoadControl::new()).is_err());
    assert_eq!(detect(b"\n# tracer: nop\n"), Some(Format::FtraceText));
}

#[test]
fn compact_sched_arrays_are_delta_decoded_with_the_intern_table() {
    // Two switches and one waking between them on CPU 3.
    let mut cs = Vec::new();
    for (tag, vals) in [
        (1u32, vec![1_000_000u64, 500]),
        (3, vec![10, 20]),
        (4, vec![120, 100]),
        (6, vec![0, 1]),
        (2, vec![0, 1]),
    ] {
        let mut packed = Vec::new();
        for v in vals {
            varint(v, &mut packed);
        }
        field_bytes(tag, &packed, &mut cs);
    }
    field_bytes(5, b"first", &mut cs);
    field_bytes(5, b"second", &mut cs);
    for (tag, v) in [(7u32, 1_000_200u64), (8, 20), (9, 3), (10, 100), (11, 1), (12, 1)] {
        field_varint(tag, v, &mut cs);
    }
    let mut b = Vec::new();
    field_varint(1, 3, &mut b);
    field_bytes(4, &cs, &mut b);
    let mut p = Vec::new();
    field_bytes(1, &b, &mut p);
    let mut data = Vec::new();
    field_bytes(1, &p, &mut data);
    let s = parse(&data).unwrap();
    let rows: Vec<(String, i128, i32, String)> = s
        .events
        .iter()
        .map(|e| {
            (
                s.strings.resolve(e.name()).into_owned(),
                abs_ns(&s, e.ts()),
                e.pid(),
                s.strings.resolve(e.comm()).into_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("sched_switch".into(), 1_000_000, -1, "<...>".into()),
            ("sched_waking".into(), 1_000_200, 10, "first".into()),
            ("sched_switch".into(), 1_000_500, 10, "first".into()),
        ]
    );
    let second = s.events.get(2).unwrap();
    let f = |n: &str| second.field(s.strings.lookup(n.as_bytes()).unwrap()).unwrap();
    assert_eq!(f("prev_pid"), FieldValue::Int(10));
    assert_eq!(f("prev_prio"), FieldValue::Int(120));
    assert_eq!(f("prev_state"), FieldValue::Int(1), "each switch's own prev_state");
    assert_eq!(f("next_comm"), FieldValue::Str(s.strings.lookup(b"second").unwrap()));
}

/// Deterministic mutations of a real trace (bit flips, cut tails, spliced and repeated
/// byte runs, forged lengths) never panic, and what loads is sorted. A cheap complement to
/// the libFuzzer target `fuzz/fuzz_targets/perfetto.rs`, run by every `cargo test`;
/// `LATSCOPE_MUTATIONS=N` runs N mutations instead of 300.
#[test]
fn mutated_traces_never_panic() {
    let sample = root().join("../samples/perfetto/synthetic_sched_irq.pftrace");
    let base = std::fs::read(&sample).unwrap();
    let base = &base[..base.len().min(48 * 1024)];
    let n: u64 = std::env::var("LATSCOPE_MUTATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for i in 0..n {
        let mut data = base.to_vec();
        for _ in 0..=(next() % 4) {
            let len = data.len().max(1) as u64;
            let at = (next() % len) as usize;
            let last = at.min(data.len() - 1);
            match next() % 6 {
                0 => data[last] ^= 1 << (next() % 8),
                1 => data.truncate(at),
                2 => {
                    let run: Vec<u8> = data[at..(at + (next() % 64) as usize).min(data.len())].to_vec();
                    let to = (next() % len) as usize;
                    data.splice(
                        to.min(data.len())..to.min(data.len()),
                        run.iter().copied().cycle().take(run.len() * 3),
                    );
                }
                3 => data[last] = 0xff,
                4 => data.splice(at..at, [0xff; 11]).for_each(drop),
                _ => data[last] = (next() % 128) as u8,
            }
            if data.is_empty() {
                data.push(0x0a);
            }
        }
        if let Ok(s) = perfetto::parse(&data, &LoadControl::new()) {
            assert!(s.events.is_sorted(), "mutation {i}: events sorted");
        }
    }
}

/// The model's budget: a loaded event costs under 48 bytes including its field values (plus
/// the unique strings it interns), Perfetto's events as much as ftrace text's.
#[test]
fn memory_per_event_stays_under_48_bytes() {
    memory_per_event_under_48_bytes(&[
        root().join("../samples/perfetto/synthetic_sched_irq.pftrace"),
        corpus("perfetto/nowinandroid_android_atrace_ftrace.perfetto-trace"),
        corpus("perfetto/systing_compact_sched_irq.pb"),
    ]);
}

#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn memory_per_event_of_generated_traces_stays_under_48_bytes() {
    let dir = tempdir();
    let traces = [generate(&dir, "plain.pftrace", &[]), generate(&dir, "compact.pftrace", &["--compact"])];
    memory_per_event_under_48_bytes(&traces);
    let _ = std::fs::remove_dir_all(&dir);
}

fn memory_per_event_under_48_bytes(traces: &[PathBuf]) {
    for path in traces {
        let s = load(path);
        let per_event = s.events.heap_bytes() as f64 / s.events.len() as f64;
        let strings = s.strings.heap_bytes() as f64 / s.events.len() as f64;
        eprintln!(
            "{}: {} events, {per_event:.1} bytes per event, {strings:.1} of strings",
            path.display(),
            s.events.len()
        );
        assert!(per_event < 48.0, "{}: {per_event:.1} bytes per event", path.display());
    }
}
