//! Every decoder against sigrok-cli's on the real captures of the corpus: the same
//! annotations with the same start and end sample numbers and the same values.
//!
//! Where sigrok's decoders are knowingly incomplete the comparison says so and compares
//! what both decode: sigrok's `sdcard_sd` calls every reply after CMD7 "R6" and every other
//! one "R1" (we name the format the command has, e.g. R1b), and sigrok's `sdcard_spi`
//! treats every response as one R1 byte and prints CMD9's CSD from a misplaced window.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use latscope_decoders::{Annotation, Value};

fn sorted(mut v: Vec<(i64, i64, String)>) -> Vec<(i64, i64, String)> {
    v.sort();
    v
}

fn sig_rows(s: Vec<Sig>) -> Vec<(i64, i64, String)> {
    s.into_iter().map(|s| (s.ss, s.es, s.text)).collect()
}

#[test]
#[cfg_attr(
    not(all(have_sigrok_cli, have_shared_corpus)),
    ignore = "needs sigrok-cli (apt-get install sigrok-cli) and the shared corpus (../shared/corpus or $LATSCOPE_CORPUS)"
)]
fn uart_infineon_swi_capture() {
    let path = corpus("sigrok/infineon_swi_uart.sr");
    let (src, rate) = open(&path);
    let ours = decode(&src, rate, "uart:rx=DIN 4 (UART),baud=115200");
    let want = sigrok(&path, "uart:rx=DIN 4 (UART):baudrate=115200", "uart=rx-data");
    assert!(want.len() > 1000, "{}", want.len());
    assert_same(&rows(&ours, "uart", "data"), &sig_rows(want), "uart");
    // The same capture with the baud rate measured from the shortest pulse.
    let auto = decode(&src, rate, "uart:rx=UART),baud=auto");
    assert_eq!(rows(&auto, "uart", "data"), rows(&ours, "uart", "data"));
}

fn spi_case(file: &str, ours_spec: &str, sigrok_pd: &str) {
    let path = corpus(file);
    let (src, rate) = open(&path);
    let ours = decode(&src, rate, ours_spec);
    for row in ["mosi", "miso"] {
        let want = sig_rows(sigrok(&path, sigrok_pd, &format!("spi={row}-data")));
        assert!(!want.is_empty(), "{file}: sigrok decoded no {row} words");
        assert_same(&rows(&ours, "spi", row), &want, &format!("{file} {row}"));
    }
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn spi_lazysig_capture() {
    spi_case(
        "sigrok/lazysig_spi_24mhz.sr",
        "spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS",
        "spi:cs=CS:clk=CLK:mosi=MOSI:miso=MISO",
    );
}

#[test]
#[cfg_attr(
    not(all(have_sigrok_cli, have_shared_corpus)),
    ignore = "needs sigrok-cli (apt-get install sigrok-cli) and the shared corpus (../shared/corpus or $LATSCOPE_CORPUS)"
)]
fn spi_flash_read_id_at_500_mhz() {
    spi_case(
        "sigrok/spi_flash_readid_500mhz.sr",
        "spi:clk=3,mosi=1,miso=2,cs=0",
        "spi:cs=0:clk=3:mosi=1:miso=2",
    );
}

/// Our I2C rows in sigrok's single `addr-data` row.
fn i2c_rows(d: &latscope_decoders::Decoded) -> Vec<(i64, i64, String)> {
    let mut v = Vec::new();
    for row in ["start", "stop", "rw", "address", "ack", "data"] {
        v.extend(rows(d, "i2c", row));
    }
    sorted(v)
}

#[test]
#[cfg_attr(
    not(all(have_sigrok_cli, have_shared_corpus)),
    ignore = "needs sigrok-cli (apt-get install sigrok-cli) and the shared corpus (../shared/corpus or $LATSCOPE_CORPUS)"
)]
fn i2c_tcs3472x_capture() {
    let path = corpus("sigrok/tcs3472x_i2c_sparse_probes.sr");
    let (src, rate) = open(&path);
    let ours = decode(&src, rate, "i2c:scl=D3,sda=D2");
    let want = sorted(sig_rows(sigrok(&path, "i2c:scl=D3:sda=D2", "i2c=addr-data")));
    assert!(want.len() > 10_000, "{}", want.len());
    assert_same(&i2c_rows(&ours), &want, "i2c");
}

