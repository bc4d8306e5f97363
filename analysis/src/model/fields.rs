//! Typed event fields. An event's field values are stored varint-encoded in one byte arena;
//! the [`Layout`] of the event (its name and its fields' names and kinds) says how to read
//! them. Layouts are interned, so a million `sched_switch` events share one.

use super::intern::Sym;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FieldKind {
    /// Signed integer (zigzag varint).
    Int,
    /// Unsigned 64-bit integer: addresses, masks, `4294967295`-style values (varint).
    UInt,
    /// Interned string (varint of the symbol).
    Str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`; a truncated one reads as what it has (the arena is ours, so
/// that only happens on a bug, never on input).
#[inline]
pub(crate) fn get_varint(data: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&b) = data.get(*pos) {
        *pos += 1;
        if shift < 64 {
            v |= u64::from(b & 0x7f) << shift;
        }
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

/// Moves `*pos` past one varint (as [`get_varint`] would read it).
#[inline]
pub(crate) fn skip_varint(data: &[u8], pos: &mut usize) {
    while let Some(&b) = data.get(*pos) {
        *pos += 1;
        if b < 0x80 {
            break;
        }
    }
}

#[inline]
pub(crate) fn encode_value(out: &mut Vec<u8>, v: FieldValue) {
    match v {
        FieldValue::Int(i) => put_varint(out, ((i << 1) ^ (i >> 63)) as u64),
        FieldValue::UInt(u) => put_varint(out, u),
        FieldValue::Str(s) => put_varint(out, u64::from(s.0)),
    }
}

#[inline]
pub(crate) fn decode_value(data: &[u8], pos: &mut usize, kind: FieldKind) -> FieldValue {
    let raw = get_varint(data, pos);
    match kind {
        FieldKind::Int => FieldValue::Int(((raw >> 1) as i64) ^ -((raw & 1) as i64)),
        FieldKind::UInt => FieldValue::UInt(raw),
        FieldKind::Str => FieldValue::Str(Sym(raw as u32)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        let vals = [
            FieldValue::Int(0),
            FieldValue::Int(-1),
            FieldValue::Int(i64::MIN),
            FieldValue::Int(i64::MAX),
            FieldValue::UInt(u64::MAX),
            FieldValue::UInt(4_294_967_295),
            FieldValue::Str(Sym(300)),
        ];
        let mut buf = Vec::new();
        for v in vals {
            encode_value(&mut buf, v);
        }
        let mut pos = 0;
        for v in vals {
            assert_eq!(decode_value(&buf, &mut pos, v.kind()), v);
        }
        assert_eq!(pos, buf.len());
    }
}
