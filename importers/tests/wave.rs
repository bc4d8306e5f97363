//! FST through wellen, on an FST written by GTKWave's fstapi from a corpus VCD
//! (tests/data/make_fst.py): it must load the same edges as latscope's own VCD reader, and a
//! copy cut short must be refused with where it was cut and why nothing can be loaded.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

use latscope_importers::{LoadControl, open};
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/libsigrok_jtag_8mhz.fst")
}

#[test]
fn fst_written_from_a_corpus_vcd_loads_the_same_edges() {
    let vcd =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/vcd/wellen_libsigrok_jtag_8mhz.vcd");
    if !vcd.exists() {
        eprintln!("skipping: {} is absent", vcd.display());
        return;
    }
    let fst = open(&fixture(), &LoadControl::new()).unwrap();
    let ours = open(&vcd, &LoadControl::new()).unwrap();
    assert_eq!(fst.format, "fst");
    assert_eq!(fst.digital.len(), 7);
    for (f, v) in fst.digital.iter().zip(&ours.digital) {
        assert_eq!(f.name, v.name);
        assert_eq!(
            (f.initial, &f.times, &f.levels, f.end),
            (v.initial, &v.times, &v.levels, v.end),
            "{}",
            f.name
        );
    }
    assert!(fst.digital.iter().map(|d| d.transitions()).sum::<usize>() > 11_000);
}

/// (offset, type) of each FST block.
fn blocks(data: &[u8]) -> Vec<(usize, u8)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        out.push((pos, data[pos]));
        pos += 1 + u64::from_be_bytes(data[pos + 1..pos + 9].try_into().unwrap()) as usize;
    }
    out
}

#[test]
fn a_cut_fst_is_refused_with_the_cut_block_and_the_reason() {
    let data = std::fs::read(fixture()).unwrap();
    let blocks = blocks(&data);
    // Header, ten value-change blocks (the writer flushed every 1000 timestamps), geometry,
    // hierarchy: the layout every fstapi writer produces, names last.
    assert_eq!(blocks.len(), 13);
    assert_eq!(blocks.iter().filter(|b| b.1 == 8).count(), 10);
    let dir = std::env::temp_dir().join(format!("latscope-fst-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut = |n: usize| {
        let copy = dir.join(format!("cut_{n}.fst"));
        std::fs::write(&copy, &data[..n]).unwrap();
        let err = open(&copy, &LoadControl::new()).expect_err("a cut FST cannot load").to_string();
        std::fs::remove_file(&copy).unwrap();
        assert!(err.contains("hierarchy and geometry blocks"), "the reason is missing from: {err}");
        err
    };
    for (i, &(start, kind)) in blocks.iter().enumerate() {
        let complete = blocks[..i].iter().filter(|b| b.1 == 8).count();
        let name = match kind {
            0 => "header",
            8 => "value-change",
            3 => "geometry",
            _ => "hierarchy",
        };
        // Inside the block: the error points at the block that is incomplete.
        let n = start + 20;
        let err = cut(n);
        let expected = format!(
            "cut_{n}.fst: byte offset {start}: the FST file is cut short at byte {n}: the {name} block at \
             byte {start} needs"
        );
        assert!(err.contains(&expected), "{expected:?} missing from: {err}");
        assert!(err.contains(&format!("after {complete} complete value-change block(s)")), "{err}");
        // Between blocks: every block present is whole, but the hierarchy is not there yet.
        if start > 0 {
            let err = cut(start);
            let expected = format!(
                "cut_{start}.fst: byte offset {start}: the FST file has {complete} value-change block(s) but \
                 ends at byte {start} before its hierarchy block"
            );
            assert!(err.contains(&expected), "{expected:?} missing from: {err}");
        }
    }
}

#[test]
fn variable_names_that_repeat_a_long_scope_path_are_refused_by_their_total_length() {
    // 3.7 KB of FST whose 1000 full names total 60 MB (tests/data/make_long_names_fst.py).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/long_scope_names.fst");
    let err = open(&path, &LoadControl::new()).expect_err("60 MB of names").to_string();
    let limit = latscope_importers::vcd::MAX_NAME_BYTES;
    for part in [
        "long_scope_names.fst: ".to_owned(),
        "total length of fst variable names".to_owned(),
        format!("exceeds the limit of {limit} bytes"),
    ] {
        assert!(err.contains(&part), "{part:?} missing from: {err}");
    }
}

/// The fixture with one big-endian u64 overwritten at `at`.
fn patched(at: usize, value: u64) -> Vec<u8> {
    let mut data = std::fs::read(fixture()).unwrap();
    data[at..at + 8].copy_from_slice(&value.to_be_bytes());
    data
}

fn refused(data: &[u8]) -> String {
    match latscope_importers::wave::parse(data, &LoadControl::new()) {
        Ok(_) => panic!("a forged FST loaded"),
        Err(e) => e.to_string(),
    }
}

/// Counts fst-reader would allocate from before reading the data they describe: without the
/// checks each of these files aborts the process (an allocation failure is not a panic).
#[test]
fn forged_fst_counts_are_refused_before_the_reader_allocates() {
    let data = std::fs::read(fixture()).unwrap();
    let blocks = blocks(&data);
    let geometry = blocks.iter().find(|b| b.1 == 3).unwrap().0;
    let first_changes = blocks.iter().find(|b| b.1 == 8).unwrap().0;
    let first_end = blocks[2].0;
    // The unpatched file passes the same checks.
    assert_eq!(latscope_importers::wave::parse(&data, &LoadControl::new()).unwrap().digital.len(), 7);

    let huge = 1u64 << 40;
    // Geometry: the handle count after the section and uncompressed lengths.
    let err = refused(&patched(geometry + 17, huge));
    assert!(
        err.contains(&format!("FST geometry block: {huge} signal handles at byte offset {geometry}")),
        "{err}"
    );
    // Header: the handle count (max var id code) is the 8th u64 after the type byte.
    let err = refused(&patched(1 + 56, huge));
    assert!(err.contains("FST header's handle count") && err.contains("at byte offset 0"), "{err}");
    // A value-change block's time table: the item count is the block's last u64.
    let err = refused(&patched(first_end - 8, huge));
    assert!(
        err.contains(&format!("FST time table's item count {huge} at byte offset {first_changes}"))
            && err.contains("one byte per time step"),
        "{err}"
    );
    // Its declared decompressed size, far beyond what deflate can expand its bytes to.
    let err = refused(&patched(first_end - 24, 1 << 30));
    assert!(err.contains("FST time table's declared size 1073741824") && err.contains("1032×"), "{err}");
}

/// A whole FST inside one gzip stream (fstapi's `FST_BL_ZWRAPPER`): fst-reader inflates all
/// of it into memory, so its declared size is bounded and the inner file is checked too.
#[test]
fn a_gzip_wrapped_fst_is_checked_inside_and_its_size_bounded() {
    use std::io::Write;
    let wrap = |inner: &[u8], declared: u64| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(inner).unwrap();
        let body = gz.finish().unwrap();
        let mut out = vec![254u8];
        out.extend((16 + body.len() as u64).to_be_bytes());
        out.extend(declared.to_be_bytes());
        out.extend(body);
        out
    };
    let data = std::fs::read(fixture()).unwrap();
    let wrapped = wrap(&data, data.len() as u64);
    let direct = latscope_importers::wave::parse(&data, &LoadControl::new()).unwrap();
    let unwrapped = latscope_importers::wave::parse(&wrapped, &LoadControl::new()).unwrap();
    assert_eq!(unwrapped.digital.len(), direct.digital.len());
    for (a, b) in unwrapped.digital.iter().zip(&direct.digital) {
        assert_eq!((&a.name, &a.times, &a.levels), (&b.name, &b.times, &b.levels));
    }

    let err = refused(&wrap(&data, 1 << 40));
    assert!(
        err.contains("FST gzip-wrapped FST: declared size 1099511627776 bytes at byte offset 0"),
        "{err}"
    );
    let geometry = blocks(&data).iter().find(|b| b.1 == 3).unwrap().0;
    let mut forged = data.clone();
    forged[geometry + 17..geometry + 25].copy_from_slice(&(1u64 << 40).to_be_bytes());
    let err = refused(&wrap(&forged, forged.len() as u64));
    assert!(err.contains("FST geometry block: 1099511627776 signal handles at byte offset 0"), "{err}");
}

