//! The queries docs/FLEET.md gives for a distributed engine, run by Apache DataFusion (its
//! Python package, local mode) on a test dataset, must give `latscope fleet`'s groups,
//! counts and percentiles. `.ci/run` installs DataFusion; without it this test is ignored
//! (`have_python_datafusion`), or in CI fails saying how to install it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::Scratch;
use common::{cpuidle_capture, ok};
use std::path::Path;
use std::process::Command;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
#[cfg_attr(not(have_python_datafusion), ignore = "needs python3 with datafusion: pip install datafusion")]
fn datafusion_runs_the_documented_queries_to_the_same_numbers() {
    let d = Scratch::new("fleet-datafusion");
    let ds = d.join("ds");
    // Two boards, two kernels, one commit label only some captures have (schemas differ).
    let runs = [
        ("imx8mq", "6.1", "on", 1, None),
        ("imx8mq", "6.6", "off", 2, Some("abc")),
        ("imx8mq", "6.6", "off", 3, None),
        ("imx93", "6.1", "on", 4, Some("abc")),
        ("imx93", "6.6", "off", 5, Some("def")),
    ];
    for (board, kernel, qos, seed, commit) in runs {
        let f = d.join(format!("{board}-{kernel}-{seed}.txt"));
        cpuidle_capture(&f, board, qos, seed);
        let (b, k) = (format!("board={board}"), format!("kernel={kernel}"));
        let mut args =
            vec!["report", s(&f), "--preset", "irq-handler", "--preset", "block", "--format", "json"];
        args.extend(["--dataset", s(&ds), "--label", &b, "--label", &k]);
        let c = commit.map(|c| format!("commit={c}"));
        if let Some(c) = &c {
            args.extend(["--label", c]);
        }
        ok(&args);
    }
    let fleet = ok(&["fleet", s(&ds), "--group-by", "board,kernel", "--format", "json"]);
    let fleet: serde_json::Value = serde_json::from_slice(&fleet.stdout).unwrap();
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/FLEET.md");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fleet_datafusion.py");
    let out = latscope_testkit::Need::PythonDatafusion
        .output(Command::new("python3").arg(&script).arg(&doc).arg(&ds));
    assert!(
        out.status.success(),
        "DataFusion failed (install it with `python3 -m pip install datafusion`, as .ci/run does): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let df: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours: Vec<&serde_json::Value> =
        fleet["groups"].as_array().unwrap().iter().filter(|g| g["count"].as_u64().unwrap() > 0).collect();
    let theirs = df["groups"].as_array().unwrap();
    assert_eq!(ours.len(), theirs.len(), "groups: ours {ours:?}\ntheirs {theirs:?}");
    assert!(ours.len() >= 6, "{}", ours.len());
    for t in theirs {
        let g = ours
            .iter()
            .find(|g| {
                g["labels"]["board"] == t["board"]
                    && g["labels"]["kernel"] == t["kernel"]
                    && g["analysis"] == t["analysis"]
            })
            .unwrap_or_else(|| panic!("DataFusion group {t} is not in latscope's"));
        assert_eq!(g["count"], t["count"], "{t}");
        assert_eq!(g["captures"], t["captures"], "{t}");
        for stat in ["min", "mean", "max"] {
            let (a, b) = (g["stats_ns"][stat].as_f64().unwrap(), t[stat].as_f64().unwrap());
            assert!(close(a, b), "{t}: {stat} latscope {a} DataFusion {b}");
        }
        // Percentiles from ranks (DataFusion's percentile_cont is off by ~1e-8: docs/FLEET.md).
        for (stat, p) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
            let r = df["ranks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| {
                    r["board"] == t["board"]
                        && r["kernel"] == t["kernel"]
                        && r["analysis"] == t["analysis"]
                        && close(r["p"].as_f64().unwrap(), p)
                })
                .unwrap_or_else(|| panic!("no rank row for {t} {p}"));
            let (a, b) = (g["stats_ns"][stat].as_f64().unwrap(), r["value"].as_f64().unwrap());
            assert!(close(a, b), "{t}: {stat} latscope {a} by rank {b}");
        }
        // The worst pair: same latency and the same capture.
        let w = df["worst"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| {
                w["board"] == t["board"] && w["kernel"] == t["kernel"] && w["analysis"] == t["analysis"]
            })
            .unwrap();
        assert_eq!(g["worst"][0]["capture"], w["capture"], "{t}");
        assert!(close(g["worst"][0]["latency_ns"].as_f64().unwrap(), w["latency_ns"].as_f64().unwrap()));
    }
}
