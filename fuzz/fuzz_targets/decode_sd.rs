//! Fuzzes the SD native-mode decoder: CMD and DAT0-3 with any levels, 1- and 4-bit, any
//! block length. Random bytes rarely make a valid token, so half of each input is
//! overlaid with a real command token first. See decoders_common.rs.
#![no_main]

#[path = "decoders_common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::sd(data));
