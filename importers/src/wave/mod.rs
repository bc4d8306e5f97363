//! FST and GHW waveforms through the wellen crate (VCD has its own reader in `vcd`).
//!
//! 1-bit signals become digital tracks (x/z kept as levels 2/3); vectors, integers and reals
//! become sample-and-hold analog tracks at their change times. Hierarchical scopes make
//! dotted track names (`top.cpu.irq`).

mod fst_limits;
mod ghw_limits;

pub use fst_limits::{MAX_FST_HANDLES, MAX_FST_SECTION_BYTES, MAX_FST_TIME_STEPS};
pub use ghw_limits::{
    MAX_GHW_HIERARCHY_NODES, MAX_GHW_SCOPE_DEPTH, MAX_GHW_SIGNALS, MAX_GHW_SLICE_STEPS, MAX_GHW_STRING_BYTES,
    MAX_GHW_TYPE_DEPTH, MAX_GHW_VALUE_BYTES, MAX_GHW_VECTOR_SCAN_BYTES,
};

use crate::{LoadControl, ParseFailure, Position};
use latscope_model::{AnalogTrack, DigitalTrack, Ps, Source, SourceKind};
use std::io::Cursor;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use wellen::{FileFormat, LoadOptions, SignalRef, SignalValueRef, TimescaleUnit, viewers};

pub fn looks_like_ghw(data: &[u8]) -> bool {
    data.starts_with(b"GHDLwave\n")
}

pub fn looks_like_fst(data: &[u8]) -> bool {
    // FST starts with a header block: type 0 and a big-endian section length of 329.
    data.len() > 9 && data[0] == 0 && data[1..9] == 329u64.to_be_bytes()
}

pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    // Forged sizes would make wellen's FST and GHW readers abort the process on allocation
    // (which no catch_unwind stops), so they are refused first. wellen detects FST by
    // content, so the FST checks run on whatever is not GHW.
    if looks_like_ghw(data) {
        // A GHW cut short fails the checks where it ends (a count larger than what is left):
        // that is said as a cut file, the refusal added.
        ghw_limits::check(data).map_err(|e| match cut_short(data) {
            Some((at, cut)) => ParseFailure::invalid(Position::Byte(at), format!("{cut} (and: {e})")),
            None => e,
        })?;
    } else if let Err(e) = fst_limits::check(data) {
        return Err(match e {
            fst_limits::Refused::PastEnd(e) => match cut_short(data) {
                Some((at, cut)) => ParseFailure::invalid(Position::Byte(at), cut),
                None => e,
            },
            fst_limits::Refused::Bad(e) => e,
        });
    }
    // wellen asserts on some malformed input; a panic there must not take latscope down.
    let result = match std::panic::catch_unwind(AssertUnwindSafe(|| load(data, ctl))) {
        Ok(result) => result,
        Err(_) => Err(ParseFailure::invalid(
            Position::Byte(0),
            "the waveform reader rejected this file as malformed (wellen aborted while parsing it)",
        )),
    };
    // wellen reads FST and GHW only whole; when it fails on a file that was cut short, say
    // that (and where) instead of its bare I/O error.
    match result {
        Err(ParseFailure::Invalid { message, .. }) if let Some((at, cut)) = cut_short(data) => {
            let message = message.replace('\n', " ");
            Err(ParseFailure::invalid(Position::Byte(at), format!("{cut} (the reader said: {message})")))
        }
        other => other,
    }
}

/// A finished GHW file ends with this 12-byte tailer (GHDL writes it when the run ends).
const GHW_TAILER: &[u8; 4] = b"TAI\0";
const GHW_TAILER_LEN: usize = 12;

