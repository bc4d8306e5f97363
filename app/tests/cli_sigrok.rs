//! `sigrok:ID` decoder stages: libsigrokdecode's decoders run through sigrok-cli, their
//! annotations one for one what sigrok-cli itself prints — JTAG on the corpus VCDs (sigrok-cli
//! reading the VCD itself; latscope writing its own .sr from the model), an EEPROM decoder
//! stacked on I2C on the corpus I2C capture, and a CAN capture this test encodes — and every
//! failure a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::{Scratch, latscope, ok};
use std::path::Path;
use std::process::Command;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `sigrok-cli ARGS --protocol-decoder-samplenum`: (start, end, decoder id, text) per line.
fn sigrok_cli(args: &[&str]) -> Vec<(i64, i64, String, String)> {
    let out = latscope_testkit::Need::SigrokCli
        .output(Command::new("sigrok-cli").args(args).arg("--protocol-decoder-samplenum"));
    assert!(out.status.success(), "sigrok-cli {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rows: Vec<_> = text
        .lines()
        .map(|l| {
            let (span, rest) = l.split_once(' ').unwrap();
            let (a, b) = span.split_once('-').unwrap();
            let (pid, text) = rest.split_once(": ").unwrap_or((rest.trim_end_matches(':'), ""));
            let id = pid.rsplit_once('-').unwrap().0.to_owned();
            (a.parse().unwrap(), b.parse().unwrap(), id, text.to_owned())
        })
        .collect();
    rows.sort();
    rows
}

/// `latscope decode FILE --decoder SPEC --format json`: each annotation as (start, end,
/// decoder, text) in `unit` (sample numbers when `None`, else seconds × unit).
fn ours(file: &Path, spec: &str, unit: Option<f64>) -> Vec<(i64, i64, String, String)> {
    let out = ok(&["decode", s(file), "--decoder", spec, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut rows: Vec<_> = doc["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let at = |k: &str| match unit {
                None => a[format!("{k}_sample")].as_i64().unwrap(),
                Some(u) => (a[format!("{k}_s")].as_f64().unwrap() * u).round() as i64,
            };
            let dec = a["decoder"].as_str().unwrap();
            let id = dec.strip_prefix("sigrok:").unwrap_or_else(|| panic!("decoder {dec}")).to_owned();
            (at("start"), at("end"), id, a["text"].as_str().unwrap().to_owned())
        })
        .collect();
    rows.sort();
    rows
}

fn same(file: &Path, ours: &[(i64, i64, String, String)], theirs: &[(i64, i64, String, String)]) {
    assert!(theirs.len() > 100, "{}: sigrok-cli printed {}", file.display(), theirs.len());
    assert_eq!(ours.len(), theirs.len(), "{}", file.display());
    for (o, t) in ours.iter().zip(theirs) {
        assert_eq!(o, t, "{}", file.display());
    }
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn jtag_on_the_corpus_vcds_is_sigrok_clis_one_for_one() {
    for (rel, prefix) in
        [("vcd/wellen_atxmega_bmda_jtag.vcd", ""), ("vcd/wellen_libsigrok_jtag_8mhz.vcd", "libsigrok.")]
    {
        let vcd = latscope_testkit::corpus(rel);
        let (tck, tms, tdi, tdo) =
            if prefix.is_empty() { ("tck", "tms", "tdi", "tdo") } else { ("TCK", "TMS", "TDI", "TDO") };
        // sigrok-cli reads the VCD itself: sample numbers are its 1 ns timescale.
        let pd = format!("jtag:tck={tck}:tms={tms}:tdi={tdi}:tdo={tdo}");
        let theirs = sigrok_cli(&["-I", "vcd", "-i", s(&vcd), "-P", &pd, "-A", "jtag"]);
        let spec =
            format!("sigrok:jtag:tck={prefix}{tck},tms={prefix}{tms},tdi={prefix}{tdi},tdo={prefix}{tdo}");
        same(&vcd, &ours(&vcd, &spec, Some(1e9)), &theirs);
    }
}

#[test]
#[cfg_attr(
    not(all(have_sigrok_cli, have_shared_corpus)),
    ignore = "needs sigrok-cli (apt-get install sigrok-cli) and the shared corpus (../shared/corpus or $LATSCOPE_CORPUS)"
)]
fn an_eeprom_stacked_on_i2c_is_sigrok_clis_one_for_one() {
    let sr = latscope_testkit::corpus("sigrok/tcs3472x_i2c_sparse_probes.sr");
    let theirs = sigrok_cli(&["-i", s(&sr), "-P", "i2c:scl=D2:sda=D3,eeprom24xx", "-A", "i2c,eeprom24xx"]);
    let ours = ours(&sr, "sigrok:i2c:scl=D2,sda=D3 | sigrok:eeprom24xx", None);
    assert!(ours.iter().any(|o| o.2 == "eeprom24xx"));
    same(&sr, &ours, &theirs);
}

