//! The simulator's ftrace text and VCD outputs re-read through latscope's own importers:
//! what `latscope sim` writes is what `latscope info` reads back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

use std::process::Command;

fn latscope(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_latscope")).args(args).output().expect("latscope runs");
    assert!(out.status.success(), "latscope {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&latscope(args).stdout).expect("JSON")
}

#[test]
fn simulated_trace_text_and_vcd_reimport_exactly() {
    let dir = std::env::temp_dir().join(format!("latscope-simrt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for scenario in ["e1000e-mta", "litesdcard"] {
        let txt = dir.join(format!("{scenario}.txt"));
        let vcd = dir.join(format!("{scenario}.vcd"));
        let set: &[&str] = if scenario == "litesdcard" { &["--set", "file_mib=1"] } else { &[] };
        let mut args = vec!["sim", scenario, "-o", txt.to_str().unwrap()];
        args.extend_from_slice(set);
        latscope(&args);
        let mut args = vec!["sim", scenario, "-o", vcd.to_str().unwrap()];
        args.extend_from_slice(set);
        latscope(&args);

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
