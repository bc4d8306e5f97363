//! The protobuf wire format at the level the importer frames messages: a bounds-checked
//! walk over one message's fields that knows each field's byte offset in the file.
//!
//! prost decodes the nested and repeated messages; this walk serves where prost cannot:
//! splitting a `Trace` into packets without copying, dispatching an `FtraceEvent`'s oneof
//! while keeping event types latscope has no schema for, and reporting where in the file a
//! record broke. [`Leaf`] reads the flat ftrace event messages (scalars and strings), which
//! come by the million: prost copies every bytes field into a fresh allocation, which cost
//! more than the rest of the decode.

use std::fmt;

/// A varint is at most 10 bytes (64 bits in 7-bit groups); the 10th may only hold bit 63.
const MAX_VARINT_BYTES: usize = 10;

/// One field's value as the wire carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl Value<'_> {
    /// A scalar as an unsigned integer (`None` for length-delimited values).
    pub(crate) fn as_u64(self) -> Option<u64> {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => Some(v),
            Value::Fixed32(v) => Some(u64::from(v)),
            Value::Bytes(_) => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Field<'a> {
    pub number: u32,
    pub value: Value<'a>,
    /// Absolute offset of the field's key in the file.
    pub at: u64,
    /// Absolute offset of the value (the payload of a length-delimited field).
    pub value_at: u64,
}

/// A malformed field: where it starts and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WireError {
    pub at: u64,
    pub what: &'static str,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte offset {}: {}", self.at, self.what)
    }
}

/// Reads a varint at `*pos`; `Err` names what is wrong. Never reads past `buf`.
#[inline(always)]
pub(crate) fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, &'static str> {
    let at = *pos;
    // Keys and most values of ftrace events take one or two bytes.
    match buf.get(at..) {
        Some([b0, ..]) if *b0 < 0x80 => {
            *pos = at + 1;
            Ok(u64::from(*b0))
        }
        Some([b0, b1, ..]) if *b1 < 0x80 => {
            *pos = at + 2;
            Ok(u64::from(b0 & 0x7f) | (u64::from(*b1) << 7))
        }
        // Timestamps take 5 to 8 bytes: read eight at once and gather their 7-bit groups.
        Some(b) if b.len() >= 8 => {
            let word = u64::from_le_bytes(b[..8].try_into().unwrap_or([0xff; 8]));
            let stops = !word & 0x8080_8080_8080_8080;
            if stops == 0 {
                return varint_bytewise(buf, pos);
            }
            let len = (stops.trailing_zeros() / 8 + 1) as usize;
            let keep = u64::MAX >> (64 - 8 * len);
            let mut x = word & keep & 0x7f7f_7f7f_7f7f_7f7f;
            x = ((x & 0x7f00_7f00_7f00_7f00) >> 1) | (x & 0x007f_007f_007f_007f);
            x = ((x & 0x3fff_0000_3fff_0000) >> 2) | (x & 0x0000_3fff_0000_3fff);
            x = ((x & 0x0fff_ffff_0000_0000) >> 4) | (x & 0x0000_0000_0fff_ffff);
            *pos = at + len;
            Ok(x)
        }
        _ => varint_bytewise(buf, pos),
    }
}

/// [`varint`] a byte at a time, past its fast paths; says what is wrong with a broken one.
fn varint_bytewise(buf: &[u8], pos: &mut usize) -> Result<u64, &'static str> {
    let mut v = 0u64;
    for i in 0..MAX_VARINT_BYTES {
        let Some(&b) = buf.get(*pos + i) else {
            return Err("truncated varint");
        };
        if i == MAX_VARINT_BYTES - 1 && b > 1 {
            return Err("varint longer than 10 bytes or above 2^64");
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *pos += i + 1;
            return Ok(v);
        }
    }
    Err("varint longer than 10 bytes or above 2^64")
}

