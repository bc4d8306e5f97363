//! Opens captures of any format as `latscope_importers::open` (and so `latscope info`)
//! opens them, and prints the events found and the load time, for measuring an importer
//! without the app: `cargo run --release -p latscope-importers --example import_info -- FILE...`

use latscope_importers::LoadControl;
use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let t0 = Instant::now();
        match latscope_importers::open(std::path::Path::new(&path), &LoadControl::new()) {
            Err(e) => println!("{path}: error: {e}"),
            Ok(src) => {
                let dt = t0.elapsed();
                println!(
                    "{path}: {} events, {} span tracks, {} analog tracks in {:.3} ms",
                    src.events.len(),
                    src.spans.len(),
                    src.analog.len(),
                    dt.as_secs_f64() * 1e3
                );
                for w in src.diagnostics.summary() {
                    println!("  warning: {w}");
                }
                // The process ends here: freeing the source page by page would only add time.
                std::mem::forget(src);
            }
        }
    }
}
