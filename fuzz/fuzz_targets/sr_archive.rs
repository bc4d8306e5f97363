//! Whole `.sr` archives: zip container, members and logic/analog chunk decoding, read both
//! as the trace model's tracks and as the sample numbers `latscope decode` reads. When both
//! load, they must agree on every logic channel's initial level and edges.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ctl = latscope_importers::LoadControl::new();
    let loaded = latscope_importers::sigrok::parse(data, &ctl);
    let ticks = latscope_importers::sigrok::parse_logic_ticks(data, &ctl);
    if let (Ok(src), Ok(ticks)) = (loaded, ticks) {
        assert_eq!(src.digital.len(), ticks.channels.len());
        for (track, ch) in src.digital.iter().zip(&ticks.channels) {
            assert_eq!(track.name, ch.name);
            assert_eq!(track.initial, ch.initial);
            assert_eq!(track.transitions(), ch.ticks.len(), "{}", ch.name);
        }
    }
});
