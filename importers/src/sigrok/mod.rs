//! sigrok session files (`.sr`, srzip versions 1 and 2).
//!
//! Logic channels become digital tracks stored as transitions: chunks are inflated in
//! parallel and scanned for flips a word of samples at a time, repeated chunks once
//! (`logic.rs`), so a 600M-sample capture costs memory in proportion to its edges, never to
//! its samples, and time in proportion to its distinct chunks. [`read_logic`] hands the flips
//! to any [`LogicVisitor`] (a protocol decoder) as they are found, without storing them. Analog channels become analog tracks (`f32`, volts — the
//! unit libsigrok assumes, since none is stored).
//!
//! With a track selection in the [`LoadControl`] (`latscope report` with rules that name
//! their channels), only the selected logic channels are decoded: runs where only other
//! channels change are skipped. The others' transitions are still counted, so the source's
//! record count is the full decode's, and the `logic channels not decoded` metadata entry
//! names them. Analog channels always load.

mod logic;
mod metadata;
mod recover;

pub use logic::{FAST_MEMBER_BYTES, FlipLevels, LogicEnd, LogicVisitor, Masks};
pub use metadata::{DeviceMetadata, parse_metadata, parse_samplerate};

use crate::{LoadControl, ParseFailure, Position, budget};
use latscope_model::{AnalogTrack, DigitalTrack, SampleClock, Source, SourceKind};
use std::io::{Cursor, Read};
use zip::ZipArchive;

/// Largest `metadata`/`version` member read into memory.
const MAX_METADATA_BYTES: u64 = 1 << 20;
/// Largest data member decoded: libsigrok writes 4–10 MiB chunks, and even an unchunked v1
/// capture of a whole logic analyzer's memory stays far below this.
pub const MAX_MEMBER_BYTES: u64 = 4 << 30;
/// Logic transitions kept across all channels. Each costs 9 bytes (time and level), so the
/// limit bounds a capture's edges to ~580 MB: a hostile file (deflate packs a sample that
/// toggles every time ~1000:1, so 100 M toggling samples fit in 100 KB) stops loading
/// there, not after gigabytes. A real capture can reach it too (a clock toggling every
/// sample at 1 MHz does in a minute), so what comes before the sample that crosses it is
/// kept, and a warning says where loading stopped.
pub const MAX_TRANSITIONS: usize = 64_000_000;
/// Analog samples kept across all channels (4 bytes each, so 512 MiB): a 1 MS/s scope
/// channel for two minutes. Members whose declared sizes exceed it are refused unread,
/// and no more than the declared size is reserved.
pub const MAX_ANALOG_SAMPLES: usize = 1 << 27;
const READ_BUFFER: usize = 1 << 16;

pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let (mut source, note) = with_archive(data, |zip, bytes| parse_archive(zip, bytes, ctl))?;
    if let Some(note) = note {
        source.diagnostics.warnings.insert(0, note);
    }
    Ok(source)
}

/// Runs `read` on the archive in `data`, or on one rebuilt from its member headers when its
/// member directory is missing (a capture cut short); then also returns the note saying so.
fn with_archive<T>(
    data: &[u8],
    read: impl FnOnce(ZipArchive<Cursor<&[u8]>>, &[u8]) -> Result<T, ParseFailure>,
) -> Result<(T, Option<String>), ParseFailure> {
    let e = match ZipArchive::new(Cursor::new(data)) {
        Ok(zip) => return Ok((read(zip, data)?, None)),
        Err(e) => e,
    };
    let Some(rebuilt) = recover::rebuild(data) else {
        return Err(ParseFailure::invalid(
            Position::Byte(0),
            format!("not a valid .sr zip archive ({e}), and no member header was found to recover from"),
        ));
    };
    let zip = ZipArchive::new(Cursor::new(&rebuilt.bytes[..])).map_err(|e2| {
        ParseFailure::invalid(
            Position::Byte(0),
            format!("not a valid .sr zip archive ({e}); recovering its members failed too ({e2})"),
        )
    })?;
    Ok((read(zip, &rebuilt.bytes)?, Some(rebuilt.note)))
}

/// What every reader of an archive needs first: its version, metadata and sample clock.
struct Header {
    version: u32,
    meta: DeviceMetadata,
    clock: SampleClock,
    /// `samplerate` was missing (1 Hz is assumed).
    no_rate: bool,
}

fn read_header(zip: &mut ZipArchive<Cursor<&[u8]>>) -> Result<Header, ParseFailure> {
    let invalid = |msg: String| ParseFailure::invalid(Position::Byte(0), msg);
    let version = read_small(zip, "version")?.ok_or_else(|| invalid("no `version` member".into()))?;
    let version: u32 = version
        .trim()
        .parse()
        .map_err(|_| invalid(format!("`version` member is not a number: {:?}", version.trim())))?;
    if !(1..=2).contains(&version) {
        return Err(invalid(format!("session file version {version} is not supported (1 and 2 are)")));
    }
    let meta_text = read_small(zip, "metadata")?.ok_or_else(|| invalid("no `metadata` member".into()))?;
    let meta = parse_metadata(&meta_text).map_err(invalid)?;
    let (rate, no_rate) = match meta.get("samplerate") {
        Some(s) => {
            let r = parse_samplerate(s).map_err(invalid)?;
            if r == 0 {
                return Err(invalid("samplerate is 0 Hz".into()));
            }
            (r, false)
        }
        None => (1, true),
    };
    Ok(Header { version, meta, clock: SampleClock::new(rate), no_rate })
}

/// A capture's logic channels as the sample numbers at which each changes level: what a
/// protocol decoder reads. Nothing is converted to a time, and the memory is one `i64` per
/// change.
#[derive(Debug, Clone, Default)]
pub struct LogicTicks {
    /// `None` when the metadata has none (the ticks are still sample numbers).
    pub samplerate: Option<u64>,
    /// Samples read (so the last sample is `samples - 1`).
    pub samples: u64,
    pub channels: Vec<ChannelTicks>,
    /// Analog channel names: [`parse_logic_ticks`] does not read their samples.
    pub analog: Vec<String>,
    /// What [`parse`] would report as warnings for the logic data.
    pub warnings: Vec<String>,
}

/// One logic channel: its level at sample 0 and the samples where it flips.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelTicks {
    pub name: String,
    pub initial: u8,
    /// Strictly increasing sample numbers; the level flips at each.
    pub ticks: Vec<i64>,
}