/// CAN 2.0A frames at 125 kbit/s, 8 samples a bit (1 MHz): SOF, identifier, RTR, IDE, r0,
/// DLC, data, CRC-15, stuffed; then the CRC delimiter, a dominant ACK slot, the delimiters
/// and the end of frame. Idle (recessive) between frames.
fn can_levels(frames: &[(u16, &[u8])]) -> Vec<u8> {
    let mut bits: Vec<u8> = vec![1; 20];
    for &(id, data) in frames {
        let mut f: Vec<u8> = vec![0];
        f.extend((0..11).rev().map(|i| ((id >> i) & 1) as u8));
        f.extend([0, 0, 0]);
        f.extend((0..4).rev().map(|i| ((data.len() >> i) & 1) as u8));
        for b in data {
            f.extend((0..8).rev().map(|i| (b >> i) & 1));
        }
        let mut crc: u16 = 0;
        for &b in &f {
            let next = (u16::from(b) ^ (crc >> 14)) & 1;
            crc = (crc << 1) & 0x7fff;
            if next == 1 {
                crc ^= 0x4599;
            }
        }
        f.extend((0..15).rev().map(|i| ((crc >> i) & 1) as u8));
        // Bit stuffing: after five equal bits, one of the other level.
        let (mut run, mut last) = (0, 2u8);
        for b in f {
            bits.push(b);
            run = if b == last { run + 1 } else { 1 };
            last = b;
            if run == 5 {
                let stuff = 1 - b;
                bits.push(stuff);
                last = stuff;
                run = 1;
            }
        }
        bits.extend([1, 0, 1]);
        bits.extend([1; 7 + 3 + 10]);
    }
    bits.iter().flat_map(|&b| [b; 8]).collect()
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn a_can_capture_written_here_decodes_as_encoded_and_as_sigrok_cli_prints_it() {
    let d = Scratch::new("sigrok-can");
    let sr = d.join("can.sr");
    let frames: [(u16, &[u8]); 3] =
        [(0x123, &[0xde, 0xad]), (0x6ff, &[]), (0x0a5, &[1, 2, 3, 4, 5, 6, 7, 8])];
    common::write_one_channel_sr(&sr, "CAN_RX", "1 MHz", &can_levels(&frames));
    let theirs = sigrok_cli(&["-i", s(&sr), "-P", "can:can_rx=CAN_RX:nominal_bitrate=125000", "-A", "can"]);
    // sigrok-cli finds the frames encoded: each identifier, and no CRC complaint.
    for (id, data) in frames {
        let want = format!("Identifier: {id} (0x{id:x})");
        assert!(theirs.iter().any(|t| t.3 == want), "{want} not in {theirs:?}");
        for (i, b) in data.iter().enumerate() {
            let byte = format!("Data byte {i}: 0x{b:02x}");
            assert!(theirs.iter().any(|t| t.3 == byte), "{byte} not decoded");
        }
    }
    assert!(
        theirs.iter().all(|t| !t.3.contains("CRC is invalid") && !t.3.contains("must not")),
        "{theirs:?}"
    );
    assert!(theirs.iter().any(|t| t.3.starts_with("CRC-15 sequence")), "{theirs:?}");
    let ours = ours(&sr, "sigrok:can:can_rx=CAN_RX,nominal_bitrate=125000", None);
    same(&sr, &ours, &theirs);
    // The annotations are events too: `query` counts them per row.
    let rows = ok(&[
        "query",
        s(&sr),
        "--decoder",
        "sigrok:can:can_rx=CAN_RX,nominal_bitrate=125000",
        "--sql",
        "SELECT count(*) AS n FROM annotations WHERE decoder = 'sigrok:can'",
        "--format",
        "csv",
    ]);
    assert_eq!(String::from_utf8_lossy(&rows.stdout), format!("n\n{}\n", theirs.len()));
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn unknown_decoders_crashes_and_mixed_stacks_are_clear_errors() {
    let sr = latscope_testkit::corpus("sigrok/lazysig_spi_24mhz.sr");
    let fail = |spec: &str| {
        let out = latscope(&["decode", s(&sr), "--decoder", spec]);
        assert_eq!(out.status.code(), Some(1), "{spec}");
        assert!(out.stdout.is_empty(), "{spec}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = fail("sigrok:nope:clk=CLK");
    assert!(e.contains("unknown sigrok decoder \"nope\"") && e.contains("sigrok-cli -L"), "{e}");
    // eeprom24xx cannot read SPI's output: the decoder raises inside sigrok-cli.
    let e = fail("sigrok:spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS | sigrok:eeprom24xx");
    assert!(e.contains("sigrok-cli failed") && e.contains("eeprom24xx"), "{e}");
    let e = fail("spi:clk=CLK,mosi=MOSI | sigrok:spiflash");
    assert!(e.contains("cannot mix native decoders (spi)"), "{e}");
    let e = fail("sigrok:clk=CLK");
    assert!(e.contains("give the decoder's id first"), "{e}");
    // Without sigrok-cli on the PATH, the error says how to install it.
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .args(["decode", s(&sr), "--decoder", "sigrok:spi:clk=CLK"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("apt-get install sigrok-cli"), "{e}");
}

/// The add-decoder dialog's list: every decoder `sigrok-cli -L` names, with the channels and
/// options `sigrok-cli -P ID --show` gives, and what it stacks on.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn the_catalogue_lists_every_sigrok_decoder_with_its_channels_and_options() {
    let list = latscope_testkit::Need::SigrokCli.output(Command::new("sigrok-cli").arg("-L"));
    let ids = latscope_engine::sigrok::decoder_ids(&String::from_utf8_lossy(&list.stdout));
    assert!(ids.len() > 100, "{ids:?}");
    let all = latscope_engine::sigrok::catalogue().unwrap();
    for id in &ids {
        assert!(all.iter().any(|d| d.name == format!("sigrok:{id}")), "sigrok:{id} missing");
    }
    let can = all.iter().find(|d| d.name == "sigrok:can").unwrap();
    assert_eq!(
        can.channels.iter().map(|c| (c.key.as_str(), c.required)).collect::<Vec<_>>(),
        [("can_rx", true)]
    );
    let rate = can.options.iter().find(|o| o.key == "nominal_bitrate").unwrap();
    assert_eq!(rate.default, "1000000");
    let uart = all.iter().find(|d| d.name == "sigrok:uart").unwrap();
    let parity = uart.options.iter().find(|o| o.key == "parity").unwrap();
    assert_eq!((parity.accepts.as_str(), parity.default.as_str()), ("none|odd|even|zero|one|ignore", "none"));
    let eeprom = all.iter().find(|d| d.name == "sigrok:eeprom24xx").unwrap();
    assert_eq!(eeprom.stacks_on.as_deref(), Some("sigrok:i2c"));
    // In the registry beside the native decoders, which stay first.
    let mut r = latscope_engine::Registry::native();
    let natives = r.decoders().len();
    assert_eq!(r.add_sigrok_decoders(all), ids.len());
    assert_eq!(r.decoders()[0].name, "uart");
    assert!(r.decoders().len() >= natives + ids.len());
}