/// The fields of one message held in `buf`, which starts at file offset `base`. Stops at
/// the first malformed field (yielding its error once).
#[derive(Debug, Clone)]
pub(crate) struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
    failed: bool,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(buf: &'a [u8], base: u64) -> Self {
        Fields { buf, pos: 0, base, failed: false }
    }

    fn fail(&mut self, at: usize, what: &'static str) -> Option<Result<Field<'a>, WireError>> {
        self.failed = true;
        Some(Err(WireError { at: self.base + at as u64, what }))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, WireError>;

    // Always inlined: called a dozen times per event, and inlined the offsets nobody reads
    // and the result's wrapping are optimised away.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let start = self.pos;
        let key = match varint(self.buf, &mut self.pos) {
            Ok(k) => k,
            Err(e) => return self.fail(start, e),
        };
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return self.fail(start, "field number 0 or above 2^29");
        }
        let number = number as u32;
        let value_start = self.pos;
        let value = match key & 7 {
            0 => match varint(self.buf, &mut self.pos) {
                Ok(v) => Value::Varint(v),
                Err(e) => return self.fail(value_start, e),
            },
            1 => {
                let Some(b) = self.buf.get(self.pos..self.pos + 8) else {
                    return self.fail(value_start, "truncated 64-bit field");
                };
                self.pos += 8;
                Value::Fixed64(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            }
            2 => {
                let len = match varint(self.buf, &mut self.pos) {
                    Ok(v) => v,
                    Err(e) => return self.fail(value_start, e),
                };
                let from = self.pos;
                let remaining = (self.buf.len() - from) as u64;
                if len > remaining {
                    return self.fail(start, "length-delimited field runs past the end of its message");
                }
                self.pos = from + len as usize;
                return Some(Ok(Field {
                    number,
                    value: Value::Bytes(&self.buf[from..self.pos]),
                    at: self.base + start as u64,
                    value_at: self.base + from as u64,
                }));
            }
            5 => {
                let Some(b) = self.buf.get(self.pos..self.pos + 4) else {
                    return self.fail(value_start, "truncated 32-bit field");
                };
                self.pos += 4;
                Value::Fixed32(u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
            }
            3 | 4 => return self.fail(start, "group wire type (3/4), which Perfetto never writes"),
            _ => return self.fail(start, "invalid wire type 6 or 7"),
        };
        Some(Ok(Field {
            number,
            value,
            at: self.base + start as u64,
            value_at: self.base + value_start as u64,
        }))
    }
}

/// A flat message's fields `1..N` read in one walk, borrowing from the buffer: the last
/// occurrence of a field wins and other field numbers are skipped, as protobuf decoders do;
/// an absent field reads as its type's default. A field of the wrong wire type is an error
/// when it is read, as prost refuses it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leaf<'a, const N: usize> {
    fields: [Option<Value<'a>>; N],
}

impl<'a, const N: usize> Leaf<'a, N> {
    pub(crate) fn read(buf: &'a [u8]) -> Result<Self, String> {
        let mut fields = [None; N];
        for f in Fields::new(buf, 0) {
            let f = f.map_err(|e| format!("inner offset {}: {}", e.at, e.what))?;
            if let Some(slot) = fields.get_mut(f.number as usize) {
                *slot = Some(f.value);
            }
        }
        Ok(Leaf { fields })
    }

    fn get(&self, n: usize) -> Option<Value<'a>> {
        self.fields.get(n).copied().flatten()
    }

    fn varint_opt(&self, n: usize) -> Result<Option<u64>, String> {
        match self.get(n) {
            None => Ok(None),
            Some(Value::Varint(v)) => Ok(Some(v)),
            Some(_) => Err(format!("field {n} has the wrong wire type (a varint expected)")),
        }
    }

    /// A `uint64` field.
    pub(crate) fn u64(&self, n: usize) -> Result<u64, String> {
        Ok(self.varint_opt(n)?.unwrap_or(0))
    }

    /// A `uint32` field (the low 32 bits, as protobuf truncates).
    pub(crate) fn u32(&self, n: usize) -> Result<u32, String> {
        Ok(self.u64(n)? as u32)
    }

    /// An `int64` field.
    pub(crate) fn i64(&self, n: usize) -> Result<i64, String> {
        Ok(self.u64(n)? as i64)
    }

    /// An `int32` field (negative values are sign-extended to ten bytes on the wire).
    pub(crate) fn i32(&self, n: usize) -> Result<i32, String> {
        Ok(self.u64(n)? as i32)
    }

    /// An `optional int32` field.
    pub(crate) fn i32_opt(&self, n: usize) -> Result<Option<i32>, String> {
        Ok(self.varint_opt(n)?.map(|v| v as i32))
    }

    /// A `bytes` or `string` field, borrowed.
    pub(crate) fn bytes(&self, n: usize) -> Result<&'a [u8], String> {
        match self.get(n) {
            None => Ok(&[]),
            Some(Value::Bytes(b)) => Ok(b),
            Some(_) => Err(format!("field {n} has the wrong wire type (length-delimited expected)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(buf: &[u8]) -> Vec<Result<Field<'_>, WireError>> {
        Fields::new(buf, 100).collect()
    }

    #[test]
    fn varints_of_every_length_read_back_at_any_position() {
        let mut values: Vec<u64> = (0..64).map(|b| 1u64 << b).collect();
        values.extend((0..64).map(|b| (1u64 << b) - 1));
        values.extend([u64::MAX, 703_770_000_123_456, 300, 127, 128, 16_383, 16_384]);
        for &v in &values {
            let mut enc = Vec::new();
            prost::encoding::encode_varint(v, &mut enc);
            // Alone and followed by more bytes, after a one-byte prefix.
            for tail in [0usize, 9] {
                let mut buf = vec![0x05];
                buf.extend(&enc);
                buf.extend(std::iter::repeat_n(0x80, tail));
                let mut pos = 1;
                assert_eq!(varint(&buf, &mut pos), Ok(v), "{v} tail {tail}");
                assert_eq!(pos, 1 + enc.len(), "{v} tail {tail}");
            }
        }
        // Unterminated within 8 bytes and then cut: the bytewise path says so.
        let mut pos = 0;
        assert_eq!(varint(&[0x80; 8], &mut pos), Err("truncated varint"));
    }

    #[test]
    fn walks_every_wire_type_with_offsets() {
        // field 1 varint 300, field 2 bytes "ab", field 3 fixed32 7, field 4 fixed64 9
        let buf = [0x08, 0xac, 0x02, 0x12, 0x02, b'a', b'b', 0x1d, 7, 0, 0, 0, 0x21, 9, 0, 0, 0, 0, 0, 0, 0];
        let f: Vec<_> = all(&buf).into_iter().map(|r| r.map(|f| (f.number, f.value, f.at))).collect();
        assert_eq!(
            f,
            vec![
                Ok((1, Value::Varint(300), 100)),
                Ok((2, Value::Bytes(b"ab"), 103)),
                Ok((3, Value::Fixed32(7), 107)),
                Ok((4, Value::Fixed64(9), 112)),
            ]
        );
    }

    #[test]
    fn malformed_fields_stop_the_walk_with_their_offset() {
        // An 11-byte varint.
        let long = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(
            all(&long),
            vec![Err(WireError { at: 101, what: "varint longer than 10 bytes or above 2^64" })]
        );
        // A 10-byte varint above 2^64.
        let big = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(all(&big)[0].is_err());
        // u64::MAX is the largest 10-byte varint.
        let max = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(all(&max)[0].as_ref().map(|f| f.value), Ok(Value::Varint(u64::MAX)));
        // A length past the end, after one good field.
        let past = [0x08, 0x01, 0x12, 0x05, b'a'];
        let r = all(&past);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[1],
            Err(WireError { at: 102, what: "length-delimited field runs past the end of its message" })
        );
        // Groups and wire types 6/7.
        assert!(all(&[0x0b])[0].is_err());
        assert!(all(&[0x0e])[0].is_err());
        // Field number 0.
        assert!(all(&[0x00, 0x01])[0].is_err());
        // Truncated fixed fields.
        assert!(all(&[0x1d, 1, 2])[0].is_err());
        assert!(all(&[0x21, 1, 2])[0].is_err());
    }
}
