//! Whole `.sr` archives: zip container, members and logic/analog chunk decoding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = latscope_importers::sigrok::parse(data, &latscope_importers::LoadControl::new());
});
