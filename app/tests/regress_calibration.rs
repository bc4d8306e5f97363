//! Calibration of `report CANDIDATE --baseline BASELINE --fail-if 'block.p50 regressed'` on
//! the simulator, with fixed seeds: pairs of runs of the i.MX8MQ cpuidle scenario with the
//! same settings must raise at most 5 % false alarms, and pairs whose deep idle exit is
//! 10 % slower (500 -> 550 us: block p50 from about 949 to 999 us) must be caught at least
//! 90 % of the time. The oracle is the simulator's ground truth: which pairs differ.
//!
//! Each pair runs the commands a user would: `latscope sim imx8mq-cpuidle --seed N [--set
//! socs.imx8mq.deep_exit_us=550] --trace-out X.txt` twice, then `latscope report
//! CANDIDATE.txt --baseline BASELINE.txt --preset block --fail-if 'block.p50 regressed'
//! -o R.json`. Running the simulator and the report in this process instead saved only a
//! fifth of the time (docs/PERFORMANCE.md, "Regression gates"), so the test runs the binary
//! itself: exactly the computation and the exit code CI sees.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::{Scratch, latscope, ok};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `latscope sim imx8mq-cpuidle --seed SEED --set socs.imx8mq.deep_exit_us=EXIT --trace-out PATH`.
fn simulate(path: &Path, seed: u64, deep_exit_us: u32) {
    let (seed, set) = (seed.to_string(), format!("socs.imx8mq.deep_exit_us={deep_exit_us}"));
    ok(&[
        "sim",
        "imx8mq-cpuidle",
        "--seed",
        &seed,
        "--set",
        &set,
        "--trace-out",
        s(path),
        "--format",
        "json",
    ]);
}

/// What one `report --baseline` run said: its exit code and the block comparison's JSON.
struct Outcome {
    exit: i32,
    comparison: serde_json::Value,
}

fn report(dir: &Path, baseline: &Path, candidate: &Path, gate: &str) -> Outcome {
    let json = dir.join("report.json");
    let out = latscope(&[
        "report",
        s(candidate),
        "--baseline",
        s(baseline),
        "--preset",
        "block",
        "--fail-if",
        gate,
        "-o",
        s(&json),
    ]);
    let exit = out.status.code().unwrap_or(-1);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let comparison =
        v["comparison"].as_array().unwrap().iter().find(|c| c["analysis"] == "block").unwrap().clone();
    Outcome { exit, comparison }
}

/// Detections over `pairs` pairs with the candidate's deep idle exit at `exit_us`: how often
/// the gate exited 3, and how often each statistic's verdict was `regressed` and the shift
/// test's p-value was below 0.05.
#[derive(Debug, Default)]
#[allow(dead_code)] // read through Debug
struct Tally {
    pairs: usize,
    gate: usize,
    regressed: [usize; 4],
    shifted: usize,
    seconds: f64,
}

const STATS: [&str; 4] = ["p50", "p90", "p99", "mean"];

fn tally(name: &str, first_seed: u64, pairs: usize, exit_us: u32) -> Tally {
    let d = Scratch::new(name);
    let (base, cand): (PathBuf, PathBuf) = (d.join("base.txt"), d.join("cand.txt"));
    let mut t = Tally { pairs, ..Tally::default() };
    let start = std::time::Instant::now();
    for i in 0..pairs as u64 {
        simulate(&base, first_seed + 2 * i, 500);
        simulate(&cand, first_seed + 2 * i + 1, exit_us);
        let o = report(&d, &base, &cand, "block.p50 regressed");
        assert!(o.exit == 0 || o.exit == 3, "a gate exits 0 or 3");
        // The exit code is the JSON's p50 verdict.
        assert_eq!(o.exit == 3, o.comparison["verdict"]["p50"] == "regressed", "{}", o.comparison);
        t.gate += usize::from(o.exit == 3);
        for (k, stat) in STATS.iter().enumerate() {
            t.regressed[k] += usize::from(o.comparison["verdict"][stat] == "regressed");
        }
        t.shifted += usize::from(o.comparison["shift_p_value"].as_f64().unwrap() < 0.05);
    }
    t.seconds = start.elapsed().as_secs_f64();
    eprintln!("{name}: deep exit 500 -> {exit_us} us, {t:?}");
    t
}

#[test]
fn same_settings_raise_at_most_five_percent_false_alarms() {
    let t = tally("calib-null", 1000, 100, 500);
    assert!(t.gate <= 5, "false alarms of block.p50 regressed: {} of 100", t.gate);
    for (k, stat) in STATS.iter().enumerate() {
        assert!(
            t.regressed[k] <= 5,
            "{stat}: {} of 100 pairs of one setting called regressed",
            t.regressed[k]
        );
    }
    // The shift test rejects at its level: 5 % expected, 10 of 100 is beyond 99 % of
    // Binomial(100, 0.05).
    assert!(t.shifted <= 10, "shift test rejected {} of 100 pairs of one setting at 0.05", t.shifted);
}

#[test]
fn a_ten_percent_slower_deep_idle_exit_is_caught_at_least_nine_times_in_ten() {
    let t = tally("calib-shift", 5000, 100, 550);
    assert!(t.gate >= 90, "block.p50 regressed caught {} of 100 pairs with a 10 % slower idle exit", t.gate);
    assert!(t.shifted >= 90, "the shift test found {} of 100", t.shifted);
}

/// The power curve of docs/PERFORMANCE.md's "Regression gates": detection rate against the
/// deep idle exit's slow-down. Run with `cargo test --release --test regress_calibration --
/// --ignored --nocapture power_curve`.
#[test]
#[ignore = "minutes of simulation: run by hand to refresh the power curve in the docs"]
fn power_curve() {
    println!("| deep exit | slower by | block p50 moves | p50 | p90 | p99 | mean | shift test (p < 0.05) |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (i, exit) in [500u32, 501, 502, 503, 505, 510, 520, 530, 540, 550].into_iter().enumerate() {
        let t = tally(&format!("power-{exit}"), 20_000 + 1000 * i as u64, 100, exit);
        let r = |k: usize| format!("{}%", t.regressed[k]);
        // Four in five requests pay the deep idle exit, so block p50 (~949 us) moves by it.
        println!(
            "| {exit} us | {:+.1}% | {:+.2}% | {} | {} | {} | {} | {}% |",
            (exit as f64 / 500.0 - 1.0) * 100.0,
            (exit - 500) as f64 / 949.0 * 100.0,
            r(0),
            r(1),
            r(2),
            r(3),
            t.shifted
        );
    }
}
