//! `latscope record --sigrok` (issue 30) with sigrok's demo device: the saved `.sr` is what
//! sigrok-cli reads — the same samples, channels and rate — and a device that is missing is
//! said with what to do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Scratch;
use std::process::Command;

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn the_demo_devices_saved_session_reads_back_in_sigrok_cli_sample_for_sample() {
    let dir = Scratch::new("record-sigrok");
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(&*dir)
        .args([
            "record",
            "--sigrok",
            "demo:analog_channels=0:samplerate=100k",
            "--duration",
            "500ms",
            "-o",
            "cap.sr",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    // "recorded N samples of 8 logic channels"
    let samples: usize = err
        .split("recorded ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(samples > 1000, "{err}");
    assert!(err.contains("of 8 logic channels"), "{err}");
    let sr = dir.join("cap.sr");
    let binary = latscope_testkit::Need::SigrokCli
        .output(Command::new("sigrok-cli").arg("-i").arg(&sr).args(["-O", "binary"]));
    assert!(binary.status.success(), "{}", String::from_utf8_lossy(&binary.stderr));
    assert_eq!(binary.stdout.len(), samples, "one byte a sample for 8 channels");
    let vcd = latscope_testkit::Need::SigrokCli
        .output(Command::new("sigrok-cli").arg("-i").arg(&sr).args(["-O", "vcd"]));
    let vcd = String::from_utf8_lossy(&vcd.stdout).into_owned();
    assert!(vcd.contains("Acquisition with 8/8 channels at 100 kHz"), "{vcd}");
    for ch in ["D0", "D7"] {
        assert!(vcd.contains(&format!(" {ch} $end")), "{ch} in {vcd}");
    }
    // latscope opens what it saved with the samples sigrok-cli reads: the demo's D0 is a
    // square wave, whose transitions both count alike.
    let d0_flips = binary.stdout.windows(2).filter(|w| (w[0] ^ w[1]) & 1 != 0).count();
    let info =
        Command::new(env!("CARGO_BIN_EXE_latscope")).args(["info", "--json"]).arg(&sr).output().unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    let tracks = info["sources"][0]["tracks"].as_array().cloned().unwrap_or_default();
    let d0 = tracks.iter().find(|t| t["name"] == "D0").unwrap_or_else(|| panic!("{info}"));
    assert_eq!(d0["count"].as_u64().unwrap() as usize, d0_flips, "{d0}");
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn a_missing_sigrok_device_is_said_and_nothing_is_written() {
    let dir = Scratch::new("record-sigrok-missing");
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(&*dir)
        .args(["record", "--sigrok", "no_such_driver", "--duration", "200ms", "-o", "x.sr"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no_such_driver") && err.contains("sigrok-cli --scan"), "{err}");
    assert!(!dir.join("x.sr").exists());
}
