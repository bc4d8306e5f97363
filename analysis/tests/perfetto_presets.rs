#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The presets irq-handler, softirq and wakeup on Perfetto traces agree, pair for pair and
//! in their unmatched counts, with the hand-written pairing of an independent decode
//! (importers/tests/perfetto_oracle.py: Google's protobuf runtime and the descriptors
//! Perfetto publishes). Real traces from the corpus (samples/corpus/perfetto), and
//! synthetic ones from bench/perfetto_gen.py with plain and compact sched records.

use latscope_analysis::presets::WAKING_NOTE;
use latscope_analysis::runner::{AnalysisError, run_spec};
use latscope_analysis::spec::preset_spec;
use latscope_importers::LoadControl;
use latscope_model::Source;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python(args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let out = latscope_testkit::Need::PythonPerfetto.output(Command::new("python3").args(args));
    assert!(
        out.status.success(),
        "needs `pip install perfetto protobuf`: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn oracle(trace: &Path) -> serde_json::Value {
    let script = root().join("importers/tests/perfetto_oracle.py");
    serde_json::from_slice(&python(&[script.as_os_str(), trace.as_os_str()])).unwrap()
}

fn abs_ns(s: &Source, t: i64) -> u64 {
    let ps = i128::from(s.origin.secs) * 1_000_000_000_000 + i128::from(s.origin.ps) + i128::from(t);
    u64::try_from(ps / 1000).unwrap()
}

/// Compares one preset with the oracle's pairing; `true` when the preset found pairs.
fn agree(path: &Path, src: &Source, o: &serde_json::Value, preset: &str) -> bool {
    let want = &o["pairs"][preset];
    let want_pairs: Vec<(u64, u64)> = want["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
        .collect();
    let res = run_spec(&preset_spec(preset).unwrap(), &[latscope_model::Placed::unaligned(src)]);
    let out = match res {
        Ok(out) => out,
        // A trace without the preset's start event (e.g. no sched_wakeup, only sched_waking).
        Err(AnalysisError::Missing { .. }) => {
            assert!(
                want_pairs.is_empty(),
                "{}: {preset} found nothing, the oracle {} pairs",
                path.display(),
                want_pairs.len()
            );
            return false;
        }
        Err(e) => panic!("{}: {preset}: {e}", path.display()),
    };
    assert_eq!(out.len(), 1);
    let o = &out[0];
    let mut got: Vec<(u64, u64)> =
        o.samples.iter().map(|s| (abs_ns(src, s.start), abs_ns(src, s.end))).collect();
    got.sort_unstable();
    assert_eq!(got.len(), want_pairs.len(), "{}: {preset} pairs", path.display());
    assert!(got == want_pairs, "{}: {preset}: pairs differ from the oracle's", path.display());
    assert_eq!(
        o.unmatched_start,
        want["unmatched_start"].as_u64().unwrap(),
        "{}: {preset} unmatched starts",
        path.display()
    );
    assert_eq!(
        o.unmatched_end,
        want["unmatched_end"].as_u64().unwrap(),
        "{}: {preset} unmatched ends",
        path.display()
    );
    if preset == "wakeup" {
        // Paired from sched_waking exactly when the oracle did, and said so.
        let note = o.notes.iter().find(|n| n.what == WAKING_NOTE);
        match want["from"].as_str().unwrap() {
            "sched_waking" => {
                let note = note.unwrap_or_else(|| panic!("{}: no sched_waking note", path.display()));
                assert_eq!(note.count, want["starts"].as_u64().unwrap());
            }
            _ => assert!(note.is_none(), "{}: noted sched_waking with sched_wakeup present", path.display()),
        }
    }
    !got.is_empty()
}

fn check(path: &Path) -> Vec<&'static str> {
    let src = latscope_importers::open(path, &LoadControl::new()).unwrap();
    let o = oracle(path);
    ["irq-handler", "softirq", "wakeup"].into_iter().filter(|p| agree(path, &src, &o, p)).collect()
}

#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn corpus_presets_agree_with_the_oracle() {
    let corpus = latscope_testkit::corpus;
    // systing records sched_waking (compact) but no sched_wakeup: wakeup pairs sched_waking.
    assert_eq!(
        check(&corpus("perfetto/systing_compact_sched_irq.pb")),
        vec!["irq-handler", "softirq", "wakeup"]
    );
    assert!(check(&corpus("perfetto/nowinandroid_android_atrace_ftrace.perfetto-trace")).is_empty());
}

#[test]
#[cfg_attr(not(have_python_perfetto), ignore = "needs python3 with perfetto: pip install perfetto protobuf")]
fn synthetic_presets_agree_with_the_oracle() {
    let dir = std::env::temp_dir().join(format!("latscope-perfetto-presets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gen_script = root().join("bench/perfetto_gen.py");
    for (name, extra) in [("plain.pftrace", None), ("compact.pftrace", Some("--compact"))] {
        let path = dir.join(name);
        let mut args = vec![gen_script.as_os_str(), path.as_os_str()];
        args.extend([std::ffi::OsStr::new("--events"), std::ffi::OsStr::new("8000")]);
        if let Some(e) = extra {
            args.push(std::ffi::OsStr::new(e));
        }
        python(&args);
        assert_eq!(check(&path), vec!["irq-handler", "softirq", "wakeup"], "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
