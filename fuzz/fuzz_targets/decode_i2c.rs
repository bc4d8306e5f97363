//! Fuzzes the I2C decoder: any levels on SCL and SDA, on both tick grids. See
//! decoders_common.rs.
#![no_main]

#[path = "decoders_common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&opts, samples)) = data.split_first() else { return };
    let src = common::capture(samples);
    common::run(&src, "i2c:scl=D0,sda=D1", opts & 1 == 0);
    common::run(&src, "i2c:scl=D1,sda=D0", opts & 1 == 0);
});
