//! The SD bus's checksums: CRC7 (x^7 + x^3 + 1) of command and response tokens, and
//! CRC16-CCITT (x^16 + x^12 + x^5 + 1, initial 0) of each data line. Both run over bits,
//! most significant first, as the bus sends them.

/// CRC7 of `bits` (each 0 or 1).
pub fn crc7(bits: impl IntoIterator<Item = u8>) -> u8 {
    let mut crc = 0u8;
    for b in bits {
        let top = (crc >> 6) & 1;
        crc = (crc << 1) & 0x7f;
        if top ^ (b & 1) == 1 {
            crc ^= 0x09;
        }
    }
    crc
}

/// CRC16-CCITT of `bits` (each 0 or 1).
pub fn crc16(bits: impl IntoIterator<Item = u8>) -> u16 {
    let mut crc = 0u16;
    for b in bits {
        let top = (crc >> 15) as u8 & 1;
        crc <<= 1;
        if top ^ (b & 1) == 1 {
            crc ^= 0x1021;
        }
    }
    crc
}

/// The bits of `bytes`, most significant first.
pub fn bits_of(bytes: &[u8]) -> impl Iterator<Item = u8> + '_ {
    bytes.iter().flat_map(|&b| (0..8).rev().map(move |i| (b >> i) & 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sd_values() {
        // CMD0 with argument 0 is sent as 40 00 00 00 00 95: CRC7 0x4A.
        assert_eq!(crc7(bits_of(&[0x40, 0, 0, 0, 0])), 0x4A);
        // CMD8 with 0x1AA: 48 00 00 01 AA 87.
        assert_eq!(crc7(bits_of(&[0x48, 0, 0, 1, 0xAA])), 0x43);
        // The SD spec's CRC16 example: 512 bytes of 0xFF give 0x7FA1.
        assert_eq!(crc16(bits_of(&[0xFF; 512])), 0x7FA1);
    }
}
