//! Fuzzes the SPI decoder and SD-over-SPI stacked on it: any levels, every mode, bit order,
//! word size, with and without CS. See decoders_common.rs.
#![no_main]

#[path = "decoders_common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::spi(data));