/// Where and how an FST or GHW file is incomplete, if it is.
fn cut_short(data: &[u8]) -> Option<(u64, String)> {
    if looks_like_ghw(data) {
        let tail = data.len().checked_sub(GHW_TAILER_LEN).and_then(|at| data.get(at..at + 4));
        return (tail != Some(GHW_TAILER.as_slice())).then(|| {
            (
                data.len() as u64,
                format!(
                    "the GHW file ends at byte {} without its tailer, which GHDL writes when the \
                     simulation ends: it was cut short (the run killed or still going). GHW is read \
                     only whole; re-run the simulation to completion",
                    data.len()
                ),
            )
        });
    }
    if !looks_like_fst(data) {
        return None;
    }
    // Blocks: a type byte, then a big-endian length that counts itself but not the type.
    let why = "FST stores its signal names and widths (the hierarchy and geometry blocks) only \
               when the writer closes the file, so none of its values can be placed. Finish or \
               re-run the dump, or dump VCD, which latscope loads up to a cut";
    let (mut pos, mut value_blocks, mut hierarchy) = (0usize, 0usize, false);
    while pos < data.len() {
        let Some(len) = fst_limits::be_u64(data, pos + 1) else {
            let msg = format!(
                "the FST file is cut short at byte {} inside the header of a block at byte {pos}, after \
                 {value_blocks} value-change block(s); {why}",
                data.len()
            );
            return Some((pos as u64, msg));
        };
        let end = (pos as u64).saturating_add(1).saturating_add(len);
        if end > data.len() as u64 {
            let kind = match data[pos] {
                t if fst_limits::VC_DATA.contains(&t) => "value-change",
                t if fst_limits::HIERARCHY.contains(&t) => "hierarchy",
                fst_limits::GEOMETRY => "geometry",
                0 => "header",
                _ => "next",
            };
            let msg = format!(
                "the FST file is cut short at byte {}: the {kind} block at byte {pos} needs {len} bytes, \
                 after {value_blocks} complete value-change block(s); {why}",
                data.len()
            );
            return Some((pos as u64, msg));
        }
        value_blocks += usize::from(fst_limits::VC_DATA.contains(&data[pos]));
        hierarchy |= fst_limits::HIERARCHY.contains(&data[pos]);
        pos = end as usize;
    }
    (!hierarchy).then(|| {
        let msg = format!(
            "the FST file has {value_blocks} value-change block(s) but ends at byte {} before its \
             hierarchy block; {why}",
            data.len()
        );
        (data.len() as u64, msg)
    })
}

fn load(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let invalid = |msg: String| ParseFailure::invalid(Position::Byte(0), msg);
    let options = LoadOptions { multi_thread: true, remove_scopes_with_empty_name: false };
    let header =
        viewers::read_header(Cursor::new(data.to_vec()), &options).map_err(|e| invalid(e.to_string()))?;
    let format = match header.file_format {
        FileFormat::Vcd => "vcd",
        FileFormat::Fst => "fst",
        FileFormat::Ghw => "ghw",
        FileFormat::Unknown => return Err(invalid("not a VCD, FST or GHW file".into())),
    };
    let hierarchy = header.hierarchy;
    let progress = Arc::new(AtomicU64::new(0));
    let body = viewers::read_body(header.body, &hierarchy, Some(progress.clone()))
        .map_err(|e| invalid(e.to_string()))?;
    ctl.advance(progress.load(Ordering::Relaxed));
    if ctl.is_cancelled() {
        return Err(ParseFailure::Cancelled);
    }

    let mut source = Source::new("", format, SourceKind::File);
    let (scale, exact) = timescale_ps(&hierarchy);
    if !exact {
        source.diagnostics.warn("the file has no usable $timescale: 1 ns per time unit assumed");
    }
    if let Some(ts) = hierarchy.timescale() {
        source.metadata.push(("timescale".into(), format!("{} {:?}", ts.factor, ts.unit)));
    }
    if !hierarchy.version().is_empty() {
        source.metadata.push(("writer".into(), hierarchy.version().trim().to_owned()));
    }
    let times: Vec<Ps> = body.time_table.iter().map(|&t| scale.apply(t)).collect();
    let end = times.last().copied().unwrap_or(0);
    let start = times.first().copied().unwrap_or(0);

    let vars: Vec<&wellen::Var> = hierarchy.all_vars().map(|r| &hierarchy[r]).collect();
    let mut ids: Vec<SignalRef> = vars.iter().map(|v| v.signal_ref()).collect();
    ids.sort_unstable_by_key(|s| s.index());
    ids.dedup();
    let mut signal_source = body.source;
    let signals = signal_source.load_signals(&ids, &hierarchy, true);
    let by_ref: std::collections::HashMap<SignalRef, &wellen::Signal> =
        signals.iter().map(|s| (s.signal_ref(), s)).collect();

    let mut skipped_strings = 0usize;
    let mut name_bytes = 0usize;
    for var in &vars {
        if ctl.is_cancelled() {
            return Err(ParseFailure::Cancelled);
        }
        let Some(signal) = by_ref.get(&var.signal_ref()) else { continue };
        let name = var.full_name(&hierarchy);
        // Full names repeat the scope path, as in VCD: the same cap bounds their total.
        name_bytes += name.len();
        if name_bytes > crate::vcd::MAX_NAME_BYTES {
            return Err(ParseFailure::Limit {
                at: Position::Byte(0),
                what: format!("total length of {format} variable names (each repeats its scope path)"),
                limit: format!("{} bytes", crate::vcd::MAX_NAME_BYTES),
            });
        }
        let time_of = |idx: u32| times.get(idx as usize).copied().unwrap_or(end);
        if var.is_string(&hierarchy) {
            skipped_strings += 1;
            continue;
        }
        if var.is_1bit(&hierarchy) && !var.is_real(&hierarchy) {
            let mut track: Option<DigitalTrack> = None;
            for (idx, value) in signal.iter_changes() {
                let SignalValueRef::BitVec(bits) = value else { continue };
                let level = bit_level(u8::from(bits.get_bit(0)));
                let t = time_of(idx);
                match track.as_mut() {
                    None if t <= start => track = Some(DigitalTrack::new(name.clone(), level)),
                    None => {
                        let mut d = DigitalTrack::new(name.clone(), 2);
                        d.push(t, level);
                        track = Some(d);
                    }
                    // GHW records delta cycles, several values at one time; only the last
                    // one holds (VCD and FST keep only that one).
                    Some(d) if d.is_empty() && t <= start => d.initial = level,
                    Some(d) => {
                        if d.last_time() == Some(t) {
                            d.pop();
                        }
                        d.push(t, level);
                    }
                }
            }
            let mut track = track.unwrap_or_else(|| DigitalTrack::new(name.clone(), 2));
            track.end = end;
            source.digital.push(track);
        } else {
            let mut change_times = Vec::new();
            let mut values = Vec::new();
            for (idx, value) in signal.iter_changes() {
                let v = match value {
                    SignalValueRef::Real(r) => r as f32,
                    SignalValueRef::BitVec(bits) => bits_value(&bits),
                    SignalValueRef::Event | SignalValueRef::String(_) => continue,
                };
                let t = time_of(idx);
                if change_times.last() == Some(&t) {
                    values.pop();
                } else {
                    change_times.push(t);
                }
                values.push(v);
            }
            source.analog.push(AnalogTrack::with_times(name, "", change_times, values));
        }
    }
    if skipped_strings > 0 {
        source
            .diagnostics
            .warn(format!("{skipped_strings} string variable(s) not shown (no string tracks yet)"));
    }
    Ok(source)
}

