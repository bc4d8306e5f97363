#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What a Perfetto load says it skipped, and the names it gives tasks, checked against
//! Perfetto's published protos decoded by Google's protobuf runtime
//! (tests/perfetto_names.py): the importer's tables of message names are the protos', the
//! skipped-packets warning names each type with its count as the protos count them, it is a
//! warning and not an error, and an atrace thread track is named by a name the trace gives
//! that thread, or by its id when the trace names it nowhere.

use latscope_importers::LoadControl;
use latscope_importers::perfetto::names::{FTRACE_EVENTS, TRACE_PACKET_DATA};
use latscope_model::{Severity, Source};
use latscope_testkit::{Need, corpus};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn oracle(trace: Option<&Path>) -> serde_json::Value {
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("tests/perfetto_names.py"));
    cmd.args(trace);
    let out = Need::PythonPerfetto.output(&mut cmd);
    assert!(out.status.success(), "perfetto_names.py: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn traces() -> Vec<PathBuf> {
    vec![
        root().join("../samples/perfetto/synthetic_sched_irq.pftrace"),
        corpus("perfetto/nowinandroid_android_atrace_ftrace.perfetto-trace"),
        corpus("perfetto/systing_compact_sched_irq.pb"),
    ]
}

fn load(path: &Path) -> Source {
    latscope_importers::open(path, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn the_name_tables_are_perfettos_protos() {
    let o = oracle(None);
    let table = |t: &[(u32, &str)]| -> BTreeMap<String, String> {
        t.iter().map(|(n, name)| (n.to_string(), (*name).to_owned())).collect()
    };
    let theirs = |k: &str| -> BTreeMap<String, String> {
        o[k].as_object().unwrap().iter().map(|(n, v)| (n.clone(), v.as_str().unwrap().to_owned())).collect()
    };
    assert_eq!(table(TRACE_PACKET_DATA), theirs("packet_data"));
    assert_eq!(table(FTRACE_EVENTS), theirs("ftrace_events"));
    // Sorted by number: the lookups search them.
    assert!(TRACE_PACKET_DATA.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(FTRACE_EVENTS.windows(2).all(|w| w[0].0 < w[1].0));
}

/// The packet types the importer reads (everything else is skipped and counted).
const READ: [&str; 10] = [
    "ftrace_events",
    "process_tree",
    "clock_snapshot",
    "track_descriptor",
    "track_event",
    "interned_data",
    "process_descriptor",
    "thread_descriptor",
    "trace_packet_defaults",
    "compressed_packets",
];

#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn skipped_packets_are_named_and_counted_as_a_warning() {
    for path in traces() {
        let s = load(&path);
        let o = oracle(Some(&path));
        let expected: BTreeMap<String, u64> = o["packets"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| !READ.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        let findings = s.diagnostics.findings();
        let skipped: Vec<_> = findings.iter().filter(|f| f.text.contains("latscope does not read")).collect();
        if expected.is_empty() {
            assert!(skipped.is_empty(), "{}: {skipped:?}", path.display());
            continue;
        }
        assert_eq!(skipped.len(), 1, "{}: {findings:?}", path.display());
        assert_eq!(skipped[0].severity, Severity::Warning);
        let list = skipped[0].text.split("skipped: ").nth(1).unwrap();
        let ours: BTreeMap<String, u64> = list
            .split(", ")
            .map(|item| {
                let (what, count) = item.rsplit_once(" ×").unwrap();
                // `TracePacket field 76 (not in Perfetto's published protos)` is the oracle's
                // `field 76`.
                let what = match what.strip_prefix("TracePacket ") {
                    Some(rest) => rest.split(" (").next().unwrap().to_owned(),
                    None => what.to_owned(),
                };
                (what, count.parse().unwrap())
            })
            .collect();
        assert_eq!(ours, expected, "{}", path.display());
        let total: u64 = expected.values().sum();
        assert!(skipped[0].text.starts_with(&format!("{total} packet(s) ")), "{}", skipped[0].text);
        assert!(!s.diagnostics.has_errors(), "{}: {findings:?}", path.display());
    }
}

#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn atrace_threads_are_named_as_the_trace_names_them() {
    let mut seen = 0;
    for path in traces() {
        let s = load(&path);
        let o = oracle(Some(&path));
        let names = &o["thread_names"];
        for t in
            s.spans.iter().filter(|t| t.name.starts_with("atrace ") && !t.name.starts_with("atrace async"))
        {
            seen += 1;
            let label = t.name.strip_prefix("atrace ").unwrap();
            assert!(!label.contains("<...>"), "{}: {label}", path.display());
            if let Some(tid) = label.strip_prefix("thread ") {
                assert!(names.get(tid).is_none(), "{}: {tid} has names {}", path.display(), names[tid]);
            } else {
                let (name, tid) = label.rsplit_once('-').unwrap();
                let known: Vec<&str> =
                    names[tid].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
                assert!(known.contains(&name), "{}: {label}: the trace names it {known:?}", path.display());
            }
        }
    }
    assert!(seen >= 4, "{seen} atrace thread tracks");
}