/// Reads the logic channels of a `.sr` capture as sample numbers ([`LogicTicks`]), with the
/// limits, checks and recovery of [`parse`]. Analog channels are named, not read.
pub fn parse_logic_ticks(data: &[u8], ctl: &LoadControl) -> Result<LogicTicks, ParseFailure> {
    let (mut ticks, note) = with_archive(data, |mut zip, bytes| {
        let header = read_header(&mut zip)?;
        let samplerate = (!header.no_rate).then_some(header.clock.rate());
        let mut out = LogicTicks { samplerate, ..LogicTicks::default() };
        if header.no_rate {
            out.warnings.push(NO_RATE.into());
        }
        let names = member_names(&zip);
        if let Some(capture) = header.meta.get("capturefile") {
            let read = read_logic_channels(
                &mut zip,
                bytes,
                &names,
                capture,
                &header.meta,
                header.clock,
                ctl,
                |name| ChannelTicks { name: name.into(), ..ChannelTicks::default() },
            )?;
            out.samples = read.samples;
            out.channels = read.channels;
            out.warnings.extend(read.warnings);
        }
        out.analog = analog_keys(&header.meta).into_iter().map(|(_, name)| name).collect();
        Ok(out)
    })?;
    if let Some(note) = note {
        ticks.warnings.insert(0, note);
    }
    Ok(ticks)
}

/// A logic capture as [`read_logic`] describes it before reading its samples.
#[derive(Debug, Clone, Default)]
pub struct LogicLayout {
    /// `None` when the metadata has none.
    pub samplerate: Option<u64>,
    /// Each enabled logic channel: its name and its bit in the sample word.
    pub channels: Vec<(String, u32)>,
    /// Analog channel names (their samples are not read).
    pub analog: Vec<String>,
    /// Bytes per sample.
    pub unitsize: usize,
}

/// Streams the logic samples of a `.sr` capture to a visitor, with the limits, checks and
/// recovery of [`parse`], without storing any flip: `make` sees the capture's layout and
/// returns the visitor with the channels it wants (a mask of their bits), or `None` to
/// decline. `Ok(None)` also when the samples do not fit a 64-bit word (more than 64
/// channels' worth of unitsize): then read the capture with [`parse`]. The [`LogicEnd`]'s
/// warnings are what [`parse`] would warn about the logic data.
pub fn read_logic<V: LogicVisitor>(
    data: &[u8],
    ctl: &LoadControl,
    make: impl FnOnce(&LogicLayout) -> Option<(V, u64)>,
) -> Result<Option<(V, LogicEnd, LogicLayout)>, ParseFailure> {
    let (read, note) = with_archive(data, |mut zip, bytes| {
        let header = read_header(&mut zip)?;
        let names = member_names(&zip);
        let mut layout = LogicLayout {
            samplerate: (!header.no_rate).then_some(header.clock.rate()),
            analog: analog_keys(&header.meta).into_iter().map(|(_, name)| name).collect(),
            ..LogicLayout::default()
        };
        let capture = header.meta.get("capturefile");
        if capture.is_some() {
            let (unitsize, probes) = logic_layout(&header.meta)?;
            layout.unitsize = unitsize;
            layout.channels = probes.into_iter().map(|(n, b)| (n, b as u32)).collect();
        }
        if layout.unitsize > 8 {
            return Ok(None);
        }
        let Some((mut visitor, wanted)) = make(&layout) else { return Ok(None) };
        let mut end = LogicEnd::default();
        let mut warnings = Vec::new();
        if header.no_rate {
            warnings.push(NO_RATE.to_owned());
        }
        if let Some(capture) = capture {
            let (members, skipped) = logic_members(&names, capture);
            warnings.extend(skipped);
            let members = logic::members(&mut zip, bytes, &members, layout.unitsize);
            let masks = Masks { wanted, counted: 0 };
            end = logic::read(&mut zip, bytes, &members, layout.unitsize, masks, ctl, &mut visitor)?;
            if end.partial_len > 0 {
                end.warnings.push(format!(
                    "logic data ends with {} byte(s) that do not make a whole {}-byte sample; ignored",
                    end.partial_len, layout.unitsize
                ));
            }
        }
        warnings.append(&mut end.warnings);
        end.warnings = warnings;
        Ok(Some((visitor, end, layout)))
    })?;
    Ok(read.map(|(v, mut end, layout)| {
        if let Some(note) = note {
            end.warnings.insert(0, note);
        }
        (v, end, layout)
    }))
}

const NO_RATE: &str = "no samplerate in the metadata: times are sample numbers (1 Hz assumed)";

fn member_names(zip: &ZipArchive<Cursor<&[u8]>>) -> Vec<String> {
    (0..zip.len()).filter_map(|i| Some(zip.name_for_index(i)?.ok()?.into_owned())).collect()
}

fn parse_archive(
    mut zip: ZipArchive<Cursor<&[u8]>>,
    bytes: &[u8],
    ctl: &LoadControl,
) -> Result<Source, ParseFailure> {
    let Header { version, meta, clock, no_rate } = read_header(&mut zip)?;
    let mut source = Source::new("", "sigrok-sr", SourceKind::File);
    source.metadata.push(("version".into(), version.to_string()));
    for (k, v) in &meta.entries {
        if matches!(k.as_str(), "samplerate" | "total probes" | "total analog" | "unitsize" | "driver") {
            source.metadata.push((k.clone(), v.clone()));
        }
    }
    if no_rate {
        source.diagnostics.warn(NO_RATE);
    }
    let names = member_names(&zip);
    let mut not_decoded = None;
    if let Some(capture) = meta.get("capturefile") {
        not_decoded = read_logic_tracks(&mut zip, bytes, &names, capture, &meta, clock, ctl, &mut source)?;
    }
    read_analog(&mut zip, bytes, &names, &meta, clock, ctl, &mut source)?;
    if let Some(n) = not_decoded {
        // The record count stays the full decode's: the tracks' own counts plus these.
        source.records = Some(source.records() + n);
    }
    Ok(source)
}

