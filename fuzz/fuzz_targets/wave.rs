//! FST/GHW through wellen on arbitrary bytes, including the cut-short diagnosis that walks
//! FST blocks and checks the GHW tailer, and the FST size checks (`wave/fst_limits.rs`).
//! Seed with importers/tests/data/*.fst and its cuts.
//!
//! libfuzzer-sys installs a panic hook that aborts, which would report every panic inside
//! wellen or fst-reader even though `wave::parse` catches them (they assert on malformed
//! input; that is their way of refusing it). This target's hook lets those two crates'
//! panics unwind to that `catch_unwind` and still aborts on a panic anywhere else — ours.
//! Allocation failures and timeouts are reported whatever crate they come from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Once;

static HOOK: Once = Once::new();

fn panic_is_readers(info: &std::panic::PanicHookInfo<'_>) -> bool {
    info.location()
        .is_some_and(|l| ["wellen-", "fst-reader-"].iter().any(|c| l.file().contains(c)))
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