/// SCL from the scope channel, through latscope's analog threshold: sigrok cannot threshold,
/// so it decodes the same thresholded SCL written to a VCD (one tick a sample) beside the
/// capture's logic SDA, and the two decodes must be equal.
#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn i2c_with_scl_from_the_scope_channel() {
    let path = corpus("sigrok/i2c_dds120_scl_analog.sr");
    let (src, rate) = open(&path);
    let rate = rate.unwrap();
    let ours = decode(&src, Some(rate), "i2c:scl=SCL analog,sda=SDA");
    let clock = latscope_decoders::Clock::Samples(rate);
    let analog = src.analog.iter().find(|a| a.name == "SCL analog").unwrap();
    let scl = latscope_decoders::Line::from_track(&analog.to_digital(latscope_model::Threshold::Auto), clock);
    let sda = src.digital.iter().find(|d| d.name == "SDA").unwrap();
    let sda = latscope_decoders::Line::from_track(sda, clock);
    let mut vcd = format!("$timescale {} ns $end\n$scope module top $end\n", 1_000_000_000 / rate);
    vcd.push_str("$var wire 1 ! SCL $end\n$var wire 1 \" SDA $end\n$upscope $end\n$enddefinitions $end\n");
    vcd.push_str(&format!("#0\n{}!\n{}\"\n", scl.initial, sda.initial));
    let mut changes: Vec<(i64, char, u8)> = Vec::new();
    changes.extend(scl.changes().map(|(t, l)| (t, '!', l)));
    changes.extend(sda.changes().map(|(t, l)| (t, '"', l)));
    changes.sort();
    let mut last = 0;
    for (t, id, l) in changes {
        if t != last {
            vcd.push_str(&format!("#{t}\n"));
            last = t;
        }
        vcd.push_str(&format!("{l}{id}\n"));
    }
    vcd.push_str(&format!("#{}\n", scl.end.max(sda.end)));
    let dir = std::env::temp_dir().join(format!("latscope-decoders-{}-i2c-analog", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vcd_path = dir.join("scl_thresholded.vcd");
    std::fs::write(&vcd_path, vcd).unwrap();
    let want = sorted(sig_rows(sigrok(&vcd_path, "i2c:scl=SCL:sda=SDA", "i2c=addr-data")));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(want.len() > 1000, "{}", want.len());
    assert_same(&i2c_rows(&ours), &want, "i2c");
}

fn field_value(text: &str, prefix: &str) -> Option<u64> {
    let rest = text.strip_prefix(prefix)?;
    u64::from_str_radix(rest.trim_start_matches("0x"), 16).ok()
}

/// SD native mode: our `cmd` and `response` rows against sigrok's `cmd` row (spans, CMD vs
/// ACMD and index), and the command index, argument and CRC against its `fields` row.
/// `crc_ok`: whether the capture's CRC7s are right. The R-Car capture samples its 25 MHz bus
/// at 50 MHz, two samples a clock, and every token's CRC7 disagrees with its bits (sigrok
/// reads the same bits; it does not check CRCs).
fn sd_case(file: &str, crc_ok: bool) {
    sd_case_at(&corpus(file), crc_ok);
}

fn sd_case_at(path: &std::path::Path, crc_ok: bool) {
    let file = path.display().to_string();
    let (src, rate) = open(path);
    let ours = decode(&src, rate, "sd:clk=CLK,cmd=CMD");
    let mine: Vec<&Annotation> = ours
        .annotations
        .iter()
        .filter(|a| a.decoder == "sd" && (a.row == "cmd" || a.row == "response"))
        .collect();
    let want = sigrok(path, "sdcard_sd:cmd=CMD:clk=CLK", "sdcard_sd=cmd");
    assert!(!want.is_empty());
    let spans = |v: Vec<(i64, i64)>| v;
    assert_eq!(
        spans(mine.iter().map(|a| (a.start_sample.unwrap(), a.end_sample.unwrap())).collect()),
        spans(want.iter().map(|s| (s.ss, s.es)).collect()),
        "{file}: spans"
    );
    let fields = sigrok(path, "sdcard_sd:cmd=CMD:clk=CLK", "sdcard_sd=fields");
    for (a, s) in mine.iter().zip(&want) {
        let (ss, es) = (a.start_sample.unwrap(), a.end_sample.unwrap());
        let inside: Vec<&Sig> = fields.iter().filter(|f| f.ss >= ss && f.es <= es).collect();
        let get = |prefix: &str| inside.iter().find_map(|f| field_value(&f.text, prefix));
        if a.row == "cmd" {
            let prefix = if uint(a, "app") == 1 { "ACMD" } else { "CMD" };
            let head = format!("{prefix}{} ", uint(a, "index"));
            assert!(s.text.starts_with(&head), "{file}: {head} vs {}", s.text);
            assert_eq!(get("Argument: "), Some(uint(a, "arg")), "{file} {}", s.text);
            assert_eq!(get("CRC: "), Some(uint(a, "crc")), "{file} {}", s.text);
            let index = inside.iter().find_map(|f| {
                let t = f.text.strip_prefix("Command: ")?;
                t.rsplit_once('(')?.1.trim_end_matches(')').parse::<u64>().ok()
            });
            assert_eq!(index, Some(uint(a, "index")));
            assert_eq!(a.field("crc_ok"), Some(&Value::Bool(crc_ok)), "{file}: {}", a.text);
        } else {
            assert!(s.text.starts_with("Reply: ") || s.text == "R2", "{file}: {}", s.text);
            if matches!(a.field("type"), Some(Value::Str(t)) if t != "R2" && t != "R3") {
                assert_eq!(get("Argument: "), Some(uint(a, "arg")), "{file} {}", s.text);
                assert_eq!(a.field("crc_ok"), Some(&Value::Bool(crc_ok)), "{file}: {}", a.text);
            }
        }
    }
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn sd_rcar_h2_cmd23_cmd18() {
    sd_case("sigrok/sd_rcarh2_cmd23_cmd18.sr", false);
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn sd_imx6_working_snippet() {
    sd_case("sigrok/sd_imx6_working_snippet.sr", true);
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn sd_card_reader_cmd55_acmd41() {
    sd_case("sigrok/sd_cardreader_cmd55_acmd41.sr", true);
}

/// A capture of the full i.MX6 session's shape (`bench/make_sd_real_sr.py --scale 40`: 16
/// channels at 40 MHz, 1 MiB chunks, idle stretches of identical chunks, 4-bit reads and
/// writes): the CMD line against sigrok-cli, on the three roads `decode` compares; the DAT
/// blocks against the generator, whose CRC16s are its own (every block decoded, none bad).
#[test]
#[cfg_attr(
    not(all(have_sigrok_cli, have_python3)),
    ignore = "needs sigrok-cli (apt-get install sigrok-cli) and python3"
)]
fn sd_real_shaped_capture() {
    let dir = std::env::temp_dir().join(format!("latscope-decoders-{}-sd-real", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sd_real_scaled.sr");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/make_sd_real_sr.py");
    let out = latscope_testkit::Need::Python3
        .output(std::process::Command::new("python3").arg(&script).arg(&path).args(["--scale", "40"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let blocks: usize = said
        .trim_end()
        .split(", ")
        .find_map(|p| p.strip_suffix(" data blocks")?.parse().ok())
        .unwrap_or_else(|| panic!("no block count in {said:?}"));
    sd_case_at(&path, true);
    let (src, rate) = open(&path);
    let d = decode(&src, rate, "sd:clk=CLK,cmd=CMD,dat0=DAT0,dat1=DAT1,dat2=DAT2,dat3=DAT3");
    std::fs::remove_dir_all(&dir).unwrap();
    let data: Vec<&Annotation> = d.annotations.iter().filter(|a| a.row == "data").collect();
    assert_eq!(data.len(), blocks, "{said}");
    assert!(data.iter().all(|a| a.field("crc_ok") == Some(&Value::Bool(true)) && uint(a, "width") == 4));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
}

fn bytes_of_list(text: &str) -> Vec<u64> {
    let inner = text.split_once('[').map(|x| x.1).unwrap_or("").trim_end_matches(']');
    inner.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn hex_bytes(a: &Annotation) -> Vec<u64> {
    match a.field("hex") {
        Some(Value::Str(h)) => {
            (0..h.len() / 2).map(|i| u64::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap()).collect()
        }
        other => panic!("hex: {other:?}"),
    }
}

/// SD in SPI mode, stacked on SPI, against sigrok's `spi,sdcard_spi`.
fn sd_spi_case(file: &str, ours_spec: &str, sigrok_pd: &str) {
    let path = corpus(file);
    let (src, rate) = open(&path);
    let ours = decode(&src, rate, ours_spec);
    let of = |row: &str| -> Vec<&Annotation> {
        ours.annotations.iter().filter(|a| a.decoder == "sd-spi" && a.row == row).collect()
    };
    let span = |a: &Annotation| (a.start_sample.unwrap(), a.end_sample.unwrap());
    let want = sigrok(&path, sigrok_pd, "sdcard_spi=cmd-reply");
    // sigrok repeats CMD9's line for each byte it reads after it, zero-width: keep the first.
    let commands: Vec<&Sig> =
        want.iter().filter(|s| s.text.contains("CMD") && s.text.contains(": ") && s.ss != s.es).collect();
    let cmds = of("cmd");
    assert_eq!(
        cmds.iter().map(|a| span(a)).collect::<Vec<_>>(),
        commands.iter().map(|s| (s.ss, s.es)).collect::<Vec<_>>()
    );
    for (a, s) in cmds.iter().zip(&commands) {
        let prefix = if uint(a, "app") == 1 { "ACMD" } else { "CMD" };
        assert!(s.text.starts_with(&format!("{prefix}{} ", uint(a, "index"))), "{} vs {}", a.text, s.text);
    }
    // sigrok prints the first response byte as R1 for every command whose reply it reads.
    let r1: Vec<(i64, i64, u64)> =
        want.iter().filter_map(|s| Some((s.ss, s.es, field_value(&s.text, "R1: ")?))).collect();
    assert!(!r1.is_empty());
    let responses = of("response");
    for (ss, es, v) in &r1 {
        let a = responses
            .iter()
            .find(|a| a.start_sample == Some(*ss))
            .unwrap_or_else(|| panic!("no response at {ss}"));
        assert_eq!(uint(a, "r1"), *v);
        if matches!(a.field("type"), Some(Value::Str(t)) if t == "R1") {
            assert_eq!(a.end_sample, Some(*es));
        }
    }
    // Data blocks: sigrok's "Block data" span and bytes; its CSD bytes (span aside).
    let blocks: Vec<&Sig> = want.iter().filter(|s| s.text.starts_with("Block data: ")).collect();
    let data = of("data");
    for s in &blocks {
        let a =
            data.iter().find(|a| span(a) == (s.ss, s.es)).unwrap_or_else(|| panic!("no block at {}", s.ss));
        assert_eq!(hex_bytes(a), bytes_of_list(&s.text));
    }
    for s in want.iter().filter(|s| s.text.starts_with("CSD: ")) {
        assert!(data.iter().any(|a| hex_bytes(a) == bytes_of_list(&s.text)), "CSD {}", s.text);
    }
    for (text, row) in
        [("Data Response", "data-response"), ("Card is busy", "busy"), ("Start Block", "token")]
    {
        let theirs: Vec<(i64, i64)> = want.iter().filter(|s| s.text == text).map(|s| (s.ss, s.es)).collect();
        let mine: Vec<(i64, i64)> = of(row).iter().map(|a| span(a)).collect();
        for t in theirs {
            assert!(mine.contains(&t), "{text} at {t:?}: ours {mine:?}");
        }
    }
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn sd_spi_cmd24_write() {
    sd_spi_case(
        "sigrok/sd_spi_cmd24_write_real.sr",
        "spi:clk=SCK,mosi=MOSI,miso=MISO,cs=CS | sd-spi",
        "spi:cs=CS:clk=SCK:mosi=MOSI:miso=MISO,sdcard_spi",
    );
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn sd_spi_init_and_get_csd() {
    sd_spi_case(
        "sigrok/sd_spi_xmore_get_csd.sr",
        "spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS# | sd-spi",
        "spi:cs=CS#:clk=CLK:mosi=MOSI:miso=MISO,sdcard_spi",
    );
}

/// A live recording of SD over SPI hands on the final annotations as it goes, so a tick
/// costs what was decoded since the last one, not the whole capture. Two real captures,
/// asked after every change, every 7 and every 1,000: what is handed on comes in start
/// order before each reach said, and with what the end gives it is the whole decode, every
/// field equal (that decode is checked against sigrok's `sdcard_spi` above).
///
/// How much is final before the end depends on CS. The XMORE card's host releases it after
/// each command: asked every change or every 7, each command and its SPI words are handed
/// on once CS releases, all before the capture ends. The CMD24 write holds CS from its
/// first word to its last: SPI amends the transfer's annotation when CS releases, so
/// nothing after its start is final until then, and only a question asked at that very
/// change (every change) gets everything.
#[test]
fn sd_spi_decoded_live_hands_on_final_annotations_and_ends_as_the_whole_decode() {
    for (file, spec, all_final_from) in [
        (
            "sigrok/sd_spi_cmd24_write_real.sr",
            "spi:clk=SCK,mosi=MOSI,miso=MISO,cs=CS | sd-spi",
            [true, false, false],
        ),
        (
            "sigrok/sd_spi_xmore_get_csd.sr",
            "spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS# | sd-spi",
            [true, true, false],
        ),
    ] {
        let data = std::fs::read(corpus(file)).unwrap();
        let whole = streamed(&data, spec).unwrap();
        let cards = |anns: &[Annotation]| anns.iter().filter(|a| a.decoder == "sd-spi").count();
        assert!(cards(&whole.annotations) >= 6, "{file}: {:?}", whole.annotations);
        for (every, all_final) in [1, 7, 1000].into_iter().zip(all_final_from) {
            let (mut taken, questions, rest) = streamed_live(&data, spec, Ask::Every(every));
            let reach = questions.last().map_or(i64::MIN, |q| q.reach);
            assert!(taken.is_sorted_by_key(|a| a.start), "{file}: in start order");
            assert!(
                rest.annotations.iter().all(|a| a.start >= reach),
                "{file}: the end's start at the reach"
            );
            if all_final {
                assert_eq!(
                    taken.len(),
                    whole.annotations.len(),
                    "{file}, every {every}: all final before the end"
                );
            } else if file.contains("cmd24") {
                let transfer = whole.annotations.iter().find(|a| a.row == "transfer").unwrap();
                assert_eq!((taken.len(), reach), (0, transfer.start), "{file}, every {every}: held by CS");
            }
            taken.extend(rest.annotations);
            assert_eq!(taken, whole.annotations, "{file}, every {every}");
            assert_eq!(rest.errors, whole.errors, "{file}, every {every}");
        }
    }
}

/// A live decode asked only while CS is asserted, as a recording whose ticks all land inside
/// transfers (a bus busy most of the time) asks, still hands on every annotation that starts
/// before the open transfer: SPI amends only that transfer's annotation when CS releases.
/// Two real captures whose hosts release CS between transfers: the LazySig bus (21
/// transfers of two words), and the XMORE card (one SD command a transfer), SD over SPI
/// stacked (its commands end within their transfer). At each question the reach is the
/// open transfer's start, everything before it is handed on, and with what the end gives it
/// is the whole decode (checked against sigrok-cli above).
#[test]
fn spi_decoded_live_inside_transfers_hands_on_all_before_the_open_one() {
    for (file, spec, cs) in [
        ("sigrok/lazysig_spi_24mhz.sr", "spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS", "CS"),
        ("sigrok/sd_spi_xmore_get_csd.sr", "spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS# | sd-spi", "CS#"),
    ] {
        let data = std::fs::read(corpus(file)).unwrap();
        let whole = streamed(&data, spec).unwrap();
        let transfers: Vec<&Annotation> = whole.annotations.iter().filter(|a| a.row == "transfer").collect();
        assert!(transfers.len() >= 5, "{file}: {} transfers", transfers.len());
        let (mut taken, questions, rest) = streamed_live(&data, spec, Ask::WhileLow(cs));
        let before = |t: i64| whole.annotations.iter().filter(|a| a.start < t).count();
        let mut asked_in = std::collections::BTreeSet::new();
        for q in &questions {
            let open = transfers
                .iter()
                .position(|t| {
                    t.start_sample.unwrap() as u64 <= q.sample && q.sample < t.end_sample.unwrap() as u64
                })
                .unwrap_or_else(|| panic!("{file}: sample {} inside no transfer", q.sample));
            asked_in.insert(open);
            let start = transfers[open].start;
            assert_eq!(q.reach, start, "{file}: {q:?} in transfer {open}");
            assert_eq!(q.taken, before(q.reach), "{file}: {q:?} in transfer {open}");
        }
        assert_eq!(asked_in.len(), transfers.len(), "{file}: asked inside every transfer");
        taken.extend(rest.annotations);
        assert_eq!(taken, whole.annotations, "{file}");
        assert_eq!(rest.errors, whole.errors, "{file}");
    }
}
