//! `report CANDIDATE... --baseline BASELINE` and `fleet --baseline/--compare`, `--trend`
//! on simulated captures whose difference is known: the i.MX8MQ cpuidle scenario with its
//! deep idle exit at 500 us, or 10 % slower at 550 us (block p50 about 949 and 999 us).
//! Exit codes (a gate exits 0 or 3; `regressed` without a baseline is a usage error, 1),
//! the JSON contract of a comparison, and that a fleet with one capture a side gives the
//! very numbers of `report`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::{Scratch, latscope, ok};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `latscope sim imx8mq-cpuidle --seed SEED --set socs.imx8mq.deep_exit_us=EXIT --trace-out DIR/NAME.txt`.
fn sim(dir: &Path, name: &str, seed: u64, deep_exit_us: u32) -> PathBuf {
    let path = dir.join(format!("{name}.txt"));
    let (seed, set) = (seed.to_string(), format!("socs.imx8mq.deep_exit_us={deep_exit_us}"));
    ok(&[
        "sim",
        "imx8mq-cpuidle",
        "--seed",
        &seed,
        "--set",
        &set,
        "--trace-out",
        s(&path),
        "--format",
        "json",
    ]);
    path
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const STATS: [&str; 4] = ["mean", "p50", "p90", "p99"];

#[test]
fn report_gates_exit_0_or_3_and_show_their_intervals() {
    let d = Scratch::new("regress-report");
    let base = sim(&d, "base", 101, 500);
    let same = sim(&d, "same", 102, 500);
    let slow = sim(&d, "slow", 103, 550);
    let report = |cand: &[&Path], extra: &[&str]| {
        let mut args = vec!["report"];
        args.extend(cand.iter().map(|p| s(p)));
        args.extend(["--baseline", s(&base), "--preset", "block"]);
        args.extend_from_slice(extra);
        latscope(&args)
    };
    // Known shift: regressed, with the change inside its interval and the message naming both.
    let out = report(&[&slow], &["--fail-if", "block.p50 regressed", "--format", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("regression: block.p50 +5."), "{}", stderr(&out));
    assert!(stderr(&out).contains("slow.txt against base.txt"), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["baseline"], 0);
    assert_eq!(v["inputs"][0]["path"], s(&base));
    let c = &v["comparison"][0];
    assert_eq!((c["a"]["input"].as_u64(), c["b"]["input"].as_u64()), (Some(0), Some(1)));
    for stat in STATS {
        assert_eq!(c["verdict"][stat], "regressed", "{stat}: {c}");
        let ci: Vec<f64> =
            c["ci95_ns"][stat].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        let delta = c["delta_ns"][stat].as_f64().unwrap();
        assert!(ci[0] > 0.0 && ci[0] <= delta && delta <= ci[1], "{stat}: {delta} not in {ci:?}");
        let rel = c["ci95_change"][stat].as_array().unwrap();
        assert!(rel[0].as_f64().unwrap() > 0.0 && rel[1].as_f64().unwrap() < 0.2, "{stat}: {rel:?}");
        assert!(c["p_value"][stat].as_f64().unwrap() < 0.01);
    }
    assert!(c["shift_p_value"].as_f64().unwrap() < 0.01);
    let m = &c["method"];
    for k in ["interval", "shift_test", "why", "resamples", "permutations", "seed", "baseline", "candidate"] {
        assert!(!m[k].is_null(), "method.{k}: {m}");
    }
    assert_eq!(m["baseline"]["samples"], 1024);
    assert!(m["baseline"]["blocks"].as_u64().unwrap() >= 10);
    // Same bytes every run.
    let again = report(&[&slow], &["--fail-if", "block.p50 regressed", "--format", "json"]);
    assert_eq!(again.stdout, out.stdout);
    // By at least 10 %: not with a 5 % change; by 2 % at 99 %: yes.
    let out = report(&[&slow], &["--fail-if", "block.p50 regressed by 10%"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("passed for slow.txt against base.txt: no regression shown by +10.0%"));
    let out = report(&[&slow], &["--fail-if", "block.p99 regressed(99%) by 2%"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // Same settings: nothing shown, exit 0, and the gate says why it passed.
    let out = report(&[&same], &["--fail-if", "block.p50 regressed", "--fail-if", "block.mean regressed"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out).matches("passed for same.txt").count(), 2, "{}", stderr(&out));
    // Several candidates: each against the baseline; the gate names the one that regressed.
    let out = report(&[&same, &slow], &["--fail-if", "block.p90 regressed", "--format", "json"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("slow.txt against") && !err.contains("regression: block.p90 +0"), "{err}");
    let v = json(&out);
    let verdicts: Vec<&Value> =
        v["comparison"].as_array().unwrap().iter().map(|c| &c["verdict"]["p90"]).collect();
    assert_eq!(verdicts, ["inconclusive", "regressed"]);
    // Markdown and HTML show the intervals.
    let md = report(&[&slow], &[]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("## Change of B against A (95 % intervals)"), "{md}");
    assert!(md.contains("| block | slow.txt | p50 | 949.000 us |"), "{md}");
    let html = d.join("r.html");
    ok(&["report", s(&slow), "--baseline", s(&base), "--preset", "block", "-o", s(&html)]);
    let html = std::fs::read_to_string(&html).unwrap();
    assert_eq!(html.matches("<title>intervals</title>").count(), 1);
    assert_eq!(html.matches("<g class=\"reg\"").count(), 4, "four error bars, all regressed");
}

#[test]
fn a_regression_gate_without_a_baseline_is_a_usage_error() {
    let d = Scratch::new("regress-usage");
    let a = sim(&d, "a", 111, 500);
    let b = sim(&d, "b", 112, 500);
    // Two inputs compare A/B with intervals, but `regressed` asks for --baseline: exit 1,
    // before anything is read or written.
    let out_md = d.join("r.md");
    let out = latscope(&["report", s(&a), s(&b), "--fail-if", "block.p50 regressed", "-o", s(&out_md)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("give --baseline BASELINE"), "{}", stderr(&out));
    assert!(!out_md.exists());
    let ab = json(&ok(&["report", s(&a), s(&b), "--preset", "block", "--format", "json"]));
    assert!(ab["baseline"].is_null());
    assert!(ab["comparison"][0]["ci95_ns"]["p50"].is_array(), "{}", ab["comparison"][0]);
    for (args, says) in [
        (vec!["--fail-if", "block.max regressed"], "column 7"),
        (vec!["--fail-if", "block.p50 regressed(100%)"], "50% to 99%"),
        (vec!["--fail-if", "nope.p50 regressed"], "no analysis named \"nope\""),
        (vec!["--align", "1:+0ps"], "cannot be combined with --align"),
    ] {
        let mut all = vec!["report", s(&b), "--baseline", s(&a), "--preset", "block"];
        all.extend(args);
        let out = latscope(&all);
        assert_eq!(out.status.code(), Some(1), "{all:?}");
        assert!(stderr(&out).contains(says), "{all:?}: {}", stderr(&out));
    }
}

/// The comparison fields the inference adds.
const INFERENCE: [&str; 6] = ["ci95_ns", "ci95_change", "p_value", "shift_p_value", "verdict", "method"];

#[test]
fn a_fleet_baseline_gives_the_verdicts_of_report() {
    let d = Scratch::new("regress-fleet");
    let ds = d.join("ds");
    let base = sim(&d, "base", 121, 500);
    let slow = sim(&d, "slow", 122, 550);
    for (f, kernel) in [(&base, "6.1"), (&slow, "6.6")] {
        let label = format!("kernel={kernel}");
        ok(&[
            "report",
            s(f),
            "--preset",
            "block",
            "--format",
            "json",
            "--dataset",
            s(&ds),
            "--label",
            &label,
        ]);
    }
    let fleet = |extra: &[&str]| {
        let mut args = vec!["fleet", s(&ds), "--baseline", "kernel=6.1", "--compare", "kernel=6.6"];
        args.extend_from_slice(extra);
        latscope(&args)
    };
    let out = fleet(&["--format", "json", "--fail-if", "block.p50 regressed"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("regression: --fail-if block.p50 regressed"), "{}", stderr(&out));
    let v = json(&out);
    let f = &v["comparison"][0];
    let r = json(&ok(&["report", s(&slow), "--baseline", s(&base), "--preset", "block", "--format", "json"]));
    let r = &r["comparison"][0];
    // One capture a side: the same intervals, p-values, verdicts and method, to the bit.
    for k in INFERENCE {
        assert_eq!(f[k], r[k], "{k}: fleet {} report {}", f[k], r[k]);
    }
    assert_eq!(v["crossings"][0]["regression"]["interval"], r["ci95_change"]["p50"]);
    assert_eq!(fleet(&["--fail-if", "block.p50 regressed by 20%"]).status.code(), Some(0));
    let out = latscope(&["fleet", s(&ds), "--fail-if", "block.p50 regressed"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--baseline LABEL=A --compare LABEL=B"), "{}", stderr(&out));
    // Two captures a side: captures are resampled too; the shift is still found.
    let base2 = sim(&d, "base2", 123, 500);
    let slow2 = sim(&d, "slow2", 124, 550);
    for (f, kernel) in [(&base2, "6.1"), (&slow2, "6.6")] {
        let label = format!("kernel={kernel}");
        ok(&[
            "report",
            s(f),
            "--preset",
            "block",
            "--format",
            "json",
            "--dataset",
            s(&ds),
            "--label",
            &label,
        ]);
    }
    let v = json(&ok(&[
        "fleet",
        s(&ds),
        "--baseline",
        "kernel=6.1",
        "--compare",
        "kernel=6.6",
        "--format",
        "json",
    ]));
    let c = &v["comparison"][0];
    assert_eq!(c["method"]["baseline"]["captures"], 2);
    assert_eq!(c["method"]["candidate"]["samples"], 2048);
    assert_eq!(c["verdict"]["p50"], "regressed", "{c}");
    let md = String::from_utf8_lossy(
        &ok(&["fleet", s(&ds), "--baseline", "kernel=6.1", "--compare", "kernel=6.6"]).stdout,
    )
    .into_owned();
    assert!(md.contains("### Change of compare against baseline (95 % intervals)"), "{md}");
    assert!(md.contains("| (all) | block | p50 |"), "{md}");
}

#[test]
fn trend_change_points_are_significant_steps() {
    let d = Scratch::new("regress-trend");
    let ds = d.join("ds");
    // Commits c1, c2 with the same settings; c3 makes the deep idle exit 10 % slower; c4 keeps it.
    for (i, (commit, exit)) in [("c1", 500), ("c2", 500), ("c3", 550), ("c4", 550)].into_iter().enumerate() {
        let f = sim(&d, commit, 131 + i as u64, exit);
        let label = format!("commit={commit}");
        ok(&[
            "report",
            s(&f),
            "--preset",
            "block",
            "--format",
            "json",
            "--dataset",
            s(&ds),
            "--label",
            &label,
        ]);
    }
    let v = json(&ok(&["fleet", s(&ds), "--trend", "commit", "--format", "json"]));
    let t = &v["trend"][0];
    assert_eq!(t["alpha"], 0.05);
    let steps = t["steps"].as_array().unwrap();
    let marked: Vec<bool> = steps.iter().map(|s| s["change_point"].as_bool().unwrap()).collect();
    assert_eq!(marked, [false, true, false], "{t}");
    let c = &t["first_change"];
    assert_eq!(c["value"], "c3");
    let change = c["change"].as_f64().unwrap();
    let ci = c["ci95_change"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() > 0.0 && ci[0].as_f64().unwrap() <= change, "{c}");
    assert!(c["p_adjusted"].as_f64().unwrap() < 0.05);
    assert_eq!(t["change_points"].as_array().unwrap().len(), 1);
    let md = String::from_utf8_lossy(&ok(&["fleet", s(&ds), "--trend", "commit"]).stdout).into_owned();
    assert!(md.contains("Change point: **commit=c3: p99 +5."), "{md}");
    // A threshold larger than the change leaves no change point.
    let v =
        json(&ok(&["fleet", s(&ds), "--trend", "commit", "--trend-threshold", "20%", "--format", "json"]));
    assert!(v["trend"][0]["first_change"].is_null());
}
