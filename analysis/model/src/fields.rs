//! Typed event fields. An event's field values are stored varint-encoded in one byte arena
//! (strings as their symbol, padded to two bytes); the [`Layout`] of the event (its name and
//! its fields' names and kinds) says how to read them. Layouts are interned, so a million
//! `sched_switch` events share one.

use super::intern::Sym;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FieldKind {
    /// Signed integer (zigzag varint).
    Int,
    /// Unsigned 64-bit integer: addresses, masks, `4294967295`-style values (varint).
    UInt,
    /// Interned string (varint of the symbol, at least two bytes: [`str_len`]).
    Str,
    /// Unsigned, stored as [`FieldKind::UInt`] and read in hexadecimal: a command argument,
    /// a register (`arg=0x1AA`). Its values are [`FieldValue::UInt`].
    Hex,
}

impl FieldKind {
    /// Whether a value of this kind is stored as `v` is.
    pub fn holds(self, v: FieldValue) -> bool {
        self == v.kind() || (self == FieldKind::Hex && matches!(v, FieldValue::UInt(_)))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldValue {
    Int(i64),
    UInt(u64),
    Str(Sym),
}

impl FieldValue {
    pub fn kind(self) -> FieldKind {
        match self {
            FieldValue::Int(_) => FieldKind::Int,
            FieldValue::UInt(_) => FieldKind::UInt,
            FieldValue::Str(_) => FieldKind::Str,
        }
    }

    /// The value as a signed integer where it is one (`UInt` above `i64::MAX` wraps, as C does).
    pub fn as_i64(self) -> Option<i64> {
        match self {
            FieldValue::Int(v) => Some(v),
            FieldValue::UInt(v) => Some(v as i64),
            FieldValue::Str(_) => None,
        }
    }
}

/// What an event's field bytes mean: its name and its fields in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    pub event: Sym,
    pub fields: Vec<(Sym, FieldKind)>,
}

impl Layout {
    pub fn field_index(&self, name: Sym) -> Option<usize> {
        self.fields.iter().position(|&(n, _)| n == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct LayoutId(pub u32);
