//! VCD import on the real corpus, differentially checked against wellen wherever wellen can
//! read the file: every 1-bit signal must have the same level changes at the same times.
//! The corpus: samples/corpus/vcd, and the shared corpus's own files in the tests marked
//! `have_shared_corpus`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

use latscope_importers::{Format, LoadControl, open};
use latscope_model::Source;
use latscope_testkit::{corpus, corpus_files, shared_corpus_files};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The repository's corpus VCDs.
fn corpus_vcds() -> Vec<PathBuf> {
    corpus_files("vcd", None)
}

/// The VCDs only the shared corpus holds.
fn shared_vcds() -> Vec<PathBuf> {
    shared_corpus_files("vcd", None)
}

/// wellen's view of the file: full name -> (time in file ticks, level char) per 1-bit var.
fn wellen_bits(path: &Path) -> Option<HashMap<String, Vec<(u64, char)>>> {
    let path = path.to_owned();
    std::panic::catch_unwind(move || {
        let mut w = wellen::simple::read(&path).ok()?;
        let h = w.hierarchy().clone();
        let vars: Vec<_> =
            h.all_vars().map(|r| h[r].clone()).filter(|v| v.is_1bit(&h) && !v.is_real(&h)).collect();
        let ids: Vec<_> = vars.iter().map(|v| v.signal_ref()).collect();
        w.load_signals(&ids);
        let table = w.time_table().to_vec();
        let mut out = HashMap::new();
        for v in &vars {
            let sig = w.get_signal(v.signal_ref())?;
            let mut changes: Vec<(u64, char)> = Vec::new();
            for (idx, value) in sig.iter_changes() {
                let c = value.to_bit_string()?.chars().next()?;
                if changes.last().is_none_or(|l| l.1 != c) {
                    changes.push((table[idx as usize], c));
                }
            }
            out.insert(v.full_name(&h), changes);
        }
        Some(out)
    })
    .ok()
    .flatten()
}

fn level_char(l: u8) -> char {
    match l {
        0 => '0',
        1 => '1',
        3 => 'z',
        _ => 'x',
    }
}

