//! Fuzzes the CSV dialect detector and, when it recognises the bytes, the importer it
//! picks: neither may panic, and memory must stay bounded (run with -rss_limit_mb).
#![no_main]

use latscope_importers::{LoadControl, csv, import_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(kind) = csv::sniff(data) {
        let _ = import_bytes(kind.format(), data, &LoadControl::new());
    }
});
