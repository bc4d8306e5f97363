//! Fuzzes the Perfetto importer: any input must give `Ok` or an error, never a panic, an
//! abort, unbounded memory or a hang; what loads is sorted by time and its spans end after
//! they start. Seed with real traces (see docs/FUZZING.md).
#![no_main]

use latscope_importers::{LoadControl, perfetto};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = perfetto::looks_like_perfetto(data);
    if let Ok(s) = perfetto::parse(data, &LoadControl::new()) {
        assert!(s.events.is_sorted(), "events sorted by time");
        for t in &s.spans {
            assert!(t.start.iter().zip(&t.end).all(|(a, b)| a <= b), "spans end after they start");
        }
    }
});
