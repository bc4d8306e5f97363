//! Fuzzes the SPI decoder and SD-over-SPI stacked on it: any levels, every mode, bit order,
//! word size, with and without CS. See decoders_common.rs.
#![no_main]

#[path = "decoders_common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&opts, samples)) = data.split_first() else { return };
    let src = common::capture(samples);
    let cpol = opts & 1;
    let cpha = (opts >> 1) & 1;
    let order = if opts & 4 == 0 { "msb" } else { "lsb" };
    let bits = 1 + (opts >> 3) % 16;
    let cs = if opts & 0x80 == 0 { ",cs=D3" } else { "" };
    common::run(&src, &format!("spi:clk=D0,mosi=D1,miso=D2{cs},cpol={cpol},cpha={cpha},order={order},bits={bits}"), true);
    common::run(&src, &format!("spi:clk=D0,mosi=D1,miso=D2{cs},cpol={cpol},cpha={cpha} | sd-spi"), opts & 0x40 == 0);
});
