//! Bounds-checked reading of the file's integers and strings in the file's byte order.
//!
//! Every read checks the remaining length first, so a size taken from the file can never
//! make us slice (or allocate) past what the file holds. Errors name the absolute byte
//! offset in the file.

use crate::{ParseFailure, Position};

/// Byte order of a trace.dat file (the endian byte of the prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endian {
    Little,
    Big,
}

impl Endian {
    #[inline]
    pub(crate) fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    #[inline]
    pub(crate) fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    #[inline]
    pub(crate) fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    /// Reads an unsigned integer of `size` (1, 2, 4 or 8) bytes at `off`; `None` when out of
    /// bounds or of another size.
    #[inline]
    pub(crate) fn read_uint(self, data: &[u8], off: usize, size: usize) -> Option<u64> {
        let b = data.get(off..off.checked_add(size)?)?;
        Some(match size {
            1 => u64::from(b[0]),
            2 => u64::from(self.u16([b[0], b[1]])),
            4 => u64::from(self.u32([b[0], b[1], b[2], b[3]])),
            8 => self.u64([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            _ => return None,
        })
    }

    #[inline]
    pub(crate) fn read_u32(self, data: &[u8], off: usize) -> Option<u32> {
        let b = data.get(off..off.checked_add(4)?)?;
        Some(self.u32([b[0], b[1], b[2], b[3]]))
    }
}

/// A reading position in a byte slice that starts at file offset `base`.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    pub(crate) endian: Endian,
    /// What is being read, for error messages ("kallsyms section", …).
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], base: u64, endian: Endian, what: &'static str) -> Self {
        Self { data, pos: 0, base, endian, what }
    }

    /// The absolute file offset of the current position (for compressed sections: of the
    /// section, plus the position in its uncompressed body).
    pub(crate) fn offset(&self) -> u64 {
        self.base.saturating_add(self.pos as u64)
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or(&[])
    }

    pub(crate) fn set_what(&mut self, what: &'static str) {
        self.what = what;
    }

    /// An error about the `width`-byte field just read, at that field's offset.
    pub(crate) fn field_error(&self, width: u64, message: impl std::fmt::Display) -> ParseFailure {
        let at = self.offset().saturating_sub(width);
        ParseFailure::invalid(Position::Byte(at), format!("{}: {message}", self.what))
    }

    pub(crate) fn error(&self, message: impl std::fmt::Display) -> ParseFailure {
        ParseFailure::invalid(Position::Byte(self.offset()), format!("{}: {message}", self.what))
    }

    pub(crate) fn seek(&mut self, pos: usize) -> Result<(), ParseFailure> {
        if pos > self.data.len() {
            return Err(ParseFailure::invalid(
                Position::Byte(self.base.saturating_add(pos as u64)),
                format!("{}: offset is beyond the end of the file ({} bytes)", self.what, self.data.len()),
            ));
        }
        self.pos = pos;
        Ok(())
    }

    pub(crate) fn bytes(&mut self, n: u64) -> Result<&'a [u8], ParseFailure> {
        let n = usize::try_from(n).ok().filter(|&n| n <= self.remaining()).ok_or_else(|| {
            self.error(format!("needs {n} bytes but only {} remain (truncated file?)", self.remaining()))
        })?;
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ParseFailure> {
        let b = self.bytes(N as u64)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, ParseFailure> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, ParseFailure> {
        let b = self.array()?;
        Ok(self.endian.u16(b))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, ParseFailure> {
        let b = self.array()?;
        Ok(self.endian.u32(b))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, ParseFailure> {
        let b = self.array()?;
        Ok(self.endian.u64(b))
    }

    /// A NUL-terminated string (without its NUL).
    pub(crate) fn cstr(&mut self) -> Result<&'a [u8], ParseFailure> {
        let rest = self.rest();
        let n = memchr::memchr(0, rest).ok_or_else(|| self.error("string is not NUL-terminated"))?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }

    /// Expects the exact bytes `tag`.
    pub(crate) fn tag(&mut self, tag: &[u8]) -> Result<(), ParseFailure> {
        let at = self.offset();
        let got = self.bytes(tag.len() as u64)?;
        if got != tag {
            return Err(ParseFailure::invalid(
                Position::Byte(at),
                format!("{}: expected {:?}, found {:?}", self.what, show(tag), show(got)),
            ));
        }
        Ok(())
    }
}

/// Printable form of a short byte string for messages.
pub(crate) fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).replace('\0', "\\0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_orders_and_refuses_overruns() {
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8, b'a', 0];
        let mut le = Cursor::new(&data, 100, Endian::Little, "test");
        assert_eq!(le.u16().ok(), Some(0x0201));
        assert_eq!(le.u32().ok(), Some(0x0605_0403));
        let mut be = Cursor::new(&data, 100, Endian::Big, "test");
        assert_eq!(be.u64().ok(), Some(0x0102_0304_0506_0708));
        assert_eq!(be.cstr().ok(), Some(&b"a"[..]));
        let err = be.u8().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("byte offset 110"), "{err}");
        let mut c = Cursor::new(&data, 0, Endian::Little, "test");
        assert!(c.bytes(u64::MAX).is_err());
        assert_eq!(Endian::Big.read_uint(&data, 6, 2), Some(0x0708));
        assert_eq!(Endian::Big.read_uint(&data, 9, 2), None);
    }
}
