//! Feeds arbitrary bytes to the ftrace text importer: it must never panic, whatever the
//! input, and chunked parsing must agree with sequential parsing on event counts.
#![no_main]

use latscope_importers::{LoadControl, ftrace_text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ctl = LoadControl::new();
    let one = ftrace_text::parse_with_chunks(data, &ctl, 1);
    let many = ftrace_text::parse_with_chunks(data, &ctl, 7);
    match (one, many) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.events.len(), b.events.len());
            assert_eq!(a.records, b.records);
            assert_eq!(a.diagnostics.malformed, b.diagnostics.malformed);
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!("chunking changed the outcome: {:?} vs {:?}", a.is_ok(), b.is_ok()),
    }
});
