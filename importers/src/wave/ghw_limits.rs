//! Bounds on the counts and sizes a GHW file declares, checked before wellen reads it.
//!
//! wellen's GHW reader allocates from counts it has not checked: the string table
//! (`Vec::with_capacity` of the declared count), the type table (`vec![..; count]`), enum
//! literals, physical units, array dimensions and record fields (`with_capacity` of a LEB128
//! count), a table of every signal id up to the declared maximum, and the signal ids of a
//! vector (`with_capacity` of its bit count). A forged count there is an allocation failure,
//! which aborts the process, so `catch_unwind` around wellen cannot help. Other amounts grow
//! from few bytes: strings sharing a prefix (each repeats it), an array of a million empty
//! records (a scope per element, no byte read), a wide vector stored whole whenever one bit
//! changes, two costs that grow with a square (a vector's change flags scanned per bit read,
//! a vector's slice list searched per port), and a type that contains itself (unbounded
//! recursion: a stack overflow, which aborts too).
//!
//! This walk reads the file as wellen does — header, string table, types, well-known types,
//! hierarchy, then the snapshot, cycle, directory and tailer sections — and refuses each such
//! value that the bytes left cannot hold (every item takes at least one byte) or that is past
//! a stated limit. Where wellen fails at once with an error or a panic (which `catch_unwind`
//! stops), the walk stops and leaves the file to it; where wellen reads on before failing
//! (a type reference it looks up only later), the walk refuses, so nothing it reads
//! meanwhile goes unchecked.

use crate::{ParseFailure, Position};

/// Signal ids (wellen keeps 8 bytes for each id up to the declared maximum, and GHDL
/// numbers each scalar element of a signal): 2^26 ids is 512 MiB of table.
pub const MAX_GHW_SIGNALS: u64 = 1 << 26;
/// The bytes of all strings of the string table once their shared prefixes are expanded.
pub const MAX_GHW_STRING_BYTES: u64 = 1 << 28;
/// How deeply types nest (arrays of records of arrays): wellen walks them recursively, and
/// real VHDL types are a handful of levels deep.
pub const MAX_GHW_TYPE_DEPTH: u32 = 64;
/// Scopes and variables the hierarchy creates (wellen keeps each, plus a name string for
/// each array element).
pub const MAX_GHW_HIERARCHY_NODES: u64 = 1 << 22;
/// Nested scopes (blocks, instances, generates).
pub const MAX_GHW_SCOPE_DEPTH: u64 = 1024;
/// The bytes of vector values the value sections expand to: wellen stores a vector's whole
/// value in every time step in which any of its bits changes.
pub const MAX_GHW_VALUE_BYTES: u64 = 1 << 30;
/// Bytes of change flags wellen scans: for every vector bit it reads, it scans the
/// vector's flags (a byte per eight bits), so a wide vector costs its width squared.
pub const MAX_GHW_VECTOR_SCAN_BYTES: u64 = 1 << 33;
/// Steps of wellen's search of a vector's slices (a linked list it walks for every port
/// bound to part of the vector), so many distinct slices of one vector cost their count squared.
pub const MAX_GHW_SLICE_STEPS: u64 = 1 << 28;

const HEADER_LEN: usize = 16;
const TAILER_LEN: usize = 12;

/// Checks a GHW file (one that starts with `GHDLwave\n`).
pub fn check(data: &[u8]) -> Result<(), ParseFailure> {
    match Walk::new(data).run() {
        Err(Halt::Refuse(e)) => Err(e),
        // wellen fails on this with an error or a panic of its own, which the caller handles.
        Ok(()) | Err(Halt::ReaderFails) => Ok(()),
    }
}

enum Halt {
    Refuse(ParseFailure),
    /// wellen stops here with an error or a caught panic: nothing more to check.
    ReaderFails,
}

type Step<T> = Result<T, Halt>;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Dir {
    To,
    Downto,
}

#[derive(Clone, Copy, Debug)]
struct IntRange(Dir, i64, i64);

impl IntRange {
    /// Elements, as wellen iterates them (an inverted range is empty).
    fn elements(self) -> u64 {
        let (lo, hi) = match self.0 {
            Dir::To => (self.1, self.2),
            Dir::Downto => (self.2, self.1),
        };
        u64::try_from(i128::from(hi) - i128::from(lo) + 1).unwrap_or(0)
    }
}

