//! `latscope record --sigrok` (issue 30) with sigrok's demo device: the saved `.sr` is what
//! sigrok-cli reads — the same samples, channels and rate — and a device that is missing is
//! said with what to do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Scratch, latscope_in};
use std::path::Path;
use std::process::Command;

/// The samples of the sigrok capture `sr` as sigrok-cli reads them (`-O binary`).
fn sigrok_binary(sr: &Path) -> Vec<u8> {
    let out = latscope_testkit::Need::SigrokCli
        .output(Command::new("sigrok-cli").arg("-i").arg(sr).args(["-O", "binary"]));
    assert!(out.status.success(), "{}: {}", sr.display(), String::from_utf8_lossy(&out.stderr));
    out.stdout
}

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
    let binary = sigrok_binary(&sr);
    assert_eq!(binary.len(), samples, "one byte a sample for 8 channels");
    let vcd = latscope_testkit::Need::SigrokCli
        .output(Command::new("sigrok-cli").arg("-i").arg(&sr).args(["-O", "vcd"]));
    let vcd = String::from_utf8_lossy(&vcd.stdout).into_owned();
    assert!(vcd.contains("Acquisition with 8/8 channels at 100 kHz"), "{vcd}");
    for ch in ["D0", "D7"] {
        assert!(vcd.contains(&format!(" {ch} $end")), "{ch} in {vcd}");
    }
    // latscope opens what it saved with the samples sigrok-cli reads: the demo's D0 is a
    // square wave, whose transitions both count alike.
    let d0_flips = binary.windows(2).filter(|w| (w[0] ^ w[1]) & 1 != 0).count();
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

/// `--decoder` runs on the stream as it arrives: the live lines grow, and the last one is
/// what a decode of the saved capture finds, annotation for annotation, and what sigrok-cli's
/// own SPI decoder finds in that file (the demo's pattern read as SPI: D0 clocks D1).
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn decoders_run_live_on_the_stream_and_end_where_a_decode_of_the_saved_capture_does() {
    let dir = Scratch::new("record-sigrok-decode");
    let rule = "word=spi_mosi -> spi_mosi_end";
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(&*dir)
        .args([
            "record",
            "--sigrok",
            "demo:analog_channels=0:samplerate=100k",
            "--decoder",
            "spi:clk=D0,mosi=D1",
            "--rule",
            rule,
            "--duration",
            "2500ms",
            "--format",
            "json",
            "--fail-if",
            "word.max>1us",
            "-o",
            "cap.sr",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    // The gate reads the decoded words (each takes 8 clock periods, far over 1 us).
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("threshold crossed: word.max"), "{err}");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines.len() >= 3, "two live lines and the last: {lines:?}");
    let last = lines.last().unwrap();
    assert_eq!(last["final"], true, "{last}");
    let counts: Vec<u64> =
        lines.iter().map(|l| l["logic"]["decoders"][0]["annotations"].as_u64().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "the decode only grows: {counts:?}");
    assert!(counts[0] > 0 && counts[0] < *counts.last().unwrap(), "live, not at the end only: {counts:?}");
    let live_words = &last["analyses"][0];
    assert_eq!(live_words["analysis"], "word", "{last}");

    // The second road: the saved capture decoded from the file.
    let sr = dir.join("cap.sr");
    let decode = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("decode")
        .arg(&sr)
        .args(["--decoder", "spi:clk=D0,mosi=D1", "--format", "json"])
        .output()
        .unwrap();
    assert!(decode.status.success(), "{}", String::from_utf8_lossy(&decode.stderr));
    let decoded: serde_json::Value = serde_json::from_slice(&decode.stdout).unwrap();
    let anns = decoded["annotations"].as_array().unwrap_or_else(|| panic!("{decoded}"));
    assert_eq!(last["logic"]["decoders"][0]["annotations"].as_u64().unwrap() as usize, anns.len());
    let words = anns.iter().filter(|a| a["row"] == "mosi").count();

    // The oracle: sigrok-cli's SPI decoder on the same file.
    let oracle =
        latscope_testkit::Need::SigrokCli.output(Command::new("sigrok-cli").arg("-i").arg(&sr).args([
            "-P",
            "spi:clk=D0:mosi=D1",
            "-A",
            "spi=mosi-data",
        ]));
    let oracle_words = String::from_utf8_lossy(&oracle.stdout).lines().count();
    assert!(oracle_words > 100, "{oracle_words}");
    assert_eq!(words, oracle_words);
    assert_eq!(live_words["count"].as_u64().unwrap() as usize, oracle_words, "{last}");

    // The live statistics are the report's on the saved file.
    let report = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("report")
        .arg(&sr)
        .args(["--decoder", "spi:clk=D0,mosi=D1", "--rule", rule, "--format", "json"])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let stats = &report["analyses"][0]["stats_ns"];
    for (live, key) in [("p50_ns", "p50"), ("p99_ns", "p99"), ("max_ns", "max")] {
        assert_eq!(live_words[live].as_f64(), stats[key].as_f64(), "{key}: {live_words} against {stats}");
    }
}