fn read_small(zip: &mut ZipArchive<Cursor<&[u8]>>, name: &str) -> Result<Option<String>, ParseFailure> {
    let Ok(member) = zip.by_name(name) else { return Ok(None) };
    let mut out = Vec::new();
    member
        .take(MAX_METADATA_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| ParseFailure::invalid(Position::Byte(0), format!("cannot decompress `{name}`: {e}")))?;
    if out.len() as u64 > MAX_METADATA_BYTES {
        return Err(ParseFailure::Limit {
            at: Position::Byte(0),
            what: format!("member `{name}`"),
            limit: format!("{MAX_METADATA_BYTES} bytes"),
        });
    }
    Ok(Some(String::from_utf8_lossy(&out).into_owned()))
}

/// Member names `base`, or `base-1`, `base-2`, … probed in numeric order up to the first
/// gap, as libsigrok reads them. Returns the names and whether numbered members beyond the
/// gap exist (they are ignored, with a warning).
fn chunk_members(names: &[String], base: &str) -> (Vec<String>, Option<u64>) {
    if names.iter().any(|n| n == base) {
        return (vec![base.to_owned()], None);
    }
    let prefix = format!("{base}-");
    let numbers: std::collections::BTreeSet<u64> =
        names.iter().filter_map(|n| n.strip_prefix(&prefix)?.parse().ok()).collect();
    let mut members = Vec::new();
    let mut next = 1;
    while numbers.contains(&next) {
        members.push(format!("{base}-{next}"));
        next += 1;
    }
    let skipped = numbers.iter().copied().filter(|&n| n > next).min();
    (members, skipped)
}

/// Streams a member's bytes to `sink` in blocks, refusing members that decompress to more
/// than they declare or than [`MAX_MEMBER_BYTES`].
fn stream_member(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    name: &str,
    ctl: &LoadControl,
    mut sink: impl FnMut(&[u8]) -> Result<(), ParseFailure>,
) -> Result<(), ParseFailure> {
    let member = zip
        .by_name(name)
        .map_err(|e| ParseFailure::invalid(Position::Byte(0), format!("cannot open member `{name}`: {e}")))?;
    let at = Position::Byte(member.data_start().unwrap_or(0));
    let declared = member.size();
    let compressed = member.compressed_size();
    if declared > MAX_MEMBER_BYTES {
        return Err(ParseFailure::Limit {
            at,
            what: format!("member `{name}` ({declared} bytes uncompressed)"),
            limit: format!("{MAX_MEMBER_BYTES} bytes"),
        });
    }
    let mut reader = member.take(declared + 1);
    let mut buf = vec![0u8; READ_BUFFER];
    let mut total = 0u64;
    loop {
        if ctl.is_cancelled() {
            return Err(ParseFailure::Cancelled);
        }
        // Ask for no more than the declared size, then for one byte more: the zip reader
        // fails a read that passes the declared size, and this way the failure comes only
        // once the declared bytes are in, where it is recognised as a zip bomb below.
        let want = (declared - total).clamp(1, READ_BUFFER as u64) as usize;
        let n = match reader.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // The zip reader itself stops a member at its declared size (a zip bomb). Its
            // checksum error at the same point is damage, not a bomb; should zip reword
            // the message, a bomb is still refused, only as "corrupt".
            Err(e) if total >= declared && e.to_string().contains("larger than its declared") => {
                return Err(ParseFailure::Limit {
                    at,
                    what: format!("inflated size of member `{name}`"),
                    limit: format!("{declared} bytes (its declared size)"),
                });
            }
            Err(e) => {
                return Err(ParseFailure::invalid(
                    at,
                    format!("member `{name}` is corrupt after {total} bytes: {e}"),
                ));
            }
        };
        total += n as u64;
        if total > declared {
            return Err(ParseFailure::Limit {
                at,
                what: format!("inflated size of member `{name}`"),
                limit: format!("{declared} bytes (its declared size)"),
            });
        }
        // A limit hit while decoding is placed at this member.
        sink(&buf[..n]).map_err(|e| match e {
            ParseFailure::Limit { at: Position::Byte(0), what, limit } => {
                ParseFailure::Limit { at, what: format!("{what} in member `{name}`"), limit }
            }
            e => e,
        })?;
    }
    ctl.advance(compressed);
    Ok(())
}

/// Where a logic channel's transitions go: a track of times for the trace model, or the
/// sample numbers themselves for a protocol decoder.
trait Transitions {
    fn name(&self) -> &str;
    fn set_initial(&mut self, level: u8);
    /// Stores a transition to `level` at `sample`; `remaining` more are allowed in all.
    fn push(&mut self, sample: u64, clock: SampleClock, level: u8, remaining: usize);
}

impl Transitions for DigitalTrack {
    fn name(&self) -> &str {
        &self.name
    }
    fn set_initial(&mut self, level: u8) {
        self.initial = level;
    }
    fn push(&mut self, sample: u64, clock: SampleClock, level: u8, remaining: usize) {
        budget::room_for_transition(self, remaining);
        self.push_sample(clock, sample, level);
    }
}

impl Transitions for ChannelTicks {
    fn name(&self) -> &str {
        &self.name
    }
    fn set_initial(&mut self, level: u8) {
        self.initial = level;
    }
    fn push(&mut self, sample: u64, _: SampleClock, _: u8, remaining: usize) {
        budget::room_for_one(&mut self.ticks, remaining);
        // Sample numbers stay far below 2^63: a member decodes to at most 4 GiB.
        self.ticks.push(sample as i64);
    }
}

/// One enabled logic channel: its bit in the sample word and its transitions.
#[derive(Debug)]
struct LogicChannel<T> {
    byte: usize,
    mask: u8,
    track: T,
}

/// The logic channels read from a capture's chunks.
struct LogicRead<T> {
    channels: Vec<T>,
    samples: u64,
    /// Channels left out by the track selection, with their transitions (counted only;
    /// `None` when loading stopped at [`MAX_TRANSITIONS`]).
    others: Vec<String>,
    uncounted_transitions: Option<u64>,
    warnings: Vec<String>,
}