/// The parts of wellen's `VhdlType` that decide what it reads and creates.
#[derive(Clone, Debug)]
enum Ty {
    /// Not read yet: a reference to it is a reference forward (or to itself).
    Missing,
    NineValueBit,
    Bit,
    Enum {
        literals: u64,
    },
    /// I32, I64, F64 or P64; `ranged` when a subtype gave it bounds.
    Number {
        kind: NumberKind,
        ranged: bool,
        range: Option<IntRange>,
    },
    /// std_logic_vector / bit_vector.
    BitVector(Option<IntRange>),
    Array {
        element: usize,
        range: Option<IntRange>,
    },
    Record(Vec<usize>),
    Alias(usize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum NumberKind {
    I32,
    I64,
    F64,
    P64,
}

/// Per type: whether its element count is fixed, how deeply it nests, and what one variable
/// of it reads (signal ids) and creates (hierarchy entries) in wellen's `add_var`.
#[derive(Clone, Copy, Debug, Default)]
struct Shape {
    finite: bool,
    depth: u32,
    ids: u64,
    nodes: u64,
}

/// How wellen reads a signal's value in the snapshot and cycle sections.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Byte,
    Leb128,
    F64,
    /// One bit of vector `n`.
    VectorBit(usize),
}

struct Walk<'a> {
    data: &'a [u8],
    pos: usize,
    big_endian: bool,
    version: u8,
    /// Per string: the character of a one-character literal (`'0'` or `0`), for wellen's
    /// std_logic and bit detection.
    literal_chars: Vec<Option<u8>>,
    types: Vec<Ty>,
    shapes: Vec<Shape>,
    /// Per signal id (index id - 1): how its value is read, once a variable declares it.
    signals: Vec<Option<Value>>,
    vectors: Vec<Vector>,
    /// Distinct slices (vector, first id, last id) and the steps wellen takes to find them.
    slices: std::collections::HashSet<(usize, u64, u64)>,
    slice_steps: u64,
    nodes: u64,
    /// What the value sections cost wellen: vector bytes stored, change flags scanned.
    stored: u64,
    scanned: u64,
}

struct Vector {
    first: u64,
    bits: u64,
    /// Its value's size in wellen's encoding.
    bytes: u64,
    /// The time step it last changed in.
    last_step: u64,
    slices: u64,
}

impl<'a> Walk<'a> {
    fn new(data: &'a [u8]) -> Self {
        Walk {
            data,
            pos: 0,
            big_endian: false,
            version: 0,
            literal_chars: Vec::new(),
            types: Vec::new(),
            shapes: Vec::new(),
            signals: Vec::new(),
            vectors: Vec::new(),
            slices: std::collections::HashSet::new(),
            slice_steps: 0,
            nodes: 0,
            stored: 0,
            scanned: 0,
        }
    }

    fn run(&mut self) -> Step<()> {
        let header = self.take(HEADER_LEN)?;
        if !header.starts_with(b"GHDLwave\n") {
            return Err(Halt::ReaderFails);
        }
        self.version = header[11];
        self.big_endian = header[12] == 2;
        loop {
            let at = self.pos;
            match self.take(4)? {
                b"STR\0" => self.strings()?,
                b"TYP\0" => self.type_section()?,
                b"WKT\0" => self.well_known_types()?,
                b"HIE\0" => self.hierarchy()?,
                b"EOH\0" => break,
                _ => return Err(Halt::ReaderFails),
            }
            debug_assert!(self.pos > at);
        }
        self.body()
    }

    fn remaining(&self) -> u64 {
        (self.data.len() - self.pos) as u64
    }

