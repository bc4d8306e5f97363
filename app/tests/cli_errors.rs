//! Hostile, damaged and missing inputs end to end: through `latscope_importers::open` and
//! through `latscope info`. Every case asserts the exit code, that the message names the
//! file and the position or limit, and (for limits) that the importer refuses instead of
//! loading. Hostile inputs are built in a temporary directory, never stored in git.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure should panic

mod common;

use common::latscope;

use latscope_importers::{ImportError, LoadControl, ParseFailure};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fresh directory per test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("latscope-errors-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `head`, then `len` bytes of `fill` with no line break, then `tail`; written in 1 MiB
/// blocks so the test itself never holds the endless line in memory.
fn write_endless(path: &Path, head: &[u8], fill: u8, len: usize, tail: &[u8]) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(head).unwrap();
    let block = vec![fill; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(block.len());
        f.write_all(&block[..n]).unwrap();
        left -= n;
    }
    f.write_all(tail).unwrap();
    f.flush().unwrap();
}

/// 300 MiB: far beyond any line limit, small enough for a test's temp dir.
const ENDLESS: usize = 300 << 20;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The importer's error for `path` (it must fail).
fn open_err(path: &Path) -> ImportError {
    match latscope_importers::open(path, &LoadControl::new()) {
        Ok(s) => panic!("{} loaded ({} records) but should be refused", path.display(), s.records()),
        Err(e) => e,
    }
}

