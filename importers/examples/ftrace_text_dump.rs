//! Loads ftrace text files and prints what the importer made of them: event and span
//! counts, diagnostics and, with `-v`, every event. Also prints the import throughput.
//!
//! `cargo run --release -p latscope-importers --example ftrace_text_dump -- [-v] FILE...`

use latscope_importers::{LoadControl, ftrace_text};
use std::time::Instant;

fn main() {
    let mut verbose = false;
    for arg in std::env::args().skip(1) {
        if arg == "-v" {
            verbose = true;
            continue;
        }
        let data = match std::fs::read(&arg) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{arg}: {e}");
                continue;
            }
        };
        let t0 = Instant::now();
        let result = ftrace_text::parse(&data, &LoadControl::new());
        let secs = t0.elapsed().as_secs_f64();
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
                                    latscope_analysis::model::FieldValue::Str(s) => {
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
