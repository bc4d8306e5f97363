//! Bounds on the sizes an FST file declares, checked before wellen (through fst-reader)
//! reads it.
//!
//! fst-reader allocates from declared counts before it has read the data they describe:
//! `Vec::with_capacity(max_handle)` for the geometry, `vec![0u32; max_handle]` three times
//! per value-change block, the time table's item count, LZ4 output sizes, a whole-file gzip
//! wrapper decompressed into memory. A forged count there is an allocation failure, which
//! aborts the process instead of panicking, so `catch_unwind` around wellen cannot help.
//! Every such field is checked here against what the bytes can really hold: a count needs
//! at least one byte per item, and a compressed section expands at most by its
//! compressor's ratio (deflate 1032:1, LZ4 255:1). Absolute caps keep each allocation
//! within what this machine class can hold even when the ratio allows more.

use crate::{ParseFailure, Position};

/// Signals (handles) in one FST file: the reader keeps three u32 per handle per
/// value-change block plus its geometry, so 2^26 handles is ~1 GiB of tables.
pub const MAX_FST_HANDLES: u64 = 1 << 26;
/// The decompressed size of any one section (hierarchy, geometry, frame, time table) and
/// of a gzip-wrapped file.
pub const MAX_FST_SECTION_BYTES: u64 = 1 << 31;
/// Time steps in all value-change blocks together: fst-reader joins every block's time
/// table into one list of u64 at open, wellen and latscope copy it, and each block's table
/// may inflate 1032:1, so a 176 KB file declaring 180 M steps took 6.4 GB (about 36 bytes a
/// step). Each block is within its own checks; their sum is bounded here (2.4 GB).
pub const MAX_FST_TIME_STEPS: u64 = 1 << 26;
/// Deflate cannot expand more than 1032:1; LZ4 not more than 255:1 (plus a few bytes).
const DEFLATE_RATIO: u64 = 1032;
const LZ4_RATIO: u64 = 255;

// FST block types (fstapi.h `FST_BL_*`); the cut-short diagnosis in `wave` names blocks by them too.
const HEADER: u8 = 0;
pub(super) const VC_DATA: [u8; 3] = [1, 5, VC_DATA_ALIAS2];
/// `FST_BL_VCDATA_DYN_ALIAS2`: its position chain has its own encoding.
const VC_DATA_ALIAS2: u8 = 8;
const BLACKOUT: u8 = 2;
pub(super) const GEOMETRY: u8 = 3;
const HIERARCHY_GZIP: u8 = 4;
const HIERARCHY_LZ4: u8 = 6;
const HIERARCHY_LZ4_DUO: u8 = 7;
pub(super) const HIERARCHY: [u8; 3] = [HIERARCHY_GZIP, HIERARCHY_LZ4, HIERARCHY_LZ4_DUO];
const GZIP_WRAPPER: u8 = 254;
const SKIP: u8 = 255;
const HEADER_SECTION_LENGTH: u64 = 329;

/// Checks every block of an FST file (and, for a gzip-wrapped one, of the file inside).
/// A block that runs past the end of the file is refused here too, since fst-reader
/// reserves its declared length before finding out: [`Refused::PastEnd`], which the caller
/// words as a cut file.
pub fn check(data: &[u8]) -> Result<(), Refused> {
    check_blocks(data, None)
}

#[derive(Debug)]
pub enum Refused {
    /// A block declares more bytes than the file has left.
    PastEnd(ParseFailure),
    /// A size or count beyond what the file can hold or a limit.
    Bad(ParseFailure),
}

impl From<ParseFailure> for Refused {
    fn from(e: ParseFailure) -> Self {
        Refused::Bad(e)
    }
}

