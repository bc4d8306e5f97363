//! The `.sr` metadata key-file and samplerate parsers on arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(meta) = latscope_importers::sigrok::parse_metadata(&text) {
        if let Some(rate) = meta.get("samplerate") {
            let _ = latscope_importers::sigrok::parse_samplerate(rate);
        }
    }
    let _ = latscope_importers::sigrok::parse_samplerate(&text);
});
