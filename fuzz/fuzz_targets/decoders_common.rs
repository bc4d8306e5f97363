//! Shared by the decoder fuzz targets and by the decoders' regression test
//! (`analysis/decoders/tests/fuzz_regressions.rs`, which runs every kept input through the
//! same functions): fuzz bytes become a logic capture (each byte one sample of eight
//! channels D0..D7 at 1 MHz, the first byte choosing options), and every decoded
//! annotation must have a span that does not run backwards.
#![allow(dead_code)] // each target uses one of the entry points

use latscope_decoders::{Clock, Inputs, StreamDecoder, decode};
use latscope_model::{DigitalTrack, PS_PER_US, Source, SourceKind};

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
/// (a bad option), panics and backwards spans are not. Sampled, the capture is also decoded
/// as a stream, each sample's changes fed as a logic analyzer would stream them
/// ([`StreamDecoder`]), and both roads must give the same annotations and errors.
pub fn run(src: &Source, spec: &str, sampled: bool) {
    let rate = sampled.then_some(1_000_000);
    let d = decode(spec, &Inputs::of_source(src, rate));
    if let Ok(d) = &d {
        for a in &d.annotations {
            assert!(a.start <= a.end, "{spec}: {a:?}");
        }
    }
    if sampled {
        let streamed = streamed(src, spec);
        match (&d, &streamed) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.annotations, b.annotations, "{spec}: streamed");
                assert_eq!(a.errors, b.errors, "{spec}: streamed");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{spec}"),
            (a, b) => panic!("{spec}: whole tracks {:?}, streamed {:?}", a.as_ref().err(), b.as_ref().err()),
        }
    }
}

/// `spec` on the capture's samples (1 MHz, one a microsecond) fed change by change.
fn streamed(src: &Source, spec: &str) -> Result<latscope_decoders::Decoded, latscope_decoders::DecodeError> {
    let names: Vec<String> = src.digital.iter().map(|d| d.name.clone()).collect();
    let channels: Vec<(&str, u32)> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i as u32)).collect();
    let mut d = StreamDecoder::new(spec, &channels, Clock::Samples(1_000_000))?;
    let level = |t: latscope_model::Ps| {
        src.digital.iter().enumerate().fold(0u64, |acc, (i, tr)| acc | (u64::from(tr.level_at(t) & 1) << i))
    };
    let samples = src.digital.first().map_or(0, |tr| tr.end / PS_PER_US + 1);
    let mut prev = level(0);
    d.start(prev);
    for i in 1..samples {
        let now = level(i * PS_PER_US);
        if now != prev {
            d.change(i, now ^ prev, now);
        }
        prev = now;
    }
    d.finish(samples.saturating_sub(1))
}

/// UART: any baud (measured or given), parity, bit counts and inversion.
pub fn uart(data: &[u8]) {
    let Some((&opts, samples)) = data.split_first() else { return };
    let src = capture(samples);
    let baud = ["auto", "9600", "115200", "250000", "333333", "1000000"][usize::from(opts % 6)];
    let parity = ["none", "even", "odd"][usize::from((opts >> 3) % 3)];
    let bits = 5 + (opts >> 5) % 5;
    for invert in [0, 1] {
        let spec = format!("uart:rx=D0,tx=D1,baud={baud},parity={parity},bits={bits},invert={invert}");
        run(&src, &spec, opts & 0x80 == 0);
    }
}

/// SPI in every mode, bit order and word size, with and without CS; SD over SPI on it.
pub fn spi(data: &[u8]) {
    let Some((&opts, samples)) = data.split_first() else { return };
    let src = capture(samples);
    let cpol = opts & 1;
    let cpha = (opts >> 1) & 1;
    let order = if opts & 4 == 0 { "msb" } else { "lsb" };
    let bits = 1 + (opts >> 3) % 16;
    let cs = if opts & 0x80 == 0 { ",cs=D3" } else { "" };
    run(
        &src,
        &format!("spi:clk=D0,mosi=D1,miso=D2{cs},cpol={cpol},cpha={cpha},order={order},bits={bits}"),
        true,
    );
    run(&src, &format!("spi:clk=D0,mosi=D1,miso=D2{cs},cpol={cpol},cpha={cpha} | sd-spi"), opts & 0x40 == 0);
}

/// I2C with SCL and SDA either way round.
pub fn i2c(data: &[u8]) {
    let Some((&opts, samples)) = data.split_first() else { return };
    let src = capture(samples);
    run(&src, "i2c:scl=D0,sda=D1", opts & 1 == 0);
    run(&src, "i2c:scl=D1,sda=D0", opts & 1 == 0);
}

/// SD native mode, 1- and 4-bit, any block length. D0 is CLK: a clock on every other
/// sample; CMD (D1) carries CMD17/18/24/25 tokens where the input asks for them, so the
/// DAT states are reached (random bytes rarely make a valid token).
pub fn sd(data: &[u8]) {
    let Some((&opts, samples)) = data.split_first() else { return };
    let mut samples = samples.to_vec();
    let index = [17u8, 18, 24, 25, 12, 23, 6, 55][usize::from(opts % 8)];
    let token = latscope_decoders::sd::encode::token48(true, index, u32::from(opts));
    for (i, s) in samples.iter_mut().enumerate() {
        *s = (*s & !1) | u8::from(i % 2 == 1);
        if opts & 0x80 != 0 && i / 2 < token.len() {
            *s = (*s & !2) | (token[i / 2] << 1);
        }
    }
    let src = capture(&samples);
    let block = 1 + usize::from(opts) % 64;
    run(&src, &format!("sd:clk=D0,cmd=D1,dat0=D2,dat1=D3,dat2=D4,dat3=D5,block={block}"), true);
    run(&src, &format!("sd:clk=D0,cmd=D1,dat0=D2,block={block}"), opts & 0x40 == 0);
}
