//! Inputs the decoder fuzz targets found, kept in `tests/regressions/<target>/`: each runs
//! through the very function its target runs (`fuzz/fuzz_targets/decoders_common.rs`), which
//! asserts that decoding does not panic and no annotation ends before it starts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../fuzz/fuzz_targets/decoders_common.rs"]
mod fuzz_common;

use std::path::Path;

/// A fuzz target's body: decodes one input, panicking on a finding.
type FuzzTarget = fn(&[u8]);

#[test]
fn fuzz_findings_stay_fixed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let targets: [(&str, FuzzTarget); 4] = [
        ("decode_uart", fuzz_common::uart),
        ("decode_spi", fuzz_common::spi),
        ("decode_i2c", fuzz_common::i2c),
        ("decode_sd", fuzz_common::sd),
    ];
    let mut ran = 0;
    for (target, run) in targets {
        let Ok(entries) = std::fs::read_dir(dir.join(target)) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            println!("{target}: {}", path.display());
            run(&std::fs::read(&path).unwrap());
            ran += 1;
        }
    }
    assert!(ran >= 1, "no regression input under {}", dir.display());
}
