//! Fuzzes the rule-spec grammar and the analyses behind it: `parse_spec` and
//! `preset_spec` never panic on any text, a parse error's column lies within the text, and
//! every spec that parses runs on real sources without panicking. The sources are a recorded
//! ftrace text trace (irq, block, sched events) and a small sigrok capture with logic and
//! analog channels, loaded once. Seed from fuzz/corpus/rule_spec (see docs/FUZZING.md).
#![no_main]

use latscope_model::{Placed, Source};
use latscope_analysis::runner::run_spec;
use latscope_analysis::spec::{parse_spec, preset_spec};
use latscope_importers::LoadControl;
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;

const SOURCES: &[&str] = &["ftrace/virtio_blk_direct_read.txt", "sigrok/mixed_100khz_2logic_1analog.sr"];

fn sources() -> &'static [Source] {
    static SOURCES_LOADED: OnceLock<Vec<Source>> = OnceLock::new();
    SOURCES_LOADED.get_or_init(|| {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
        SOURCES
            .iter()
            .map(|rel| {
                let path = samples.join(rel);
                latscope_importers::open(&path, &LoadControl::new())
                    .unwrap_or_else(|e| panic!("fuzz source {}: {e}", path.display()))
            })
            .collect()
    })
}

fn check(text: &str) {
    let chars = text.chars().count();
    for parsed in [parse_spec(text), preset_spec(text)] {
        match parsed {
            Ok(spec) => {
                let _ = run_spec(&spec, &Placed::all(sources()));
            }
            Err(e) => assert!(e.column <= chars, "column {} beyond {chars} characters: {text:?}", e.column),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // Arbitrary bytes reach the parser as the lossy text a CLI argument or GUI field would give.
    match std::str::from_utf8(data) {
        Ok(text) => check(text),
        Err(_) => check(&String::from_utf8_lossy(data)),
    }
});