/// `wrapper`: the byte offset of the gzip wrapper when `data` is the file inside it, so
/// errors point at a place in the file the user has.
fn check_blocks(data: &[u8], wrapper: Option<u64>) -> Result<(), Refused> {
    let mut pos = 0usize;
    let mut time_steps = 0u64;
    while pos < data.len() {
        let kind = data[pos];
        // fst-reader stops at a block type it does not know (and then it is not FST to wellen).
        let Some(fixed) = fixed_fields(kind) else { return Ok(()) };
        let Some(section_length) = be_u64(data, pos + 1) else { return Ok(()) };
        let at = wrapper.unwrap_or(pos as u64);
        if kind == SKIP && section_length == 0 {
            return Ok(());
        }
        // Shorter than its own fixed fields, the reader would seek backwards into the block
        // it just read (and could go round forever).
        if section_length < fixed {
            return Err(Refused::Bad(ParseFailure::invalid(
                Position::Byte(at),
                format!(
                    "the FST block of type {kind} at byte {pos} declares {section_length} bytes, fewer \
                     than its {fixed} bytes of fixed fields"
                ),
            )));
        }
        let end = pos.checked_add(1).and_then(|p| p.checked_add(usize::try_from(section_length).ok()?));
        let Some(end) = end.filter(|&e| e <= data.len()) else {
            return Err(Refused::PastEnd(ParseFailure::invalid(
                Position::Byte(at),
                format!(
                    "the FST block of type {kind} at byte {pos} declares {section_length} bytes, past \
                     the end of the file at byte {}",
                    data.len()
                ),
            )));
        };
        // The section starts at its length field and counts it.
        let section = &data[pos + 1..end];
        let at = wrapper.unwrap_or(pos as u64);
        match kind {
            HEADER => header(section, at)?,
            k if VC_DATA.contains(&k) => {
                time_steps = time_steps.saturating_add(value_changes(section, at, k == VC_DATA_ALIAS2)?);
                if time_steps > MAX_FST_TIME_STEPS {
                    return Err(Refused::Bad(limit(
                        at,
                        format!("time steps of the value-change blocks up to this one: {time_steps}"),
                        format!("{MAX_FST_TIME_STEPS} steps"),
                    )));
                }
            }
            BLACKOUT => {
                let (count, _) = varint(section, 8).unwrap_or((0, 0));
                // Each blackout is at least two bytes (activity flag, time delta).
                at_most(
                    count,
                    section_length / 2,
                    at,
                    "blackout count",
                    "two bytes per blackout in its block",
                )?;
            }
            GEOMETRY => {
                let uncompressed = be_u64(section, 8).unwrap_or(0);
                let max_handle = be_u64(section, 16).unwrap_or(0);
                let compressed = section_length.saturating_sub(24);
                inflated(uncompressed, compressed, DEFLATE_RATIO, at, "geometry block")?;
                handles(max_handle, at, "geometry block")?;
                // Each handle is a varint of at least one byte in the decompressed block.
                at_most(max_handle, uncompressed, at, "geometry handle count", "one byte per handle")?;
            }
            HIERARCHY_GZIP | HIERARCHY_LZ4 | HIERARCHY_LZ4_DUO => {
                let uncompressed = be_u64(section, 8).unwrap_or(0);
                let compressed = section_length.saturating_sub(16);
                let what = "hierarchy block";
                if kind == HIERARCHY_GZIP {
                    inflated(uncompressed, compressed, DEFLATE_RATIO, at, what)?;
                } else if kind == HIERARCHY_LZ4 {
                    inflated(uncompressed, compressed, LZ4_RATIO, at, what)?;
                } else {
                    // Two LZ4 passes: the first pass's size is a varint after the lengths.
                    let (first, _) = varint(section, 16).unwrap_or((0, 0));
                    inflated(first, compressed, LZ4_RATIO, at, "hierarchy block (first LZ4 pass)")?;
                    inflated(uncompressed, first, LZ4_RATIO, at, what)?;
                }
            }
            GZIP_WRAPPER if wrapper.is_none() => return gzip_wrapped(section, at),
            _ => {}
        }
        pos = end;
    }
    Ok(())
}

/// The bytes a block's section needs for its fixed fields (lengths, times, counts), or
/// `None` for a block type fst-reader does not know.
fn fixed_fields(kind: u8) -> Option<u64> {
    Some(match kind {
        HEADER => HEADER_SECTION_LENGTH,
        k if VC_DATA.contains(&k) => 4 * 8 + 3 * 8,
        BLACKOUT | SKIP => 8,
        GEOMETRY => 3 * 8,
        HIERARCHY_GZIP | HIERARCHY_LZ4 | HIERARCHY_LZ4_DUO | GZIP_WRAPPER => 2 * 8,
        _ => return None,
    })
}