/// Both the library and the CLI refuse `path` with a limit error naming the file and
/// mentioning every fragment in `expect`.
fn assert_limit(path: &Path, expect: &[&str]) {
    let err = open_err(path);
    assert!(
        matches!(err, ImportError::Parse { failure: ParseFailure::Limit { .. }, .. }),
        "{}: expected a limit error, got {err:?}",
        path.display()
    );
    let msg = err.to_string();
    let name = path.file_name().unwrap().to_str().unwrap();
    let out = latscope(&["info", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
    let cli = stderr(&out);
    for text in [&msg, &cli] {
        assert!(text.contains(name) && text.contains("exceeds the limit of"), "{text}");
        for e in expect {
            assert!(text.contains(e), "{name}: missing {e:?} in {text}");
        }
    }
}

/// `info --json` on `path` succeeds; returns its `warnings`.
fn json_warnings(path: &Path) -> Vec<String> {
    let out = latscope(&["info", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}: {}", path.display(), stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_owned()).collect()
}

fn json_events(path: &Path) -> u64 {
    let out = latscope(&["info", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}: {}", path.display(), stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["events"].as_u64().unwrap()
}

// ---------------------------------------------------------------------------------------
// .sr archives, written by hand so the test controls every declared size.

/// A stored-or-deflated zip with the sizes the caller claims (`declared`), not the real ones.
struct Member<'a> {
    name: &'a str,
    method: u16,
    data: Vec<u8>,
    declared: u32,
}

fn zip(members: &[Member<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for m in members {
        let offset = out.len() as u32;
        let crc = 0u32; // never reached: every test member is refused or is metadata (stored)
        let crc = if m.method == 0 { crc32(&m.data) } else { crc };
        let header = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend(sig.to_le_bytes());
            if central {
                h.extend(20u16.to_le_bytes()); // made by
            }
            h.extend(20u16.to_le_bytes()); // version needed
            h.extend(0u16.to_le_bytes()); // flags
            h.extend(m.method.to_le_bytes());
            h.extend([0u8; 4]); // time, date
            h.extend(crc.to_le_bytes());
            h.extend((m.data.len() as u32).to_le_bytes());
            h.extend(m.declared.to_le_bytes());
            h.extend((m.name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes()); // extra
            if central {
                h.extend([0u8; 6]); // comment len, disk, internal attrs
                h.extend(0u32.to_le_bytes()); // external attrs
                h.extend(offset.to_le_bytes());
            }
            h.extend(m.name.as_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend(&m.data);
        central.extend(header(0x0201_4b50, true));
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((members.len() as u16).to_le_bytes());
    out.extend((members.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn stored<'a>(name: &'a str, text: &str) -> Member<'a> {
    let data = text.as_bytes().to_vec();
    Member { name, method: 0, declared: data.len() as u32, data }
}

/// Raw deflate of `mib` MiB of zeros in about 1 KiB per MiB: one sync-flushed block of
/// 1 MiB of zeros repeated (its back-references only ever see zeros), then a final block.
fn deflated_zeros(mib: usize) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let mut c = Compress::new(Compression::best(), false);
    let mut block = Vec::with_capacity(1 << 16);
    c.compress_vec(&vec![0u8; 1 << 20], &mut block, FlushCompress::Sync).unwrap();
    assert_eq!(c.total_in(), 1 << 20, "one call compresses the whole MiB");
    let mut out = Vec::with_capacity(block.len() * mib + 16);
    for _ in 0..mib {
        out.extend_from_slice(&block);
    }
    let mut end = Compress::new(Compression::best(), false);
    let mut fin = Vec::with_capacity(64);
    end.compress_vec(&[], &mut fin, FlushCompress::Finish).unwrap();
    out.extend(fin);
    out
}

fn sr(meta: &str, data: Vec<Member<'_>>) -> Vec<u8> {
    let mut members = vec![stored("version", "2"), stored("metadata", meta)];
    members.extend(data);
    zip(&members)
}

const LOGIC_META: &str = "[global]\nsigrok version=0.5.2\n\n[device 1]\ncapturefile=logic-1\n\
    total probes=8\nsamplerate=1 MHz\ntotal analog=0\nprobe1=D0\nunitsize=1\n";

#[test]
fn sr_zip_bomb_is_refused_at_its_declared_size() {
    let dir = TempDir::new("srbomb");
    // 4 GiB of zeros in ~4 MiB, declaring 1 MiB: the reader must stop after 1 MiB + 1.
    let bomb = deflated_zeros(4096);
    assert!(bomb.len() < 8 << 20);
    let member = Member { name: "logic-1-1", method: 8, data: bomb, declared: 1 << 20 };
    let path = dir.file("bomb.sr", &sr(LOGIC_META, vec![member]));
    assert_limit(&path, &["logic-1-1", "1048576 bytes"]);
}

#[test]
fn sr_analog_member_over_the_sample_limit_is_refused_unread() {
    let dir = TempDir::new("sranalog");
    // 3 GiB of zeros declared honestly: 768 Mi samples > MAX_ANALOG_SAMPLES (128 Mi).
    let meta = "[device 1]\nsamplerate=1 MHz\ntotal analog=1\nanalog1=A0\n";
    let member = Member { name: "analog-1-1-1", method: 8, data: deflated_zeros(3072), declared: 3 << 30 };
    let path = dir.file("analog.sr", &sr(meta, vec![member]));
    assert_limit(
        &path,
        &["analog samples", "A0", &latscope_importers::sigrok::MAX_ANALOG_SAMPLES.to_string()],
    );
}

#[test]
fn sr_absurd_metadata_numbers_are_refused_or_bounded() {
    let dir = TempDir::new("srmeta");
    let data = || vec![Member { name: "logic-1-1", method: 0, data: vec![0, 1, 0, 1], declared: 4 }];
    for (name, unitsize) in [("unitsize_huge.sr", "99999999999999999999"), ("unitsize_big.sr", "1000000")] {
        let meta = LOGIC_META.replace("unitsize=1", &format!("unitsize={unitsize}"));
        let path = dir.file(name, &sr(&meta, data()));
        let out = latscope(&["info", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains(name) && err.contains("unitsize"), "{err}");
    }
    // A huge probe count is clamped to the sample word (8 bits here), not allocated.
    let meta = LOGIC_META.replace("total probes=8", "total probes=18446744073709551615");
    let path = dir.file("probes.sr", &sr(&meta, data()));
    let out = latscope(&["info", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tracks = v["sources"][0]["tracks"].as_array().unwrap();
    assert_eq!(tracks.len(), 1);
    assert_eq!(tracks[0]["count"].as_u64(), Some(3), "0,1,0,1 has three edges");
    // An absurd samplerate is refused with the key named.
    let meta = LOGIC_META.replace("samplerate=1 MHz", "samplerate=99999999999999999999999 EHz");
    let path = dir.file("rate.sr", &sr(&meta, data()));
    let out = latscope(&["info", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("rate.sr") && stderr(&out).contains("samplerate"), "{}", stderr(&out));
}

// ---------------------------------------------------------------------------------------
// Endless lines.

#[test]
fn endless_ftrace_line_is_refused_or_skipped_with_its_line_number() {
    let dir = TempDir::new("ftraceline");
    let only = dir.0.join("endless.txt");
    write_endless(&only, b"# tracer: nop\n#\n", b'x', ENDLESS, b"");
    assert_limit(&only, &["line 3", "1048576 bytes"]);

    // Valid events around the endless line load; the warning gives its line.
    let ev = |t: &str| format!("            bash-1977  [000] .... {t}: sys_close <-system_call_fastpath\n");
    let head = format!("# tracer: nop\n#\n{}{}", ev("17284.993652"), ev("17284.993653"));
    let tail = format!("\n{}", ev("17284.993700"));
    let mixed = dir.0.join("mixed.txt");
    write_endless(&mixed, head.as_bytes(), b'x', ENDLESS, tail.as_bytes());
    let w = json_warnings(&mixed);
    assert!(w.iter().any(|w| w.starts_with("line 5:") && w.contains("longer than")), "{w:?}");
    assert_eq!(json_events(&mixed), 3);
}

#[test]
fn endless_csv_lines_are_refused_in_the_header_and_skipped_in_the_data() {
    let dir = TempDir::new("csvline");
    // Millions of columns: the header line alone is longer than the line limit.
    let header = dir.0.join("columns.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&header).unwrap());
    f.write_all(b"Time [s]").unwrap();
    for i in 0..3_000_000 {
        write!(f, ",C{i}").unwrap();
    }
    f.write_all(b"\n0.0,1\n").unwrap();
    f.flush().unwrap();
    drop(f);
    assert_limit(&header, &["CSV header line", "line 1", "1048576 bytes"]);

    let data = dir.0.join("endless.csv");
    write_endless(&data, b"Time [s], Channel 0\n0.0, 1\n", b'7', ENDLESS, b"\n2.0, 0\n");
    let w = json_warnings(&data);
    assert!(w.iter().any(|w| w.starts_with("line 3:") && w.contains("longer than")), "{w:?}");
}

#[test]
fn endless_vcd_token_and_unterminated_declaration_are_refused() {
    let dir = TempDir::new("vcdline");
    let path = dir.0.join("endless.vcd");
    write_endless(&path, b"$timescale 1ns $end\n$comment ", b'x', ENDLESS, b" $end\n");
    assert_limit(&path, &["VCD token", "line 2", "1048576 bytes"]);

    // A `$var` with no `$end` would otherwise collect the whole file as tokens.
    let mut text = b"$timescale 1ns $end\n$var wire 1 ! x\n".to_vec();
    for _ in 0..10_000 {
        text.extend_from_slice(b"#1 1! ");
    }
    let path = dir.file("noend.vcd", &text);
    assert_limit(&path, &["VCD declaration", "4096"]);
}

#[test]
fn deep_vcd_scopes_and_long_scope_paths_are_refused() {
    let dir = TempDir::new("vcdscope");
    let mut deep = b"$timescale 1ns $end\n".to_vec();
    for _ in 0..1_000_000 {
        deep.extend_from_slice(b"$scope module a $end\n");
    }
    deep.extend_from_slice(b"$var wire 1 ! x $end\n$enddefinitions $end\n#0\n1!\n");
    let path = dir.file("deep.vcd", &deep);
    assert_limit(&path, &["VCD scope nesting", "line 1026", "1024 levels"]);

    let long_name = "n".repeat(40_000);
    let text = format!(
        "$timescale 1ns $end\n$scope module {long_name} $end\n$scope module {long_name} $end\n\
         $var wire 1 ! x $end\n$enddefinitions $end\n#0\n1!\n"
    );
    let path = dir.file("longpath.vcd", text.as_bytes());
    assert_limit(&path, &["VCD scope path", "line 3", "65536 bytes"]);
}

#[test]
fn absurd_vcd_timescale_and_times_do_not_overflow() {
    let dir = TempDir::new("vcdtime");
    let text = "$timescale 1000000000000000000000000000 s $end\n$scope module a $end\n\
        $var wire 1 ! x $end\n$upscope $end\n$enddefinitions $end\n#0\n1!\n\
        #99999999999999999999999999\n0!\n#18446744073709551615\n0!\n";
    let path = dir.file("timescale.vcd", text.as_bytes());
    let w = json_warnings(&path);
    assert!(w.iter().any(|w| w.contains("line 1") && w.contains("unusable $timescale")), "{w:?}");
    assert!(w.iter().any(|w| w.contains("line 8") && w.contains("bad timestamp")), "{w:?}");

    // The largest accepted tick times the largest tick count saturates instead of wrapping.
    let text = "$timescale 100 s $end\n$timezero 9223372036854775807 $end\n$var wire 1 ! x $end\n\
        $enddefinitions $end\n#0\n1!\n#18446744073709551615\n0!\n";
    let path = dir.file("saturate.vcd", text.as_bytes());
    let out = latscope(&["info", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

// ---------------------------------------------------------------------------------------
// trace.dat headers with absurd sizes, from a real recording.

fn patched(src: &str, at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut data = std::fs::read(root().join(src)).unwrap();
    data[at..at + bytes.len()].copy_from_slice(bytes);
    data
}

#[test]
fn tracedat_absurd_header_sizes_are_refused_with_their_offset() {
    let dir = TempDir::new("tracedat");
    let v6 = "samples/ftrace/blk_read_v6.dat";
    let v7 = "samples/ftrace/blk_read_v7_zstd.dat";
    /// (file name, source, offset, bytes, expected fragments)
    type Case = (&'static str, &'static str, usize, Vec<u8>, &'static [&'static str]);
    let cases: [Case; 4] = [
        (
            "page_size.dat",
            v6,
            14,
            u32::MAX.to_le_bytes().to_vec(),
            &["byte offset 14", "page size 4294967295"],
        ),
        ("tiny_page.dat", v6, 14, 16u32.to_le_bytes().to_vec(), &["byte offset 14", "page size 16"]),
        ("header_page.dat", v6, 30, u64::MAX.to_le_bytes().to_vec(), &["byte offset", "header_page"]),
        ("options.dat", v7, 30, u64::MAX.to_le_bytes().to_vec(), &["byte offset"]),
    ];
    for (name, src, at, bytes, expect) in cases {
        let path = dir.file(name, &patched(src, at, &bytes));
        let out = latscope(&["info", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(name), "{err}");
        for e in expect {
            assert!(err.contains(e), "{name}: missing {e:?} in {err}");
        }
    }
    // v6 keeps its CPU count just before the `options  ` tag; 2^32-1 CPUs cannot have a
    // table in a 160 KB file, and no table is allocated to find that out.
    let data = std::fs::read(root().join(v6)).unwrap();
    let at = data.windows(10).position(|w| w == b"options  \0").unwrap() - 4;
    let path = dir.file("cpus.dat", &patched(v6, at, &u32::MAX.to_le_bytes()));
    let out = latscope(&["info", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("cpus.dat: byte offset") && err.contains("4294967295 CPUs"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Partial loads: real recordings cut short or damaged in the middle load what is valid and
// say where the damage is (`warnings` in `info --json`).

/// The corpus file `REL` (samples/corpus).
fn corpus(rel: &str) -> PathBuf {
    latscope_testkit::corpus(rel)
}

/// `len` bytes of `data`, moved back so the cut never falls right after a line break.
fn cut_point(data: &[u8], percent: usize) -> usize {
    let mut cut = data.len() * percent / 100;
    while cut > 1 && data[cut - 1] == b'\n' {
        cut -= 1;
    }
    cut
}

#[test]
fn truncated_text_captures_load_their_valid_part_and_say_where_they_end() {
    let dir = TempDir::new("cuttext");
    let sources = vec![
        root().join("samples/ftrace/blk_read.txt"),
        root().join("samples/csv/demo_4ch_dedup.csv"),
        corpus("vcd/sigrok_vectors_integers.vcd"),
    ];
    for src in sources {
        let data = std::fs::read(&src).unwrap();
        let full = json_events(&src);
        for percent in [33, 50, 90] {
            let cut = cut_point(&data, percent);
            let name = format!("cut{percent}_{}", src.file_name().unwrap().to_str().unwrap());
            let path = dir.file(&name, &data[..cut]);
            let events = json_events(&path);
            assert!(events > 0 && events < full, "{name}: {events} of {full}");
            let line = data[..cut].iter().filter(|&&b| b == b'\n').count() + 1;
            let expect = format!("line {line}: the file ends without a line break at byte {cut}");
            let w = json_warnings(&path);
            assert!(w.iter().any(|w| w.starts_with(&expect)), "{name}: {expect:?} not in {w:?}");
        }
    }
}

#[test]
fn truncated_tracedat_v6_loads_complete_pages_and_v7_says_why_it_cannot() {
    let dir = TempDir::new("cutdat");
    let src = root().join("samples/ftrace/blk_read_v6.dat");
    let data = std::fs::read(&src).unwrap();
    let full = json_events(&src);
    let mut last = 0;
    for percent in [33, 50, 90] {
        let cut = data.len() * percent / 100;
        let path = dir.file(&format!("cut{percent}.dat"), &data[..cut]);
        let events = json_events(&path);
        assert!(events > last && events < full, "{percent}%: {events} of {full}");
        last = events;
        let w = json_warnings(&path);
        let expect = format!("byte {cut}: the file ends inside CPU");
        assert!(w.iter().any(|w| w.starts_with(&expect) && w.contains("truncated")), "{w:?}");
    }
    // trace-cmd v7 writes the section index last, so a cut v7 file cannot be read at all:
    // the error says so and where the index should have been.
    for src in ["samples/ftrace/blk_read_v7_zstd.dat", "samples/ftrace/markers_around_requests.dat"] {
        let data = std::fs::read(root().join(src)).unwrap();
        let path = dir.file("cut_v7.dat", &data[..data.len() / 2]);
        let out = latscope(&["info", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{src}");
        let err = stderr(&out);
        assert!(err.contains("cut_v7.dat: byte offset ") && err.contains("truncated file?"), "{err}");
    }
}

/// Inverts 300 bytes in the middle of `data`.
fn damaged(data: &[u8]) -> (Vec<u8>, usize) {
    let mut d = data.to_vec();
    let mid = d.len() / 2;
    for b in &mut d[mid..(mid + 300).min(data.len())] {
        *b ^= 0xff;
    }
    (d, mid)
}

#[test]
fn damage_in_the_middle_skips_only_the_damaged_records() {
    let dir = TempDir::new("damage");
    let sources = vec![
        root().join("samples/ftrace/blk_read.txt"),
        root().join("samples/csv/demo_4ch_dedup.csv"),
        root().join("samples/ftrace/blk_read_v6.dat"),
        root().join("samples/ftrace/markers_around_requests.dat"),
        corpus("vcd/sigrok_vectors_integers.vcd"),
    ];
    for src in sources {
        let data = std::fs::read(&src).unwrap();
        let full = json_events(&src);
        let (bad, mid) = damaged(&data);
        let name = format!("damaged_{}", src.file_name().unwrap().to_str().unwrap());
        let path = dir.file(&name, &bad);
        let events = json_events(&path);
        // Most of the file survives; the damage is reported with a position near it.
        assert!(events * 10 >= full * 7 && events <= full, "{name}: {events} of {full}");
        let w = json_warnings(&path);
        let mid_line = data[..mid].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        let near = |w: &str| {
            let n: u64 = w
                .strip_prefix("line ")
                .or_else(|| w.strip_prefix("byte offset "))
                .or_else(|| w.strip_prefix("byte "))
                .or_else(|| Some(w.split_once(": byte offset ")?.1))
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                .unwrap_or(u64::MAX);
            // A binary format reports the start of the damaged page, chunk or section.
            let (lo, hi) = if w.starts_with("line ") {
                (mid_line.saturating_sub(2), mid_line + 10)
            } else {
                (1, mid as u64 + 300)
            };
            (lo..=hi).contains(&n)
        };
        assert!(w.iter().any(|w| near(w)), "{name}: no warning near byte {mid} / line {mid_line}: {w:?}");
    }
}

#[test]
fn damaged_sr_chunk_keeps_the_samples_before_it() {
    let src = corpus("sigrok/lazysig_spi_24mhz.sr");
    let dir = TempDir::new("damagesr");
    let data = std::fs::read(&src).unwrap();
    let full = json_events(&src);
    let (bad, _) = damaged(&data);
    let path = dir.file("damaged.sr", &bad);
    let events = json_events(&path);
    assert!(events > 0 && events < full, "{events} of {full}");
    let w = json_warnings(&path);
    assert!(
        w.iter().any(|w| w.starts_with("byte offset ")
            && w.contains("is corrupt after")
            && w.contains("not loaded")),
        "{w:?}"
    );
}

#[test]
fn truncated_sr_rebuilds_its_member_directory_and_loads_the_complete_chunks() {
    let dir = TempDir::new("cutsr");
    let src = root().join("samples/sigrok/demo_4ch_1mhz.sr");
    let data = std::fs::read(&src).unwrap();
    let full = json_events(&src);
    let mut last = 0;
    for percent in [33, 50] {
        let cut = data.len() * percent / 100;
        let path = dir.file(&format!("cut{percent}.sr"), &data[..cut]);
        let events = json_events(&path);
        assert!(events > last && events < full, "{percent}%: {events} of {full}");
        last = events;
        let w = json_warnings(&path);
        let expect =
            format!("the file is cut short or its member directory is damaged (file size {cut} bytes)");
        assert!(w.iter().any(|w| w.starts_with(&expect) && w.contains("is incomplete")), "{w:?}");
        assert!(w.iter().any(|w| w.starts_with("byte offset ") && w.contains("not loaded")), "{w:?}");
    }
    // Cut inside the first member's header: nothing says it is a sigrok session any more.
    let path = dir.file("cut_header.sr", &data[..20]);
    let out = latscope(&["info", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("cut_header.sr") && err.contains("not a supported format"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Each class of bad input, as a user meets it.

#[test]
fn each_error_class_names_the_file_and_what_was_expected() {
    let dir = TempDir::new("classes");
    let verify = |path: &Path, out: Output, expect: &[&str]| {
        assert_eq!(out.status.code(), Some(1), "{}: {}", path.display(), stderr(&out));
        let err = stderr(&out);
        assert!(err.starts_with("latscope: ") && err.contains(path.to_str().unwrap()), "{err}");
        for e in expect {
            assert!(err.contains(e), "{}: missing {e:?} in {err}", path.display());
        }
        assert!(!err.contains("panicked"), "{err}");
    };
    let check =
        |path: &Path, expect: &[&str]| verify(path, latscope(&["info", path.to_str().unwrap()]), expect);
    check(&dir.0.join("missing.dat"), &["cannot read", "No such file"]);
    check(&dir.0, &["cannot read", "directory"]);
    check(&dir.file("empty.txt", b""), &["not a supported format", "ftrace text", "trace.dat", "VCD", "CSV"]);
    check(
        &dir.file("notes.txt", b"hello world\nthis is not a trace\n"),
        &["not a supported format", "sigrok"],
    );
    // Truncated inside the fixed header, and a header with a wrong field.
    let dat = std::fs::read(root().join("samples/ftrace/blk_read_v6.dat")).unwrap();
    check(&dir.file("header_cut.dat", &dat[..20]), &["byte offset 18", "header_page", "truncated file?"]);
    let mut bad_endian = dat.clone();
    bad_endian[12] = 7;
    check(&dir.file("endian.dat", &bad_endian), &["byte offset 12", "endian"]);
    let mut version = dat;
    version[10] = b'9';
    check(&dir.file("version.dat", &version), &["byte offset 10", "version", "6 and 7"]);
    // Corrupt text: a VCD with no variables says what it expected, at which line.
    check(&dir.file("empty.vcd", b"$timescale 1ns $end\n$comment cut"), &["line 2", "no variables"]);

    // Root reads any file, so as root latscope runs without the capabilities that let it
    // (setpriv, util-linux, drops them from its bounding set): the case is checked either way.
    let unreadable = dir.file("unreadable.txt", b"# tracer: nop\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&unreadable, std::fs::Permissions::from_mode(0o000)).unwrap();
        let out = if std::fs::read(&unreadable).is_ok() {
            let out = std::process::Command::new("setpriv")
                .args([
                    "--bounding-set=-dac_override,-dac_read_search",
                    env!("CARGO_BIN_EXE_latscope"),
                    "info",
                ])
                .arg(&unreadable)
                .output()
                .unwrap_or_else(|e| {
                    panic!("needs setpriv (util-linux) to read a file as root without DAC override: {e}")
                });
            let err = stderr(&out);
            assert!(
                !err.starts_with("setpriv:"),
                "needs setpriv allowed to drop capabilities (CAP_SETPCAP): {err}"
            );
            out
        } else {
            latscope(&["info", unreadable.to_str().unwrap()])
        };
        verify(&unreadable, out, &["cannot read", "Permission denied"]);
    }
}

#[test]
fn info_never_modifies_its_input() {
    let mut files = vec![
        root().join("samples/ftrace/blk_read.txt"),
        root().join("samples/ftrace/blk_read_v7_zstd.dat"),
        root().join("samples/csv/demo_4ch_dedup.csv"),
        corpus("vcd/sigrok_vectors_integers.vcd"),
    ];
    let dir = TempDir::new("readonly");
    // A damaged file too: the error path must not touch it either.
    let data = std::fs::read(root().join("samples/ftrace/blk_read_v6.dat")).unwrap();
    files.push(dir.file("damaged.dat", &damaged(&data).0));
    files.push(dir.file("cut.dat", &data[..100]));
    for path in files {
        let before = std::fs::read(&path).unwrap();
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let _ = latscope(&["info", path.to_str().unwrap(), "--json"]);
        assert_eq!(std::fs::read(&path).unwrap(), before, "{}", path.display());
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified, "{}", path.display());
    }
}

/// A full disk (`/dev/full`): the write's error names what was being written and why, the
/// cause once, and the exit code is 1.
#[test]
fn a_full_disk_is_reported_once_with_its_cause() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let capture = root().join("samples/sigrok/sd_mode_imx6_snippet.sr");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("decode")
        .arg(&capture)
        .args(["--decoder", "sd:clk=CLK,cmd=CMD"])
        .stdout(full)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let why = std::io::Error::from_raw_os_error(28).to_string();
    assert_eq!(err.matches(&why).count(), 1, "{err}");
    assert!(err.starts_with("latscope: ") && err.contains("the annotations"), "{err}");
}