/// `--decoder` without a logic analyzer, or with sigrok's decoders, is refused up front.
#[test]
fn decoders_need_a_logic_analyzer_and_run_natively_when_live() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_latscope")).arg("record").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(&["--decoder", "uart:rx=D0", "--duration", "1s"]);
    assert!(err.contains("--sigrok DRIVER"), "{err}");
    let err =
        run(&["--sigrok", "demo:samplerate=100k", "--decoder", "sigrok:uart:rx=D0", "--duration", "1s"]);
    assert!(err.contains("latscope decode X.sr"), "{err}");
}

/// The flight recorder on a logic analyzer alone: every decoded pair over the trigger is
/// counted, the first `--max-saves` are saved as windows of samples around the pair (its
/// cursors on the word sigrok-cli's SPI decoder finds there), and the ring keeps memory
/// bounded while far more samples pass.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn a_trigger_on_decoded_logic_saves_the_window_around_the_pair_from_a_bounded_ring() {
    let dir = Scratch::new("record-sigrok-trigger");
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(&*dir)
        .args([
            "record",
            "--sigrok",
            "demo:analog_channels=0:samplerate=100k",
            "--decoder",
            "spi:clk=D0,mosi=D1",
            "--rule",
            "word=spi_mosi -> spi_mosi_end",
            "--trigger",
            "word>600us",
            "--keep",
            "1ms",
            "--max-saves",
            "2",
            "--ring",
            "64KiB",
            "--duration",
            "2500ms",
            "--format",
            "json",
            "-o",
            "windows",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let saved: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "crossing").collect();
    assert_eq!(saved.len(), 2, "{lines:?}");
    let stats: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "stats").collect();
    let last = stats.last().unwrap();
    let samples = last["logic"]["samples"].as_u64().unwrap();
    assert!(samples > 200_000, "{last}");
    // The ring holds 64 KiB (trimmed at a quarter more), and what the flight recorder has
    // not looked at yet up to twice that; past it, memory wins (and the samples dropped
    // unseen are the line's lost count). One read of sigrok-cli's output (64 KiB) may sit
    // on top until the next trim.
    for l in &stats {
        let kept = l["kept_bytes"].as_u64().unwrap();
        assert!(kept <= (128 + 64) << 10, "the ring holds about 64 KiB, not {kept} bytes: {l}");
    }
    // Every word takes 67 samples (670 us): each one crossed, saved or not. The ring's
    // last line counts only those it kept.
    // "latscope: 5478 crossing(s), 2 window(s) saved"
    let crossings: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("latscope: ")?.split_once(" crossing(s)")?.0.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    let kept_words = last["analyses"][0]["count"].as_u64().unwrap();
    assert!(
        crossings > kept_words && crossings >= samples / 67 - 2,
        "{crossings} crossings, {kept_words} kept: {err}"
    );

    for s in &saved {
        let folder = dir.join(s["saved"].as_str().unwrap());
        let session: serde_json::Value =
            serde_json::from_slice(&std::fs::read(folder.join("session.latscope.json")).unwrap()).unwrap();
        assert_eq!(session["files"][0]["decoders"][0], "spi:clk=D0,mosi=D1", "{session}");
        // At 100 kHz a sample is 10 us: the cursors are sample numbers in the window's file.
        let at = |k: &str| (session[k].as_f64().unwrap() / 10e6).round() as u64;
        let (a, b) = (at("cursor_a"), at("cursor_b"));
        assert_eq!(b - a, 67, "{session}");
        let sr = folder.join("logic.sr");
        let words =
            latscope_testkit::Need::SigrokCli.output(Command::new("sigrok-cli").arg("-i").arg(&sr).args([
                "-P",
                "spi:clk=D0:mosi=D1",
                "-A",
                "spi=mosi-data",
                "--protocol-decoder-samplenum",
            ]));
        let words = String::from_utf8_lossy(&words.stdout).into_owned();
        assert!(words.lines().any(|l| l.starts_with(&format!("{a}-{b} "))), "no word at {a}-{b} in\n{words}");
        let binary = sigrok_binary(&sr);
        // 1 ms before the pair's start and after its end, at most: 100 + 67 + 100 samples.
        assert!(binary.len() <= 268 && binary.len() as u64 > b, "{}", binary.len());
    }
}

