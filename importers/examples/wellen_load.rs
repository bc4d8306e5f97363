//! The reference for the VCD and FST rows of bench/peers.sh: a waveform loaded by wellen's own
//! loader alone (header, body, every signal's changes), as a waveform viewer built on wellen
//! loads it, and nothing else done with it. Prints the signals and value changes loaded.
//!
//! `cargo build --release -p latscope-importers --example wellen_load`, then
//! `target/release/examples/wellen_load FILE.vcd|FILE.fst`.

use std::io::Cursor;
use wellen::{LoadOptions, SignalRef, viewers};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path)?;
        let options = LoadOptions { multi_thread: true, remove_scopes_with_empty_name: false };
        let header = viewers::read_header(Cursor::new(data), &options)?;
        let hierarchy = header.hierarchy;
        let body = viewers::read_body(header.body, &hierarchy, None)?;
        let mut ids: Vec<SignalRef> = hierarchy.all_vars().map(|r| hierarchy[r].signal_ref()).collect();
        ids.sort_unstable_by_key(|s| s.index());
        ids.dedup();
        let mut source = body.source;
        let signals = source.load_signals(&ids, &hierarchy, true);
        let changes: usize = signals.iter().map(|s| s.time_indices().len()).sum();
        println!(
            "{path}: {} signals, {changes} value changes, {} time steps",
            signals.len(),
            body.time_table.len()
        );
        // The process ends here: the loaded signals need not be freed one by one.
        std::mem::forget(signals);
    }
    Ok(())
}
