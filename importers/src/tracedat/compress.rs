//! Decompression of v7 sections and per-CPU chunks (zstd and zlib, as named in the file's
//! header), with hard limits: a section never inflates past 4 GiB nor past 1000× its
//! compressed size, and the output buffer grows with what the decoder really produces,
//! never with a size claimed by the file.

use crate::{ParseFailure, Position};
use std::io::Read;

/// The largest uncompressed size we accept for one section or chunk.
pub(crate) const MAX_UNCOMPRESSED: u64 = 4 << 30;
/// The largest expansion ratio we accept; real trace data compresses 3–20×.
pub(crate) const MAX_RATIO: u64 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    None,
    Zstd,
    Zlib,
}

impl Codec {
    pub(crate) fn from_name(name: &[u8]) -> Option<Codec> {
        match name {
            b"none" | b"" => Some(Codec::None),
            b"zstd" => Some(Codec::Zstd),
            b"zlib" => Some(Codec::Zlib),
            _ => None,
        }
    }
}

/// Checks a claimed uncompressed size against the limits.
pub(crate) fn check_size(at: u64, compressed: u64, uncompressed: u64) -> Result<(), ParseFailure> {
    let limit = MAX_UNCOMPRESSED.min(compressed.saturating_mul(MAX_RATIO).max(64 * 1024));
    if uncompressed > limit {
        return Err(ParseFailure::Limit {
            at: Position::Byte(at),
            what: format!("uncompressed size {uncompressed} of a {compressed}-byte compressed block"),
            limit: format!("{limit} bytes (4 GiB or {MAX_RATIO}x the compressed size)"),
        });
    }
    Ok(())
}

/// Inflates `input` (a block starting at file offset `at`), which must produce exactly
/// `expected` bytes.
pub(crate) fn decompress(
    codec: Codec,
    input: &[u8],
    expected: u64,
    at: u64,
) -> Result<Vec<u8>, ParseFailure> {
    let mut out = Vec::new();
    Inflater::default().inflate(codec, input, expected, at, &mut out)?;
    Ok(out)
}

/// Reusable decompression state: the zstd context keeps its window buffers between
/// chunks, so decoding many chunks does not allocate (and page-fault) for each one.
/// libzstd (through the `zstd` crate) decodes about twice as fast as the pure-Rust ruzstd
/// we used first, and zstd is what makes v7 files slow to read.
#[derive(Default)]
pub(crate) struct Inflater {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl std::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inflater")
    }
}

impl Inflater {
    /// Like [`decompress`], into `out` (cleared first, capacity kept).
    pub(crate) fn inflate(
        &mut self,
        codec: Codec,
        input: &[u8],
        expected: u64,
        at: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), ParseFailure> {
        check_size(at, input.len() as u64, expected)?;
        let fail = |m: String| ParseFailure::invalid(Position::Byte(at), m);
        out.clear();
        // Reserve at most a modest amount up front; `read_to_end` grows with real output.
        out.reserve((expected as usize).min(input.len().saturating_mul(8)).min(16 << 20));
        // Read one byte more than expected so that an overlong stream is noticed.
        let limit = expected + 1;
        let res = match codec {
            Codec::None => {
                out.extend_from_slice(&input[..input.len().min(limit as usize)]);
                Ok(out.len())
            }
            Codec::Zstd => {
                let dec = match &mut self.zstd {
                    Some(d) => d,
                    None => match zstd::bulk::Decompressor::new() {
                        Ok(d) => self.zstd.insert(d),
                        Err(e) => return Err(fail(format!("zstd: {e}"))),
                    },
                };
                // The output buffer's capacity is the limit: a frame that inflates to more
                // than `limit` bytes fails instead of growing it (`check_size` bounded it).
                out.reserve_exact(limit as usize);
                dec.decompress_to_buffer(input, out)
            }
            Codec::Zlib => flate2::read::ZlibDecoder::new(input).take(limit).read_to_end(out),
        };
        if let Err(e) = res {
            return Err(fail(format!("{codec:?} decompression failed: {e}")));
        }
        if out.len() as u64 != expected {
            return Err(fail(format!(
                "{codec:?} block inflates to {} bytes, the header says {expected}",
                if out.len() as u64 > expected {
                    format!("more than {expected}")
                } else {
                    out.len().to_string()
                }
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn zlib_round_trip_and_limits() {
        let plain: Vec<u8> = (0..10_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&plain).expect("compress");
        let z = enc.finish().expect("finish");
        let out = decompress(Codec::Zlib, &z, plain.len() as u64, 0).expect("inflate");
        assert_eq!(out, plain);
        // A wrong expected size is an error, both ways.
        assert!(decompress(Codec::Zlib, &z, plain.len() as u64 - 1, 0).is_err());
        assert!(decompress(Codec::Zlib, &z, plain.len() as u64 + 1, 0).is_err());
        // Claimed sizes beyond the ratio are refused before any work.
        let e = decompress(Codec::Zstd, &[0u8; 10], 1 << 31, 7).err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("byte offset 7") && e.contains("limit")));
        assert!(decompress(Codec::Zstd, b"garbage!", 100, 0).is_err());
    }
}
