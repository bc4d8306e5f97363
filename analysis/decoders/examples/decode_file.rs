//! Decodes a capture as `latscope decode` does, without the app, and prints how long the
//! load and the decode took, for profiling the decoders:
//! `cargo run --release -p latscope-decoders --example decode_file -- FILE SPEC [--model]`
//!
//! A `.sr` capture is read as sample numbers (`sigrok::parse_logic_ticks`), as the CLI reads
//! it; `--model` loads it into the trace model first, as the workbench and `report` do.

use latscope_decoders::{Inputs, Line};
use latscope_importers::LoadControl;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, spec, model) = match &args[..] {
        [p, s] => (p, s, false),
        [p, s, m] if m == "--model" => (p, s, true),
        _ => {
            eprintln!("usage: decode_file FILE SPEC [--model]");
            std::process::exit(2);
        }
    };
    let t0 = Instant::now();
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    };
    let data = std::fs::read(path).unwrap_or_else(|e| fail(&e));
    let ticks = if model {
        None
    } else {
        latscope_importers::sigrok::parse_logic_ticks(&data, &LoadControl::new()).ok()
    };
    let (decoded, t1) = match ticks {
        Some(ticks) => {
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
        None => {
            let source = latscope_importers::open(std::path::Path::new(path), &LoadControl::new())
                .unwrap_or_else(|e| fail(&e));
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
        "{path}: {} annotations; load {:.1} ms, decode {:.1} ms",
        d.annotations.len(),
        (t1 - t0).as_secs_f64() * 1e3,
        (t2 - t1).as_secs_f64() * 1e3
    );
    // Freeing page by page would only add time: the process ends here.
    std::mem::forget(d);
}
