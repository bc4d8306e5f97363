//! `latscope decode`, `report --decoder` and `info --decoder` end to end on real captures
//! (samples/ and the corpus): the JSON contract with its sample numbers and values checked
//! against sigrok-cli's decoders, text and CSV carrying the same annotations as JSON,
//! channel names resolved by unique suffix, errors that list the channels, and exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::{latscope, ok};

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn failure(args: &[&str]) -> String {
    let out = latscope(args);
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail: {}", String::from_utf8_lossy(&out.stdout));
    assert!(out.stdout.is_empty(), "{args:?} printed on failure: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn sample(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples").join(rel).to_str().unwrap().to_owned()
}

/// The corpus file `REL` (samples/corpus, or the shared corpus for the tests marked
/// `have_shared_corpus`).
fn corpus(rel: &str) -> String {
    latscope_testkit::corpus(rel).to_str().unwrap().to_owned()
}

/// `sigrok-cli -i FILE -P PD -A ANN --protocol-decoder-samplenum` as (start, end, text).
fn sigrok(path: &str, pd: &str, ann: &str) -> Vec<(i64, i64, String)> {
    let out = latscope_testkit::Need::SigrokCli.output(Command::new("sigrok-cli").args([
        "-i",
        path,
        "-P",
        pd,
        "-A",
        ann,
        "--protocol-decoder-samplenum",
    ]));
    assert!(out.status.success(), "sigrok-cli: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (span, rest) = l.split_once(' ')?;
            let (ss, es) = span.split_once('-')?;
            let (_, text) = rest.split_once(": ")?;
            Some((ss.parse().ok()?, es.parse().ok()?, text.to_owned()))
        })
        .collect()
}

fn decode_json(file: &str, spec: &str) -> Value {
    let out = ok(&["decode", file, "--decoder", spec, "--format", "json"]);
    serde_json::from_slice(&out.stdout).expect("decode --format json prints JSON")
}

fn annotations(doc: &Value) -> &Vec<Value> {
    doc["annotations"].as_array().expect("an annotations array")
}

/// (start_sample, end_sample, text) of the annotations of one decoder row.
fn row(doc: &Value, decoder: &str, row: &str) -> Vec<(i64, i64, String)> {
    annotations(doc)
        .iter()
        .filter(|a| a["decoder"] == decoder && a["row"] == row)
        .map(|a| {
            (
                a["start_sample"].as_i64().unwrap(),
                a["end_sample"].as_i64().unwrap(),
                a["text"].as_str().unwrap().into(),
            )
        })
        .collect()
}

const UART: &str = "sigrok/infineon_swi_uart.sr";
const UART_SPEC: &str = "uart:rx=DIN 4 (UART),baud=115200";

