//! The frame layer over sampled bits: the clocking step collects bits (0/1 per clock), they
//! are packed MSB first and nom's bit parsers (`nom::bits`) split them into fields. A parse
//! error carries the bit position where the frame ran short.

use nom::{IResult, Parser, bits::complete::take};

pub(crate) type BitInput<'a> = (&'a [u8], usize);
type BitError<'a> = nom::error::Error<BitInput<'a>>;

/// Packs bits (each 0 or 1) MSB first; the last byte is padded with zeros.
pub(crate) fn pack(bits: &[u8]) -> Vec<u8> {
    bits.chunks(8)
        .map(|c| c.iter().enumerate().fold(0u8, |acc, (i, &b)| acc | ((b & 1) << (7 - i))))
        .collect()
}

/// A frame that ended before its fields did: the bit where parsing stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShortFrame {
    pub bit: usize,
}

fn position(whole: &[u8], e: &nom::Err<BitError<'_>>) -> ShortFrame {
    match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => {
            let (rest, bit) = e.input;
            ShortFrame { bit: (whole.len() - rest.len()) * 8 + bit }
        }
        nom::Err::Incomplete(_) => ShortFrame { bit: whole.len() * 8 },
    }
}

/// An SD command or 48-bit response token: start, transmission, index (or reserved),
/// argument (or status, OCR), CRC7, end bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token48 {
    pub start: u8,
    pub transmission: u8,
    pub index: u8,
    pub arg: u32,
    pub crc: u8,
    pub end: u8,
}

fn token48(i: BitInput<'_>) -> IResult<BitInput<'_>, Token48, BitError<'_>> {
    let (i, (start, transmission, index, arg, crc, end)) = (
        take::<_, u8, _, _>(1usize),
        take::<_, u8, _, _>(1usize),
        take::<_, u8, _, _>(6usize),
        take::<_, u32, _, _>(32usize),
        take::<_, u8, _, _>(7usize),
        take::<_, u8, _, _>(1usize),
    )
        .parse(i)?;
    Ok((i, Token48 { start, transmission, index, arg, crc, end }))
}

pub(crate) fn parse_token48(bits: &[u8]) -> Result<Token48, ShortFrame> {
    let packed = pack(bits);
    if bits.len() < 48 {
        return Err(ShortFrame { bit: bits.len() });
    }
    token48((&packed, 0)).map(|(_, t)| t).map_err(|e| position(&packed, &e))
}

/// A 136-bit R2 response: start, transmission, six reserved bits, the CID or CSD register
/// (120 bits, as 15 bytes), its CRC7, end bit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token136 {
    pub start: u8,
    pub transmission: u8,
    pub register: Vec<u8>,
    pub crc: u8,
    pub end: u8,
}

fn token136(i: BitInput<'_>) -> IResult<BitInput<'_>, Token136, BitError<'_>> {
    let (i, (start, transmission, _reserved)) =
        (take::<_, u8, _, _>(1usize), take::<_, u8, _, _>(1usize), take::<_, u8, _, _>(6usize)).parse(i)?;
    let (i, register) = nom::multi::count(take::<_, u8, _, _>(8usize), 15).parse(i)?;
    let (i, (crc, end)) = (take::<_, u8, _, _>(7usize), take::<_, u8, _, _>(1usize)).parse(i)?;
    Ok((i, Token136 { start, transmission, register, crc, end }))
}

pub(crate) fn parse_token136(bits: &[u8]) -> Result<Token136, ShortFrame> {
    if bits.len() < 136 {
        return Err(ShortFrame { bit: bits.len() });
    }
    let packed = pack(bits);
    token136((&packed, 0)).map(|(_, t)| t).map_err(|e| position(&packed, &e))
}

/// One DAT line's part of a data block after its start bit: `data_bits` of data, CRC16,
/// end bit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineBlock {
    pub data: Vec<u8>,
    pub crc: u16,
    pub end: u8,
}

pub(crate) fn parse_line_block(bits: &[u8], data_bits: usize) -> Result<LineBlock, ShortFrame> {
    if bits.len() < data_bits + 17 || !data_bits.is_multiple_of(8) {
        return Err(ShortFrame { bit: bits.len().min(data_bits + 17) });
    }
    let packed = pack(bits);
    let mut parser = (
        nom::multi::count(take::<_, u8, _, _>(8usize), data_bits / 8),
        take::<_, u16, _, _>(16usize),
        take::<_, u8, _, _>(1usize),
    );
    parser
        .parse((&packed[..], 0))
        .map(|(_, (data, crc, end))| LineBlock { data, crc, end })
        .map_err(|e| position(&packed, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crc::bits_of;

    #[test]
    fn tokens_parse_and_short_ones_say_where() {
        let bits: Vec<u8> = bits_of(&[0x48, 0, 0, 1, 0xAA, 0x87]).collect();
        let t = parse_token48(&bits).unwrap();
        assert_eq!((t.start, t.transmission, t.index, t.arg, t.crc, t.end), (0, 1, 8, 0x1AA, 0x43, 1));
        assert_eq!(parse_token48(&bits[..30]), Err(ShortFrame { bit: 30 }));
        let mut r2: Vec<u8> = vec![0, 0, 1, 1, 1, 1, 1, 1];
        r2.extend(bits_of(&[0xAB; 15]));
        r2.extend([1, 0, 1, 0, 1, 0, 1, 1]);
        let t = parse_token136(&r2).unwrap();
        assert_eq!((t.register[14], t.crc, t.end), (0xAB, 0b1010101, 1));
        let mut line: Vec<u8> = bits_of(&[1, 2, 3, 4]).collect();
        line.extend(bits_of(&[0xBE, 0xEF]));
        line.push(1);
        let b = parse_line_block(&line, 32).unwrap();
        assert_eq!((b.data, b.crc, b.end), (vec![1, 2, 3, 4], 0xBEEF, 1));
    }
}
