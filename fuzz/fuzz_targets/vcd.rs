//! The VCD token reader on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = latscope_importers::vcd::parse(data, &latscope_importers::LoadControl::new());
});