#[test]
fn every_corpus_vcd_opens() {
    every_vcd_opens(corpus_vcds());
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn every_vcd_of_the_shared_corpus_opens() {
    every_vcd_opens(shared_vcds());
}

fn every_vcd_opens(files: Vec<PathBuf>) {
    for path in files {
        let s: Source = open(&path, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.format, "vcd");
        assert!(!s.digital.is_empty() || !s.analog.is_empty(), "{}: no tracks", path.display());
        if path.ends_with("wellen_vcd_with_errors.vcd") {
            assert!(s.diagnostics.summary().iter().any(|w| w.contains("truncated")), "{:?}", s.diagnostics);
        } else {
            assert_eq!(s.diagnostics.malformed, 0, "{}: {:?}", path.display(), s.diagnostics);
        }
    }
}

#[test]
fn one_bit_signals_match_wellen_change_for_change() {
    let compared = match_wellen(corpus_vcds());
    assert!(compared >= 20, "compared only {compared} signals");
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn one_bit_signals_of_the_shared_corpus_match_wellen_change_for_change() {
    let compared = match_wellen(shared_vcds());
    assert!(compared > 0, "compared no signal");
}

/// Every 1-bit signal of `files` wellen reads, against ours; how many were compared.
fn match_wellen(files: Vec<PathBuf>) -> usize {
    let mut compared = 0;
    for path in files {
        let Some(theirs) = wellen_bits(&path) else {
            eprintln!("wellen cannot read {}; not compared", path.display());
            continue;
        };
        let ours = open(&path, &LoadControl::new()).unwrap();
        let tick = ours
            .metadata
            .iter()
            .find(|(k, _)| k == "timescale")
            .and_then(|(_, v)| latscope_importers::vcd::parse_timescale(v))
            .unwrap_or(latscope_importers::vcd::TickScale::NS);
        for d in &ours.digital {
            let Some(w) = theirs.get(&d.name) else { continue };
            let mut mine: Vec<(i64, char)> = Vec::new();
            if let Some(&(t0, _)) = w.first() {
                mine.push((tick.apply(t0), level_char(d.initial)));
            }
            mine.extend(d.changes().map(|(t, l)| (t, level_char(l))));
            let expected: Vec<(i64, char)> = w.iter().map(|&(t, c)| (tick.apply(t), c)).collect();
            assert_eq!(mine, expected, "{}: {}", path.display(), d.name);
            compared += 1;
        }
    }
    compared
}

fn load_corpus_vcd(name: &str) -> Source {
    open(&corpus(&format!("vcd/{name}")), &LoadControl::new()).unwrap()
}

#[test]
fn corpus_quirks() {
    let load = load_corpus_vcd;
    // CRLF and digit id codes: eight channels, all present.
    let s = load("chronovu_la8_spiflash_read16.vcd");
    assert_eq!(s.digital.len(), 8);
    assert!(s.digital.iter().map(|d| d.transitions()).sum::<usize>() > 1000);
    // Reals from the sigrok demo driver are analog tracks with their values.
    let s = load("sigrok_demo_real_analog.vcd");
    assert!(s.analog.iter().any(|a| a.samples.iter().any(|v| *v != 0.0 && v.is_finite())));
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn corpus_quirks_of_the_shared_corpus() {
    let load = load_corpus_vcd;
    // A fractional timescale is kept exact: 0.1 ps ticks.
    let s = load("gtkwave_timescale_0p1ps.vcd");
    assert!(s.metadata.iter().any(|(k, v)| k == "timescale" && v.contains("0.1")), "{:?}", s.metadata);
    // $timezero shifts every time; string vars are reported, not dropped silently.
    let s = load("gtkwave_timezero_real_string.vcd");
    assert!(s.metadata.contains(&("timezero".into(), "-2".into())), "{:?}", s.metadata);
    assert!(s.diagnostics.summary().iter().any(|w| w.contains("string variable")));
    // EVCD port variables become tracks.
    let s = load("gtkwave_extended_evcd_ports.vcd");
    assert!(!s.analog.is_empty() || !s.digital.is_empty());
}

/// Inputs that once crashed the VCD reader (found by review of its limits, not the fuzzer):
/// each must load or fail with an error, never panic, and keep its one variable.
#[test]
fn regressions_do_not_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/vcd");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("regressions dir").flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "vcd") {
            continue;
        }
        let source = open(&path, &LoadControl::new()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(source.digital.len(), 1, "{}", path.display());
        n += 1;
    }
    assert!(n >= 2);
}

/// Tracks as comparable lists: (name, initial, [(time, level or value bits)]).
fn changes(s: &Source) -> Vec<(String, Vec<(i64, u32)>)> {
    let mut out: Vec<(String, Vec<(i64, u32)>)> = s
        .digital
        .iter()
        .map(|d| (d.name.clone(), d.changes().map(|(t, l)| (t, u32::from(l))).collect()))
        .collect();
    out.extend(
        s.analog.iter().map(|a| {
            (a.name.clone(), a.times.iter().zip(&a.samples).map(|(&t, v)| (t, v.to_bits())).collect())
        }),
    );
    out
}

fn is_prefix(short: &Source, long: &Source) -> Result<(), String> {
    let (a, b) = (changes(short), changes(long));
    if a.len() != b.len() {
        return Err(format!("{} tracks, {} in the longer file", a.len(), b.len()));
    }
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        if !y.starts_with(x) {
            return Err(format!("{name}: {} changes are not a prefix of {}", x.len(), y.len()));
        }
    }
    Ok(())
}

