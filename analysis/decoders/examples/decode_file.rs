//! Decodes a capture as `latscope decode` does, without the app, and prints how long it took,
//! for profiling the decoders:
//! `cargo run --release -p latscope-decoders --example decode_file -- FILE SPEC [--ticks|--model]`
//!
//! A `.sr` capture is streamed as the CLI streams it: the decoder is fed each flip as the
//! chunks are inflated and scanned (`sigrok::read_logic`), nothing stored. `--ticks` reads it
//! as sample numbers first (`sigrok::parse_logic_ticks`, every flip of every channel kept);
//! `--model` loads it into the trace model first, as the workbench and `report` do.

use latscope_decoders::{Clock, DecodeError, Decoded, Inputs, Line, StreamDecoder};
use latscope_importers::LoadControl;
use latscope_importers::sigrok::LogicVisitor;
use std::time::Instant;

struct Fed(StreamDecoder);

impl LogicVisitor for Fed {
    fn first(&mut self, levels: u64) -> Result<(), latscope_importers::ParseFailure> {
        self.0.start(levels);
        Ok(())
    }
    fn change(
        &mut self,
        sample: u64,
        changed: u64,
        levels: u64,
    ) -> Result<(), latscope_importers::ParseFailure> {
        self.0.change(sample as i64, changed, levels);
        Ok(())
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, spec, mode) = match &args[..] {
        [p, s] => (p, s, "--stream"),
        [p, s, m] if m == "--model" || m == "--ticks" => (p, s, m.as_str()),
        _ => {
            eprintln!("usage: decode_file FILE SPEC [--ticks|--model]");
            std::process::exit(2);
        }
    };
    let t0 = Instant::now();
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    };
    let data = std::fs::read(path).unwrap_or_else(|e| fail(&e));
    let ctl = LoadControl::new();
    let (decoded, t1): (Result<Decoded, DecodeError>, Instant) = match mode {
        "--stream" => {
            let mut refused = None;
            let read = latscope_importers::sigrok::read_logic(&data, &ctl, |layout| {
                let channels: Vec<(&str, u32)> =
                    layout.channels.iter().map(|(n, b)| (n.as_str(), *b)).collect();
                match StreamDecoder::new(spec, &channels, Clock::Samples(layout.samplerate.unwrap_or(1))) {
                    Ok(d) => {
                        let wanted = d.wanted();
                        Some((Fed(d), wanted))
                    }
                    Err(e) => {
                        refused = Some(e);
                        None
                    }
                }
            })
            .unwrap_or_else(|e| fail(&e));
            if let Some(e) = refused {
                fail(&e);
            }
            let Some((Fed(d), end, _)) = read else { fail(&"not a streamable capture") };
            let t1 = Instant::now();
            (d.finish(end.samples.saturating_sub(1) as i64), t1)
        }
        "--ticks" => {
            let ticks =
                latscope_importers::sigrok::parse_logic_ticks(&data, &ctl).unwrap_or_else(|e| fail(&e));
            let end = ticks.samples.saturating_sub(1) as i64;
            let lines: Vec<Line> = ticks
                .channels
                .into_iter()
                .map(|c| Line::from_ticks(&c.name, c.initial, c.ticks, end))
                .collect();
            let t1 = Instant::now();
            let rate = ticks.samplerate.unwrap_or(1);
            let d = latscope_decoders::decode(spec, &Inputs::of_lines(&lines, rate));
            std::mem::forget(lines);
            (d, t1)
        }
        _ => {
            let source =
                latscope_importers::open(std::path::Path::new(path), &ctl).unwrap_or_else(|e| fail(&e));
            let t1 = Instant::now();
            let rate = source
                .metadata
                .iter()
                .find(|(k, _)| k == "samplerate")
                .and_then(|(_, v)| latscope_importers::sigrok::parse_samplerate(v).ok());
            let d = latscope_decoders::decode(spec, &Inputs::of_source(&source, rate));
            std::mem::forget(source);
            (d, t1)
        }
    };
    let d = decoded.unwrap_or_else(|e| fail(&e));
    let t2 = Instant::now();
    eprintln!(
        "{path}: {} annotations; read {:.1} ms, then decode {:.1} ms ({mode})",
        d.annotations.len(),
        (t1 - t0).as_secs_f64() * 1e3,
        (t2 - t1).as_secs_f64() * 1e3
    );
    // Freeing page by page would only add time: the process ends here.
    std::mem::forget(d);
}
