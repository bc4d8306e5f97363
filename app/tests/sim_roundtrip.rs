//! The simulator's ftrace text and VCD outputs re-read through latscope's own importers:
//! what `latscope sim` writes is what `latscope info` reads back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::ok;

use std::process::Command;

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&ok(args).stdout).expect("JSON")
}

#[test]
fn simulated_trace_text_and_vcd_reimport_exactly() {
    let dir = std::env::temp_dir().join(format!("latscope-simrt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for scenario in ["e1000e-mta", "litesdcard"] {
        let txt = dir.join(format!("{scenario}.txt"));
        let vcd = dir.join(format!("{scenario}.vcd"));
        let set: &[&str] = if scenario == "litesdcard" { &["--set", "file_mib=1"] } else { &[] };
        let mut args = vec!["sim", scenario, "--trace-out", txt.to_str().unwrap()];
        args.extend_from_slice(set);
        ok(&args);
        let mut args = vec!["sim", scenario, "--trace-out", vcd.to_str().unwrap()];
        args.extend_from_slice(set);
        ok(&args);

        let text_info = json(&["info", txt.to_str().unwrap(), "--json"]);
        assert_eq!(text_info["format"], "ftrace-text");
        assert!(
            text_info["warnings"].as_array().unwrap().is_empty(),
            "{scenario}: {}",
            text_info["warnings"]
        );
        let simulated = json(&[&["sim", scenario, "--format", "json"][..], set].concat());
        assert_eq!(
            text_info["events"], simulated["inputs"][0]["events"],
            "{scenario}: event count survives the round trip"
        );
        // The text keeps microseconds, as the kernel prints them.
        let end = text_info["end_s"].as_f64().unwrap();
        let sim_end = simulated["inputs"][0]["end_s"].as_f64().unwrap();
        assert!((end - sim_end).abs() < 1e-6, "{scenario}: {end} vs {sim_end}");

        let vcd_info = json(&["info", vcd.to_str().unwrap(), "--json"]);
        assert_eq!(vcd_info["format"], "vcd");
        let tracks = vcd_info["sources"][0]["tracks"].as_array().unwrap();
        assert!(
            !tracks.is_empty() && tracks.iter().all(|t| t["kind"] == "digital"),
            "{scenario}: {tracks:?}"
        );
        assert!(tracks.iter().any(|t| t["count"].as_u64().unwrap() > 0));
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_latscope")).args(args).output().expect("latscope runs")
}

#[test]
fn sim_dash_o_writes_the_report_as_report_dash_o_does_and_the_trace_has_its_own_flag() {
    let dir = std::env::temp_dir().join(format!("latscope-sim-o-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let set = ["--set", "file_mib=1"];
    // -o r.json: the report, in the format its extension names, the same as on stdout.
    let r = dir.join("r.json");
    let out = run(&[&["sim", "litesdcard", "-o", r.to_str().unwrap()][..], &set].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "the report went to the file, not stdout");
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&r).unwrap()).unwrap();
    let printed = json(&[&["sim", "litesdcard", "--format", "json"][..], &set].concat());
    assert_eq!(written, printed);
    let md = dir.join("r.md");
    ok(&[&["sim", "litesdcard", "-o", md.to_str().unwrap()][..], &set].concat());
    assert!(std::fs::read_to_string(&md).unwrap().starts_with('#'), "markdown from the .md extension");

    // --trace-out: the trace, read back by `report` to the same analyses.
    let t = dir.join("t.txt");
    let out = run(&[
        &["sim", "litesdcard", "--trace-out", t.to_str().unwrap(), "-o", r.to_str().unwrap()][..],
        &set,
    ]
    .concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let info = json(&["info", t.to_str().unwrap(), "--json"]);
    assert_eq!(info["format"], "ftrace-text");
    assert_eq!(info["events"], printed["inputs"][0]["events"]);

    // The old spelling still writes the trace, and says it is deprecated.
    let old = dir.join("old.txt");
    let out = run(&[&["sim", "litesdcard", "-o", old.to_str().unwrap()][..], &set].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("deprecated") && err.contains("--trace-out"), "{err}");
    assert_eq!(std::fs::read(&old).unwrap(), std::fs::read(&t).unwrap());
    let vcd = dir.join("old.vcd");
    let out = run(&["sim", "e1000e-mta", "-o", vcd.to_str().unwrap()]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stderr).contains("deprecated"));
    assert_eq!(json(&["info", vcd.to_str().unwrap(), "--json"])["format"], "vcd");
    // A trace extension on -o next to --trace-out is a mistake, said before running.
    let out = run(&["sim", "litesdcard", "-o", old.to_str().unwrap(), "--trace-out", t.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--trace-out"));
    std::fs::remove_dir_all(&dir).ok();
}