#[allow(clippy::too_many_arguments)]
fn read_logic_tracks(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    bytes: &[u8],
    names: &[String],
    capture: &str,
    meta: &DeviceMetadata,
    clock: SampleClock,
    ctl: &LoadControl,
    source: &mut Source,
) -> Result<Option<u64>, ParseFailure> {
    let read = read_logic_channels(zip, bytes, names, capture, meta, clock, ctl, |name| {
        DigitalTrack::sampled(name, 0, clock)
    })?;
    for w in read.warnings {
        source.diagnostics.warn(w);
    }
    source.metadata.push(("logic samples".into(), read.samples.to_string()));
    if !read.others.is_empty() {
        let counted = match read.uncounted_transitions {
            Some(n) => format!("{n} transitions"),
            None => "transitions not counted".to_owned(),
        };
        source
            .metadata
            .push(("logic channels not decoded".into(), format!("{} ({counted})", read.others.join(", "))));
    }
    let end = clock.time(read.samples.saturating_sub(1));
    for mut track in read.channels {
        track.end = end;
        source.digital.push(track);
    }
    Ok(read.uncounted_transitions.filter(|_| !read.others.is_empty()))
}

/// The logic channels of a capture's metadata: its unitsize and each enabled probe with its
/// bit in the sample word (probe N at bit N-1).
fn logic_layout(meta: &DeviceMetadata) -> Result<(usize, Vec<(String, usize)>), ParseFailure> {
    let invalid = |msg: String| ParseFailure::invalid(Position::Byte(0), msg);
    let unitsize: usize = meta
        .get("unitsize")
        .ok_or_else(|| invalid("logic data without a `unitsize`".into()))?
        .parse()
        .map_err(|_| invalid("`unitsize` is not a number".into()))?;
    if unitsize == 0 || unitsize > 64 {
        return Err(invalid(format!("unitsize {unitsize} is out of range (1..=64 bytes)")));
    }
    let total_probes: usize = meta.get("total probes").and_then(|s| s.parse().ok()).unwrap_or(unitsize * 8);
    // Only listed probes are enabled; a probe whose bit lies beyond the sample word is absent.
    let probes = (1..=total_probes.min(unitsize * 8))
        .filter_map(|i| Some((meta.get(&format!("probe{i}"))?.to_owned(), i - 1)))
        .collect();
    Ok((unitsize, probes))
}

/// The members of the logic capture `capture`, and a warning when numbered members beyond a
/// gap were left out.
fn logic_members(names: &[String], capture: &str) -> (Vec<String>, Option<String>) {
    let (members, skipped) = chunk_members(names, capture);
    let warning = skipped.map(|n| {
        format!(
            "logic chunk {capture}-{n} follows a gap in the numbering and was not read (libsigrok stops at the gap too)"
        )
    });
    (members, warning)
}

