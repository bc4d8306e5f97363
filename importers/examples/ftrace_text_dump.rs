//! Loads ftrace text files and prints what the importer made of them: event and span
//! counts, diagnostics and, with `-v`, every event. Also prints the import throughput.
//!
//! `cargo run --release -p latscope-importers --example ftrace_text_dump -- [-v] [--chunks N] [--repeat N] FILE...`

use latscope_importers::{LoadControl, ftrace_text};
use std::time::Instant;

fn main() {
    let mut verbose = false;
    let mut chunks: Option<usize> = None;
    let mut repeat = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-v" {
            verbose = true;
            continue;
        }
        if arg == "--chunks" {
            chunks = args.next().and_then(|n| n.parse().ok());
            continue;
        }
        if arg == "--repeat" {
            repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
            continue;
        }
        // Mapped, as `latscope` reads files.
        let input = match latscope_importers::Input::open(std::path::Path::new(&arg)) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{arg}: {e}");
                continue;
            }
        };
        let data = input.bytes();
        // Best of `repeat` runs: the input is already in memory, only the import is timed.
        let mut secs = f64::MAX;
        let mut result = None;
        for _ in 0..repeat.max(1) {
            let t0 = Instant::now();
            let r = match chunks {
                Some(n) => ftrace_text::parse_with_chunks(data, &LoadControl::new(), n),
                None => ftrace_text::parse_releasing(data, &LoadControl::new(), &|r| input.release(r)),
            };
            secs = secs.min(t0.elapsed().as_secs_f64());
            result = Some(r);
        }
        let Some(result) = result else { continue };
        match result {
            Err(e) => println!("{arg}: ERROR {e}"),
            Ok(src) => {
                println!(
                    "{arg}: {} events, {} records, {} spans, {} malformed, {} gaps, {:.1} MB/s ({} bytes in {:.3} s)",
                    src.events.len(),
                    src.records(),
                    src.spans.iter().map(|s| s.len()).sum::<usize>(),
                    src.diagnostics.malformed,
                    src.diagnostics.gaps.len(),
                    data.len() as f64 / secs / 1e6,
                    data.len(),
                    secs
                );
                if !src.events.is_empty() {
                    println!(
                        "  memory: {:.1} bytes/event in the table, {} KiB of strings",
                        src.events.heap_bytes() as f64 / src.events.len() as f64,
                        src.strings.heap_bytes() / 1024
                    );
                }
                for w in src.diagnostics.summary() {
                    println!("  ! {w}");
                }
                println!("  metadata: {:?}", src.metadata);
                if verbose {
                    for e in src.events.iter() {
                        let fields: Vec<String> = e
                            .fields()
                            .map(|(n, v)| {
                                let v = match v {
                                    latscope_model::FieldValue::Str(s) => {
                                        format!("{:?}", src.strings.resolve(s))
                                    }
                                    other => format!("{other:?}"),
                                };
                                format!("{}={v}", src.strings.resolve(n))
                            })
                            .collect();
                        println!(
                            "  {} cpu{} {}-{} {} {} {}{}",
                            e.ts(),
                            e.cpu(),
                            src.strings.resolve(e.comm()),
                            e.pid(),
                            e.flags().render(),
                            src.strings.resolve(e.name()),
                            fields.join(" "),
                            if e.stack().is_some() { " [stack]" } else { "" }
                        );
                    }
                    for s in &src.spans {
                        for i in 0..s.len() {
                            println!(
                                "  span cpu{} d{} {}..{} {}",
                                s.lane[i],
                                s.depth[i],
                                s.start[i],
                                s.end[i],
                                src.strings.resolve(s.label[i])
                            );
                        }
                    }
                }
            }
        }
    }
}
