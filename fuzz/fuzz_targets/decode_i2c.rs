//! Fuzzes the I2C decoder: any levels on SCL and SDA, on both tick grids. See
//! decoders_common.rs.
#![no_main]

#[path = "decoders_common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::i2c(data));