/// Real bus traffic recorded live: the corpus's i.MX6 SD capture played as a logic analyzer
/// (`latscope_testkit::sigrok_player`) and decoded as it streams. The saved capture holds
/// the same samples as the original, and the live statistics of `sd-cmd-resp` are
/// `latscope report`'s on the original file.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn real_sd_traffic_decoded_live_gives_the_reports_command_to_response_latencies() {
    let dir = Scratch::new("record-sigrok-sd");
    let original = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../samples/corpus/sigrok/sd_imx6_working_snippet.sr");
    let player = latscope_testkit::sigrok_player(&dir, &original);
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(&*dir)
        .env("PATH", latscope_testkit::path_with(&player))
        .args([
            "record",
            "--sigrok",
            "player:samplerate=40M",
            "--decoder",
            "sd:clk=CLK,cmd=CMD",
            "--preset",
            "sd-cmd-resp",
            "--duration",
            "1500ms",
            "--format",
            "json",
            "-o",
            "card.sr",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let last: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["final"], true, "{last}");
    let live = &last["analyses"][0];
    assert_eq!(live["analysis"], "sd-cmd-resp", "{last}");

    // The samples saved are the original's, byte for byte, as sigrok-cli reads both.
    assert!(
        sigrok_binary(&dir.join("card.sr")) == sigrok_binary(&original),
        "the saved capture differs from the played one"
    );

    let report = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("report")
        .arg(&original)
        .args(["--decoder", "sd:clk=CLK,cmd=CMD", "--preset", "sd-cmd-resp", "--format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let a = &report["analyses"][0];
    assert!(a["count"].as_u64().unwrap() > 0, "{a}");
    assert_eq!(live["count"], a["count"], "{live} against {a}");
    for (l, r) in [("p50_ns", "p50"), ("p99_ns", "p99"), ("max_ns", "max")] {
        assert_eq!(live[l].as_f64(), a["stats_ns"][r].as_f64(), "{l}: {live} against {a}");
    }
}

/// Rules over a logic analyzer's channels record it alone: no kernel (no root, no
/// tracefs), `-o X.sr` allowed. The corpus's real SPI bus played as a device: the last
/// line of each rule is `latscope report`'s on the original file, and the frames' count and
/// the clock's widest pulse are what its samples, as sigrok-cli reads them, hold.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn channel_rules_on_a_logic_analyzer_alone_record_no_kernel_and_answer_as_the_report() {
    let dir = Scratch::new("record-sigrok-channels");
    let original = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../samples/corpus/sigrok/lazysig_spi_24mhz.sr");
    let player = latscope_testkit::sigrok_player(&dir, &original);
    let rules = [
        "frame=CS:fall -> CS:rise",
        "pulse:CLK",
        "first=CS:fall -> CLK:rise policy next",
        "burst=poll:CLK:rise within 2us min 4",
    ];
    let mut args = vec!["record", "--sigrok", "player:samplerate=24M"];
    for r in &rules {
        args.extend(["--rule", r]);
    }
    args.extend(["--duration", "1500ms", "--format", "json", "--fail-if", "frame.max>1us", "-o", "spi.sr"]);
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .current_dir(&*dir)
        .env("PATH", latscope_testkit::path_with(&player))
        .args(&args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    // The gate reads the channels too: a frame lasts far over a microsecond.
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("threshold crossed: frame.max"), "{err}");
    assert!(err.contains("samples of 8 logic channels") && !err.contains(" events, "), "no kernel: {err}");
    let last: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["final"], true, "{last}");
    let live = last["analyses"].as_array().unwrap();
    let names: Vec<&str> = live.iter().map(|a| a["analysis"].as_str().unwrap()).collect();
    assert_eq!(names, ["frame", "pulse:CLK", "first", "burst"], "in the order given: {last}");

    let mut report = Command::new(env!("CARGO_BIN_EXE_latscope"));
    report.arg("report").arg(&original).args(["--format", "json"]);
    for r in &rules {
        report.args(["--rule", r]);
    }
    let report = report.output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    for (l, r) in live.iter().zip(report["analyses"].as_array().unwrap()) {
        assert!(r["count"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(l["count"], r["count"], "{l} against {r}");
        for (lk, rk) in [("p50_ns", "p50"), ("p99_ns", "p99"), ("max_ns", "max")] {
            assert_eq!(l[lk].as_f64(), r["stats_ns"][rk].as_f64(), "{lk}: {l} against {r}");
        }
    }

    // The samples themselves: MISO, MOSI, CLK, CS are bits 0 to 3.
    let binary = sigrok_binary(&original);
    let ps = |i: usize| (i as u128 * 1_000_000_000_000 / 24_000_000) as f64;
    let (mut frames, mut clk_max, mut cs_fell, mut clk_rose) = (0, 0.0f64, None, None);
    for (i, w) in binary.windows(2).enumerate() {
        let (was, now) = (w[0], w[1]);
        if was & 8 != 0 && now & 8 == 0 {
            cs_fell = Some(i + 1);
        }
        if was & 8 == 0 && now & 8 != 0 && cs_fell.take().is_some() {
            frames += 1;
        }
        if was & 4 == 0 && now & 4 != 0 {
            clk_rose = Some(i + 1);
        }
        if was & 4 != 0
            && now & 4 == 0
            && let Some(r) = clk_rose.take()
        {
            clk_max = clk_max.max(ps(i + 1) - ps(r));
        }
    }
    assert_eq!(live[0]["count"].as_u64(), Some(frames), "{}", live[0]);
    let widest = live[1]["max_ns"].as_f64().unwrap();
    assert!((widest - clk_max / 1000.0).abs() < 0.001, "{widest} ns against {clk_max} ps");
    // And what was saved is what was played.
    assert!(sigrok_binary(&dir.join("spi.sr")) == binary, "the saved capture differs from the played one");
}

/// A channel's rule on a device that streams answers live, before the recording ends: the
/// demo's D2 pulses, counted in every line, growing; beside a rule over decoded words,
/// each line in the order given.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn a_channels_pulses_on_a_streaming_device_are_counted_as_they_arrive() {
    let dir = Scratch::new("record-sigrok-demo-pulses");
    let word = "word=spi_mosi -> spi_mosi_end";
    let out = latscope_in(
        &dir,
        &[
            "record",
            "--sigrok",
            "demo:analog_channels=0:samplerate=100k",
            "--decoder",
            "spi:clk=D0,mosi=D1",
            "--rule",
            "pulse:D2",
            "--rule",
            word,
            "--duration",
            "3500ms",
            "--format",
            "json",
            "-o",
            "demo.sr",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for l in &lines {
        let names: Vec<&str> =
            l["analyses"].as_array().unwrap().iter().map(|a| a["analysis"].as_str().unwrap()).collect();
        assert_eq!(names, ["pulse:D2", "word"], "{l}");
    }
    let counts: Vec<u64> = lines.iter().map(|l| l["analyses"][0]["count"].as_u64().unwrap()).collect();
    assert!(counts.len() >= 3, "{lines:?}");
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "they only grow: {counts:?}");
    assert!(counts[0] > 0 && counts[0] < *counts.last().unwrap(), "live, not at the end only: {counts:?}");
    // The last is the report's on the capture saved.
    let report = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("report")
        .arg(dir.join("demo.sr"))
        .args(["--decoder", "spi:clk=D0,mosi=D1", "--rule", "pulse:D2", "--rule", word, "--format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let last = &lines.last().unwrap()["analyses"];
    for i in 0..2 {
        assert!(report["analyses"][i]["count"].as_u64().unwrap() > 0, "{report}");
        assert_eq!(last[i]["count"], report["analyses"][i]["count"], "{last} against {report}");
        assert_eq!(last[i]["max_ns"].as_f64(), report["analyses"][i]["stats_ns"]["max"].as_f64(), "{report}");
    }
}

/// The flight recorder on a channel's rule, a logic analyzer alone: a window around a pulse
/// of the demo's D2 wider than the trigger, its cursors on that pulse as sigrok-cli reads
/// the saved window.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn a_trigger_on_a_channels_pulses_saves_the_window_around_the_wide_one() {
    let dir = Scratch::new("record-sigrok-pulse-trigger");
    let out = latscope_in(
        &dir,
        &[
            "record",
            "--sigrok",
            "demo:analog_channels=0:samplerate=100k",
            "--rule",
            "pulse:D2",
            "--trigger",
            "pulse:D2>120us",
            "--keep",
            "1ms",
            "--max-saves",
            "1",
            "--duration",
            "1500ms",
            "-o",
            "windows",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let saved: Vec<std::path::PathBuf> =
        std::fs::read_dir(dir.join("windows")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(saved.len(), 1, "{err}");
    let session: serde_json::Value =
        serde_json::from_slice(&std::fs::read(saved[0].join("session.latscope.json")).unwrap()).unwrap();
    // At 100 kHz a sample is 10 us: the cursors are sample numbers in the window's file.
    let at = |k: &str| (session[k].as_f64().unwrap() / 10e6).round() as usize;
    let (a, b) = (at("cursor_a"), at("cursor_b"));
    assert!(b - a > 12, "wider than 120 us: {session}");
    let binary = sigrok_binary(&saved[0].join("logic.sr"));
    let d2: Vec<u8> = binary.iter().map(|s| s >> 2 & 1).collect();
    assert!(
        a > 0 && b < d2.len(),
        "the window holds the pulse and what is around it: {a}..{b} of {}",
        d2.len()
    );
    assert_eq!((d2[a - 1], d2[b]), (0, 0), "low before the rise and at the fall: {d2:?}");
    assert!(d2[a..b].iter().all(|&l| l == 1), "high from {a} to {b}: {d2:?}");
}
