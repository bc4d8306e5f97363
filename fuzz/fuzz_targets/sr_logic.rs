//! The `.sr` logic reader's fast path (`importers/src/sigrok/logic.rs`): parallel inflate,
//! repeated chunks scanned once, flips found a word of samples at a time. The input is
//! turned into a well-formed capture (so the fast path is reached, not refused at the zip
//! layer): its first bytes choose the unitsize, the chunk size, which chunks repeat and
//! whether to damage the archive; the rest are the samples. An undamaged capture must load
//! with exactly the edges a sample-by-sample scan of the same bytes finds, and streaming it
//! (`sigrok::read_logic`) must hand on exactly those flips; a damaged one must not panic,
//! and the tracks and the sample numbers must then agree.
#![no_main]

use latscope_importers::sigrok::{self, LogicVisitor};
use latscope_importers::{LoadControl, ParseFailure};
use libfuzzer_sys::fuzz_target;
use std::io::Write;

/// Every flip handed on: (sample, changed, levels), and the first sample.
#[derive(Default)]
struct Recorder {
    first: Option<u64>,
    changes: Vec<(u64, u64, u64)>,
}

impl LogicVisitor for Recorder {
    fn first(&mut self, levels: u64) -> Result<(), ParseFailure> {
        self.first = Some(levels);
        Ok(())
    }
    fn change(&mut self, sample: u64, changed: u64, levels: u64) -> Result<(), ParseFailure> {
        self.changes.push((sample, changed, levels));
        Ok(())
    }
}

fn sample(bytes: &[u8], i: usize, u: usize) -> u64 {
    let mut w = [0u8; 8];
    w[..u].copy_from_slice(&bytes[i * u..i * u + u]);
    u64::from_le_bytes(w)
}

fuzz_target!(|data: &[u8]| {
    let [opts, chunk, repeat, damage, rest @ ..] = data else { return };
    let unitsize = [1usize, 2, 3, 4, 8][usize::from(opts % 5)];
    let stored = opts & 0x08 != 0;
    // Probes enabled: every one, or every other one (bits with no channel).
    let sparse = opts & 0x10 != 0;
    let chunk_bytes = (1 + usize::from(*chunk)) * unitsize;
    // Chunks in file order, with repeats: chunk k once more when bit k % 8 of `repeat` is set.
    let mut members: Vec<&[u8]> = Vec::new();
    for (k, c) in rest.chunks(chunk_bytes).enumerate() {
        members.push(c);
        if (repeat >> (k % 8)) & 1 == 1 && c.len() == chunk_bytes {
            members.push(c);
        }
    }
    let probes = unitsize * 8;
    let enabled: Vec<usize> = (0..probes).filter(|b| !sparse || b % 2 == 0).collect();
    let mut meta = format!(
        "[global]\nsigrok version=0.5.2\n[device 1]\ncapturefile=logic-1\ntotal probes={probes}\nsamplerate=1 MHz\nunitsize={unitsize}\n"
    );
    for &b in &enabled {
        meta.push_str(&format!("probe{}=D{b}\n", b + 1));
    }
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let method = if stored { zip::CompressionMethod::Stored } else { zip::CompressionMethod::Deflated };
        let o = zip::write::SimpleFileOptions::default().compression_method(method);
        let ok = zip.start_file("version", o).is_ok()
            && zip.write_all(b"2").is_ok()
            && zip.start_file("metadata", o).is_ok()
            && zip.write_all(meta.as_bytes()).is_ok()
            && members.iter().enumerate().all(|(i, m)| {
                zip.start_file(format!("logic-1-{}", i + 1), o).is_ok() && zip.write_all(m).is_ok()
            })
            && zip.finish().is_ok();
        if !ok {
            return;
        }
    }
    let mut archive = out.into_inner();
    let ctl = LoadControl::new();
    if *damage != 0 {
        let at = (usize::from(*damage) * 7919) % archive.len();
        archive[at] ^= damage.rotate_left(3) | 1;
        let loaded = sigrok::parse(&archive, &ctl);
        let ticks = sigrok::parse_logic_ticks(&archive, &ctl);
        if let (Ok(src), Ok(ticks)) = (loaded, ticks) {
            for (track, ch) in src.digital.iter().zip(&ticks.channels) {
                assert_eq!((track.initial, track.transitions()), (ch.initial, ch.ticks.len()), "{}", ch.name);
            }
        }
        return;
    }
    let all: Vec<u8> = members.concat();
    let n = all.len() / unitsize;
    let src = sigrok::parse(&archive, &ctl).unwrap_or_else(|e| panic!("a well-formed capture: {e}"));
    assert_eq!(src.digital.len(), enabled.len());
    for (track, &b) in src.digital.iter().zip(&enabled) {
        let level = |i: usize| ((sample(&all, i, unitsize) >> b) & 1) as u8;
        let want: Vec<i64> = (1..n).filter(|&i| level(i) != level(i - 1)).map(|i| i as i64 * 1_000_000).collect();
        if n > 0 {
            assert_eq!(track.initial, level(0), "D{b}");
        }
        assert_eq!(track.times().collect::<Vec<_>>(), want, "D{b}");
    }
    // Streamed with a wanted subset: exactly the flips of those channels.
    let wanted = enabled.iter().step_by(3).fold(0u64, |acc, &b| acc | (1 << b));
    let (rec, end, layout) = sigrok::read_logic(&archive, &ctl, |_| Some((Recorder::default(), wanted)))
        .unwrap_or_else(|e| panic!("a well-formed capture: {e}"))
        .expect("unitsize <= 8 streams");
    assert_eq!(layout.channels.len(), enabled.len());
    assert_eq!(end.samples, n as u64);
    assert_eq!(end.partial_len, all.len() % unitsize);
    let want: Vec<(u64, u64, u64)> = (1..n)
        .filter_map(|i| {
            let (a, s) = (sample(&all, i - 1, unitsize), sample(&all, i, unitsize));
            let d = (a ^ s) & wanted;
            (d != 0).then_some((i as u64, d, s & wanted))
        })
        .collect();
    let got: Vec<(u64, u64, u64)> = rec.changes.iter().map(|&(i, d, s)| (i, d, s & wanted)).collect();
    assert_eq!(got, want);
    assert_eq!(rec.first.map(|f| f & wanted), (n > 0).then(|| sample(&all, 0, unitsize) & wanted));
});
