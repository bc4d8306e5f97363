//! How an event's field values are stored in its table's field arena: one varint per value,
//! in the order of the event's [`Layout`](crate::Layout) fields. Signed integers are zigzag
//! encoded; unsigned integers are plain; strings are the varint of their [`Sym`], padded to
//! at least [`STR_MIN_BYTES`] bytes.
//!
//! The model reads and writes values through these functions; they are public for code
//! that works on raw arenas ([`EventTableParts::field_data`](crate::EventTableParts)),
//! such as importers that join tables built in parallel and renumber their strings.

use crate::fields::{FieldKind, FieldValue};
use crate::intern::Sym;

/// Reads a varint at `*pos`; a truncated one reads as what it has (the arena is ours, so
/// that only happens on a bug, never on input).
#[inline]
pub fn get_varint(data: &[u8], pos: &mut usize) -> u64 {
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
pub fn skip_varint(data: &[u8], pos: &mut usize) {
    while let Some(&b) = data.get(*pos) {
        *pos += 1;
        if b < 0x80 {
            break;
        }
    }
}

/// Strings are varints of their symbol padded to at least this many bytes (a varint may
/// carry continuation bytes of zero bits). Symbols below 2^14 — every string of a typical
/// trace — then always take two bytes, so code that renumbers symbols (an importer joining
/// parts built with interners of their own) can rewrite a string value where it lies with
/// [`write_varint_exact`]: only a change of byte length would move the values after it.
pub const STR_MIN_BYTES: usize = 2;

/// Bytes of the encoded string value of `sym`.
#[inline]
pub fn str_len(sym: Sym) -> usize {
    varint_len(u64::from(sym.0)).max(STR_MIN_BYTES)
}

/// Bytes of `v` as a plain (unpadded) varint.
#[inline]
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Writes `v` as a varint of exactly `out.len()` bytes; `false` (and nothing written) when it
/// does not fit.
#[inline]
pub fn write_varint_exact(out: &mut [u8], mut v: u64) -> bool {
    if out.is_empty() || varint_len(v) > out.len() {
        return false;
    }
    let last = out.len() - 1;
    for (i, b) in out.iter_mut().enumerate() {
        *b = (v & 0x7f) as u8 | if i < last { 0x80 } else { 0 };
        v >>= 7;
    }
    true
}

/// Appends `v`: integers as zigzag varints, unsigned integers as varints, strings as the
/// varint of their symbol padded to [`str_len`] bytes.
#[inline]
pub fn encode_value(out: &mut impl PushByte, v: FieldValue) {
    let (mut raw, min_len) = match v {
        FieldValue::Int(i) => (((i << 1) ^ (i >> 63)) as u64, 1),
        FieldValue::UInt(u) => (u, 1),
        FieldValue::Str(s) => (u64::from(s.0), STR_MIN_BYTES),
    };
    // Most values are one or two bytes: push them directly (the padded form of a small
    // symbol is `low | 0x80, 0`).
    let mut len = 1;
    while raw >= 0x80 || len < min_len {
        out.push_byte((raw as u8) | 0x80);
        raw >>= 7;
        len += 1;
    }
    out.push_byte(raw as u8);
}

/// Where [`encode_value`] appends: an importer's own arena or an event table's.
pub trait PushByte {
    fn push_byte(&mut self, b: u8);
}

impl PushByte for Vec<u8> {
    #[inline]
    fn push_byte(&mut self, b: u8) {
        self.push(b);
    }
}

impl PushByte for latscope_shared::SharedVec<u8> {
    #[inline]
    fn push_byte(&mut self, b: u8) {
        self.push(b);
    }
}

/// Reads the value of kind `kind` at `*pos` (as [`encode_value`] wrote it) and moves past it.
#[inline]
pub fn decode_value(data: &[u8], pos: &mut usize, kind: FieldKind) -> FieldValue {
    let raw = get_varint(data, pos);
    match kind {
        FieldKind::Int => FieldValue::Int(((raw >> 1) as i64) ^ -((raw & 1) as i64)),
        FieldKind::UInt | FieldKind::Hex => FieldValue::UInt(raw),
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
            FieldValue::Str(Sym(u32::MAX)),
            FieldValue::Int(7),
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

    #[test]
    fn strings_take_two_bytes_below_2_pow_14() {
        for (sym, len) in [(0, 2), (1, 2), (127, 2), (128, 2), (16383, 2), (16384, 3), (u32::MAX, 5)] {
            assert_eq!(str_len(Sym(sym)), len, "{sym}");
            let mut buf = Vec::new();
            encode_value(&mut buf, FieldValue::Str(Sym(sym)));
            assert_eq!(buf.len(), len);
            let mut pos = 0;
            assert_eq!(decode_value(&buf, &mut pos, FieldKind::Str), FieldValue::Str(Sym(sym)));
            assert_eq!(pos, len);
        }
        let mut two = [0u8; 2];
        assert!(write_varint_exact(&mut two, 16383));
        assert_eq!(get_varint(&two, &mut 0), 16383);
        assert!(!write_varint_exact(&mut two, 16384));
        assert_eq!(get_varint(&two, &mut 0), 16383, "unchanged when it does not fit");
    }
}
