//! Capacity growth for decoded tracks that never reserves past an importer's entry limit.
//!
//! `Vec` doubles when full, so a track near a limit of N entries could hold room for 2N.
//! Importers that count entries against a limit grow their vectors here instead: by the
//! same doubling, but never by more than the entries still allowed, so what is reserved
//! stays proportional to what the limit admits and a hostile file is refused before its
//! tracks can outgrow the limit.

use latscope_model::DigitalTrack;

/// Smallest growth step: small tracks should not reallocate on every few entries.
const MIN_GROWTH: usize = 1024;

/// Makes room in `v` for one more element; `remaining` is how many more entries the
/// importer's limit still allows across all its tracks (at least one is always granted,
/// since the caller refuses the file once the limit is passed).
pub(crate) fn room_for_one<T>(v: &mut Vec<T>, remaining: usize) {
    if v.len() == v.capacity() {
        v.reserve_exact(growth(v.len(), remaining));
    }
}

/// How many entries a full vector of `len` grows by.
fn growth(len: usize, remaining: usize) -> usize {
    len.max(MIN_GROWTH).min(remaining).max(1)
}

/// [`room_for_one`] for a digital track's two parallel vectors.
pub(crate) fn room_for_transition(track: &mut DigitalTrack, remaining: usize) {
    if track.transitions() == track.capacity() {
        track.reserve_exact(growth(track.transitions(), remaining));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_doubles_but_stops_at_the_remaining_allowance() {
        let mut v: Vec<u64> = Vec::new();
        room_for_one(&mut v, 10);
        assert_eq!(v.capacity(), 10, "never more than the limit still allows");
        v.extend(0..10);
        room_for_one(&mut v, 0);
        assert_eq!(v.capacity(), 11, "one more is granted so the caller can count and refuse");
        let mut w: Vec<u8> = Vec::with_capacity(4096);
        w.extend(std::iter::repeat_n(0, 4096));
        room_for_one(&mut w, usize::MAX);
        assert_eq!(w.capacity(), 8192, "otherwise it doubles like Vec");
    }
}
