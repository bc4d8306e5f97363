//! VCD import on the real corpus, differentially checked against wellen wherever wellen can
//! read the file: every 1-bit signal must have the same level changes at the same times.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

use latscope_analysis::model::Source;
use latscope_importers::{LoadControl, open};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn corpus_vcds() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/vcd");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: {} is absent", dir.display());
        return Vec::new();
    };
    let mut v: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    v.sort();
    v
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
    for path in corpus_vcds() {
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
    let mut compared = 0;
    for path in corpus_vcds() {
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
            mine.extend(d.times.iter().zip(&d.levels).map(|(&t, &l)| (t, level_char(l))));
            let expected: Vec<(i64, char)> = w.iter().map(|&(t, c)| (tick.apply(t), c)).collect();
            assert_eq!(mine, expected, "{}: {}", path.display(), d.name);
            compared += 1;
        }
    }
    assert!(compared >= 20, "compared only {compared} signals");
}

#[test]
fn corpus_quirks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/vcd");
    if !dir.is_dir() {
        return;
    }
    let load = |n: &str| open(&dir.join(n), &LoadControl::new()).unwrap();
    // CRLF and digit id codes: eight channels, all present.
    let s = load("chronovu_la8_spiflash_read16.vcd");
    assert_eq!(s.digital.len(), 8);
    assert!(s.digital.iter().map(|d| d.transitions()).sum::<usize>() > 1000);
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
    // Reals from the sigrok demo driver are analog tracks with their values.
    let s = load("sigrok_demo_real_analog.vcd");
    assert!(s.analog.iter().any(|a| a.samples.iter().any(|v| *v != 0.0 && v.is_finite())));
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
