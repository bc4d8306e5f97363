//! String interning: every comm, event name, field name and string field value is stored
//! once and referred to by a 4-byte [`Sym`]. Strings are bytes: ftrace comms and markers
//! may hold any bytes, and are converted (lossily) only for display.

use latscope_shared::SharedVec;
use std::borrow::Cow;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// An interned string: an index into the [`Interner`] that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Sym(pub u32);

/// The strings, stored once: their bytes one after another and where each ends, and a hash
/// table from a string to its symbol.
///
/// A clone shares all three, so a growing source's snapshot costs reference counts, not a
/// copy of every string (a marker with a request id is a new string per event). The bytes
/// and ends are `SharedVec`s: the interner that owns them appends past every clone's
/// length. The table is written only by the interner that made it (`writer`): it fills
/// empty slots, never changes a filled one, and keeps half of them empty. A clone reading
/// it skips the symbols it does not hold (made after it was cloned): a string it holds sat
/// in the first empty slot of its probe when it was added, so every slot before it was
/// filled already, and the clone still finds it. A clone that interns a string builds a
/// table of its own first.
pub struct Interner {
    bytes: SharedVec<u8>,
    ends: SharedVec<u64>,
    table: Arc<Table>,
    writer: bool,
}

/// Open addressing with linear probing: each slot holds a symbol plus one, 0 when empty.
struct Table {
    slots: Box<[AtomicU32]>,
}

impl Table {
    fn new(slots: usize) -> Table {
        Table { slots: (0..slots).map(|_| AtomicU32::new(0)).collect() }
    }
}

fn hash(s: &[u8]) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(s)
}

/// The first slot to probe for hash `h` in a table of `slots` (a power of two): the top
/// bits of a Fibonacci multiple, which mixes every bit of the hash in.
fn first_slot(h: u64, slots: usize) -> usize {
    let bits = slots.trailing_zeros();
    if bits == 0 { 0 } else { (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize }
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            bytes: SharedVec::new(),
            ends: SharedVec::new(),
            table: Arc::new(Table::new(0)),
            writer: true,
        }
    }
}

impl Clone for Interner {
    fn clone(&self) -> Self {
        Interner {
            bytes: self.bytes.clone(),
            ends: self.ends.clone(),
            table: Arc::clone(&self.table),
            writer: false,
        }
    }
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interner").field("strings", &self.len()).field("bytes", &self.bytes.len()).finish()
    }
}

