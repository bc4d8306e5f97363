//! FST/GHW through wellen on arbitrary bytes, including the cut-short diagnosis that walks
//! FST blocks and checks the GHW tailer. Seed with importers/tests/data/*.fst and its cuts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = latscope_importers::wave::parse(data, &latscope_importers::LoadControl::new());
});
