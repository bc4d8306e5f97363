//! Fuzzes the UART decoder: any levels, any baud (measured or given), parity, bit counts
//! and inversion, on sampled and picosecond tick grids. See decoders_common.rs.
#![no_main]

#[path = "decoders_common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::uart(data));
