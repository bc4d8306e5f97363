//! The queries docs/FLEET.md gives for a distributed engine, run by Apache Spark in
//! local-cluster mode (`local-cluster[2,1,1024]`: a driver and two executor JVMs on
//! loopback, PyPI's `pyspark` on Debian's OpenJDK 17), must give `latscope fleet`'s
//! groups, counts, percentiles, maxima and worst pairs. Spark's own exact `percentile` is
//! checked too. `.ci/run` installs pyspark and the JDK; without them this test is ignored
//! (`have_python_spark`), or in CI fails saying how to install them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::Scratch;
use common::{cpuidle_capture, ok};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
#[cfg_attr(
    not(have_python_spark),
    ignore = "needs python3 with pyspark and Java 17: pip install pyspark; apt-get install openjdk-17-jre-headless"
)]
fn spark_local_cluster_runs_the_documented_queries_to_the_same_numbers() {
    let d = Scratch::new("fleet-spark");
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
        let file = d.join(format!("{board}-{kernel}-{seed}.txt"));
        cpuidle_capture(&file, board, qos, seed);
        let (b, k) = (format!("board={board}"), format!("kernel={kernel}"));
        let mut args =
            vec!["report", s(&file), "--preset", "irq-handler", "--preset", "block", "--format", "json"];
        args.extend(["--dataset", s(&ds), "--label", &b, "--label", &k]);
        let c = commit.map(|c| format!("commit={c}"));
        if let Some(c) = &c {
            args.extend(["--label", c]);
        }
        ok(&args);
    }
    let fleet = ok(&["fleet", s(&ds), "--group-by", "board,kernel", "--format", "json"]);
    let fleet: Value = serde_json::from_slice(&fleet.stdout).unwrap();
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/FLEET.md");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fleet_spark.py");
    let out = latscope_testkit::Need::PythonSpark
        .output(Command::new("python3").arg(&script).arg(&doc).arg(&ds).env("SPARK_LOCAL_IP", "127.0.0.1"));
    assert!(
        out.status.success(),
        "Spark failed (install it with `python3 -m pip install pyspark` and `apt-get install \
         openjdk-17-jre-headless`, as .ci/run does): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spark: Value = serde_json::from_slice(&out.stdout).unwrap();
    eprintln!("spark: {} executors, seconds {}", spark["executors"], spark["seconds"]);
    assert_eq!(spark["executors"], 2, "local-cluster[2,1,1024] runs two executor JVMs");
    let ours: Vec<&Value> =
        fleet["groups"].as_array().unwrap().iter().filter(|g| g["count"].as_u64().unwrap() > 0).collect();
    let theirs = spark["groups"].as_array().unwrap();
    assert_eq!(ours.len(), theirs.len(), "groups: ours {ours:?}\ntheirs {theirs:?}");
    assert!(ours.len() >= 6, "{}", ours.len());
    let same_group = |a: &Value, b: &Value| {
        a["board"] == b["board"] && a["kernel"] == b["kernel"] && a["analysis"] == b["analysis"]
    };
    for t in theirs {
        let g = ours
            .iter()
            .find(|g| {
                g["labels"]["board"] == t["board"]
                    && g["labels"]["kernel"] == t["kernel"]
                    && g["analysis"] == t["analysis"]
            })
            .unwrap_or_else(|| panic!("Spark group {t} is not in latscope's"));
        assert_eq!(g["count"], t["count"], "{t}");
        assert_eq!(g["captures"], t["captures"], "{t}");
        assert_eq!(f(&g["stats_ns"]["max"]), f(&t["max"]), "{t}: max");
        assert_eq!(f(&g["stats_ns"]["min"]), f(&t["min"]), "{t}: min");
        assert!(close(f(&g["stats_ns"]["mean"]), f(&t["mean"]), 1e-12), "{t}: mean");
        let ps = spark["spark"].as_array().unwrap().iter().find(|r| same_group(r, t)).unwrap();
        assert_eq!(ps["count"], t["count"]);
        assert_eq!(f(&ps["max"]), f(&g["stats_ns"]["max"]));
        for (i, (stat, p)) in
            [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)].into_iter().enumerate()
        {
            let ours = f(&g["stats_ns"][stat]);
            // Spark's exact `percentile`: the same rank and interpolation, written otherwise.
            let exact = f(&ps["ps"][i]);
            assert!(close(ours, exact, 1e-12), "{t}: {stat} latscope {ours} Spark percentile {exact}");
            // The portable rank query of docs/FLEET.md.
            let r = spark["ranks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| same_group(r, t) && close(f(&r["p"]), p, 1e-12))
                .unwrap_or_else(|| panic!("no rank row for {t} {p}"));
            assert!(close(ours, f(&r["value"]), 1e-9), "{t}: {stat} latscope {ours} by rank {}", r["value"]);
        }
        // The worst pair: same latency and the same capture.
        let w = spark["worst"].as_array().unwrap().iter().find(|w| same_group(w, t)).unwrap();
        assert_eq!(g["worst"][0]["capture"], w["capture"], "{t}");
        assert_eq!(f(&g["worst"][0]["latency_ns"]), f(&w["latency_ns"]));
    }
}
