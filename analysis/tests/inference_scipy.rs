//! The shift test of `analysis::inference` against SciPy (`scipy.stats.anderson_ksamp`,
//! the reference implementation of Scholz and Stephens' k-sample Anderson-Darling test):
//! the statistic with ties (latencies in whole microseconds, as ftrace text gives them)
//! to 1e-9, and, for independent pairs, the block-permutation p-value close to SciPy's
//! permutation of single observations (both are valid tests there; they differ by Monte
//! Carlo noise). `.ci/run` installs SciPy; without it these tests are ignored
//! (`have_python_scipy`), or in CI fail saying so.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

use latscope_analysis::inference::{self, Options};
use std::io::Write;
use std::process::{Command, Stdio};

/// Whole microseconds (ns) from a fixed pseudo-random stream: `k` uniform draws summed
/// (a bell), scaled and shifted.
fn sample(n: usize, seed: u64, shift_us: f64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let bell: f64 = (0..4).map(|_| next()).sum::<f64>() * 10.0;
            ((400.0 + bell + shift_us).round()) * 1000.0
        })
        .collect()
}

fn scipy(a: &[f64], b: &[f64], permutations: usize) -> serde_json::Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/inference_scipy.py");
    let need = latscope_testkit::Need::PythonScipy;
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: cannot run python3: {e}", need.reason()));
    let req = serde_json::json!({"a": a, "b": b, "permutations": permutations});
    child.stdin.take().unwrap().write_all(req.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}: SciPy failed: {}",
        need.reason(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[cfg_attr(not(have_python_scipy), ignore = "needs python3 with scipy: pip install scipy")]
fn anderson_darling_with_ties_matches_scipy() {
    for (na, nb, shift) in [(50, 70, 0.0), (400, 300, 0.6), (1000, 1000, 2.0), (30, 2000, -1.0)] {
        let (a, b) = (sample(na, 1, 0.0), sample(nb, 2, shift));
        let ours = inference::anderson_darling(&a, &b);
        let theirs = scipy(&a, &b, 10)["statistic"].as_f64().unwrap();
        assert!(
            (ours - theirs).abs() <= 1e-9 * theirs.abs().max(1.0),
            "{na}/{nb}: ours {ours} SciPy {theirs}"
        );
    }
}

#[test]
#[cfg_attr(not(have_python_scipy), ignore = "needs python3 with scipy: pip install scipy")]
fn block_permutation_p_value_agrees_with_scipy_for_independent_pairs() {
    let (a, b) = (sample(600, 3, 0.0), sample(600, 4, 0.5));
    // One pair per millisecond: independent, so blocks of time change nothing but the noise.
    let pts = |v: &[f64]| v.iter().enumerate().map(|(i, &x)| (i as f64 * 1e-3, x)).collect::<Vec<_>>();
    let (pa, pb) = (pts(&a), pts(&b));
    let opts = Options { resamples: 0, permutations: 4000, ..Options::default() };
    let ours = inference::compare(&[&pa], &[&pb], "scipy", &opts);
    // With no resamples there are no intervals, but the shift test runs.
    let ours = ours.shift_p_value.unwrap();
    let theirs = scipy(&a, &b, 4000)["p_permutation"].as_f64().unwrap();
    eprintln!("block permutation p {ours}, SciPy permutation p {theirs}");
    assert!(theirs > 0.01 && theirs < 0.9, "choose samples with a middling p-value: {theirs}");
    assert!((ours - theirs).abs() < 0.05, "block permutation p {ours}, SciPy's permutation p {theirs}");
}
