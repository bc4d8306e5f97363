//! Fuzzes the trace.dat importer: any input must give `Ok` or an error, never a panic,
//! an abort, unbounded memory or a hang. Seed with real files (fuzz/corpus/tracedat).
#![no_main]

use latscope_importers::{LoadControl, tracedat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tracedat::parse(data, &LoadControl::new());
});