fn header(section: &[u8], at: u64) -> Result<(), ParseFailure> {
    let length = be_u64(section, 0).unwrap_or(0);
    if length != HEADER_SECTION_LENGTH {
        return Err(ParseFailure::invalid(
            Position::Byte(at),
            format!("the FST header block is {length} bytes long; it must be {HEADER_SECTION_LENGTH}"),
        ));
    }
    // The timescale exponent (after the block count, at 72): 10^e s, which readers scale
    // with a u32 power of ten below seconds (e down to -21) and above (e up to 9).
    let exponent = section.get(72).map_or(0, |&b| b as i8);
    if !(-21..=9).contains(&exponent) {
        return Err(ParseFailure::invalid(
            Position::Byte(at),
            format!(
                "the FST header's timescale is 10^{exponent} s; FST timescales run from 10^-21 to 10^9 s"
            ),
        ));
    }
    // Field offsets in the section: var_count at 48, max_var_id_code (the handle count) at 56.
    handles(be_u64(section, 48).unwrap_or(0), at, "header's variable count")?;
    handles(be_u64(section, 56).unwrap_or(0), at, "header's handle count")
}

/// A value-change block: length, start and end time, traversal memory (4 × u64); the
/// initial-value frame (three varints, then its bytes); the change data's handle count;
/// and at the section's end the time table's lengths and item count (3 × u64).
/// Returns the block's time step count.
fn value_changes(section: &[u8], at: u64, alias2: bool) -> Result<u64, ParseFailure> {
    let section_length = section.len() as u64;
    // The time table first: fst-reader reads every block's at open, whatever the rest holds.
    let tail = section.len().saturating_sub(24);
    let mut steps = 0;
    let mut chain_bytes = None;
    if let (Some(uncompressed), Some(compressed), Some(items)) =
        (be_u64(section, tail), be_u64(section, tail + 8), be_u64(section, tail + 16))
    {
        at_most(compressed, section_length, at, "time table's compressed length", "its block's length")?;
        inflated(uncompressed, compressed, DEFLATE_RATIO, at, "time table")?;
        at_most(items, uncompressed, at, "time table's item count", "one byte per time step")?;
        steps = items;
        // The change-position chain ends where the time table begins; its length precedes it.
        let chain_len_at = usize::try_from(compressed).ok().and_then(|c| tail.checked_sub(c)?.checked_sub(8));
        if let Some((chain_at, chain)) = chain_len_at.and_then(|p| Some((p, be_u64(section, p)?))) {
            at_most(chain, section_length, at, "position chain's length", "its block's length")?;
            chain_bytes =
                usize::try_from(chain).ok().and_then(|c| section.get(chain_at.checked_sub(c)?..chain_at));
        }
    }
    let Some((frame_uncompressed, n1)) = varint(section, 32) else { return Ok(steps) };
    let Some((frame_compressed, n2)) = varint(section, 32 + n1) else { return Ok(steps) };
    let Some((frame_handles, n3)) = varint(section, 32 + n1 + n2) else { return Ok(steps) };
    at_most(frame_compressed, section_length, at, "frame's compressed length", "its block's length")?;
    inflated(frame_uncompressed, frame_compressed, DEFLATE_RATIO, at, "initial-value frame")?;
    handles(frame_handles, at, "initial-value frame")?;
    let changes_at = (32 + n1 + n2 + n3) as u64 + frame_compressed;
    if let Some((change_handles, _)) = usize::try_from(changes_at).ok().and_then(|p| varint(section, p)) {
        handles(change_handles, at, "value-change data")?;
        if let Some(chain) = chain_bytes {
            chain_signals(chain, alias2, change_handles, at)?;
        }
    }
    Ok(steps)
}

/// Walks a block's position chain as fst-reader does and refuses one that lists more signals
/// than the block's handle count. The chain's runs of signals without data are counts, and
/// fst-reader pushes one table entry per signal of a run (for the older chain encodings):
/// a three-byte run of 2^31 signals would be a 16 GiB table.
fn chain_signals(chain: &[u8], alias2: bool, max_handle: u64, at: u64) -> Result<(), ParseFailure> {
    let mut signals = 0u64;
    let mut pos = 0;
    while let Some((value, used)) = varint(chain, pos) {
        pos += used;
        // The older encodings write an alias as 0 followed by the aliased handle.
        if !alias2 && value == 0 {
            pos += varint(chain, pos).map_or(chain.len(), |(_, n)| n);
        }
        // An odd value (alias2 stores it signed, in the same bytes) or an alias is one signal;
        // an even one is a run of signals without data.
        let one = value & 1 == 1 || (!alias2 && value == 0);
        signals = if one { signals + 1 } else { signals.saturating_add(value >> 1) };
        at_most(
            signals,
            max_handle,
            at,
            "value-change position chain's signals",
            "the block's handle count",
        )?;
    }
    Ok(())
}