/// Inputs the `wave` fuzz target found (docs/FUZZING.md): each must be refused with an
/// error, not abort the process. `gzip_inner_time_table.fst`: a gzip-wrapped FST whose
/// stream fails its CRC (which fst-reader does not check) and whose inner time table
/// declares 2^63 items; `timescale_exponent.fst`: see below.
#[test]
fn fuzz_regressions_are_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/wave");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        // Refused by latscope's own checks, before the reader could fail (or abort) on it.
        let err = refused(&data);
        assert!(!err.contains("wellen aborted"), "{}: {err}", path.display());
        seen += 1;
    }
    assert!(seen > 0, "no regression inputs in {}", dir.display());
}

/// The first `wave` fuzz find: a geometry block declaring ~1 TiB in a 3.7 KB file, which
/// fst-reader reserved before reading. Now it is a cut file, said as one.
#[test]
fn a_block_declaring_more_than_the_file_holds_is_a_cut_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/wave/geometry_past_end.fst");
    let err = refused(&std::fs::read(&path).unwrap());
    assert!(err.contains("the FST file is cut short at byte 3676: the geometry block at byte"), "{err}");
    // A block shorter than its own fixed fields (a value-change block of 8 bytes).
    let data = patched(blocks(&std::fs::read(fixture()).unwrap())[1].0 + 1, 8);
    let err = refused(&data);
    assert!(err.contains("declares 8 bytes, fewer than its 56 bytes of fixed fields"), "{err}");
}

/// The third find: a header timescale of 10^11 s, which wellen scales with an overflowing
/// u32 power of ten (a panic in debug builds, a wrong timescale in release ones).
#[test]
fn a_timescale_beyond_what_fst_expresses_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/wave/timescale_exponent.fst");
    let err = refused(&std::fs::read(&path).unwrap());
    assert!(err.contains("byte offset 0: the FST header's timescale is 10^11 s"), "{err}");
}