/// wellen's nine-state bit to our level: 0, 1, 2 = X (also U, W, -), 3 = Z; H/L are weak 1/0.
fn bit_level(bit: u8) -> u8 {
    match bit {
        0 => 0,
        1 => 1,
        3 => 3,
        4 => 1, // h
        7 => 0, // l
        _ => 2,
    }
}

/// The unsigned value of a bit vector, NaN when any bit is X or Z.
fn bits_value(bits: &wellen::BitVecRef<'_>) -> f32 {
    let mut v = 0f64;
    for bit in bits.iter_msb_to_lsb() {
        match bit_level(u8::from(bit)) {
            0 => v *= 2.0,
            1 => v = v * 2.0 + 1.0,
            _ => return f32::NAN,
        }
    }
    v as f32
}

/// Time units to picoseconds: multiply for ps and coarser units, divide (rounding) for
/// finer ones, so 0.1 ps or fs timescales stay exact where they can.
#[derive(Debug, Clone, Copy)]
struct TickScale {
    mul: i128,
    div: i128,
}

impl TickScale {
    fn apply(self, t: u64) -> Ps {
        let v = i128::from(t) * self.mul;
        ((v + self.div / 2) / self.div).clamp(i128::from(Ps::MIN), i128::from(Ps::MAX)) as Ps
    }
}

fn timescale_ps(h: &wellen::Hierarchy) -> (TickScale, bool) {
    let ns = TickScale { mul: 1000, div: 1 };
    let Some(ts) = h.timescale() else { return (ns, false) };
    let exp = match ts.unit {
        TimescaleUnit::Unknown => return (ns, false),
        unit => match unit.to_exponent() {
            Some(e) => i32::from(e),
            None => return (ns, false),
        },
    };
    let factor = i128::from(ts.factor.max(1));
    let shift = exp + 12; // relative to picoseconds
    if shift >= 0 {
        (TickScale { mul: factor * 10i128.pow(shift as u32), div: 1 }, true)
    } else {
        (TickScale { mul: factor, div: 10i128.pow((-shift) as u32) }, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The tailer check alone; real GHDL files cut short are tested in tests/wave.rs.
    #[test]
    fn a_ghw_without_its_tailer_is_reported_as_cut() {
        let mut ghw = b"GHDLwave\n\x10\x00\x01\x01\x00\x00\x00\x00STR\x00".to_vec();
        let (at, msg) = cut_short(&ghw).expect("no tailer");
        assert_eq!(at, ghw.len() as u64);
        assert!(msg.contains(&format!("ends at byte {} without its tailer", ghw.len())), "{msg}");
        ghw.extend(b"TAI\x00\x00\x00\x00\x00\x00\x00\x00\x10");
        assert_eq!(cut_short(&ghw), None);
        assert_eq!(cut_short(b"not a waveform"), None);
    }
}