#[test]
fn truncated_copies_load_what_precedes_the_cut_and_say_where() {
    let checked = truncated_copies_load_what_precedes_the_cut(corpus_vcds(), "repo");
    assert!(checked >= 40, "only {checked} cuts checked");
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn truncated_copies_of_the_shared_corpus_load_what_precedes_the_cut_and_say_where() {
    let checked = truncated_copies_load_what_precedes_the_cut(shared_vcds(), "shared");
    assert!(checked >= 20, "only {checked} cuts checked");
}

/// Seven cuts through the body of each file; how many were checked.
fn truncated_copies_load_what_precedes_the_cut(files: Vec<PathBuf>, tag: &str) -> usize {
    let dir = std::env::temp_dir().join(format!("latscope-vcd-cut-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for path in files {
        if path.ends_with("wellen_vcd_with_errors.vcd") {
            continue; // already truncated inside its header
        }
        let data = std::fs::read(&path).unwrap();
        let full = open(&path, &LoadControl::new()).unwrap();
        let body = data.windows(15).position(|w| w == b"$enddefinitions").unwrap_or(0);
        // Cuts through the body, most of them inside a token.
        for k in 1..8 {
            let n = body + (data.len() - body) * k / 8 + k % 3;
            let clean = data[..n].iter().rposition(u8::is_ascii_whitespace).map_or(0, |i| i + 1);
            let load_prefix = |len: usize, tag: &str| {
                let copy = dir.join(format!("{tag}_{}", path.file_name().unwrap().to_string_lossy()));
                std::fs::write(&copy, &data[..len]).unwrap();
                let s = open(&copy, &LoadControl::new()).unwrap_or_else(|e| panic!("{e}"));
                std::fs::remove_file(&copy).unwrap();
                s
            };
            let cut = load_prefix(n, "cut");
            let at_whitespace = load_prefix(clean, "clean");
            let what = format!("{} cut at byte {n}", path.display());
            is_prefix(&cut, &full).unwrap_or_else(|e| panic!("{what}: {e}"));
            // Whole tokens before the cut all load: the copy cut at the last whitespace
            // has nothing the cut copy lacks.
            is_prefix(&at_whitespace, &cut).unwrap_or_else(|e| panic!("{what} vs byte {clean}: {e}"));
            if clean < n {
                let warned = cut.diagnostics.warnings.iter().any(|w| w.contains(&format!("byte {n}")));
                assert!(warned, "{what}: no warning names the cut: {:?}", cut.diagnostics.warnings);
            }
            checked += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    checked
}

#[test]
fn every_cut_of_the_small_corpus_vcds_is_a_prefix_of_the_whole() {
    let cuts = every_cut_is_a_prefix(corpus_vcds());
    assert!(cuts > 5_000, "{cuts}");
}

#[test]
#[cfg_attr(not(have_shared_corpus), ignore = "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS")]
fn every_cut_of_the_small_vcds_of_the_shared_corpus_is_a_prefix_of_the_whole() {
    let cuts = every_cut_is_a_prefix(shared_vcds());
    assert!(cuts > 500, "{cuts}");
}

/// Every cut of the body of each file under 6 KB; how many cuts were checked.
fn every_cut_is_a_prefix(files: Vec<PathBuf>) -> usize {
    // Cut timestamps, vectors cut before their id, ids cut short: whatever the cut, nothing
    // is loaded that the whole file does not have at that point. (The corpus's id codes are
    // single characters; a cut multi-character id is covered in src/vcd/tests.rs.)
    let mut cuts = 0;
    for path in files {
        let data = std::fs::read(&path).unwrap();
        if data.len() > 6_000 || path.ends_with("wellen_vcd_with_errors.vcd") {
            continue;
        }
        let ctl = LoadControl::new();
        let full = latscope_importers::import_bytes(Format::Vcd, &data, &ctl).unwrap();
        let body = data.windows(15).position(|w| w == b"$enddefinitions").unwrap_or(0);
        for n in body..data.len() {
            let cut = latscope_importers::import_bytes(Format::Vcd, &data[..n], &ctl).unwrap();
            is_prefix(&cut, &full).unwrap_or_else(|e| panic!("{} cut at byte {n}: {e}", path.display()));
            cuts += 1;
        }
    }
    cuts
}