impl Interner {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, s: &[u8]) -> Sym {
        let h = hash(s);
        if let Some(sym) = self.find(s, h) {
            return sym;
        }
        let sym = Sym(self.ends.len() as u32);
        self.bytes.extend_from_slice(s);
        self.ends.push(self.bytes.len() as u64);
        let slots = self.table.slots.len();
        if !self.writer || self.ends.len() * 2 > slots {
            self.rebuild((self.ends.len() * 4).next_power_of_two().max(16));
        } else {
            self.place(sym, h);
        }
        sym
    }

    pub fn intern_str(&mut self, s: &str) -> Sym {
        self.intern(s.as_bytes())
    }

    /// The symbol of `s` if it was interned, without adding it.
    pub fn lookup(&self, s: &[u8]) -> Option<Sym> {
        self.find(s, hash(s))
    }

    fn find(&self, s: &[u8], h: u64) -> Option<Sym> {
        let slots = &self.table.slots;
        if slots.is_empty() {
            return None;
        }
        let mask = slots.len() - 1;
        let mut i = first_slot(h, slots.len());
        loop {
            let held = slots[i].load(Ordering::Acquire);
            if held == 0 {
                return None;
            }
            let sym = Sym(held - 1);
            if (sym.0 as usize) < self.ends.len() && self.bytes_of(sym) == s {
                return Some(sym);
            }
            i = (i + 1) & mask;
        }
    }

    /// Puts `sym` in the first empty slot of its probe (this interner writes the table).
    fn place(&self, sym: Sym, h: u64) {
        let slots = &self.table.slots;
        let mask = slots.len() - 1;
        let mut i = first_slot(h, slots.len());
        while slots[i].load(Ordering::Relaxed) != 0 {
            i = (i + 1) & mask;
        }
        slots[i].store(sym.0 + 1, Ordering::Release);
    }

    /// A table of its own with `slots` slots, holding every string.
    fn rebuild(&mut self, slots: usize) {
        self.table = Arc::new(Table::new(slots));
        self.writer = true;
        for i in 0..self.ends.len() {
            let sym = Sym(i as u32);
            self.place(sym, hash(self.bytes_of(sym)));
        }
    }

    pub fn bytes_of(&self, sym: Sym) -> &[u8] {
        let i = sym.0 as usize;
        let Some(&end) = self.ends.get(i) else { return &[] };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.bytes.get(start as usize..end as usize).unwrap_or(&[])
    }

    /// Display form: invalid UTF-8 is replaced, never rejected.
    pub fn resolve(&self, sym: Sym) -> Cow<'_, str> {
        String::from_utf8_lossy(self.bytes_of(sym))
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Approximate heap bytes held: the strings, their ends and the table.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.len() + self.ends.len() * 8 + self.table.slots.len() * 4
    }

    /// Interns every string of `other` and returns the table mapping its symbols to ours.
    pub fn absorb(&mut self, other: &Interner) -> Vec<Sym> {
        (0..other.len()).map(|i| self.intern(other.bytes_of(Sym(i as u32)))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_byte_exact() {
        let mut i = Interner::new();
        let a = i.intern(b"kworker/0:1");
        let b = i.intern(b"\xffbad");
        assert_eq!(i.intern(b"kworker/0:1"), a);
        assert_ne!(a, b);
        assert_eq!(i.bytes_of(b), b"\xffbad");
        assert_eq!(i.resolve(b), "\u{fffd}bad");
        let mut j = Interner::new();
        j.intern(b"x");
        let map = j.absorb(&i);
        assert_eq!(j.bytes_of(map[a.0 as usize]), b"kworker/0:1");
        assert_eq!(i.intern(b""), i.intern(b""), "the empty string too");
    }

    #[test]
    fn a_clone_shares_the_strings_and_reads_what_it_held_while_the_original_grows() {
        let mut grown = Interner::new();
        let first: Vec<Sym> = (0..1000).map(|n| grown.intern(format!("req id={n}").as_bytes())).collect();
        let snapshot = grown.clone();
        assert!(snapshot.bytes.shares_memory_with(&grown.bytes));
        // The original goes on: its table fills slots the clone probes through, and grows.
        let later: Vec<Sym> =
            (1000..50_000).map(|n| grown.intern(format!("req id={n}").as_bytes())).collect();
        assert_eq!(snapshot.len(), 1000);
        for (n, &sym) in first.iter().enumerate() {
            let text = format!("req id={n}");
            assert_eq!(snapshot.lookup(text.as_bytes()), Some(sym));
            assert_eq!(grown.lookup(text.as_bytes()), Some(sym));
            assert_eq!(snapshot.bytes_of(sym), text.as_bytes());
        }
        for (n, &sym) in later.iter().enumerate() {
            let text = format!("req id={}", n + 1000);
            assert_eq!(snapshot.lookup(text.as_bytes()), None, "made after the clone");
            assert_eq!(grown.lookup(text.as_bytes()), Some(sym));
        }
        // A clone that interns takes a table of its own; the original is unchanged.
        let mut fork = snapshot.clone();
        let own = fork.intern(b"only in the fork");
        assert_eq!(own, Sym(1000));
        assert_eq!(fork.lookup(b"req id=999"), Some(first[999]));
        assert_eq!(grown.bytes_of(Sym(1000)), b"req id=1000");
        assert_eq!(grown.lookup(b"only in the fork"), None);
        assert_eq!(snapshot.lookup(b"only in the fork"), None);
    }

    #[test]
    fn a_clone_read_on_another_thread_while_the_original_interns() {
        let mut grown = Interner::new();
        for n in 0..10_000 {
            grown.intern(format!("{n}").as_bytes());
        }
        let snapshot = grown.clone();
        let reader = std::thread::spawn(move || {
            (0..10_000).all(|n| snapshot.lookup(format!("{n}").as_bytes()) == Some(Sym(n)))
                && (10_000..20_000).all(|n| snapshot.lookup(format!("{n}").as_bytes()).is_none())
        });
        for n in 10_000..200_000 {
            grown.intern(format!("{n}").as_bytes());
        }
        assert!(reader.join().unwrap_or(false));
    }
}
