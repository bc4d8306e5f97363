//! Helpers shared by the app's integration tests (each test crate uses some of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the latscope binary built for these tests with `args`, whatever its exit status.
pub fn latscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_latscope")).args(args).output().expect("latscope runs")
}

/// [`latscope`] run in `dir` (where relative paths in `args` lie).
pub fn latscope_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_latscope")).current_dir(dir).args(args).output().expect("latscope runs")
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

/// A one-channel `.sr` (a zip: `version`, `metadata`, one `logic-1-1` chunk) of `levels`
/// (a byte a sample), channel `name`, at `rate` as sigrok writes it (`1 MHz`, `10 kHz`).
pub fn write_one_channel_sr(path: &Path, name: &str, rate: &str, levels: &[u8]) {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("version", opts).unwrap();
    zip.write_all(b"2").unwrap();
    zip.start_file("metadata", opts).unwrap();
    let meta = format!(
        "[global]\nsigrok version=0.5.2\n[device 1]\ncapturefile=logic-1\ntotal probes=1\n\
         samplerate={rate}\ntotal analog=0\nprobe1={name}\nunitsize=1\n"
    );
    zip.write_all(meta.as_bytes()).unwrap();
    zip.start_file("logic-1-1", opts).unwrap();
    zip.write_all(levels).unwrap();
    zip.finish().unwrap();
}
