//! A simulator scenario's analyses are rule specs a user can type: `latscope report --rule
//! SPEC...` on the trace `latscope sim` exports (ftrace text for the events, VCD for the
//! lines, aligned at zero: both count from the simulation's start) reproduces every one of
//! the scenario's pair statistics — all four scenarios.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use std::process::Command;

fn latscope(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_latscope")).args(args).output().expect("latscope runs");
    assert!(out.status.success(), "latscope {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&latscope(args)).expect("JSON")
}

/// The ftrace text keeps microseconds, as the kernel prints them: a latency read back may
/// differ from the simulated one by less than 1 us.
const TEXT_RESOLUTION_NS: f64 = 1000.0;

#[test]
fn report_on_the_exported_trace_reproduces_every_scenario_analysis() {
    let dir = common::Scratch::new("sim-reproduce");
    let scenarios: [(&str, &[&str]); 4] = [
        ("e1000e-mta", &["--set", "updates=20"]),
        ("litesdcard", &["--set", "file_mib=1"]),
        ("imx8mq-cpuidle", &["--duration", "200ms"]),
        ("axienet-napi", &["--set", "run_ms=5"]),
    ];
    for (name, sets) in scenarios {
        let sets_kv: Vec<String> =
            sets.chunks(2).filter(|c| c[0] == "--set").map(|c| c[1].to_owned()).collect();
        let duration = sets.chunks(2).find(|c| c[0] == "--duration").map(|c| c[1]);
        let scenario = latscope_sim::prepare(name, &sets_kv, None, duration).unwrap();
        let rules = latscope_sim::scenarios::rules(&scenario).unwrap();
        let txt = dir.join(format!("{name}.txt"));
        let vcd = dir.join(format!("{name}.vcd"));
        for out in [&txt, &vcd] {
            latscope(&[&["sim", name, "--trace-out", out.to_str().unwrap()][..], sets].concat());
        }
        let sim = json(&[&["sim", name, "--format", "json"][..], sets].concat());
        // The VCD scopes each line under the scenario's module (`e1000e_mta.DMA`): the rules
        // name the exported lines so.
        let info = json(&["info", vcd.to_str().unwrap(), "--json"]);
        let mut rules = rules.clone();
        for t in info["sources"][0]["tracks"].as_array().unwrap() {
            let full = t["name"].as_str().unwrap();
            let short = full.rsplit('.').next().unwrap();
            for r in &mut rules {
                *r = r.replace(&format!("{short}:"), &format!("{full}:"));
            }
        }
        let mut args = vec!["report", txt.to_str().unwrap(), vcd.to_str().unwrap(), "--align", "1:+0ps"];
        for r in &rules {
            args.extend(["--rule", r.as_str()]);
        }
        args.extend(["--format", "json"]);
        let report = json(&args);

        let analyses = |v: &serde_json::Value| v["analyses"].as_array().unwrap().clone();
        let simulated = analyses(&sim);
        let reported = analyses(&report);
        assert_eq!(simulated.len(), rules.len(), "{name}: one analysis per rule");
        assert_eq!(reported.len(), rules.len(), "{name}: {reported:?}");
        for a in &simulated {
            let n = a["name"].as_str().unwrap();
            let b = reported.iter().find(|b| b["name"] == n).unwrap_or_else(|| panic!("{name}: no {n}"));
            for k in ["count", "unmatched_start", "unmatched_end"] {
                assert_eq!(a[k], b[k], "{name} {n}: {k}");
            }
            for stat in ["min", "mean", "p50", "p90", "max"] {
                let (x, y) = (&a["stats_ns"][stat], &b["stats_ns"][stat]);
                match (x.as_f64(), y.as_f64()) {
                    (Some(x), Some(y)) => {
                        assert!(
                            (x - y).abs() < TEXT_RESOLUTION_NS,
                            "{name} {n} {stat}: sim {x} ns, report {y} ns"
                        )
                    }
                    _ => assert_eq!(x, y, "{name} {n} {stat}"),
                }
            }
        }
    }
}

/// `latscope sim SCENARIO --list` says which real question the scenario answers and, per
/// top-level setting, its value (after `--set`), its choices and what it changes — read from
/// the scenario file itself (the oracle: the TOML parsed here).
#[test]
fn sim_list_prints_the_question_and_every_settings_help() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/scenarios");
    for name in ["litesdcard", "axienet-napi", "e1000e-mta", "imx8mq-cpuidle"] {
        let text = std::fs::read_to_string(root.join(format!("{name}.toml"))).unwrap();
        let file: toml::Table = text.parse().unwrap();
        let out = String::from_utf8(latscope(&["sim", name, "--list"])).unwrap();
        let question = file["question"].as_str().unwrap();
        assert!(out.contains(&format!("Question: {question}")), "{out}");
        let help = file["help"].as_table().unwrap();
        assert!(!help.is_empty());
        for (key, text) in help {
            assert!(out.contains(&format!("  {key} = ")), "{name}: {key}: {out}");
            assert!(out.contains(&format!("      {}\n", text.as_str().unwrap())), "{name}: {key}: {out}");
        }
        assert!(!out.contains("(no help"), "{out}");
    }
    // The value shown is the one `--set` gave.
    let out =
        String::from_utf8(latscope(&["sim", "litesdcard", "--set", "mode=poll-5us", "--list"])).unwrap();
    assert!(
        out.contains("  mode = poll-5us  [cmd-irq | dma-irq | all-irq | poll-5us | poll-0us]\n"),
        "{out}"
    );
}
