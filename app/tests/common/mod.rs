//! Helpers shared by the app's integration tests (each test crate uses some of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the latscope binary built for these tests with `args`, whatever its exit status.
pub fn latscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_latscope")).args(args).output().expect("latscope runs")
}

/// Simulates 40 ms of the i.MX8MQ cpuidle scenario with these settings into `path` (ftrace
/// text): the captures of the fleet tests.
pub fn cpuidle_capture(path: &Path, soc: &str, qos: &str, seed: u64) {
    let (soc, qos, seed) = (format!("soc={soc}"), format!("pm_qos={qos}"), seed.to_string());
    let out = path.to_str().expect("a UTF-8 path");
    ok(&[
        "sim",
        "imx8mq-cpuidle",
        "--set",
        &soc,
        "--set",
        &qos,
        "--seed",
        &seed,
        "--duration",
        "40ms",
        "--trace-out",
        out,
    ]);
}

/// Runs latscope and fails the test, with its stderr, unless it exits 0.
pub fn ok(args: &[&str]) -> Output {
    let out = latscope(args);
    assert!(out.status.success(), "latscope {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A test's scratch directory under the system temp dir, fresh when made and removed when
/// dropped (also when the test fails).
pub struct Scratch(PathBuf);

impl Scratch {
    /// `latscope-NAME-PID`, emptied and created.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("latscope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
