//! String interning: every comm, event name, field name and string field value is stored
//! once and referred to by a 4-byte [`Sym`]. Strings are bytes: ftrace comms and markers
//! may hold any bytes, and are converted (lossily) only for display.

use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// An interned string: an index into the [`Interner`] that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Sym(pub u32);

#[derive(Debug, Default, Clone)]
pub struct Interner {
    map: FxHashMap<Box<[u8]>, Sym>,
    strings: Vec<Box<[u8]>>,
    bytes: usize,
}

impl Interner {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, s: &[u8]) -> Sym {
        if let Some(&sym) = self.map.get(s) {
            return sym;
        }
        let sym = Sym(self.strings.len() as u32);
        let boxed: Box<[u8]> = s.into();
        self.bytes += boxed.len();
        self.strings.push(boxed.clone());
        self.map.insert(boxed, sym);
        sym
    }

    pub fn intern_str(&mut self, s: &str) -> Sym {
        self.intern(s.as_bytes())
    }

    /// The symbol of `s` if it was interned, without adding it.
    pub fn lookup(&self, s: &[u8]) -> Option<Sym> {
        self.map.get(s).copied()
    }

    pub fn bytes_of(&self, sym: Sym) -> &[u8] {
        self.strings.get(sym.0 as usize).map_or(&[], |b| b)
    }

    /// Display form: invalid UTF-8 is replaced, never rejected.
    pub fn resolve(&self, sym: Sym) -> Cow<'_, str> {
        String::from_utf8_lossy(self.bytes_of(sym))
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Approximate heap bytes held: the strings twice (vector and map key share nothing)
    /// plus table overhead.
    pub fn heap_bytes(&self) -> usize {
        2 * self.bytes + self.strings.len() * (2 * 16 + 4 + 8)
    }

    /// Interns every string of `other` and returns the table mapping its symbols to ours.
    pub fn absorb(&mut self, other: &Interner) -> Vec<Sym> {
        other.strings.iter().map(|s| self.intern(s)).collect()
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
    }
}