/// A whole file inside one gzip stream: fst-reader inflates all of it into memory before
/// reading, so its declared size is bounded, and the inner file's blocks are checked too.
fn gzip_wrapped(section: &[u8], at: u64) -> Result<(), Refused> {
    let declared = be_u64(section, 8).unwrap_or(0);
    let compressed = (section.len() as u64).saturating_sub(16);
    inflated(declared, compressed, DEFLATE_RATIO, at, "gzip-wrapped FST")?;
    let inner = inflate_like_fst_reader(section.get(16 + 10..).unwrap_or_default(), declared);
    // Inside the wrapper, a block past the inner end is simply a bad size.
    check_blocks(&inner, Some(at)).map_err(|r| match r {
        Refused::PastEnd(e) | Refused::Bad(e) => Refused::Bad(e),
    })
}

/// The bytes fst-reader gets from a gzip wrapper: miniz_oxide's streaming inflate of the
/// raw deflate data after the fixed 10-byte gzip header, no checksum, stopping after
/// `declared` bytes. (flate2 refuses some streams this accepts, so the same inflater is
/// used.) What inflates before an error is kept: checking more than the reader reads is safe.
fn inflate_like_fst_reader(mut input: &[u8], declared: u64) -> Vec<u8> {
    use miniz_oxide::inflate::stream::{InflateState, inflate};
    let mut state = InflateState::new(miniz_oxide::DataFormat::Raw);
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut remaining = usize::try_from(declared).unwrap_or(usize::MAX);
    while remaining > 0 {
        let res = inflate(&mut state, input, &mut buf, miniz_oxide::MZFlush::None);
        let written = res.bytes_written.min(remaining);
        out.extend_from_slice(&buf[..written]);
        remaining -= written;
        input = &input[res.bytes_consumed..];
        let progressed = res.bytes_consumed > 0 || res.bytes_written > 0;
        if !matches!(res.status, Ok(miniz_oxide::MZStatus::Ok)) || !progressed {
            break;
        }
    }
    out
}

fn handles(count: u64, at: u64, what: &str) -> Result<(), ParseFailure> {
    if count > MAX_FST_HANDLES {
        return Err(limit(
            at,
            format!("{what}: {count} signal handles"),
            format!("{MAX_FST_HANDLES} handles"),
        ));
    }
    Ok(())
}

fn inflated(uncompressed: u64, compressed: u64, ratio: u64, at: u64, what: &str) -> Result<(), ParseFailure> {
    if uncompressed > MAX_FST_SECTION_BYTES {
        return Err(limit(
            at,
            format!("{what}: declared size {uncompressed} bytes"),
            format!("{MAX_FST_SECTION_BYTES} bytes per section"),
        ));
    }
    // Stored sections have equal lengths; compressed ones cannot expand past the ratio.
    let most = compressed.saturating_mul(ratio).saturating_add(64);
    at_most(
        uncompressed,
        most,
        at,
        &format!("{what}'s declared size"),
        &format!("{ratio}× its {compressed} compressed bytes"),
    )
}

fn at_most(value: u64, bound: u64, at: u64, what: &str, because: &str) -> Result<(), ParseFailure> {
    if value > bound {
        return Err(limit(at, format!("{what} {value}"), format!("{bound} ({because})")));
    }
    Ok(())
}

fn limit(at: u64, what: String, limit: String) -> ParseFailure {
    ParseFailure::Limit { at: Position::Byte(at), what: format!("FST {what}"), limit }
}

pub(super) fn be_u64(data: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(data.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

/// An unsigned LEB128 varint at `at`: (value, bytes used); `None` past the end or when longer than ten bytes.
fn varint(data: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for i in 0..10 {
        let byte = *data.get(at + i)?;
        value |= u64::from(byte & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}