#[allow(clippy::too_many_arguments)]
fn read_logic_channels<T: Transitions>(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    bytes: &[u8],
    names: &[String],
    capture: &str,
    meta: &DeviceMetadata,
    clock: SampleClock,
    ctl: &LoadControl,
    make: impl Fn(&str) -> T,
) -> Result<LogicRead<T>, ParseFailure> {
    let (unitsize, probes) = logic_layout(meta)?;
    let channels: Vec<LogicChannel<T>> = probes
        .iter()
        .map(|(name, bit)| LogicChannel { byte: bit / 8, mask: 1 << (bit % 8), track: make(name) })
        .collect();
    // A selection that keeps none of the logic channels decodes them all: the capture's
    // time range comes from its logic tracks, and the rule names none of them anyway.
    let (channels, others): (Vec<LogicChannel<T>>, Vec<LogicChannel<T>>) =
        channels.into_iter().partition(|c| ctl.wants_track(c.track.name()));
    let (channels, others) = if channels.is_empty() { (others, Vec::new()) } else { (channels, others) };
    let (members, skipped) = logic_members(names, capture);
    let mut warnings: Vec<String> = skipped.into_iter().collect();
    let mut stopped = false;
    let (samples, partial_len, uncounted_transitions, channels) = if unitsize <= 8 {
        let mut tracks = TrackVisitor::new(channels, clock);
        let masks = Masks { wanted: tracks.wanted, counted: bits_of_word(&others) };
        let members = logic::members(zip, bytes, &members, unitsize);
        let declared: u64 = members.iter().map(|m| m.size).sum::<u64>() / unitsize as u64;
        let read = match ctl.preview() {
            Some(sink) => {
                let mut previewing = Previewing::new(tracks, sink, declared);
                let read = logic::read(zip, bytes, &members, unitsize, masks, ctl, &mut previewing);
                tracks = previewing.inner;
                read
            }
            None => logic::read(zip, bytes, &members, unitsize, masks, ctl, &mut tracks),
        };
        match (read, tracks.stopped_at) {
            (Ok(end), _) => {
                warnings.extend(end.warnings);
                (end.samples, end.partial_len, end.counted_flips, tracks.channels)
            }
            (Err(e @ ParseFailure::Limit { .. }), Some(at)) => {
                warnings.push(stopped_at_limit(&e, at, Some(declared)));
                stopped = true;
                (at, 0, 0, tracks.channels)
            }
            (Err(e), _) => return Err(e),
        }
    } else {
        let mut decoder = LogicDecoder::new(unitsize, channels, clock);
        decoder.count_only(&others);
        for (i, name) in members.iter().enumerate() {
            match stream_member(zip, name, ctl, |bytes| decoder.feed(bytes)) {
                Ok(()) => {}
                Err(e @ ParseFailure::Limit { .. }) => {
                    let Some(at) = decoder.stopped_at else { return Err(e) };
                    warnings.push(stopped_at_limit(&e, at, None));
                    decoder.samples = at;
                    decoder.partial_len = 0;
                    stopped = true;
                    break;
                }
                // A damaged chunk: what decoded before the damage is kept, in sample order.
                Err(ParseFailure::Invalid { at, message }) => {
                    warnings.push(format!(
                        "{at}: {message}; logic samples after sample {} ({} later chunk(s)) were not loaded",
                        decoder.samples,
                        members.len() - i - 1
                    ));
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        (decoder.samples, decoder.partial_len, decoder.uncounted_transitions, decoder.channels)
    };
    if partial_len > 0 {
        warnings.push(format!(
            "logic data ends with {partial_len} byte(s) that do not make a whole {unitsize}-byte sample; ignored"
        ));
    }
    Ok(LogicRead {
        samples,
        others: others.iter().map(|c| c.track.name().to_owned()).collect(),
        // Past the limit the others' flips were not counted either.
        uncounted_transitions: (!stopped).then_some(uncounted_transitions),
        channels: channels.into_iter().map(|c| c.track).collect(),
        warnings,
    })
}

/// The bits of `channels` in a sample word of up to 8 bytes.
fn bits_of_word<T>(channels: &[LogicChannel<T>]) -> u64 {
    channels.iter().fold(0, |acc, c| acc | (u64::from(c.mask) << (8 * c.byte)))
}

/// Logic channels' transitions stored as the reader finds them (samples of up to 64 channels).
struct TrackVisitor<T> {
    channels: Vec<LogicChannel<T>>,
    clock: SampleClock,
    /// The channel at each bit of the sample word.
    by_bit: [Option<u8>; 64],
    wanted: u64,
    transitions: usize,
    /// The sample whose flips would have crossed [`MAX_TRANSITIONS`]: none of them is kept.
    stopped_at: Option<u64>,
}

impl<T: Transitions> TrackVisitor<T> {
    fn new(channels: Vec<LogicChannel<T>>, clock: SampleClock) -> Self {
        let mut by_bit = [None; 64];
        for (i, c) in channels.iter().enumerate() {
            let bit = 8 * c.byte + c.mask.trailing_zeros() as usize;
            by_bit[bit] = u8::try_from(i).ok();
        }
        TrackVisitor {
            wanted: bits_of_word(&channels),
            channels,
            clock,
            by_bit,
            transitions: 0,
            stopped_at: None,
        }
    }
}

impl<T: Transitions> LogicVisitor for TrackVisitor<T> {
    fn first(&mut self, levels: u64) -> Result<(), ParseFailure> {
        for (bit, c) in self.by_bit.iter().enumerate() {
            if let Some(c) = c {
                self.channels[usize::from(*c)].track.set_initial(((levels >> bit) & 1) as u8);
            }
        }
        Ok(())
    }

    #[inline]
    fn change(&mut self, sample: u64, changed: u64, levels: u64) -> Result<(), ParseFailure> {
        // A sample's flips are kept all or none, so every track ends at the same sample.
        if self.transitions + changed.count_ones() as usize > MAX_TRANSITIONS {
            let bit = changed.trailing_zeros() as usize;
            let name = self.by_bit[bit].map_or("?", |c| self.channels[usize::from(c)].track.name());
            self.stopped_at = Some(sample);
            return Err(too_many_transitions(name, sample));
        }
        let mut d = changed;
        while d != 0 {
            let bit = d.trailing_zeros();
            d &= d - 1;
            let Some(c) = self.by_bit[bit as usize] else { continue };
            let ch = &mut self.channels[usize::from(c)];
            ch.track.push(
                sample,
                self.clock,
                ((levels >> bit) & 1) as u8,
                MAX_TRANSITIONS - self.transitions,
            );
            self.transitions += 1;
        }
        Ok(())
    }
}

/// Turns a stream of packed samples wider than a 64-bit word (more than 64 channels) into
/// per-channel transitions, one sample at a time; narrower captures go through `logic.rs`.
#[derive(Debug)]
struct LogicDecoder<T> {
    unitsize: usize,
    channels: Vec<LogicChannel<T>>,
    clock: SampleClock,
    /// Per byte of a sample, the bits of `channels`: a sample that differs from the previous
    /// one only outside them has no edge to decode.
    decoded_bits: Vec<u8>,
    /// Per byte, the bits of channels left out by a track selection, whose transitions are
    /// only counted (in `uncounted_transitions`).
    counted_bits: Vec<u8>,
    uncounted_transitions: u64,
    /// The previous sample; `None` before the first.
    prev: Option<Vec<u8>>,
    partial: Vec<u8>,
    partial_len: usize,
    samples: u64,
    transitions: usize,
    /// The sample whose flips would have crossed [`MAX_TRANSITIONS`]: none of them is kept.
    stopped_at: Option<u64>,
}

impl<T: Transitions> LogicDecoder<T> {
    fn new(unitsize: usize, channels: Vec<LogicChannel<T>>, clock: SampleClock) -> Self {
        Self {
            unitsize,
            decoded_bits: bits_of(unitsize, &channels),
            counted_bits: vec![0; unitsize],
            uncounted_transitions: 0,
            channels,
            clock,
            prev: None,
            partial: vec![0; unitsize],
            partial_len: 0,
            samples: 0,
            transitions: 0,
            stopped_at: None,
        }
    }

    /// Counts the transitions of `others` (not decoded) as well.
    fn count_only(&mut self, others: &[LogicChannel<T>]) {
        self.counted_bits = bits_of(self.unitsize, others);
    }

    fn feed(&mut self, mut bytes: &[u8]) -> Result<(), ParseFailure> {
        // Complete a sample split across reads or members.
        if self.partial_len > 0 {
            let need = self.unitsize - self.partial_len;
            let take = need.min(bytes.len());
            self.partial[self.partial_len..self.partial_len + take].copy_from_slice(&bytes[..take]);
            self.partial_len += take;
            bytes = &bytes[take..];
            if self.partial_len < self.unitsize {
                return Ok(());
            }
            let sample = std::mem::take(&mut self.partial);
            self.sample(&sample)?;
            self.partial = sample;
            self.partial_len = 0;
        }
        let whole = bytes.len() / self.unitsize * self.unitsize;
        let (body, rest) = bytes.split_at(whole);
        for sample in body.chunks_exact(self.unitsize) {
            self.sample(sample)?;
        }
        self.partial[..rest.len()].copy_from_slice(rest);
        self.partial_len = rest.len();
        Ok(())
    }

    fn sample(&mut self, sample: &[u8]) -> Result<(), ParseFailure> {
        let index = self.samples;
        self.samples += 1;
        match self.prev.take() {
            None => {
                for ch in &mut self.channels {
                    ch.track.set_initial(u8::from(sample[ch.byte] & ch.mask != 0));
                }
                self.prev = Some(sample.to_vec());
            }
            Some(mut prev) => {
                if prev != sample {
                    let mut decoded = false;
                    for (((&a, &b), &d), &c) in
                        prev.iter().zip(sample).zip(&self.decoded_bits).zip(&self.counted_bits)
                    {
                        decoded |= (a ^ b) & d != 0;
                        self.uncounted_transitions += u64::from(((a ^ b) & c).count_ones());
                    }
                    if decoded {
                        self.edges(index, &prev, sample)?;
                    }
                    prev.copy_from_slice(sample);
                }
                self.prev = Some(prev);
            }
        }
        Ok(())
    }

    /// Stores the transitions of sample `index`, counted against the limit before any is
    /// stored, so the tracks never hold more than it and all end at the same sample.
    fn edges(&mut self, index: u64, prev: &[u8], now: &[u8]) -> Result<(), ParseFailure> {
        let flipped = |c: &LogicChannel<T>| (prev[c.byte] ^ now[c.byte]) & c.mask != 0;
        // The tracks never hold more than the limit, so only a sample that flips some can
        // cross it.
        if self.transitions + self.channels.iter().filter(|c| flipped(c)).count() > MAX_TRANSITIONS {
            let name = self.channels.iter().find(|c| flipped(c)).map_or("?", |c| c.track.name());
            self.stopped_at = Some(index);
            return Err(too_many_transitions(name, index));
        }
        for ch in self.channels.iter_mut().filter(|c| flipped(c)) {
            ch.track.push(
                index,
                self.clock,
                u8::from(now[ch.byte] & ch.mask != 0),
                MAX_TRANSITIONS - self.transitions,
            );
            self.transitions += 1;
        }
        Ok(())
    }
}

/// The logic channels at a coarse level of detail, kept as they are read and sent to a
/// preview sink now and then: [`PREVIEW_BUCKETS`] buckets across the capture (its size from
/// the chunks' declared sizes), each with the flips counted in it and the level at its end.
struct Previewing<'a, T> {
    inner: TrackVisitor<T>,
    sink: &'a crate::PreviewSink,
    total: u64,
    /// A bucket is `1 << shift` samples.
    shift: u32,
    /// Per channel: its level now and at sample 0, its flips per bucket, and the buckets
    /// before `filled[c]` whose end level is in `ends`.
    level: Vec<u8>,
    initial: Vec<u8>,
    flips: Vec<Vec<u16>>,
    ends: Vec<Vec<u8>>,
    filled: Vec<usize>,
    sent: Option<std::time::Instant>,
}

/// Buckets of a preview: a few per pixel column of a wide window.
const PREVIEW_BUCKETS: u64 = 4096;

impl<'a, T: Transitions> Previewing<'a, T> {
    fn new(inner: TrackVisitor<T>, sink: &'a crate::PreviewSink, total: u64) -> Self {
        // At least 8 samples a bucket: a busy bucket's flips fall on distinct samples.
        let shift = total.div_ceil(PREVIEW_BUCKETS).max(8).next_power_of_two().trailing_zeros();
        let buckets = (total >> shift) as usize + 1;
        let n = inner.channels.len();
        Previewing {
            inner,
            sink,
            total,
            shift,
            level: vec![0; n],
            initial: vec![0; n],
            flips: vec![vec![0; buckets]; n],
            ends: vec![vec![0; buckets]; n],
            filled: vec![0; n],
            sent: None,
        }
    }

    fn bucket(&self, sample: u64) -> usize {
        ((sample >> self.shift) as usize).min(self.flips.first().map_or(0, |f| f.len() - 1))
    }

    /// Ends of channel `c`'s buckets before `b` are its level now.
    fn fill(&mut self, c: usize, b: usize) {
        let from = self.filled[c].min(b);
        let level = self.level[c];
        self.ends[c][from..b].fill(level);
        self.filled[c] = self.filled[c].max(b);
    }

    /// The preview after `read` samples: a busy bucket flips four times inside (and once
    /// more if it ends at the other level), so it draws as a busy band; what is not read yet
    /// is unknown (level 2) to the capture's end.
    fn send(&mut self, read: u64) {
        let clock = self.inner.clock;
        let current = self.bucket(read.saturating_sub(1));
        let width = 1u64 << self.shift;
        let mut source = Source::new("", "sigrok-sr", SourceKind::File);
        for c in 0..self.inner.channels.len() {
            self.fill(c, current);
            let mut track = DigitalTrack::new(self.inner.channels[c].track.name(), self.initial[c]);
            let mut level = self.initial[c];
            for b in 0..=current {
                let (flips, end) =
                    (self.flips[c][b], if b < current { self.ends[c][b] } else { self.level[c] });
                if flips == 0 {
                    continue;
                }
                let start = b as u64 * width;
                let mut at = |k: u64, l: u8| track.push(clock.time(start + k * width / 6), l);
                for k in 1..=4 {
                    level ^= 1;
                    at(k, level);
                }
                if end != level {
                    at(5, end);
                    level = end;
                }
            }
            if read < self.total {
                track.push(clock.time(read), 2);
            }
            track.end = clock.time(self.total.saturating_sub(1));
            source.digital.push(track);
        }
        (self.sink)(source);
        self.sent = Some(std::time::Instant::now());
    }
}

impl<T: Transitions> LogicVisitor for Previewing<'_, T> {
    fn first(&mut self, levels: u64) -> Result<(), ParseFailure> {
        self.inner.first(levels)?;
        for (c, ch) in self.inner.channels.iter().enumerate() {
            let bit = 8 * ch.byte + ch.mask.trailing_zeros() as usize;
            self.level[c] = ((levels >> bit) & 1) as u8;
            self.initial[c] = self.level[c];
        }
        Ok(())
    }

    fn change(&mut self, sample: u64, changed: u64, levels: u64) -> Result<(), ParseFailure> {
        self.inner.change(sample, changed, levels)?;
        let b = self.bucket(sample);
        let mut d = changed;
        while d != 0 {
            let bit = d.trailing_zeros();
            d &= d - 1;
            let Some(c) = self.inner.by_bit[bit as usize].map(usize::from) else { continue };
            self.fill(c, b);
            self.flips[c][b] = self.flips[c][b].saturating_add(1);
            self.level[c] = ((levels >> bit) & 1) as u8;
        }
        Ok(())
    }

    /// The first preview after the first chunk (so the window draws the capture at once),
    /// then one every [`crate::PREVIEW_EVERY`].
    fn chunk_read(&mut self, samples: u64) {
        let due = self.sent.is_none_or(|t| t.elapsed() >= crate::PREVIEW_EVERY);
        if due && samples < self.total {
            self.send(samples);
        }
    }
}

/// The warning when loading stopped at [`MAX_TRANSITIONS`]: the limit `e` names, where
/// loading stopped and, when known, how many samples the capture declares.
fn stopped_at_limit(e: &ParseFailure, at: u64, declared: Option<u64>) -> String {
    let of = declared.map_or_else(String::new, |n| format!(" (of {n})"));
    format!("{e}; logic samples from sample {at} on{of} were not loaded; what came before is shown")
}

fn too_many_transitions(channel: &str, index: u64) -> ParseFailure {
    ParseFailure::Limit {
        at: Position::Byte(0),
        what: format!("logic transitions (channel {channel} at sample {index})"),
        limit: format!("{MAX_TRANSITIONS} transitions (~{} MB of edges)", MAX_TRANSITIONS * 9 / 1_000_000),
    }
}

/// Per byte of a `unitsize`-byte sample, the bits of `channels`.
fn bits_of<T>(unitsize: usize, channels: &[LogicChannel<T>]) -> Vec<u8> {
    let mut bits = vec![0; unitsize];
    for ch in channels {
        bits[ch.byte] |= ch.mask;
    }
    bits
}

/// The analog channels: `analogN` keys with their names, by N.
fn analog_keys(meta: &DeviceMetadata) -> Vec<(u32, String)> {
    let mut keys: Vec<(u32, String)> = meta
        .entries
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("analog")?.parse().ok()?, v.clone())))
        .collect();
    keys.sort_by_key(|k| k.0);
    keys
}

