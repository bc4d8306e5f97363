//! Fuzzes the SD native-mode decoder: CMD and DAT0-3 with any levels, 1- and 4-bit, any
//! block length. Random bytes rarely make a valid token, so half of each input is
//! overlaid with a real command token first. See decoders_common.rs.
#![no_main]

#[path = "decoders_common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&opts, samples)) = data.split_first() else { return };
    let mut samples = samples.to_vec();
    // D0 is CLK: a clock on every other sample; CMD (D1) carries CMD17/18/24/25 tokens
    // where the input asks for them, so the DAT states are reached.
    let index = [17u8, 18, 24, 25, 12, 23, 6, 55][usize::from(opts % 8)];
    let token = latscope_decoders::sd::encode::token48(true, index, u32::from(opts));
    for (i, s) in samples.iter_mut().enumerate() {
        *s = (*s & !1) | u8::from(i % 2 == 1);
        if opts & 0x80 != 0 && i / 2 < token.len() {
            *s = (*s & !2) | (token[i / 2] << 1);
        }
    }
    let src = common::capture(&samples);
    let block = 1 + usize::from(opts) % 64;
    common::run(&src, &format!("sd:clk=D0,cmd=D1,dat0=D2,dat1=D3,dat2=D4,dat3=D5,block={block}"), true);
    common::run(&src, &format!("sd:clk=D0,cmd=D1,dat0=D2,block={block}"), opts & 0x40 == 0);
});