#[test]
#[cfg_attr(
    not(all(have_sigrok_cli, have_shared_corpus)),
    ignore = "needs sigrok-cli (apt-get install sigrok-cli) and the shared corpus (../shared/corpus or $LATSCOPE_CORPUS)"
)]
fn uart_json_has_the_contract_and_the_samples_and_values_sigrok_cli_prints() {
    let file = corpus(UART);
    let doc = decode_json(&file, UART_SPEC);
    assert_eq!(doc["latscope_decode"], 1);
    assert_eq!(doc["path"], file.as_str());
    let anns = annotations(&doc);
    for a in anns {
        for key in ["decoder", "row", "start_s", "end_s", "start_sample", "end_sample", "text", "fields"] {
            assert!(a.get(key).is_some(), "missing {key}: {a}");
        }
    }
    let want = sigrok(&file, "uart:rx=DIN 4 (UART):baudrate=115200", "uart=rx-data");
    assert!(want.len() > 1000, "sigrok-cli decoded {} bytes", want.len());
    let ours = row(&doc, "uart", "data");
    assert_eq!(ours.len(), want.len());
    assert_eq!(ours, want);
    // The typed value is the byte sigrok prints in hex; times are sample numbers at 1 MHz.
    for a in anns.iter().filter(|a| a["row"] == "data") {
        let hex = u64::from_str_radix(a["text"].as_str().unwrap(), 16).unwrap();
        assert_eq!(a["fields"]["value"].as_u64(), Some(hex), "{a}");
        let (ss, s) = (a["start_sample"].as_i64().unwrap(), a["start_s"].as_f64().unwrap());
        assert!((s - ss as f64 / 1e6).abs() < 1e-12, "{a}");
    }
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn channels_resolve_by_exact_name_or_unique_suffix() {
    let file = corpus(UART);
    let exact = ok(&["decode", &file, "--decoder", UART_SPEC]).stdout;
    assert!(exact.len() > 10_000);
    // `4 (UART)` ends only `DIN 4 (UART)`.
    let suffix = ok(&["decode", &file, "--decoder", "uart:rx=4 (UART),baud=115200"]).stdout;
    assert_eq!(suffix, exact);
    // `)` ends every channel of this capture: ambiguous, and the candidates are listed.
    let err = failure(&["decode", &file, "--decoder", "uart:rx=),baud=115200"]);
    assert!(
        err.contains("is ambiguous") && err.contains("DIN 0 (SWI)") && err.contains("DIN 4 (UART)"),
        "{err}"
    );
}

#[test]
fn text_and_csv_carry_the_annotations_of_json() {
    // Commands, replies with typed fields of every kind, and a frame cut by the capture's end.
    let file = sample("sigrok/sd_mode_imx6_snippet.sr");
    let spec = "sd:clk=CLK,cmd=CMD,dat0=DAT0,dat1=DAT1,dat2=DAT2,dat3=DAT3";
    same_annotations_in_every_format(&file, spec, 9);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn text_and_csv_carry_the_annotations_of_json_on_thousands_of_bytes() {
    same_annotations_in_every_format(&corpus(UART), UART_SPEC, 1000);
}

fn same_annotations_in_every_format(file: &str, spec: &str, at_least: usize) {
    let doc = decode_json(file, spec);
    let anns = annotations(&doc);
    assert!(anns.len() >= at_least, "{file}: {}", anns.len());

    let text = String::from_utf8(ok(&["decode", file, "--decoder", spec]).stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), anns.len());
    for (line, a) in lines.iter().zip(anns) {
        let want = format!(
            "{:.9} {:.9} [{}-{}] {}.{}: {}",
            a["start_s"].as_f64().unwrap(),
            a["end_s"].as_f64().unwrap(),
            a["start_sample"],
            a["end_sample"],
            a["decoder"].as_str().unwrap(),
            a["row"].as_str().unwrap(),
            a["text"].as_str().unwrap()
        );
        assert_eq!(*line, want);
    }

    let csv = String::from_utf8(ok(&["decode", file, "--decoder", spec, "--format", "csv"]).stdout).unwrap();
    let mut rows = csv.lines();
    assert_eq!(rows.next(), Some("decoder,row,start_s,end_s,start_sample,end_sample,text,fields"));
    let rows: Vec<&str> = rows.collect();
    assert_eq!(rows.len(), anns.len());
    for (r, a) in rows.iter().zip(anns) {
        // No text of these captures holds a comma or a quote, so a plain split is exact.
        let cells: Vec<&str> = r.split(',').collect();
        assert_eq!(cells.len(), 8, "{r}");
        assert_eq!((cells[0], cells[1]), (a["decoder"].as_str().unwrap(), a["row"].as_str().unwrap()));
        let start_s: f64 = cells[2].parse().unwrap();
        assert!((start_s - a["start_s"].as_f64().unwrap()).abs() < 1e-12, "{r}");
        assert_eq!(cells[4].parse::<i64>().ok(), a["start_sample"].as_i64());
        assert_eq!(cells[5].parse::<i64>().ok(), a["end_sample"].as_i64());
        assert_eq!(cells[6], a["text"].as_str().unwrap());
        let fields = a["fields"].as_object().unwrap();
        let pairs: Vec<&str> = if cells[7].is_empty() { Vec::new() } else { cells[7].split(';').collect() };
        assert_eq!(pairs.len(), fields.len(), "{r}");
        for p in pairs {
            let (k, v) = p.split_once('=').unwrap();
            let j = &fields[k];
            let j = j.as_str().map(str::to_owned).unwrap_or_else(|| j.to_string());
            assert_eq!(v, j, "{k} in {r}");
        }
    }
}

/// The SD capture's command and reply spans, in JSON, are sigrok-cli's `sdcard_sd` ones,
/// and `report --preset sd-cmd-resp` measures each reply from sigrok-cli's spans.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn sd_commands_and_the_cmd_resp_preset_agree_with_sigrok_cli() {
    let file = sample("sigrok/sd_mode_imx6_snippet.sr");
    let spec = "sd:clk=CLK,cmd=CMD";
    let doc = decode_json(&file, spec);
    let want = sigrok(&file, "sdcard_sd:cmd=CMD:clk=CLK", "sdcard_sd=cmd");
    let mut ours: Vec<(i64, i64, String)> = row(&doc, "sd", "cmd");
    ours.extend(row(&doc, "sd", "response"));
    ours.sort();
    assert_eq!(ours.len(), want.len());
    for (o, w) in ours.iter().zip(&want) {
        assert_eq!((o.0, o.1), (w.0, w.1), "{o:?} vs {w:?}");
        let head = w.2.split(' ').next().unwrap();
        assert!(
            o.2.starts_with(&format!("{head} ")) || w.2.starts_with("Reply: "),
            "ours {o:?}, sigrok {w:?}"
        );
    }
    // Each sigrok reply measured from the command line before it, in ns at 40 MHz.
    let mut lat_ns: Vec<f64> = Vec::new();
    for pair in want.windows(2) {
        if !pair[0].2.starts_with("Reply") && pair[1].2.starts_with("Reply") {
            lat_ns.push((pair[1].0 - pair[0].0) as f64 * 25.0);
        }
    }
    assert_eq!(lat_ns.len(), 3, "{want:?}");
    let out = ok(&["report", &file, "--decoder", spec, "--preset", "sd-cmd-resp", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &report["analyses"][0];
    assert_eq!(a["name"], "sd-cmd-resp");
    assert_eq!(a["count"].as_u64(), Some(lat_ns.len() as u64));
    let min = lat_ns.iter().copied().fold(f64::INFINITY, f64::min);
    let max = lat_ns.iter().copied().fold(0.0, f64::max);
    let mean = lat_ns.iter().sum::<f64>() / lat_ns.len() as f64;
    assert!((a["stats_ns"]["min"].as_f64().unwrap() - min).abs() < 1e-6, "{a}");
    assert!((a["stats_ns"]["max"].as_f64().unwrap() - max).abs() < 1e-6, "{a}");
    assert!((a["stats_ns"]["mean"].as_f64().unwrap() - mean).abs() < 1e-3, "{a}");
}

#[test]
fn info_lists_the_decoded_tracks_with_their_counts() {
    let file = sample("sigrok/sd_mode_imx6_snippet.sr");
    let spec = "sd:clk=CLK,cmd=CMD";
    let doc = decode_json(&file, spec);
    let count = |r: &str| annotations(&doc).iter().filter(|a| a["row"] == r).count() as u64;
    let out = ok(&["info", &file, "--decoder", spec, "--json"]);
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tracks = info["sources"][0]["tracks"].as_array().unwrap();
    let track = |name: &str, kind: &str| {
        tracks
            .iter()
            .find(|t| t["name"] == name && t["kind"] == kind)
            .and_then(|t| t["count"].as_u64())
            .unwrap_or_else(|| panic!("no {kind} track {name}: {tracks:?}"))
    };
    for (r, ev) in [("cmd", "sd_cmd"), ("response", "sd_resp")] {
        assert!(count(r) >= 3, "{r}");
        assert_eq!(track(&format!("sd.{r}"), "spans"), count(r), "{r}");
        assert_eq!(track(ev, "events"), count(r), "{ev}");
        assert_eq!(track(&format!("{ev}_end"), "events"), count(r), "{ev}_end");
    }
    // The capture's own channels are still there.
    assert!(track("CLK", "digital") > 1000);
    // Without --decoder, no decoded track.
    let plain: Value = serde_json::from_slice(&ok(&["info", &file, "--json"]).stdout).unwrap();
    let plain = plain["sources"][0]["tracks"].as_array().unwrap();
    assert!(plain.iter().all(|t| t["kind"] == "digital"), "{plain:?}");
    // The text form names them too.
    let text = String::from_utf8(ok(&["info", &file, "--decoder", spec]).stdout).unwrap();
    assert!(text.contains("sd.cmd") && text.contains("sd_resp"), "{text}");
}

#[test]
fn a_missing_channel_lists_the_channels_in_every_command() {
    let file = sample("sigrok/sd_mode_imx6_snippet.sr");
    let spec = "sd:clk=CLK,cmd=CMDX";
    for args in [
        vec!["decode", &file, "--decoder", spec],
        vec!["report", &file, "--decoder", spec, "--preset", "sd-cmd-resp"],
        vec!["info", &file, "--decoder", spec],
    ] {
        let err = failure(&args);
        assert!(err.contains("column 16: no channel `CMDX`"), "{args:?}: {err}");
        let listed = err.split("channels: ").nth(1).unwrap_or_default();
        for ch in ["CLK", "DAT0", "DAT1", "DAT2", "CMD", "DAT3", "15"] {
            assert!(listed.split(", ").any(|c| c.trim() == ch), "{ch} not listed: {err}");
        }
    }
}

#[test]
fn spec_errors_name_the_column_and_usage_errors_exit_1() {
    let file = sample("sigrok/sd_mode_imx6_snippet.sr");
    let err = failure(&["decode", &file, "--decoder", "sdx:clk=CLK"]);
    assert!(
        err.contains("column 1: unknown decoder `sdx`") && err.contains("uart, spi, i2c, sd, sd-spi"),
        "{err}"
    );
    let err = failure(&["decode", &file, "--decoder", "sd:clk=CLK,cmd"]);
    assert!(err.contains("decoder spec, column 15: expected `=` after `cmd`"), "{err}");
    let err = failure(&["decode", &file, "--decoder", "sd:clk=CLK,cmd=CMD,width=3"]);
    assert!(err.contains("width"), "{err}");
    // sd-spi only stacks on spi.
    let err = failure(&["decode", &file, "--decoder", "sd-spi"]);
    assert!(err.contains("stacks on spi"), "{err}");
    // No --decoder, a bad format, a missing file: usage and input errors exit 1 too.
    failure(&["decode", &file]);
    failure(&["decode", &file, "--decoder", "sd:clk=CLK,cmd=CMD", "--format", "xml"]);
    let err = failure(&["decode", "no/such/capture.sr", "--decoder", "sd:clk=CLK,cmd=CMD"]);
    assert!(err.contains("no/such/capture.sr"), "{err}");
}

#[test]
fn error_annotations_are_counted_on_stderr_and_exit_0() {
    // Every CRC7 of the R-Car capture disagrees with its bits (it samples a 25 MHz bus at
    // 50 MHz); the decode still succeeds and says how many annotations are errors.
    let file = sample("sigrok/sd_mode_rcarh2_cmd23_cmd18.sr");
    let out = ok(&["decode", &file, "--decoder", "sd:clk=CLK,cmd=CMD", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = row(&doc, "sd", "warnings").len() as u64;
    assert!(warnings > 0);
    assert_eq!(doc["errors"]["sd: crc"].as_u64(), Some(warnings), "{}", doc["errors"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("sd: crc: {warnings} error annotation(s)")), "{err}");
}

#[test]
fn output_files_are_written_whole_and_never_over_the_input() {
    let dir = common::Scratch::new("decode-out");
    let file = sample("sigrok/sd_mode_imx6_snippet.sr");
    let spec = "sd:clk=CLK,cmd=CMD";
    let stdout = ok(&["decode", &file, "--decoder", spec, "--format", "json"]).stdout;
    let out = dir.join("ann.json");
    let printed = ok(&["decode", &file, "--decoder", spec, "--format", "json", "-o", out.to_str().unwrap()]);
    assert!(printed.stdout.is_empty());
    assert_eq!(std::fs::read(&out).unwrap(), stdout);
    // Over the input: refused before anything is written.
    let copy = dir.join("copy.sr");
    std::fs::copy(&file, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let c = copy.to_str().unwrap();
    let err = failure(&["decode", c, "--decoder", spec, "-o", c]);
    assert!(err.contains("copy.sr"), "{err}");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

const SIM_BUS: &str = "sd:clk=SD_CLK,cmd=SD_CMD,dat0=SD_DAT0,dat1=SD_DAT1,dat2=SD_DAT2,dat3=SD_DAT3";

fn chain_of(report: &Value) -> &Value {
    report["analyses"].as_array().unwrap().iter().find(|a| a["name"] == "chain:irq=3").expect("the chain")
}

fn stage_names(chain: &Value) -> Vec<String> {
    chain["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect()
}

/// The simulator's SD bus decoded beside its kernel trace, in one run (`sim --decoder`) and
/// as two files a user would have (the ftrace text and a VCD of the lines) aligned by
/// `report`: the chain goes through the bus in both, with the same requests and stages.
#[test]
fn the_chain_runs_through_a_decoded_bus_in_sim_and_across_aligned_files() {
    let dir = common::Scratch::new("decode-chain");
    let sim = ["sim", "litesdcard", "--set", "sd_bus=true", "--set", "requests=3"];
    let out =
        ok(&[&sim[..], &["--decoder", SIM_BUS, "--preset", "chain:irq=3", "--format", "json"]].concat());
    let one: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c1 = chain_of(&one);
    let stages = [
        "request->bus cmd",
        "bus cmd->response",
        "response->data done",
        "data done->irq line",
        "irq line->handler",
        "irq handler",
        "exit->wakeup",
        "wakeup->switch-in",
    ];
    let want: Vec<String> = stages.iter().map(|s| format!("chain:irq=3/{s}")).collect();
    assert_eq!(stage_names(c1), want);
    // Three reads and three writes take the IRQ; the nine polled commands break the chain.
    assert_eq!((c1["count"].as_u64(), c1["unmatched_start"].as_u64()), (Some(6), Some(9)));

    let (txt, vcd) = (dir.join("t.txt"), dir.join("t.vcd"));
    ok(&[&sim[..], &["--trace-out", txt.to_str().unwrap()]].concat());
    ok(&[&sim[..], &["--trace-out", vcd.to_str().unwrap()]].concat());
    let (txt, vcd) = (txt.to_str().unwrap(), vcd.to_str().unwrap());
    let out = ok(&[
        "report",
        txt,
        vcd,
        "--align",
        "1:+0ps",
        "--decoder",
        SIM_BUS,
        "--preset",
        "chain:irq=3",
        "--format",
        "json",
    ]);
    // The bus decoder ran on the VCD only (the text trace has no lines).
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("decoded input 1 (") && err.contains("t.vcd"), "{err}");
    let two: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c2 = chain_of(&two);
    assert_eq!(stage_names(c2), want);
    assert_eq!((c2["count"].as_u64(), c2["unmatched_start"].as_u64()), (Some(6), Some(9)));
    for (s1, s2) in c1["stages"].as_array().unwrap().iter().zip(c2["stages"].as_array().unwrap()) {
        assert_eq!(s1["count"], s2["count"], "{}", s1["name"]);
        // The text trace keeps microseconds (as the kernel prints them): stages that start
        // or end at a kernel event move by less than one.
        for q in ["min", "max", "mean"] {
            let (a, b) = (s1["stats_ns"][q].as_f64().unwrap(), s2["stats_ns"][q].as_f64().unwrap());
            assert!((a - b).abs() < 1000.0, "{} {q}: {a} vs {b}", s1["name"]);
        }
    }
    // Bus to bus, nothing is truncated: the card answers each command after 2.24 us.
    let resp = &c2["stages"][1]["stats_ns"];
    assert_eq!((resp["min"].as_f64(), resp["max"].as_f64()), (Some(2240.0), Some(2240.0)));
    // Not aligned, the two files are two captures: the kernel's chain is the plain one.
    let out = ok(&["report", txt, vcd, "--decoder", SIM_BUS, "--preset", "chain:irq=3", "--format", "json"]);
    let apart: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(chain_of(&apart)["stages"].as_array().unwrap().len(), 4);
    // A decoder no input has the channels for is an error listing the first input's.
    let err = failure(&["report", txt, vcd, "--decoder", "sd:clk=SDX_CLK,cmd=SD_CMD", "--preset", "chain"]);
    assert!(err.contains("no channel `SDX_CLK`"), "{err}");
}

/// An I2C decode long enough to be handed on in batches while the capture is read
/// (`decode::decode_file_to`: ~220 K annotations, batches of 4 K), and whose chunks (4 MiB,
/// 4 MiB, 0.6 MiB) are each cut into more pieces than the reader lets a chunk hold ahead of
/// it, so that the inflating threads wait for it, gives what the model
/// road gives (the capture loaded, then decoded from its stored tracks), and what the
/// generator wrote: an address and two data bytes per whole transaction, each ACKed; and
/// `latscope decode` writes the same bytes as the annotations written at once.
#[test]
#[cfg_attr(not(have_python3), ignore = "needs python3")]
fn a_long_i2c_decode_is_written_as_it_is_read_with_what_the_model_road_decodes() {
    use latscope_engine::annotations::{AnnotationFormat, write_annotations};
    let dir = common::Scratch::new("decode-i2c-stream");
    let file = dir.join("i2c_9M.sr");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/make_i2c_sr.py");
    let out = latscope_testkit::Need::Python3
        .output(Command::new("python3").arg(&script).arg(&file).arg("9000000"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let transactions: usize = said
        .trim_end()
        .strip_suffix(" transactions")
        .and_then(|s| s.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no transaction count in {said:?}"));
    let registry = latscope_engine::Registry::native();
    let specs = vec!["i2c:scl=SCL,sda=SDA".to_owned()];
    assert!(latscope_engine::decode::decodes_file(&registry, &file, &specs).unwrap());
    let (mut streamed, mut batches) = (Vec::new(), Vec::new());
    let d = latscope_engine::decode::decode_file_to(&registry, &file, &specs, &mut |_, batch| {
        batches.push(batch.len());
        streamed.append(batch);
        Ok(())
    })
    .unwrap()
    .expect("a .sr of logic channels is decoded as it is read");
    assert!(d.decoded.annotations.is_empty(), "every annotation was handed on");
    assert!(batches.len() >= 3 && batches.iter().all(|&n| n <= 40_000), "batches {batches:?}");
    let source = latscope_engine::open(&file, &latscope_importers::LoadControl::new()).unwrap();
    let model = latscope_engine::decode::decode_all(&registry, &source, &specs).unwrap();
    assert_eq!(streamed.len(), model.annotations.len());
    assert!(streamed == model.annotations, "the streamed annotations differ from the model road's");
    assert_eq!(d.decoded.errors, model.errors);
    // Each channel's flips, counted over the runs of flips the reader hands on, are the
    // level changes of the model's track.
    for name in ["SCL", "SDA"] {
        let counted = d.channels.iter().find(|c| c.name == name).map(|c| c.changes);
        let track = source.digital.iter().find(|t| t.name == name).map(|t| t.changes().len() as u64);
        assert!(counted.is_some() && counted == track, "{name}: counted {counted:?}, track {track:?}");
    }
    let count = |row: &str| streamed.iter().filter(|a| a.row == row).count();
    let addresses = count("address");
    assert!(addresses == transactions || addresses == transactions - 1, "{said}");
    // Every transaction before the last is whole; the capture may end inside the last.
    let last = streamed.iter().rev().find(|a| a.row == "address").map_or(0, |a| a.start);
    let whole = |row: &str| streamed.iter().filter(|a| a.row == row && a.start < last).count();
    assert_eq!(whole("data"), 2 * (addresses - 1));
    assert_eq!(whole("ack"), 3 * (addresses - 1));
    assert!((2 * addresses - 2..=2 * addresses).contains(&count("data")), "{} data", count("data"));
    assert!(
        streamed
            .iter()
            .filter(|a| a.row == "data")
            .all(|a| a.field("ack") == Some(&latscope_decoders::Value::Bool(true)))
    );
    // The command writes, batch by batch, the bytes of the whole decode written at once.
    let path = file.to_str().unwrap();
    for (format, name) in [(AnnotationFormat::Json, "json"), (AnnotationFormat::Text, "text")] {
        let printed = ok(&["decode", path, "--decoder", &specs[0], "--format", name]).stdout;
        let mut whole = Vec::new();
        write_annotations(&mut whole, &file, &d.source, &model, format).unwrap();
        assert!(printed == whole, "{name}: the streamed output differs from the whole decode's");
    }
}