fn read_analog(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    bytes: &[u8],
    names: &[String],
    meta: &DeviceMetadata,
    clock: SampleClock,
    ctl: &LoadControl,
    source: &mut Source,
) -> Result<(), ParseFailure> {
    let keys = analog_keys(meta);
    let mut total = 0usize;
    for (key, name) in keys {
        let (members, skipped) = chunk_members(names, &format!("analog-1-{key}"));
        if let Some(n) = skipped {
            source
                .diagnostics
                .warn(format!("analog chunk analog-1-{key}-{n} follows a gap and was not read"));
        }
        if members.is_empty() {
            source.diagnostics.warn(format!("analog channel {name} (analog{key}) has no data"));
            continue;
        }
        // Refuse before inflating anything when the members' declared sizes already exceed
        // the limit: the samples vector would grow to it before the streaming check fired.
        let declared: u64 = members.iter().filter_map(|m| Some(zip.by_name(m).ok()?.size())).sum();
        if (total as u64).saturating_add(declared / 4) > MAX_ANALOG_SAMPLES as u64 {
            return Err(ParseFailure::Limit {
                at: Position::Byte(0),
                what: format!("analog samples (channel {name}: {} declared)", declared / 4),
                limit: MAX_ANALOG_SAMPLES.to_string(),
            });
        }
        // Chunks of whole samples are inflated on all cores into their place.
        let fast = logic::members(zip, bytes, &members, 4);
        let mut samples = vec![0f32; (declared / 4) as usize];
        if logic::inflate_f32(bytes, &fast, &mut samples) {
            ctl.advance(fast.iter().map(|m| m.compressed_len() as u64).sum());
            total += samples.len();
            source.analog.push(AnalogTrack::new(name, "V", 0, clock.period_ps(), samples));
            continue;
        }
        drop(samples);
        // Exact: the declared sizes were checked against the limit just above.
        let mut samples: Vec<f32> = Vec::with_capacity((declared / 4) as usize);
        let mut carry: Vec<u8> = Vec::with_capacity(4);
        for (i, member) in members.iter().enumerate() {
            let streamed = stream_member(zip, member, ctl, |mut bytes| {
                if !carry.is_empty() {
                    let take = (4 - carry.len()).min(bytes.len());
                    carry.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if carry.len() == 4 {
                        samples.push(f32::from_le_bytes([carry[0], carry[1], carry[2], carry[3]]));
                        carry.clear();
                    }
                }
                let whole = bytes.len() / 4 * 4;
                samples.extend(
                    bytes[..whole].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                );
                carry.extend_from_slice(&bytes[whole..]);
                if total + samples.len() > MAX_ANALOG_SAMPLES {
                    return Err(ParseFailure::Limit {
                        at: Position::Byte(0),
                        what: format!("analog samples (channel {name})"),
                        limit: MAX_ANALOG_SAMPLES.to_string(),
                    });
                }
                Ok(())
            });
            match streamed {
                Ok(()) => {}
                Err(ParseFailure::Invalid { at, message }) => {
                    source.diagnostics.warn(format!(
                        "{at}: {message}; channel {name} samples after sample {} ({} later chunk(s)) were not loaded",
                        samples.len(),
                        members.len() - i - 1
                    ));
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        total += samples.len();
        source.analog.push(AnalogTrack::new(name, "V", 0, clock.period_ps(), samples));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_model::{PS_PER_S, Ps};

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn chunks_probe_numerically_and_stop_at_a_gap() {
        let n = names(&["logic-1-1", "logic-1-10", "logic-1-2", "metadata"]);
        assert_eq!(chunk_members(&n, "logic-1"), (names(&["logic-1-1", "logic-1-2"]), Some(10)));
        let n = names(&["logic-1", "logic-1-1"]);
        assert_eq!(chunk_members(&n, "logic-1").0, names(&["logic-1"]));
        assert_eq!(chunk_members(&names(&["analog-1-9-1"]), "analog-1-9").0, names(&["analog-1-9-1"]));
    }

    fn channels(unitsize: usize, bits: &[usize]) -> Vec<LogicChannel<DigitalTrack>> {
        let _ = unitsize;
        bits.iter()
            .map(|&b| LogicChannel { byte: b / 8, mask: 1 << (b % 8), track: DigitalTrack::new("c", 0) })
            .collect()
    }

    type Tracks = Vec<(u8, Vec<i64>, Vec<u8>)>;

    fn tracks(channels: Vec<LogicChannel<DigitalTrack>>) -> Tracks {
        channels
            .into_iter()
            .map(|c| (c.track.initial, c.track.times().collect(), c.track.levels().to_vec()))
            .collect()
    }

    /// The sample-at-a-time decoder on `data`.
    fn by_samples(data: &[u8], unitsize: usize, bits: &[usize], clock: SampleClock) -> (Tracks, u64) {
        let mut d = LogicDecoder::new(unitsize, channels(unitsize, bits), clock);
        for s in data.chunks_exact(unitsize) {
            d.sample(s).unwrap();
        }
        (tracks(d.channels), d.samples)
    }

    /// The word-scanning reader on `data` fed in pieces of `split` bytes, and handed on as
    /// chunks of `chunk` samples scanned in pieces of a third of that (and at least 1).
    fn by_words(
        data: &[u8],
        unitsize: usize,
        bits: &[usize],
        clock: SampleClock,
        split: usize,
        chunk: usize,
    ) -> [(Tracks, u64); 2] {
        let pieces: Vec<&[u8]> = data.chunks(split).collect();
        let mut v = TrackVisitor::new(channels(unitsize, bits), clock);
        let masks = Masks { wanted: v.wanted, counted: 0 };
        let end = logic::feed_pieces(&pieces, unitsize, masks, &mut v).unwrap();
        let fed = (tracks(v.channels), end.samples);
        let whole = &data[..data.len() / unitsize * unitsize];
        let chunks: Vec<&[u8]> = whole.chunks(chunk * unitsize).collect();
        let mut v = TrackVisitor::new(channels(unitsize, bits), clock);
        let end = logic::apply_chunks(&chunks, unitsize, masks, (chunk / 3).max(1), &mut v).unwrap();
        [fed, (tracks(v.channels), end.samples)]
    }

    #[test]
    fn split_samples_and_unitsize_above_one() {
        let clock = SampleClock::new(1_000_000);
        // samples: 0x0001, 0x0201, 0x0200, 0x0000; fed split mid-sample, one byte left over.
        let mut v = TrackVisitor::new(channels(2, &[0, 9]), clock);
        let masks = Masks { wanted: v.wanted, counted: 0 };
        let end = logic::feed_pieces(
            &[&[0x01, 0x00, 0x01], &[0x02, 0x00, 0x02, 0x00], &[0x00, 0x07]],
            2,
            masks,
            &mut v,
        )
        .unwrap();
        assert_eq!((end.samples, end.partial_len), (4, 1));
        assert_eq!(v.channels[0].track.initial, 1);
        assert_eq!(v.channels[0].track.times().collect::<Vec<_>>(), [2_000_000]);
        assert_eq!(v.channels[1].track.times().collect::<Vec<_>>(), [1_000_000, 3_000_000]);
        assert_eq!(v.channels[1].track.levels(), [1, 0]);
        let mut d = LogicDecoder::new(2, channels(2, &[0, 9]), clock);
        d.feed(&[0x01, 0x00, 0x01]).unwrap();
        d.feed(&[0x02, 0x00, 0x02, 0x00]).unwrap();
        d.feed(&[0x00, 0x07]).unwrap();
        assert_eq!((d.samples, d.partial_len), (4, 1));
        assert_eq!(tracks(d.channels), tracks(v.channels));
    }

    #[test]
    fn the_word_scan_finds_what_the_sample_decoder_finds() {
        // Quiet stretches (whole quiet 64-byte blocks) and busy ones, at every unitsize the
        // word scan reads, split across pieces and chunks at odd places.
        for unitsize in [1usize, 2, 3, 4, 8] {
            let data: Vec<u8> = (0..40_000u32)
                .map(|i| if (i / 3000) % 2 == 0 { 0x5F } else { ((i / 7) ^ (i / 13) ^ (i >> 9)) as u8 })
                .collect();
            let bits: Vec<usize> = (0..8 * unitsize).step_by(3).collect();
            let clock = SampleClock::new(3_000_000);
            let want = by_samples(&data, unitsize, &bits, clock);
            for (split, chunk) in [(1, 1), (7, 100), (4096, 4096), (40_000, 64), (333, 1_000_000)] {
                let [fed, applied] = by_words(&data, unitsize, &bits, clock, split, chunk);
                assert_eq!(fed, want, "unitsize {unitsize}, pieces of {split}");
                assert_eq!(applied, want, "unitsize {unitsize}, chunks of {chunk}");
            }
        }
        // 3 MHz has no whole-picosecond period: sample 1 is at 333 333 ps, sample 2 at 666 667.
        let clock = SampleClock::new(3_000_000);
        assert_eq!((clock.time(1), clock.time(2), clock.time(3)), (333_333, 666_667, 1_000_000));
    }

    #[test]
    fn a_selective_decode_counts_what_it_skips() {
        let data: Vec<u8> = (0..10_000u32).map(|i| ((i / 7) ^ (i / 13) ^ ((i / 3) & 0x40)) as u8).collect();
        let clock = SampleClock::new(3_000_000);
        let (full, _) = by_samples(&data, 1, &[0, 1, 2, 3, 4, 5, 6, 7], clock);
        let others: u64 = [0, 1, 3, 4, 5, 7].iter().map(|&c| full[c].1.len() as u64).sum();
        for split in [1, 5, 4096] {
            let pieces: Vec<&[u8]> = data.chunks(split).collect();
            let mut v = TrackVisitor::new(channels(1, &[2, 6]), clock);
            let masks = Masks { wanted: v.wanted, counted: bits_of_word(&channels(1, &[0, 1, 3, 4, 5, 7])) };
            let end = logic::feed_pieces(&pieces, 1, masks, &mut v).unwrap();
            let got = tracks(v.channels);
            assert_eq!((&got[0], &got[1]), (&full[2], &full[6]));
            assert_eq!(end.counted_flips, others);
            assert_eq!(end.samples, 10_000);
            // The old decoder, sample by sample, counts the same.
            let mut d = LogicDecoder::new(1, channels(1, &[2, 6]), clock);
            d.count_only(&channels(1, &[0, 1, 3, 4, 5, 7]));
            for p in &pieces {
                d.feed(p).unwrap();
            }
            assert_eq!(d.uncounted_transitions, others);
        }
    }

    #[test]
    fn sample_times_equal_the_rounded_division_at_every_rate() {
        let reference = |rate: u64, i: u64| {
            let r = i128::from(rate);
            ((i128::from(i) * i128::from(PS_PER_S) + r / 2) / r) as Ps
        };
        for rate in [1, 3, 7, 200_000, 3_000_000, 12_000_000, 24_000_000, 125_000_000, 500_000_000, 1 << 40] {
            let clock = SampleClock::new(rate);
            for i in [0, 1, 2, 3, 999, 1 << 20, 4_999_999, 18_446_743, 18_446_745, 1 << 40, u64::MAX / 3] {
                assert_eq!(clock.time(i), reference(rate, i), "rate {rate}, sample {i}");
            }
        }
    }
}
