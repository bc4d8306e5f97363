//! Loads trace.dat files and prints what the importer found, with the load time:
//! `cargo run --release -p latscope-importers --example tracedat_info -- FILE...`
//! (`--events N` also prints the first N events).

use latscope_importers::{Input, LoadControl, tracedat};
use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut show = 0usize;
    if let Some(i) = args.iter().position(|a| a == "--events") {
        show = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(10);
        args.drain(i..(i + 2).min(args.len()));
    }
    for path in args {
        let t0 = Instant::now();
        // Memory-mapped, as `latscope_importers::open` reads files.
        let input = match Input::open(std::path::Path::new(&path)) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let res = tracedat::parse(input.bytes(), &LoadControl::new());
        let dt = t0.elapsed();
        match res {
            Err(e) => println!("{path}: error: {e}"),
            Ok(src) => {
                println!("{path}: {} events in {:.3} ms", src.events.len(), dt.as_secs_f64() * 1e3);
                for (k, v) in &src.metadata {
                    println!("  {k}: {v}");
                }
                println!("  origin: {:?}", src.origin);
                for w in src.diagnostics.summary() {
                    println!("  warning: {w}");
                }
                for ev in src.events.iter().take(show) {
                    let fields: Vec<String> =
                        ev.fields().map(|(n, v)| format!("{}={v:?}", src.strings.resolve(n))).collect();
                    println!(
                        "  {:>16}-{:<6} [{:03}] {:.9} {} {}: {}",
                        src.strings.resolve(ev.comm()),
                        ev.pid(),
                        ev.cpu(),
                        src.origin.to_source_seconds(ev.ts()),
                        ev.flags().render(),
                        src.strings.resolve(ev.name()),
                        fields.join(" ")
                    );
                }
            }
        }
    }
}
