//! Shared by the decoder fuzz targets: fuzz bytes become a logic capture (each byte one
//! sample of eight channels D0..D7 at 1 MHz, the first byte choosing options), and every
//! decoded annotation must have a span that does not run backwards.

use latscope_model::{DigitalTrack, PS_PER_US, Source, SourceKind};
use latscope_decoders::{Inputs, decode};

/// The capture the bytes describe.
pub fn capture(samples: &[u8]) -> Source {
    let mut src = Source::new("fuzz", "sigrok-sr", SourceKind::File);
    for ch in 0..8 {
        let first = samples.first().map_or(0, |b| (b >> ch) & 1);
        let mut d = DigitalTrack::new(format!("D{ch}"), first);
        for (i, b) in samples.iter().enumerate() {
            d.push(i as i64 * PS_PER_US, (b >> ch) & 1);
        }
        d.end = samples.len().saturating_sub(1) as i64 * PS_PER_US;
        src.digital.push(d);
    }
    src
}

/// Decodes `spec` on `src` (at 1 MHz when `sampled`, else in picoseconds): errors are fine
/// (a bad option), panics and backwards spans are not.
pub fn run(src: &Source, spec: &str, sampled: bool) {
    let rate = sampled.then_some(1_000_000);
    if let Ok(d) = decode(spec, &Inputs::of_source(src, rate)) {
        for a in &d.annotations {
            assert!(a.start <= a.end, "{spec}: {a:?}");
        }
    }
}
