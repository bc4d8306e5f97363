//! Fuzzes the UART decoder: any levels, any baud (measured or given), parity, bit counts
//! and inversion, on sampled and picosecond tick grids. See decoders_common.rs.
#![no_main]

#[path = "decoders_common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&opts, samples)) = data.split_first() else { return };
    let src = common::capture(samples);
    let baud = ["auto", "9600", "115200", "250000", "333333", "1000000"][usize::from(opts % 6)];
    let parity = ["none", "even", "odd"][usize::from((opts >> 3) % 3)];
    let bits = 5 + (opts >> 5) % 5;
    for invert in [0, 1] {
        let spec = format!("uart:rx=D0,tx=D1,baud={baud},parity={parity},bits={bits},invert={invert}");
        common::run(&src, &spec, opts & 0x80 == 0);
    }
});
