//! sigrok `.sr` import, cross-checked against sigrok-cli: every channel's transitions must
//! equal those of `sigrok-cli -i F -O vcd` (read back through latscope's VCD importer).
//! The captures: samples/sigrok, the repository's corpus (samples/corpus/sigrok), and the
//! shared corpus's own files in the tests marked `have_shared_corpus`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

use latscope_importers::{Format, LoadControl, detect, open};
use latscope_model::{DigitalTrack, PS_PER_S, Source};
use latscope_testkit::{Need, corpus, corpus_files, files_under, shared_corpus_files};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `.sr` files of the repository: samples/sigrok and samples/corpus/sigrok.
fn sr_files() -> Vec<PathBuf> {
    let mut files = corpus_files("sigrok", Some("sr"));
    files.extend(files_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/sigrok"), Some("sr")));
    files.sort();
    files
}

/// The `.sr` files only the shared corpus holds.
fn shared_sr_files() -> Vec<PathBuf> {
    shared_corpus_files("sigrok", Some("sr"))
}

/// `sigrok-cli -i F -O vcd`, imported with latscope's VCD reader, and the VCD's tick in ps.
/// `None` when sigrok-cli itself fails on the file.
fn sigrok_cli_vcd(path: &Path, logic: &[String]) -> Option<(Source, i64)> {
    // Only the logic channels, which are what the VCD holds.
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let vcd = std::env::temp_dir().join(format!("latscope-{}-{stem}.vcd", std::process::id()));
    let out = Need::SigrokCli.output(
        Command::new("sigrok-cli")
            .arg("-i")
            .arg(path)
            .args(["-C", &logic.join(","), "-O", "vcd", "-o"])
            .arg(&vcd),
    );
    if !out.status.success() {
        eprintln!(
            "sigrok-cli failed on {} ({}): {}",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::remove_file(&vcd).ok();
        return None;
    }
    let raw = std::fs::read(&vcd).expect("sigrok-cli wrote the VCD");
    // sigrok-cli's VCD writer prints analog samples as text lines (`A0: -10.00 V DC`) in
    // the body even when only logic channels are selected; they are not VCD, so drop them.
    let bytes: Vec<u8> = raw
        .split_inclusive(|&b| b == b'\n')
        .filter(|line| !line.windows(2).any(|w| w == b": "))
        .flatten()
        .copied()
        .collect();
    std::fs::remove_file(&vcd).ok();
    let text = String::from_utf8_lossy(&bytes);
    let tick = text
        .split("$timescale")
        .nth(1)
        .and_then(|s| s.split("$end").next())
        .map(|s| {
            let s = s.trim();
            let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
            let n: i64 = digits.parse().unwrap_or(1);
            n * match s[digits.len()..].trim() {
                "s" => PS_PER_S,
                "ms" => 1_000_000_000,
                "us" => 1_000_000,
                "ns" => 1_000,
                "ps" => 1,
                other => panic!("unexpected timescale unit {other}"),
            }
        })
        .expect("sigrok-cli VCD has a timescale");
    assert_eq!(detect(&bytes), Some(Format::Vcd));
    let source =
        latscope_importers::import_bytes(Format::Vcd, &bytes, &LoadControl::new()).expect("VCD imports");
    assert_eq!(source.diagnostics.malformed, 0, "{:?}", source.diagnostics);
    Some((source, tick))
}

fn logic_names(s: &Source) -> Vec<String> {
    s.digital.iter().map(|d| d.name.clone()).collect()
}

fn edges(track: &DigitalTrack) -> Vec<(i64, u8)> {
    track.changes().collect()
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn every_sr_file_matches_sigrok_cli_transition_for_transition() {
    let compared = match_sigrok_cli(&sr_files());
    assert!(compared >= 10, "compared only {compared} files");
}

#[test]
#[cfg_attr(
    not(all(have_sigrok_cli, have_shared_corpus)),
    ignore = "needs sigrok-cli (apt-get install sigrok-cli) and the shared corpus (../shared/corpus or $LATSCOPE_CORPUS)"
)]
fn every_sr_file_of_the_shared_corpus_matches_sigrok_cli_transition_for_transition() {
    let files = shared_sr_files();
    let compared = match_sigrok_cli(&files);
    // All but tcs3472x_i2c_sparse_probes.sr, which sigrok-cli gets wrong (below).
    assert!(compared + 1 >= files.len(), "compared only {compared} of {} files", files.len());
}

/// Each file against sigrok-cli; how many were compared.
fn match_sigrok_cli(files: &[PathBuf]) -> usize {
    let mut compared = 0;
    for path in files {
        let ours = open(path, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ours.format, "sigrok-sr");
        let rate_known = !ours.diagnostics.warnings.iter().any(|w| w.contains("no samplerate"));
        let Some((theirs, tick)) = sigrok_cli_vcd(path, &logic_names(&ours)) else {
            // sigrok-cli 0.7 dies with SIGFPE on a capture without a samplerate; we load it.
            assert!(!rate_known, "sigrok-cli failed on {}, which has a samplerate", path.display());
            continue;
        };
        assert_eq!(ours.digital.len(), theirs.digital.len(), "{}: channel count", path.display());
        if path.ends_with("tcs3472x_i2c_sparse_probes.sr") {
            // Only probe3..probe5 are enabled. sigrok-cli's VCD writer reads the k-th enabled
            // channel from bit k instead of the channel's own bit, so its output is wrong
            // here; `sparse_probes_read_their_own_bits` checks this file against raw bytes.
            continue;
        }
        for (a, b) in ours.digital.iter().zip(&theirs.digital) {
            assert!(b.name.ends_with(&a.name), "{}: channel {} vs {}", path.display(), a.name, b.name);
            assert_eq!(a.initial, b.initial, "{}: {} initial level", path.display(), a.name);
            assert_eq!(a.transitions(), b.transitions(), "{}: {} transition count", path.display(), a.name);
            for ((ta, la), (tb, lb)) in edges(a).into_iter().zip(edges(b)) {
                assert_eq!(la, lb, "{}: {} level at {ta}", path.display(), a.name);
                // sigrok-cli rounds times to its VCD tick; we keep them to the picosecond.
                assert!(
                    (ta - tb).abs() < tick,
                    "{}: {} edge at {ta} ps vs sigrok-cli {tb} ps",
                    path.display(),
                    a.name
                );
            }
        }
        compared += 1;
    }
    compared
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn demo_device_capture_matches_sigrok_cli() {
    let dir = std::env::temp_dir().join(format!("latscope-sigrok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sr = dir.join("demo.sr");
    // 3 MHz has no whole-picosecond period: the test also checks the time rounding.
    let out = Need::SigrokCli.output(
        Command::new("sigrok-cli")
            .args(["-d", "demo", "--samples", "120000", "-c", "samplerate=3MHz", "-o"])
            .arg(&sr),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ours = open(&sr, &LoadControl::new()).unwrap();
    let (theirs, tick) =
        sigrok_cli_vcd(&sr, &logic_names(&ours)).expect("sigrok-cli converts its own capture");
    assert_eq!(ours.digital.len(), 8);
    assert_eq!(ours.analog.len(), 5, "demo device has 5 analog channels");
    assert!(ours.analog.iter().all(|a| a.samples.len() == 120_000));
    let total: usize = ours.digital.iter().map(|d| d.transitions()).sum();
    assert!(total > 1000, "demo patterns toggle: {total}");
    for (a, b) in ours.digital.iter().zip(&theirs.digital) {
        assert_eq!(a.transitions(), b.transitions(), "{}", a.name);
        for (ta, tb) in a.times().zip(b.times()) {
            assert!((ta - tb).abs() < tick, "{}: {ta} vs {tb}", a.name);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn load_corpus(name: &str) -> Source {
    open(&corpus(&format!("sigrok/{name}")), &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn facts_from_the_corpus_notes() {
    let load = load_corpus;

    // unitsize 5 with 34 probes: the CMD and CLK channels sit in the fifth byte.
    let s = load("sd_cardreader_cmd55_acmd41.sr");
    let names: Vec<_> = s.digital.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["0", "1", "2", "3", "CMD", "CLK"]);
    assert!(s.metadata.contains(&("unitsize".into(), "5".into())));

    // Version 1, unchunked `logic-1`, ` = ` separators.
    let s = load("sd_spi_xmore_get_csd.sr");
    assert!(s.metadata.contains(&("version".into(), "1".into())));
    assert_eq!(s.digital.len(), 4);

    // No samplerate: loads with a warning the user sees, times in sample numbers.
    let s = load("no_samplerate.sr");
    assert!(s.diagnostics.summary().iter().any(|w| w.contains("no samplerate")));

    // Mixed logic + analog: analog9=A0, float32 samples, one per logic sample.
    let s = load("mixed_100khz_2logic_1analog.sr");
    assert_eq!(s.analog.len(), 1);
    assert_eq!(s.analog[0].name, "A0");
    let logic_samples: usize =
        s.metadata.iter().find(|(k, _)| k == "logic samples").and_then(|(_, v)| v.parse().ok()).unwrap();
    assert_eq!(s.analog[0].samples.len(), logic_samples);
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn facts_from_the_corpus_notes_on_the_shared_corpus() {
    let load = load_corpus;
    // Sparse probe keys: only probe3..probe5 exist.
    let s = load("tcs3472x_i2c_sparse_probes.sr");
    assert_eq!(s.digital.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["D2", "D3", "D4"]);

    // Odd chunk length with unitsize 1 (50001 bytes) is fine: every byte is a sample.
    let s = load("spi_flash_readid_500mhz.sr");
    assert!(s.metadata.contains(&("logic samples".into(), "50001".into())));
    assert_eq!(s.time_range(), Some((0, 50_000 * 2_000)), "500 MHz: 2 ns per sample");
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn sparse_probes_read_their_own_bits() {
    use std::io::Read;
    let path = corpus("sigrok/tcs3472x_i2c_sparse_probes.sr");
    let ours = open(&path, &LoadControl::new()).unwrap();
    // Independent decode: the raw logic member, bit 2 is probe3 (D2), 500 kHz = 2 us/sample.
    let file = std::fs::File::open(&path).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut raw = Vec::new();
    zip.by_name("logic-1-1").unwrap().read_to_end(&mut raw).unwrap();
    for (bit, track) in [(2u8, &ours.digital[0]), (3, &ours.digital[1]), (4, &ours.digital[2])] {
        let level = |i: usize| (raw[i] >> bit) & 1;
        let expected: Vec<i64> =
            (1..raw.len()).filter(|&i| level(i) != level(i - 1)).map(|i| i as i64 * 2_000_000).collect();
        assert_eq!(track.initial, level(0), "{}", track.name);
        assert_eq!(track.times().collect::<Vec<_>>(), expected, "{}", track.name);
    }
}

/// Builds a `.sr` in memory with the given logic members (all deflated).
fn make_sr(metadata: &str, members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let opts =
            zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("version", opts).unwrap();
        zip.write_all(b"2").unwrap();
        zip.start_file("metadata", opts).unwrap();
        zip.write_all(metadata.as_bytes()).unwrap();
        for (name, data) in members {
            zip.start_file(*name, opts).unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap();
    }
    out.into_inner()
}

const META_1CH: &str = "[global]\nsigrok version=0.5.2\n[device 1]\ncapturefile=logic-1\ntotal probes=8\nsamplerate=1 MHz\nprobe1=D0\nunitsize=1\n";

fn import(bytes: &[u8]) -> Result<Source, latscope_importers::ParseFailure> {
    assert_eq!(detect(bytes), Some(Format::SigrokSr));
    latscope_importers::import_bytes(Format::SigrokSr, bytes, &LoadControl::new())
}

#[test]
fn a_member_that_decompresses_beyond_its_declared_size_is_refused() {
    let mut bytes = make_sr(META_1CH, &[("logic-1-1", vec![0u8; 1 << 20])]);
    // Make the archive lie: declare 4096 bytes for the 1 MiB member, in the local header
    // and in the central directory (uncompressed size at offsets 22 and 24).
    let declared = 4096u32.to_le_bytes();
    let name = b"logic-1-1";
    let mut patched = 0;
    for i in 0..bytes.len().saturating_sub(4) {
        let sig: [u8; 4] = [bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]];
        if &sig == b"PK\x03\x04" && bytes[i + 30..].starts_with(name) {
            bytes[i + 22..i + 26].copy_from_slice(&declared);
            patched += 1;
        }
        if &sig == b"PK\x01\x02" && bytes[i + 46..].starts_with(name) {
            bytes[i + 24..i + 28].copy_from_slice(&declared);
            patched += 1;
        }
    }
    assert_eq!(patched, 2);
    let err = import(&bytes).expect_err("a lying member must be refused");
    // Either the zip reader or our own cap notices; both name the member and the declared size.
    assert!(err.to_string().contains("logic-1-1") && err.to_string().contains("declared"), "{err}");
}

#[test]
fn huge_constant_captures_cost_memory_per_edge_not_per_sample() {
    // 32M samples of which only two differ: two transitions, whatever the length.
    let mut data = vec![0u8; 32 << 20];
    data[1_000_000] = 1;
    let bytes = make_sr(META_1CH, &[("logic-1-1", data)]);
    assert!(bytes.len() < 100_000, "compresses well: {}", bytes.len());
    let s = import(&bytes).unwrap();
    assert_eq!(s.digital[0].times().collect::<Vec<_>>(), [1_000_000_000_000, 1_000_001_000_000]);
    assert!(s.metadata.contains(&("logic samples".into(), (32u64 << 20).to_string())));
}

#[test]
fn broken_archives_give_clear_errors() {
    let good = make_sr(META_1CH, &[("logic-1-1", vec![0, 1, 0, 1])]);
    assert_eq!(import(&good).unwrap().digital[0].transitions(), 3);
    // Truncations never panic; each either loads or names what is wrong.
    for n in (0..good.len()).step_by(7) {
        if let Err(e) = latscope_importers::import_bytes(Format::SigrokSr, &good[..n], &LoadControl::new()) {
            assert!(!e.to_string().is_empty());
        }
    }
    let no_rate = META_1CH.replace("samplerate=1 MHz\n", "samplerate=3 foo\n");
    let err = import(&make_sr(&no_rate, &[("logic-1-1", vec![0])])).expect_err("bad samplerate");
    assert!(err.to_string().contains("unknown unit"), "{err}");
    let unitsize_zero = META_1CH.replace("unitsize=1", "unitsize=0");
    let err = import(&make_sr(&unitsize_zero, &[("logic-1-1", vec![0])])).expect_err("unitsize 0");
    assert!(err.to_string().contains("unitsize 0"), "{err}");
}

/// A scratch file of this test process, named after it (inputs are never written; these
/// files are ours, and each test removes its own). No directory, so nothing is left behind.
fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("latscope-sr-test-{}-{name}", std::process::id()))
}

/// `.sr` with one logic member streamed from `chunks` (never all in memory at once).
fn make_sr_streamed(metadata: &str, member: &str, chunks: impl Iterator<Item = Vec<u8>>) -> Vec<u8> {
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(false);
        zip.start_file("version", opts).unwrap();
        zip.write_all(b"2").unwrap();
        zip.start_file("metadata", opts).unwrap();
        zip.write_all(metadata.as_bytes()).unwrap();
        zip.start_file(member, opts).unwrap();
        for c in chunks {
            zip.write_all(&c).unwrap();
        }
        zip.finish().unwrap();
    }
    out.into_inner()
}

#[test]
fn a_capture_toggling_every_sample_loads_up_to_the_transition_limit_and_says_where_it_stopped() {
    // 100 M samples of D0 toggling every sample: 100 M transitions (~900 MB as tracks,
    // several GB before the limit was counted per edge) in a file of ~100 KB.
    const SAMPLES: usize = 100_000_000;
    const CHUNK: usize = 1 << 20;
    let toggling: Vec<u8> = (0..CHUNK).map(|i| (i % 2) as u8).collect();
    let chunks = (0..SAMPLES.div_ceil(CHUNK)).map(|i| toggling[..CHUNK.min(SAMPLES - i * CHUNK)].to_vec());
    let bytes = make_sr_streamed(META_1CH, "logic-1-1", chunks);
    assert!(bytes.len() < 1 << 20, "deflate packs the toggling ~1000:1: {} bytes", bytes.len());
    let path = scratch("toggling_100M.sr");
    std::fs::write(&path, &bytes).unwrap();
    let loaded = open(&path, &LoadControl::new());
    std::fs::remove_file(&path).unwrap();
    let s = loaded.expect("what comes before the limit loads");
    let limit = latscope_importers::sigrok::MAX_TRANSITIONS;
    // Sample 0 sets the initial level and sample k makes edge k, so sample `limit + 1` is
    // the first not loaded, and the track ends on the sample before it.
    let d0 = &s.digital[0];
    assert_eq!(d0.transitions(), limit);
    let clock = d0.sample_clock().expect("kept as sample numbers");
    assert_eq!(d0.end, clock.time(limit as u64), "ends on sample {limit}");
    assert_eq!(s.records(), limit as u64);
    let warning = s.diagnostics.summary().join("\n");
    for part in [
        "member `logic-1-1`".to_owned(),
        format!("at sample {})", limit + 1),
        format!("exceeds the limit of {limit} transitions"),
        format!("from sample {} on (of {SAMPLES}) were not loaded", limit + 1),
    ] {
        assert!(warning.contains(&part), "{part:?} missing from: {warning}");
    }
}

#[test]
fn just_under_the_transition_limit_loads_with_no_capacity_beyond_it() {
    // Two channels toggling in turn: the edges are counted across channels.
    const SAMPLES: usize = 4_000_000;
    let meta = META_1CH.replace("probe1=D0\n", "probe1=D0\nprobe2=D1\n");
    let pattern = [0u8, 1, 3, 2];
    let data: Vec<u8> = (0..SAMPLES).map(|i| pattern[i % 4]).collect();
    let s = import(&make_sr_streamed(&meta, "logic-1-1", std::iter::once(data))).unwrap();
    let edges: usize = s.digital.iter().map(|d| d.transitions()).sum();
    assert_eq!(edges, SAMPLES - 1, "one channel changes per sample");
    for d in &s.digital {
        // Growth is geometric, so never more than twice what is stored.
        assert!(d.capacity() <= 2 * d.transitions().max(1024), "{}", d.capacity());
        // Kept as sample numbers: 4 bytes a change, and its level byte.
        assert!(d.sample_clock().is_some(), "{}", d.name);
        assert_eq!(d.heap_bytes(), 5 * d.capacity(), "{}", d.name);
    }
}

#[test]
fn a_lying_member_in_a_file_names_the_file_the_member_and_its_declared_size() {
    // The member declares 64 KiB but inflates to 256 MiB of zeros (a 256 KB file).
    let mut bytes = make_sr_streamed(META_1CH, "logic-1-1", (0..256).map(|_| vec![0u8; 1 << 20]));
    let declared = (64u32 << 10).to_le_bytes();
    let mut patched = 0;
    for i in 0..bytes.len().saturating_sub(46 + 9) {
        if bytes[i..].starts_with(b"PK\x03\x04") && bytes[i + 30..].starts_with(b"logic-1-1") {
            bytes[i + 22..i + 26].copy_from_slice(&declared);
            patched += 1;
        }
        if bytes[i..].starts_with(b"PK\x01\x02") && bytes[i + 46..].starts_with(b"logic-1-1") {
            bytes[i + 24..i + 28].copy_from_slice(&declared);
            patched += 1;
        }
    }
    assert_eq!(patched, 2);
    let path = scratch("bomb.sr");
    std::fs::write(&path, &bytes).unwrap();
    let err = open(&path, &LoadControl::new()).expect_err("a zip bomb must be refused").to_string();
    std::fs::remove_file(&path).unwrap();
    for part in ["bomb.sr", "member `logic-1-1`", "exceeds the limit of 65536 bytes (its declared size)"] {
        assert!(err.contains(part), "{part:?} missing from: {err}");
    }
}

/// The metadata entry a track selection leaves, if any.
fn not_decoded(s: &Source) -> Option<&str> {
    s.metadata.iter().find(|(k, _)| k == "logic channels not decoded").map(|(_, v)| v.as_str())
}

#[test]
fn a_track_selection_decodes_its_channels_exactly_as_a_full_decode() {
    let checked = track_selections_decode_as_full_decodes(&sr_files());
    assert!(checked >= 20, "checked only {checked} selections");
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn a_track_selection_decodes_its_channels_exactly_as_a_full_decode_on_the_shared_corpus() {
    let files = shared_sr_files();
    let checked = track_selections_decode_as_full_decodes(&files);
    assert!(checked > files.len(), "checked only {checked} selections");
}

/// Each channel alone and the first and last together, on each file; how many selections
/// were checked.
fn track_selections_decode_as_full_decodes(files: &[PathBuf]) -> usize {
    let mut checked = 0;
    for path in files {
        let full = open(path, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(not_decoded(&full), None, "{}", path.display());
        let names = logic_names(&full);
        // Each channel alone, and the first and last together (two bytes apart when unitsize > 1).
        let mut selections: Vec<Vec<String>> = names.iter().map(|n| vec![n.clone()]).collect();
        if let (Some(first), Some(last)) = (names.first(), names.last()) {
            selections.push(vec![first.clone(), last.clone(), "no such channel".into()]);
        }
        for wanted in selections {
            let ctl = LoadControl::new().with_tracks(wanted.iter().cloned());
            let part = open(path, &ctl).unwrap_or_else(|e| panic!("{e}"));
            let what = format!("{} selecting {wanted:?}", path.display());
            let kept: Vec<&DigitalTrack> = full.digital.iter().filter(|d| wanted.contains(&d.name)).collect();
            assert_eq!(part.digital.len(), kept.len(), "{what}");
            for (a, b) in part.digital.iter().zip(kept) {
                assert_eq!((&a.name, a.initial, a.end), (&b.name, b.initial, b.end), "{what}");
                assert_eq!(edges(a), edges(b), "{what}: {}", a.name);
            }
            // Nothing vanishes silently: the skipped channels and their transitions are named,
            // and the capture's record count and time range are the full decode's.
            let skipped: Vec<&DigitalTrack> =
                full.digital.iter().filter(|d| !wanted.contains(&d.name)).collect();
            let expected = (!skipped.is_empty()).then(|| {
                let names: Vec<&str> = skipped.iter().map(|d| d.name.as_str()).collect();
                let count: usize = skipped.iter().map(|d| d.transitions()).sum();
                format!("{} ({count} transitions)", names.join(", "))
            });
            assert_eq!(not_decoded(&part), expected.as_deref(), "{what}");
            assert_eq!(part.records(), full.records(), "{what}");
            assert_eq!(part.time_range(), full.time_range(), "{what}");
            assert_eq!(part.analog.len(), full.analog.len(), "{what}");
            checked += 1;
        }
    }
    checked
}

#[test]
fn a_selection_naming_no_logic_channel_decodes_them_all() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/sigrok/mixed_100khz_2logic_1analog.sr");
    let full = open(&path, &LoadControl::new()).unwrap();
    let analog: Vec<String> = full.analog.iter().map(|a| a.name.clone()).collect();
    assert!(!analog.is_empty() && !full.digital.is_empty());
    // A rule on the analog channel (or on a channel the capture lacks) leaves the logic
    // channels decoded: they set the capture's time range.
    for wanted in [analog, vec!["D9".to_owned()]] {
        let part = open(&path, &LoadControl::new().with_tracks(wanted)).unwrap();
        assert_eq!(logic_names(&part), logic_names(&full));
        assert_eq!(part.digital, full.digital);
        assert_eq!(not_decoded(&part), None);
    }
}

/// What `latscope decode` reads (each logic channel as the sample numbers where it flips)
/// says the same as the loaded tracks: the same channels, initial levels and edges (sample
/// `i` at `round(i * 1e12 / rate)` ps), the same sample count and the same warnings, on every
/// capture and on damaged copies of them (cut in half, a byte changed in the compressed data).
#[test]
fn sample_numbers_read_for_decoders_equal_the_loaded_tracks() {
    sample_numbers_equal_the_loaded_tracks(&sr_files());
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn sample_numbers_read_for_decoders_equal_the_loaded_tracks_on_the_shared_corpus() {
    sample_numbers_equal_the_loaded_tracks(&shared_sr_files());
}

fn sample_numbers_equal_the_loaded_tracks(files: &[PathBuf]) {
    assert!(!files.is_empty());
    let mut checked = 0;
    for path in files {
        let whole = std::fs::read(path).unwrap();
        let mut cut = whole[..whole.len() / 2].to_vec();
        cut.truncate(cut.len().max(1));
        let mut flipped = whole.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x5A;
        for (what, data) in [("whole", &whole), ("cut in half", &cut), ("a byte changed", &flipped)] {
            let label = format!("{} ({what})", path.display());
            let ctl = LoadControl::new();
            let (loaded, ticks) = match (
                latscope_importers::sigrok::parse(data, &ctl),
                latscope_importers::sigrok::parse_logic_ticks(data, &ctl),
            ) {
                (Ok(s), Ok(t)) => (s, t),
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string(), "{label}: both refuse it, for the same reason");
                    continue;
                }
                // Analog members are not read for sample numbers (decode loads such a
                // capture in full), so damage there shows only in the full load.
                (Err(a), Ok(t)) if !t.analog.is_empty() && a.to_string().contains("analog") => continue,
                (a, b) => panic!("{label}: the load gave {:?}, the sample numbers {:?}", a.err(), b.err()),
            };
            let rate = ticks.samplerate.unwrap_or(1);
            let time = |i: i64| {
                ((i128::from(i) * i128::from(PS_PER_S) + i128::from(rate / 2)) / i128::from(rate)) as i64
            };
            assert_eq!(
                logic_names(&loaded),
                ticks.channels.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                "{label}"
            );
            let analog: Vec<String> = loaded.analog.iter().map(|a| a.name.clone()).collect();
            assert_eq!(analog, ticks.analog, "{label}");
            let samples = loaded.metadata.iter().find(|(k, _)| k == "logic samples").map(|(_, v)| v.clone());
            if let Some(n) = samples {
                assert_eq!(n, ticks.samples.to_string(), "{label}");
            }
            for (track, ch) in loaded.digital.iter().zip(&ticks.channels) {
                assert_eq!(track.initial, ch.initial, "{label} {}", ch.name);
                let mut level = ch.initial;
                let from_ticks: Vec<(i64, u8)> = ch
                    .ticks
                    .iter()
                    .map(|&i| {
                        level ^= 1;
                        (time(i), level)
                    })
                    .collect();
                assert_eq!(edges(track), from_ticks, "{label} {}", ch.name);
            }
            for w in &ticks.warnings {
                assert!(
                    loaded.diagnostics.warnings.contains(w),
                    "{label}: {w:?} not in {:?}",
                    loaded.diagnostics.warnings
                );
            }
            checked += 1;
        }
    }
    // Every whole file at least; the damaged copies that both refuse are skipped.
    assert!(checked >= files.len(), "{checked} of {} files", files.len());
}

/// The edges of every channel of `probes` (bit k = probe k+1) in one-byte samples `data` at
/// 1 MHz, found one sample at a time: the reference for the chunked reader.
fn edges_of(data: &[u8], probes: usize) -> Vec<(u8, Vec<(i64, u8)>)> {
    (0..probes)
        .map(|b| {
            let level = |i: usize| (data[i] >> b) & 1;
            let e = (1..data.len())
                .filter(|&i| level(i) != level(i - 1))
                .map(|i| (i as i64 * 1_000_000, level(i)));
            (level(0), e.collect())
        })
        .collect()
}

#[test]
fn repeated_chunks_keep_every_edge_including_those_at_chunk_boundaries() {
    // Chunks the reader inflates and scans once: an idle chunk, and a busy one, each repeated
    // after different neighbours, so the flip at a copy's first sample (against the chunk
    // before it) differs from copy to copy; and one chunk that is not a whole 64-byte block.
    let idle = vec![0x5Fu8; 4096];
    let busy: Vec<u8> =
        (0..4096u32).map(|i| 0x5F ^ ((i / 3) & 1) as u8 ^ (((i / 97) & 1) << 4) as u8).collect();
    let mut other = busy.clone();
    other[0] = 0x00;
    other[4095] = 0xFF;
    let short: Vec<u8> = (0..1000u32).map(|i| (i / 5) as u8).collect();
    let order = [&idle, &busy, &busy, &idle, &other, &busy, &idle, &idle, &short, &busy, &other, &other];
    let meta = "[global]\nsigrok version=0.5.2\n[device 1]\ncapturefile=logic-1\ntotal probes=8\nsamplerate=1 MHz\n\
                probe1=D0\nprobe2=D1\nprobe3=D2\nprobe4=D3\nprobe5=D4\nprobe6=D5\nprobe7=D6\nprobe8=D7\nunitsize=1\n";
    let names: Vec<String> = (1..=order.len()).map(|i| format!("logic-1-{i}")).collect();
    let members: Vec<(&str, Vec<u8>)> =
        names.iter().zip(order).map(|(n, d)| (n.as_str(), d.clone())).collect();
    let s = import(&make_sr(meta, &members)).unwrap();
    let all: Vec<u8> = order.iter().flat_map(|d| d.iter().copied()).collect();
    for (track, (initial, want)) in s.digital.iter().zip(edges_of(&all, 8)) {
        assert_eq!(track.initial, initial, "{}", track.name);
        assert_eq!(edges(track), want, "{}", track.name);
    }
    assert!(s.metadata.contains(&("logic samples".into(), all.len().to_string())));
}

#[test]
fn a_member_claiming_2_to_the_40_bytes_is_refused_before_any_allocation() {
    // A zip64 member whose headers claim 2^40 bytes (2^40 one-byte samples) for 16 real ones.
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let opts =
            zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("version", opts).unwrap();
        zip.write_all(b"2").unwrap();
        zip.start_file("metadata", opts).unwrap();
        zip.write_all(META_1CH.as_bytes()).unwrap();
        zip.start_file("logic-1-1", opts.large_file(true)).unwrap();
        zip.write_all(&[0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0]).unwrap();
        zip.finish().unwrap();
    }
    let mut bytes = out.into_inner();
    // In each header of the member: the 32-bit size says "see zip64" and the zip64 extra
    // field (id 1) carries the claim.
    let claim = (1u64 << 40).to_le_bytes();
    let u16_at = |b: &[u8], i: usize| usize::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let mut patched = 0;
    for i in 0..bytes.len().saturating_sub(46 + 9) {
        let (size_at, name_len_at, fixed) = if bytes[i..].starts_with(b"PK\x03\x04") {
            (22, 26, 30)
        } else if bytes[i..].starts_with(b"PK\x01\x02") {
            (24, 28, 46)
        } else {
            continue;
        };
        let name_len = u16_at(&bytes, i + name_len_at);
        if !bytes[i + fixed..].starts_with(b"logic-1-1") {
            continue;
        }
        let extra_len = u16_at(&bytes, i + name_len_at + 2);
        let mut at = i + fixed + name_len;
        let end = at + extra_len;
        while at + 4 <= end {
            let (id, len) = (u16_at(&bytes, at), u16_at(&bytes, at + 2));
            if id == 1 && bytes[i + size_at..i + size_at + 4] == [0xFF; 4] {
                bytes[at + 4..at + 12].copy_from_slice(&claim);
                patched += 1;
            }
            at += 4 + len;
        }
    }
    assert!(patched >= 1, "the writer put a zip64 size in at least one header");
    let err = import(&bytes).expect_err("2^40 declared bytes must be refused").to_string();
    for part in ["logic-1-1", "1099511627776 bytes", "exceeds the limit"] {
        assert!(err.contains(part), "{part:?} missing from: {err}");
    }
}

/// A capture of the full i.MX6 SD session's shape, scaled down (`bench/make_sd_real_sr.py
/// --scale 40`): idle stretches of identical chunks, 16 channels, bursts crossing chunks.
fn real_shaped_capture() -> PathBuf {
    let path = scratch("sd_real_scaled.sr");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/make_sd_real_sr.py");
    let out = Need::Python3.output(Command::new("python3").arg(&script).arg(&path).args(["--scale", "40"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    path
}

#[test]
#[cfg_attr(
    not(all(have_sigrok_cli, have_python3)),
    ignore = "needs sigrok-cli (apt-get install sigrok-cli) and python3"
)]
fn a_real_shaped_capture_matches_sigrok_cli_transition_for_transition() {
    let path = real_shaped_capture();
    let ours = open(&path, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"));
    let (theirs, tick) = sigrok_cli_vcd(&path, &logic_names(&ours)).expect("sigrok-cli converts it");
    std::fs::remove_file(&path).unwrap();
    let clock = ours.digital.iter().find(|d| d.name == "CLK").map_or(0, |d| d.transitions());
    assert!(clock > 300_000, "CLK has {clock} edges");
    for (a, b) in ours.digital.iter().zip(&theirs.digital) {
        assert_eq!((a.initial, a.transitions()), (b.initial, b.transitions()), "{}", a.name);
        for ((ta, la), (tb, lb)) in edges(a).into_iter().zip(edges(b)) {
            assert!(la == lb && (ta - tb).abs() < tick, "{}: {ta} ps {la} vs {tb} ps {lb}", a.name);
        }
    }
}

#[test]
fn a_preview_drawn_while_loading_shows_where_the_capture_is_busy() {
    // Eight chunks of 4096 samples: D0 busy in chunks 1 and 5, D1 flipping once in chunk 2;
    // the first preview comes after the first chunk, whatever the time.
    let meta = META_1CH.replace("probe1=D0\n", "probe1=D0\nprobe2=D1\n");
    let mut all = Vec::new();
    for k in 0..8u32 {
        all.extend((0..4096u32).map(|i| {
            let d0 = u8::from((k == 1 || k == 5) && (i / 3) % 2 == 1);
            let d1 = u8::from(k >= 2 && (k > 2 || i >= 100));
            d0 | (d1 << 1)
        }));
    }
    let names: Vec<String> = (1..=8).map(|i| format!("logic-1-{i}")).collect();
    let members: Vec<(&str, Vec<u8>)> =
        names.iter().zip(all.chunks(4096)).map(|(n, c)| (n.as_str(), c.to_vec())).collect();
    let bytes = make_sr(&meta, &members);
    let previews = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let got = previews.clone();
    let ctl =
        LoadControl::new().with_preview(std::sync::Arc::new(move |s: Source| got.lock().unwrap().push(s)));
    let loaded = latscope_importers::import_bytes(Format::SigrokSr, &bytes, &ctl).unwrap();
    let previews = previews.lock().unwrap();
    let first = previews.first().expect("a preview after the first chunk");
    let end = (all.len() as i64 - 1) * 1_000_000;
    for (p, t) in first.digital.iter().zip(&loaded.digital) {
        assert_eq!((&p.name, p.initial, p.end), (&t.name, t.initial, end), "{}", p.name);
    }
    // Each preview: busy buckets (more than one edge in the preview) exactly where the loaded
    // track has edges, before what was read; unknown (level 2) from there on.
    for p in previews.iter() {
        for (pt, t) in p.digital.iter().zip(&loaded.digital) {
            let unknown = pt.changes().find(|&(_, l)| l == 2).map(|(at, _)| at);
            let read = unknown.expect("the unread part is unknown");
            assert_eq!(read % (4096 * 1_000_000), 0, "{}: a preview after whole chunks", t.name);
            let bucket = |at: i64| at / 1_000_000 / 8; // 32768 samples make 4096 buckets of 8
            let busy_preview: std::collections::BTreeSet<i64> =
                pt.times().filter(|&at| at < read).map(bucket).collect();
            let busy_real: std::collections::BTreeSet<i64> =
                t.times().filter(|&at| at < read).map(bucket).collect();
            assert_eq!(busy_preview, busy_real, "{}", t.name);
        }
    }
}
