//! FST/GHW through wellen on arbitrary bytes, including the cut-short diagnosis that walks
//! FST blocks and checks the GHW tailer, the FST size checks (`wave/fst_limits.rs`) and the
//! GHW walk (`wave/ghw_limits.rs`). Seed with importers/tests/data/*.fst, samples/ghw/*.ghw
//! and cuts of them.
//!
//! libfuzzer-sys installs a panic hook that aborts, which would report every panic inside
//! wellen or fst-reader even though `wave::parse` catches them (they assert on malformed
//! input; that is their way of refusing it). This target's hook lets those two crates'
//! panics unwind to that `catch_unwind` and still aborts on a panic anywhere else — ours.
//! Where latscope's own checks can refuse such input first (a timescale wellen cannot
//! scale), they do, and the input is kept as a regression test.
//! Allocation failures and timeouts are reported whatever crate they come from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Once;

static HOOK: Once = Once::new();

/// Whether a panic comes from wellen or fst-reader: its location is in one of them, or,
/// for a panic inside core/std (an overflowing `pow`, a capacity overflow), the innermost
/// frame of the backtrace from one of the three crates is theirs, not ours.
fn panic_is_readers(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let Some(file) = info.location().map(|l| l.file()) else { return false };
    if ["wellen-", "fst-reader-"].iter().any(|c| file.contains(c)) {
        return true;
    }
    if !file.starts_with("/rustc/") {
        return false;
    }
    let trace = std::backtrace::Backtrace::force_capture().to_string();
    let first = |pat: &str| trace.find(pat).unwrap_or(usize::MAX);
    first("wellen::").min(first("fst_reader::")) < first("latscope_importers::")
}

fuzz_target!(|data: &[u8]| {
    HOOK.call_once(|| {
        let aborting = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !panic_is_readers(info) {
                aborting(info);
            }
        }));
    });
    let _ = latscope_importers::wave::parse(data, &latscope_importers::LoadControl::new());
});
