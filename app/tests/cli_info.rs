//! `latscope info` end to end: the JSON contract, exit codes and error text.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::latscope;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn info_json(path: &Path) -> serde_json::Value {
    let out = latscope(&["info", path.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("info --json prints JSON")
}

#[test]
fn info_json_has_the_contract_fields() {
    let path = root().join("samples/sigrok/sd_mode_imx6_snippet.sr");
    let v = info_json(&path);
    for key in ["path", "format", "events", "start_s", "end_s", "sources", "warnings"] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["format"], "sigrok-sr");
    let tracks = v["sources"][0]["tracks"].as_array().unwrap();
    let names: Vec<&str> = tracks.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"CLK") && names.contains(&"CMD"), "{names:?}");
    assert!(tracks.iter().all(|t| t["kind"] == "digital"));
    // For waveform files `events` is the sum of the tracks' counts.
    let sum: u64 = tracks.iter().map(|t| t["count"].as_u64().unwrap()).sum();
    assert_eq!(v["events"].as_u64(), Some(sum));
    assert_eq!(v["start_s"].as_f64(), Some(0.0));
    assert!(v["end_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn unsupported_input_names_the_file_and_lists_the_formats() {
    let dir = std::env::temp_dir().join(format!("latscope-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("random.bin");
    // Deterministic "random" bytes: an LCG, so the test is reproducible.
    let mut x: u32 = 12345;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        })
        .collect();
    std::fs::write(&junk, &bytes).unwrap();
    let out = latscope(&["info", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("random.bin") && err.contains("not a supported format"), "{err}");
    assert!(err.contains("sigrok") && err.contains("trace.dat") && err.contains("VCD"), "{err}");

    let missing = dir.join("missing.dat");
    let out = latscope(&["info", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.dat"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    assert_eq!(latscope(&["info"]).status.code(), Some(1));
    assert_eq!(latscope(&["--no-such-flag"]).status.code(), Some(1));
    assert_eq!(latscope(&["--help"]).status.code(), Some(0));
}

#[test]
fn inputs_are_never_modified() {
    let path = root().join("samples/sigrok/demo_4ch_1mhz.sr");
    let before = std::fs::read(&path).unwrap();
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let _ = info_json(&path);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified);
}

/// Runs `latscope ARGS` with a reader that has gone before the first line is written, as
/// `latscope ... | head -0` would: the command must end quietly, as a pipe's writer does.
fn run_into_closed_pipe(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("latscope runs");
    drop(child.stdout.take());
    child.wait_with_output().expect("latscope ends")
}

#[test]
fn commands_end_quietly_when_their_reader_goes_away() {
    let trace = root().join("samples/ftrace/virtio_blk_direct_read.txt");
    let trace = trace.to_str().unwrap();
    for args in [
        vec!["info", trace],
        vec!["info", trace, "--json"],
        vec!["report", trace, "--preset", "block", "--format", "csv"],
        vec!["events", trace],
    ] {
        let out = run_into_closed_pipe(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