    fn take(&mut self, n: usize) -> Step<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len()).ok_or(Halt::ReaderFails)?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u8(&mut self) -> Step<u8> {
        Ok(self.take(1)?[0])
    }

    fn i32(&mut self) -> Step<i32> {
        let b: [u8; 4] = self.take(4)?.try_into().map_err(|_| Halt::ReaderFails)?;
        Ok(if self.big_endian { i32::from_be_bytes(b) } else { i32::from_le_bytes(b) })
    }

    /// wellen's `read_u32`: a non-negative i32.
    fn u32(&mut self) -> Step<u64> {
        u64::try_from(self.i32()?).map_err(|_| Halt::ReaderFails)
    }

    /// An unsigned LEB128 number as the `leb128` crate reads it (at most 64 bits).
    fn leb(&mut self) -> Step<u64> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let byte = self.u8()?;
            let low = u64::from(byte & 0x7f);
            if shift == 63 && low > 1 {
                return Err(Halt::ReaderFails);
            }
            value |= low << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Halt::ReaderFails)
    }

    fn sleb(&mut self) -> Step<i64> {
        let mut value = 0i64;
        let mut shift = 0u32;
        loop {
            let byte = self.u8()?;
            if shift == 63 && byte != 0 && byte != 0x7f {
                return Err(Halt::ReaderFails);
            }
            value |= i64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                if shift < 64 && byte & 0x40 != 0 {
                    value |= -1i64 << shift;
                }
                return Ok(value);
            }
            if shift > 63 {
                return Err(Halt::ReaderFails);
            }
        }
    }

    fn refuse(&self, at: usize, what: String, limit: String) -> Halt {
        Halt::Refuse(ParseFailure::Limit {
            at: Position::Byte(at as u64),
            what: format!("GHW {what}"),
            limit,
        })
    }

    /// `count` items need at least `per_item` bytes each in what is left of the file.
    fn fits(&self, at: usize, count: u64, per_item: u64, what: &str) -> Step<()> {
        let room = self.remaining() / per_item;
        if count > room {
            let unit = if per_item == 1 { "one byte".to_owned() } else { format!("{per_item} bytes") };
            return Err(self.refuse(
                at,
                format!("{what} {count}"),
                format!("{room} ({unit} each in the {} bytes left)", self.remaining()),
            ));
        }
        Ok(())
    }

    fn strings(&mut self) -> Step<()> {
        if self.take(4)? != [0; 4] {
            return Err(Halt::ReaderFails);
        }
        let at = self.pos;
        // wellen reads one string more than the count (GHDL's count leaves out the "EOS"
        // that ends the table), and an `<anon>` string 0 before them.
        let declared = self.u32()?;
        let _declared_size = self.i32()?;
        self.fits(at, declared, 1, "string table count")?;
        let count = declared + 1;
        let mut chars = Vec::with_capacity(count as usize + 1);
        chars.push(None);
        // `len`: the current string's length; `head`: its first bytes (enough to tell a
        // one-character literal such as `'0'`), since only lengths are kept, not strings.
        let (mut len, mut total) = (0u64, 0u64);
        let mut head: Vec<u8> = Vec::with_capacity(4);
        for _ in 0..count {
            let mut c = self.u8()?;
            while c > 31 && !(128..=159).contains(&c) {
                len += 1;
                if head.len() < 4 {
                    head.push(c);
                }
                c = self.u8()?;
            }
            chars.push(match (len, head.as_slice()) {
                (1, [x, ..]) | (3, [_, x, ..]) => Some(x.to_ascii_lowercase()),
                _ => None,
            });
            total += len;
            if total > MAX_GHW_STRING_BYTES {
                return Err(self.refuse(
                    at,
                    format!("string table: {total} bytes once the shared prefixes are expanded"),
                    format!("{MAX_GHW_STRING_BYTES} bytes"),
                ));
            }
            // The next string keeps this many bytes of this one.
            let mut prefix = u64::from(c & 0x1f);
            let mut shift = 5u32;
            while c >= 128 {
                c = self.u8()?;
                // wellen shifts a usize: past 64 bits a debug build panics, a release one
                // wraps the shift and reads on, as this does.
                prefix |= u64::from(c & 0x1f).wrapping_shl(shift);
                shift += 5;
            }
            len = len.min(prefix);
            head.truncate(usize::try_from(len).unwrap_or(usize::MAX));
        }
        self.literal_chars = chars;
        Ok(())
    }

    fn string_id(&mut self) -> Step<u64> {
        self.leb()
    }

    /// A reference to a type read before this one. wellen looks some up only later (an
    /// array's element after reading its dimensions, a record's fields when used), reading
    /// on meanwhile, so an unknown one is refused here rather than left to it.
    fn type_id(&mut self, what: &str) -> Step<usize> {
        let at = self.pos;
        // wellen keeps the low 32 bits; 0 is a panic at once.
        let id = self.leb()? as u32;
        let index = usize::try_from(id).ok().and_then(|i| i.checked_sub(1)).ok_or(Halt::ReaderFails)?;
        match self.types.get(index) {
            Some(Ty::Missing) | None => Err(Halt::Refuse(ParseFailure::invalid(
                Position::Byte(at as u64),
                format!(
                    "GHW: {what} refers to type {id}, which is not declared before it (a type may \
                     refer only to earlier ones, else it can contain itself)"
                ),
            ))),
            Some(_) => Ok(index),
        }
    }

    fn type_section(&mut self) -> Step<()> {
        if self.take(4)? != [0; 4] {
            return Err(Halt::ReaderFails);
        }
        let at = self.pos;
        let count = self.u32()?;
        // A type is at least its kind byte and its name's string id.
        self.fits(at, count, 2, "type count")?;
        self.types = vec![Ty::Missing; count as usize];
        self.shapes = vec![Shape::default(); count as usize];
        for index in 0..count as usize {
            let ty = self.one_type()?;
            self.types[index] = ty;
            self.shapes[index] = self.shape_of(index)?;
        }
        if self.u8()? != 0 {
            return Err(Halt::ReaderFails);
        }
        Ok(())
    }

    fn one_type(&mut self) -> Step<Ty> {
        let kind = self.u8()?;
        let _name = self.string_id()?;
        Ok(match kind {
            // TypeB2, TypeE8: an enumeration and its literals' string ids.
            22 | 23 => {
                let at = self.pos;
                let count = self.leb()?;
                self.fits(at, count, 1, "enumeration literal count")?;
                let mut chars = Vec::new();
                for _ in 0..count {
                    let id = self.string_id()?;
                    // An unknown string fails in wellen only after the whole type table.
                    let c = usize::try_from(id).ok().and_then(|i| self.literal_chars.get(i)).copied();
                    chars.push(c.flatten());
                }
                if chars.iter().copied().eq(b"ux01zwlh-".iter().map(|&c| Some(c))) {
                    Ty::NineValueBit
                } else if chars.iter().copied().eq(b"01".iter().map(|&c| Some(c))) {
                    Ty::Bit
                } else {
                    Ty::Enum { literals: count }
                }
            }
            25 => Ty::Number { kind: NumberKind::I32, ranged: false, range: None },
            26 => Ty::Number { kind: NumberKind::I64, ranged: false, range: None },
            27 => Ty::Number { kind: NumberKind::F64, ranged: false, range: None },
            29 => {
                if self.version > 0 {
                    let at = self.pos;
                    let count = self.leb()?;
                    // A unit is its name's string id and its value.
                    self.fits(at, count, 2, "physical unit count")?;
                    for _ in 0..count {
                        self.string_id()?;
                        self.sleb()?;
                    }
                }
                Ty::Number { kind: NumberKind::P64, ranged: false, range: None }
            }
            // SubtypeScalar: a base type and a range.
            34 => {
                let base = self.type_id("a scalar subtype")?;
                let range = self.range()?;
                match (self.concrete(base), range) {
                    (Ty::Enum { .. } | Ty::NineValueBit, _) => Ty::Alias(base),
                    (&Ty::Number { kind: kind @ (NumberKind::I32 | NumberKind::P64), .. }, Some(r)) => {
                        Ty::Number { kind, ranged: true, range: Some(r) }
                    }
                    (Ty::Number { kind: NumberKind::F64, .. }, None) => {
                        Ty::Number { kind: NumberKind::F64, ranged: true, range: None }
                    }
                    _ => return Err(Halt::ReaderFails),
                }
            }
            // TypeArray: element type, dimension count, one index type per dimension.
            31 => {
                let element = self.type_id("an array's element type")?;
                let at = self.pos;
                let dims = self.leb()?;
                self.fits(at, dims, 1, "array dimension count")?;
                let mut first = None;
                for _ in 0..dims {
                    let index = self.type_id("an array's index type")?;
                    first.get_or_insert(index);
                }
                // wellen reads one dimension only (more is a `todo!` panic, none an index panic).
                let (Some(index), 1) = (first, dims) else { return Err(Halt::ReaderFails) };
                let element = self.concrete_id(element);
                let range = self.int_range_of(self.concrete_id(index));
                match (&self.types[element], range) {
                    (Ty::NineValueBit | Ty::Bit, Some(r)) => Ty::BitVector(Some(r)),
                    _ => Ty::Array { element, range },
                }
            }
            // SubtypeArray / SubtypeRecord: a base type constrained by bounds read recursively.
            35 | 38 => {
                let base = self.type_id("a subtype")?;
                self.subtype_bounds(base, 0)?
            }
            // SubtypeUnboundedArray.
            37 => {
                let base = self.type_id("an unbounded array subtype")?;
                match self.concrete(base) {
                    Ty::Array { element, .. } => Ty::Array { element: *element, range: None },
                    Ty::BitVector(_) => Ty::BitVector(None),
                    _ => return Err(Halt::ReaderFails),
                }
            }
            // TypeRecord: fields, each a name and a type.
            32 => {
                let at = self.pos;
                let count = self.leb()?;
                self.fits(at, count, 2, "record field count")?;
                let mut fields = Vec::new();
                for _ in 0..count {
                    self.string_id()?;
                    fields.push(self.type_id("a record field")?);
                }
                Ty::Record(fields)
            }
            _ => return Err(Halt::ReaderFails),
        })
    }

    /// wellen's `read_subtype_bounds`, which recurses into unbounded elements and fields and
    /// appends the bounded types it makes to the table.
    fn subtype_bounds(&mut self, base: usize, depth: u32) -> Step<Ty> {
        if depth > MAX_GHW_TYPE_DEPTH {
            return Err(Halt::ReaderFails);
        }
        match self.concrete(base).clone() {
            Ty::BitVector(_) => match self.range()? {
                Some(r) => Ok(Ty::BitVector(Some(r))),
                None => Err(Halt::ReaderFails),
            },
            Ty::Array { element, .. } => {
                let range = self.range()?;
                let element = if self.shapes[element].finite {
                    element
                } else {
                    let bounded = self.subtype_bounds(element, depth + 1)?;
                    self.push_type(bounded)?
                };
                match range {
                    Some(r) => Ok(Ty::Array { element, range: Some(r) }),
                    None => Err(Halt::ReaderFails),
                }
            }
            Ty::Record(fields) => {
                let mut bounded = Vec::with_capacity(fields.len());
                let mut finite = true;
                for field in fields {
                    if self.shapes[field].finite {
                        bounded.push(field);
                    } else {
                        finite = false;
                        let ty = self.subtype_bounds(field, depth + 1)?;
                        bounded.push(self.push_type(ty)?);
                    }
                }
                Ok(if finite { Ty::Alias(base) } else { Ty::Record(bounded) })
            }
            _ => Err(Halt::ReaderFails),
        }
    }

    fn push_type(&mut self, ty: Ty) -> Step<usize> {
        self.types.push(ty);
        self.shapes.push(Shape::default());
        let index = self.types.len() - 1;
        self.shapes[index] = self.shape_of(index)?;
        Ok(index)
    }

    /// wellen's `read_range`: a kind byte (bit 7: downto), then the bounds. `None` for a
    /// float range, which wellen keeps apart.
    fn range(&mut self) -> Step<Option<IntRange>> {
        let t = self.u8()?;
        let dir = if t & 0x80 != 0 { Dir::Downto } else { Dir::To };
        match t & 0x7f {
            22 | 23 => {
                let b = self.take(2)?;
                Ok(Some(IntRange(dir, i64::from(b[0]), i64::from(b[1]))))
            }
            25 | 26 | 28 | 29 => {
                let (left, right) = (self.sleb()?, self.sleb()?);
                Ok(Some(IntRange(dir, left, right)))
            }
            27 => {
                self.take(16)?;
                Ok(None)
            }
            _ => Err(Halt::ReaderFails),
        }
    }

    /// One layer of alias resolved, as wellen's `lookup_concrete_type_id`.
    fn concrete_id(&self, index: usize) -> usize {
        match self.types[index] {
            Ty::Alias(base) => base,
            _ => index,
        }
    }

    fn concrete(&self, index: usize) -> &Ty {
        &self.types[self.concrete_id(index)]
    }

    fn int_range_of(&self, index: usize) -> Option<IntRange> {
        match &self.types[index] {
            Ty::NineValueBit => Some(IntRange(Dir::To, 0, 8)),
            // wellen's enum index range has one element more than the literals.
            Ty::Enum { literals } => Some(IntRange(Dir::To, 0, i64::try_from(*literals).unwrap_or(i64::MAX))),
            Ty::Number { range, .. } => *range,
            Ty::BitVector(range) | Ty::Array { range, .. } => *range,
            _ => None,
        }
    }

    /// The shape of a type whose parts are all in the table (they are earlier types).
    fn shape_of(&self, index: usize) -> Step<Shape> {
        let ty = &self.types[index];
        let leaf = |finite| Shape { finite, depth: 1, ids: 1, nodes: 1 };
        let shape = match ty {
            Ty::Missing => return Err(Halt::ReaderFails),
            Ty::NineValueBit | Ty::Bit | Ty::Enum { .. } => leaf(true),
            Ty::Number { kind, ranged, .. } => {
                // wellen has no variable of a 64-bit integer type (a `todo!` panic).
                let ids = u64::from(*kind != NumberKind::I64);
                Shape { finite: *ranged, depth: 1, ids, nodes: ids }
            }
            Ty::BitVector(range) => {
                // wellen's bit count: the range's length in i64, made positive, as a u32.
                let len = range.map_or(0, |r| match r.0 {
                    Dir::To => i128::from(r.2) - i128::from(r.1) + 1,
                    Dir::Downto => i128::from(r.1) - i128::from(r.2) + 1,
                });
                if i64::try_from(len).is_err() {
                    return Err(self.refuse(
                        self.pos,
                        format!("vector type {} has {len} bits", index + 1),
                        "a length that fits in 63 bits".into(),
                    ));
                }
                let bits = len.unsigned_abs() as u64 & u64::from(u32::MAX);
                Shape { finite: range.is_some(), depth: 1, ids: bits, nodes: u64::from(bits > 0) }
            }
            Ty::Alias(base) => {
                let s = self.shapes[*base];
                Shape { depth: s.depth + 1, ..s }
            }
            Ty::Record(fields) => {
                let mut s = Shape { finite: true, depth: 1, ids: 0, nodes: 1 };
                for &f in fields {
                    let f = self.shapes[f];
                    s.finite &= f.finite;
                    s.depth = s.depth.max(f.depth + 1);
                    s.ids = s.ids.saturating_add(f.ids);
                    s.nodes = s.nodes.saturating_add(f.nodes);
                }
                s
            }
            Ty::Array { element, range } => {
                let e = self.shapes[*element];
                // An unbounded array's variable spans all of i32, as wellen iterates it.
                let len = range.map_or(1 << 32, IntRange::elements);
                Shape {
                    finite: range.is_some() && e.finite,
                    depth: e.depth + 1,
                    ids: len.saturating_mul(e.ids),
                    nodes: len.saturating_mul(e.nodes.saturating_add(1)).saturating_add(1),
                }
            }
        };
        if shape.depth > MAX_GHW_TYPE_DEPTH {
            return Err(self.refuse(
                self.pos,
                format!("type {} nests {} levels deep", index + 1, shape.depth),
                format!("{MAX_GHW_TYPE_DEPTH} levels"),
            ));
        }
        Ok(shape)
    }

    fn well_known_types(&mut self) -> Step<()> {
        if self.take(4)? != [0; 4] {
            return Err(Halt::ReaderFails);
        }
        while self.u8()? != 0 {
            self.leb()?;
        }
        Ok(())
    }

    fn hierarchy(&mut self) -> Step<()> {
        if self.take(4)? != [0; 4] {
            return Err(Halt::ReaderFails);
        }
        let _scopes = self.u32()?;
        let _vars = self.u32()?;
        let at = self.pos;
        let max_id = self.u32()?;
        if max_id > MAX_GHW_SIGNALS {
            return Err(self.refuse(
                at,
                format!("hierarchy's highest signal id {max_id}"),
                format!("{MAX_GHW_SIGNALS} signals"),
            ));
        }
        // Each signal id is declared in the hierarchy with at least one byte.
        self.fits(at, max_id, 1, "hierarchy's highest signal id")?;
        self.signals = vec![None; max_id as usize];
        self.vectors.clear();
        let mut depth = 0u64;
        loop {
            let at = self.pos;
            match self.u8()? {
                0 => return Ok(()),
                15 => depth = depth.saturating_sub(1),
                // A process: its name only.
                13 => {
                    self.string_id()?;
                }
                kind @ (3..=7 | 14) => {
                    self.string_id()?;
                    if kind == 5 {
                        // A for-generate: the iterator's type and value.
                        let ty = self.type_id("a for-generate iterator")?;
                        match self.concrete(ty) {
                            Ty::NineValueBit | Ty::Bit | Ty::Enum { .. } => {
                                self.u8()?;
                            }
                            Ty::Number { kind: NumberKind::I32 | NumberKind::I64, .. } => {
                                self.sleb()?;
                            }
                            Ty::Number { kind: NumberKind::F64, .. } => {
                                self.take(8)?;
                            }
                            _ => return Err(Halt::ReaderFails),
                        }
                    }
                    depth += 1;
                    if depth > MAX_GHW_SCOPE_DEPTH {
                        return Err(self.refuse(
                            at,
                            format!("scope nesting {depth} deep"),
                            format!("{MAX_GHW_SCOPE_DEPTH} levels"),
                        ));
                    }
                }
                16..=21 => {
                    self.string_id()?;
                    let ty = self.type_id("a signal")?;
                    self.declaration(at, ty)?;
                }
                _ => return Err(Halt::ReaderFails),
            }
        }
    }

    /// A signal declaration: bounds what wellen will create for it, then reads its ids.
    fn declaration(&mut self, at: usize, ty: usize) -> Step<()> {
        let shape = self.shapes[ty];
        self.fits(at, shape.ids, 1, "signal's element count")?;
        // Each signal id it reads sits in at most one scope (and one element name) per
        // nesting level; an array of empty records or zero-width vectors makes entries from
        // nothing.
        let most = shape.ids.saturating_add(1).saturating_mul(2 * u64::from(shape.depth));
        if shape.nodes > most {
            return Err(self.refuse(
                at,
                format!(
                    "signal of type {} makes {} hierarchy entries from {} signal ids",
                    ty + 1,
                    shape.nodes,
                    shape.ids
                ),
                format!("{most} (two per signal id and nesting level)"),
            ));
        }
        self.nodes = self.nodes.saturating_add(shape.nodes);
        if self.nodes > MAX_GHW_HIERARCHY_NODES {
            return Err(self.refuse(
                at,
                format!("hierarchy of {} scopes and variables", self.nodes),
                format!("{MAX_GHW_HIERARCHY_NODES} entries"),
            ));
        }
        self.signal_ids(ty)
    }

    /// wellen's `add_var`: the signal ids of one variable of type `ty`, recorded with how
    /// their values are read.
    fn signal_ids(&mut self, ty: usize) -> Step<()> {
        match self.concrete(ty).clone() {
            Ty::NineValueBit | Ty::Bit => self.bit(),
            Ty::Enum { .. } => self.scalar(Value::Byte),
            Ty::Number { kind: NumberKind::I32 | NumberKind::P64, .. } => self.scalar(Value::Leb128),
            Ty::Number { kind: NumberKind::F64, .. } => self.scalar(Value::F64),
            Ty::BitVector(Some(_)) => {
                let bits = self.shapes[self.concrete_id(ty)].ids;
                if bits == 0 {
                    return Ok(());
                }
                let at = self.pos;
                let first = self.signal_id()?;
                // wellen expects the bits' ids to follow each other (in release builds it
                // loops from the first to the last id, for every vector).
                for k in 1..bits {
                    let here = self.pos;
                    let id = self.signal_id()?;
                    if id != first + k {
                        return Err(Halt::Refuse(ParseFailure::invalid(
                            Position::Byte(here as u64),
                            format!(
                                "GHW: bit {k} of the vector whose ids start at byte {at} has signal id \
                                 {id}, not {} (a vector's bits have consecutive ids)",
                                first + k
                            ),
                        )));
                    }
                }
                self.vector(at, first, bits)
            }
            Ty::Record(fields) => fields.into_iter().try_for_each(|f| self.signal_ids(f)),
            Ty::Array { element, range } => {
                let len = range.map_or(1 << 32, IntRange::elements);
                (0..len).try_for_each(|_| self.signal_ids(element))
            }
            _ => Err(Halt::ReaderFails),
        }
    }

    /// A signal id as wellen checks it (1 up to the declared highest).
    fn signal_id(&mut self) -> Step<u64> {
        let id = self.leb()?;
        if id == 0 || id > self.signals.len() as u64 {
            return Err(Halt::ReaderFails);
        }
        Ok(id)
    }

    fn scalar(&mut self, value: Value) -> Step<()> {
        let id = self.signal_id()?;
        let slot = &mut self.signals[id as usize - 1];
        // A port shares the id of the signal it is connected to: the first kind stays.
        slot.get_or_insert(value);
        Ok(())
    }

    /// A one-bit signal: its own, or a slice of a vector that has its id.
    fn bit(&mut self) -> Step<()> {
        let at = self.pos;
        let id = self.signal_id()?;
        match self.signals[id as usize - 1] {
            Some(Value::VectorBit(n)) => self.slice(at, n, id, id),
            Some(_) => Ok(()),
            None => {
                self.signals[id as usize - 1] = Some(Value::Byte);
                Ok(())
            }
        }
    }

    /// A port bound to part of vector `n`: wellen searches the vector's list of slices for it
    /// and appends it when new.
    fn slice(&mut self, at: usize, n: usize, first: u64, last: u64) -> Step<()> {
        let vector = &mut self.vectors[n];
        if (first, last - first + 1) == (vector.first, vector.bits) {
            return Ok(());
        }
        self.slice_steps = self.slice_steps.saturating_add(vector.slices);
        if self.slices.insert((n, first, last)) {
            vector.slices += 1;
        }
        if self.slice_steps > MAX_GHW_SLICE_STEPS {
            return Err(self.refuse(
                at,
                format!("vector slices: {} steps of searching them", self.slice_steps),
                format!("{MAX_GHW_SLICE_STEPS} steps"),
            ));
        }
        Ok(())
    }

    fn vector(&mut self, at: usize, first: u64, bits: u64) -> Step<()> {
        let ids = first as usize - 1..(first + bits) as usize - 1;
        if let Some(taken) = self.signals[ids.clone()].iter().flatten().next() {
            // The same bits again (a port and its signal): wellen reuses or slices the vector
            // (or panics when they are not part of one).
            return match *taken {
                Value::VectorBit(n) => self.slice(at, n, first, first + bits - 1),
                _ => Ok(()),
            };
        }
        let n = self.vectors.len();
        // Nine-state values take half a byte per bit in wellen's encoding, two-state ones less.
        self.vectors.push(Vector { first, bits, bytes: bits.div_ceil(2), last_step: u64::MAX, slices: 0 });
        for slot in &mut self.signals[ids] {
            *slot = Some(Value::VectorBit(n));
        }
        Ok(())
    }

    /// The value sections, counting the bytes wellen stores for vectors.
    fn body(&mut self) -> Step<()> {
        let declared: Vec<Value> = self.signals.iter().flatten().copied().collect();
        let mut step = 0u64;
        loop {
            let at = self.pos;
            match self.take(4)? {
                b"SNP\0" => {
                    self.take(12)?;
                    step += 1;
                    for &value in &declared {
                        self.value(value, step)?;
                    }
                    self.costs(at)?;
                    if self.take(4)? != b"ESN\0" {
                        return Err(Halt::ReaderFails);
                    }
                }
                b"CYC\0" => {
                    self.take(8)?;
                    loop {
                        step += 1;
                        let mut id = 0u64;
                        loop {
                            let delta = self.leb()?;
                            if delta == 0 {
                                break;
                            }
                            // wellen adds in a usize and keeps the low 32 bits as the id.
                            id = id.wrapping_add(delta);
                            let index = (id as u32).checked_sub(1).ok_or(Halt::ReaderFails)?;
                            let value = *declared.get(index as usize).ok_or(Halt::ReaderFails)?;
                            self.value(value, step)?;
                        }
                        self.costs(at)?;
                        if self.sleb()? < 0 {
                            break;
                        }
                    }
                    if self.take(4)? != b"ECY\0" {
                        return Err(Halt::ReaderFails);
                    }
                }
                b"DIR\0" => {
                    self.take(4)?;
                    let entries = self.u32()?;
                    self.take(usize::try_from(entries.saturating_mul(8)).map_err(|_| Halt::ReaderFails)?)?;
                    if self.take(4)? != b"EOD\0" {
                        return Err(Halt::ReaderFails);
                    }
                }
                b"TAI\0" => {
                    self.take(TAILER_LEN - 4)?;
                    return Ok(());
                }
                _ => return Err(Halt::ReaderFails),
            }
        }
    }

    fn value(&mut self, value: Value, step: u64) -> Step<()> {
        match value {
            Value::Byte => {
                self.u8()?;
            }
            Value::Leb128 => {
                self.sleb()?;
            }
            Value::F64 => {
                self.take(8)?;
            }
            Value::VectorBit(n) => {
                self.u8()?;
                let vector = &mut self.vectors[n];
                // The whole value once per step it changes in; a bit changing twice in one
                // step stores it once more (counted per bit read, generously).
                let stored = if vector.last_step == step { 2 } else { vector.bytes };
                vector.last_step = step;
                self.stored = self.stored.saturating_add(stored);
                self.scanned = self.scanned.saturating_add(vector.bits.div_ceil(8));
            }
        }
        Ok(())
    }

    fn costs(&self, at: usize) -> Step<()> {
        if self.stored > MAX_GHW_VALUE_BYTES {
            return Err(self.refuse(
                at,
                format!("vector values: {} bytes stored by the section at byte {at}", self.stored),
                format!("{MAX_GHW_VALUE_BYTES} bytes"),
            ));
        }
        if self.scanned > MAX_GHW_VECTOR_SCAN_BYTES {
            return Err(self.refuse(
                at,
                format!("vector change flags: {} bytes scanned by the section at byte {at}", self.scanned),
                format!("{MAX_GHW_VECTOR_SCAN_BYTES} bytes"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk must follow GHDL's real files to their tailer: stopping early would leave
    /// the rest unchecked.
    #[test]
    fn the_walk_reads_every_real_ghw_to_its_tailer() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/ghw");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "ghw") {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let mut walk = Walk::new(&data);
            assert!(matches!(walk.run(), Ok(())), "{} stopped at byte {}", path.display(), walk.pos);
            assert_eq!(walk.pos, data.len(), "{}", path.display());
            assert!(!walk.vectors.is_empty() && walk.signals.iter().all(Option::is_some));
            seen += 1;
        }
        assert_eq!(seen, 3);
    }
}
