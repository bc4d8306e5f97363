use super::SharedVec;

/// A small deterministic generator (xorshift), so a failing case can be replayed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn a_clone_sees_what_was_there_while_the_vector_grows_in_place() {
    let mut v: SharedVec<u64> = SharedVec::with_capacity(8);
    v.extend_from_slice(&[1, 2, 3]);
    let snapshot = v.clone();
    v.push(4);
    v.push(5);
    assert_eq!(snapshot.as_slice(), &[1, 2, 3]);
    assert_eq!(v.as_slice(), &[1, 2, 3, 4, 5]);
    // Appending within the room moved nothing: both still read one buffer.
    assert!(v.shares_memory_with(&snapshot));
    // Past the room the writer moves on to a larger copy; the clone keeps the old memory.
    for i in 6..100 {
        v.push(i);
    }
    assert!(!v.shares_memory_with(&snapshot));
    assert_eq!(snapshot.as_slice(), &[1, 2, 3]);
    assert_eq!(v.len(), 99);
    assert!(v.iter().copied().eq(1..100));
}

#[test]
fn a_clone_that_changes_copies_and_leaves_the_others_as_they_were() {
    let mut v: SharedVec<u32> = (0..10).collect();
    let mut c = v.clone();
    c.push(99);
    assert!(!c.shares_memory_with(&v));
    v.push(10);
    assert_eq!(c.as_slice(), &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 99]);
    assert!(v.iter().copied().eq(0..11));

    let keep = v.clone();
    v.as_mut_slice()[0] = 7;
    v.truncate(3);
    v.push(42);
    assert!(keep.iter().copied().eq(0..11));
    assert_eq!(v.as_slice(), &[7, 1, 2, 42]);
}

#[test]
fn the_only_holder_changes_in_place_and_a_vec_comes_and_goes_without_a_copy() {
    let v: Vec<u16> = (0..1000).collect();
    let at = v.as_ptr();
    let mut s = SharedVec::from(v);
    assert_eq!(s.as_ptr(), at);
    s.as_mut_slice()[5] = 0;
    s.truncate(10);
    s.push(1);
    assert_eq!(s.as_ptr(), at, "nothing shared: changed where it is");
    let back = s.into_vec();
    assert_eq!(back.as_ptr(), at);
    assert_eq!(back, [0, 1, 2, 3, 4, 0, 6, 7, 8, 9, 1]);

    // A clone held elsewhere: the vector is a copy, and the clone is untouched.
    let s: SharedVec<u16> = back.into();
    let c = s.clone();
    let copy = s.into_vec();
    assert_ne!(copy.as_ptr(), c.as_ptr());
    assert_eq!(copy, c.as_slice());
    // The last holder of a buffer it did not make becomes its writer.
    let mut c = c;
    let at = c.as_ptr();
    c.truncate(2);
    c.push(5);
    assert_eq!((c.as_ptr(), c.as_slice()), (at, &[0u16, 1, 5][..]));
}

/// Random pushes, extends, truncations, writes, clones and drops on many handles, each
/// checked against a `Vec` of its own: whatever one handle does, the others read what they
/// read before.
#[test]
fn every_handle_reads_what_a_vec_of_its_own_would() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Miri checks every access against the aliasing rules, a thousand times slower.
    let rounds = if cfg!(miri) { 4 } else { 200 };
    for round in 0..rounds {
        let mut handles: Vec<(SharedVec<u32>, Vec<u32>)> = vec![(SharedVec::new(), Vec::new())];
        for step in 0..300 {
            let h = rng.below(handles.len());
            let value = rng.next() as u32;
            let count = handles.len();
            let (s, m) = &mut handles[h];
            match rng.below(9) {
                0..=2 => {
                    s.push(value);
                    m.push(value);
                }
                3 => {
                    let n = rng.below(40);
                    let more: Vec<u32> = (0..n as u32).map(|i| value.wrapping_add(i)).collect();
                    s.extend_from_slice(&more);
                    m.extend_from_slice(&more);
                }
                4 => {
                    let n = rng.below(m.len() + 1);
                    s.truncate(n);
                    m.truncate(n);
                }
                5 if !m.is_empty() => {
                    let i = rng.below(m.len());
                    s.as_mut_slice()[i] = value;
                    m[i] = value;
                }
                6 => {
                    let copy = (s.clone(), m.clone());
                    handles.push(copy);
                }
                7 if count > 1 => {
                    handles.swap_remove(h);
                }
                8 => {
                    if rng.below(2) == 0 {
                        s.shrink_to_fit();
                    } else {
                        s.reserve_exact(rng.below(10));
                    }
                }
                _ => {}
            }
            for (i, (s, m)) in handles.iter().enumerate() {
                assert_eq!(s.as_slice(), m.as_slice(), "round {round}, step {step}, handle {i}");
                assert!(s.capacity() >= s.len());
            }
        }
    }
}

/// A writer appends on one thread while readers on others check every clone they are given:
/// values never change under a reader (each element is its index).
#[test]
fn readers_on_other_threads_see_only_settled_elements() {
    let (tx, rx) = std::sync::mpsc::sync_channel::<SharedVec<u64>>(4);
    let reader = std::thread::spawn(move || {
        let mut seen = 0;
        let mut kept: Vec<SharedVec<u64>> = Vec::new();
        for snapshot in rx {
            assert!(snapshot.iter().enumerate().all(|(i, &v)| v == i as u64));
            kept.push(snapshot);
            if kept.len() > 8 {
                let old = kept.remove(0);
                assert!(old.iter().enumerate().all(|(i, &v)| v == i as u64));
            }
            seen += 1;
        }
        seen
    });
    let (pushes, every) = if cfg!(miri) { (3_000, 97) } else { (200_000, 997) };
    let mut v = SharedVec::new();
    for i in 0..pushes {
        v.push(i);
        if i % every == 0 && tx.send(v.clone()).is_err() {
            break;
        }
    }
    drop(tx);
    assert_eq!(reader.join().ok(), Some(pushes.div_ceil(every)));
}
