//! How durations read for people: the one formatting that outcomes (notes), statistics
//! and every report share.

/// A duration in nanoseconds for people: `812 ns`, `3.250 us`, `1.204 ms`, `2.000 s`.
pub fn human_ns(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.3} us", ns / 1e3)
    } else if a == a.trunc() {
        format!("{ns:.0} ns")
    } else {
        format!("{ns:.3} ns")
    }
}
