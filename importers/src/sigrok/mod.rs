//! sigrok session files (`.sr`, srzip versions 1 and 2).
//!
//! Logic channels become digital tracks stored as transitions: members are stream-decoded
//! through a fixed buffer, so a 100M-sample capture costs memory in proportion to its
//! edges, never to its samples. Analog channels become analog tracks (`f32`, volts — the
//! unit libsigrok assumes, since none is stored).
//!
//! With a track selection in the [`LoadControl`] (`latscope report` with rules that name
//! their channels), only the selected logic channels are decoded: runs where only other
//! channels change are skipped. The others' transitions are still counted, so the source's
//! record count is the full decode's, and the `logic channels not decoded` metadata entry
//! names them. Analog channels always load.

mod metadata;
mod recover;

pub use metadata::{DeviceMetadata, parse_metadata, parse_samplerate};

use crate::{LoadControl, ParseFailure, Position, budget};
use latscope_model::{AnalogTrack, DigitalTrack, PS_PER_S, Ps, Source, SourceKind};
use std::io::{Cursor, Read};
use zip::ZipArchive;

/// Largest `metadata`/`version` member read into memory.
const MAX_METADATA_BYTES: u64 = 1 << 20;
/// Largest data member decoded: libsigrok writes 4–10 MiB chunks, and even an unchunked v1
/// capture of a whole logic analyzer's memory stays far below this.
pub const MAX_MEMBER_BYTES: u64 = 4 << 30;
/// Logic transitions kept across all channels. Each costs 9 bytes (time and level), so the
/// limit bounds a capture's edges to ~580 MB: a hostile file (deflate packs a sample that
/// toggles every time ~1000:1, so 100 M toggling samples fit in 100 KB) is refused there,
/// not after gigabytes. Real captures have far fewer edges than samples (a 10 MHz clock
/// sampled for 3 s stays under it).
pub const MAX_TRANSITIONS: usize = 64_000_000;
/// Analog samples kept across all channels (4 bytes each, so 512 MiB): a 1 MS/s scope
/// channel for two minutes. Members whose declared sizes exceed it are refused unread,
/// and no more than the declared size is reserved.
pub const MAX_ANALOG_SAMPLES: usize = 1 << 27;
const READ_BUFFER: usize = 1 << 16;

pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let (mut source, note) = with_archive(data, |zip| parse_archive(zip, ctl))?;
    if let Some(note) = note {
        source.diagnostics.warnings.insert(0, note);
    }
    Ok(source)
}

/// Runs `read` on the archive in `data`, or on one rebuilt from its member headers when its
/// member directory is missing (a capture cut short); then also returns the note saying so.
fn with_archive<T>(
    data: &[u8],
    read: impl FnOnce(ZipArchive<Cursor<&[u8]>>) -> Result<T, ParseFailure>,
) -> Result<(T, Option<String>), ParseFailure> {
    let e = match ZipArchive::new(Cursor::new(data)) {
        Ok(zip) => return Ok((read(zip)?, None)),
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
    Ok((read(zip)?, Some(rebuilt.note)))
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
    let (mut ticks, note) = with_archive(data, |mut zip| {
        let header = read_header(&mut zip)?;
        let samplerate = (!header.no_rate).then_some(header.clock.rate);
        let mut out = LogicTicks { samplerate, ..LogicTicks::default() };
        if header.no_rate {
            out.warnings.push(NO_RATE.into());
        }
        let names = member_names(&zip);
        if let Some(capture) = header.meta.get("capturefile") {
            let read =
                read_logic_channels(&mut zip, &names, capture, &header.meta, header.clock, ctl, |name| {
                    ChannelTicks { name: name.into(), ..ChannelTicks::default() }
                })?;
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

const NO_RATE: &str = "no samplerate in the metadata: times are sample numbers (1 Hz assumed)";

fn member_names(zip: &ZipArchive<Cursor<&[u8]>>) -> Vec<String> {
    (0..zip.len()).filter_map(|i| Some(zip.name_for_index(i)?.ok()?.into_owned())).collect()
}

fn parse_archive(mut zip: ZipArchive<Cursor<&[u8]>>, ctl: &LoadControl) -> Result<Source, ParseFailure> {
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
        not_decoded = read_logic(&mut zip, &names, capture, &meta, clock, ctl, &mut source)?;
    }
    read_analog(&mut zip, &names, &meta, clock, ctl, &mut source)?;
    if let Some(n) = not_decoded {
        // The record count stays the full decode's: the tracks' own counts plus these.
        source.records = Some(source.records() + n);
    }
    Ok(source)
}

#[derive(Debug, Clone, Copy)]
struct SampleClock {
    rate: u64,
    /// The period in whole picoseconds when the rate divides 1 THz (every common rate
    /// does): times are then a multiplication, exactly what the rounded division gives.
    step: Option<u64>,
}

impl SampleClock {
    fn new(rate: u64) -> Self {
        let ps = PS_PER_S as u64;
        Self { rate, step: (rate != 0 && ps.is_multiple_of(rate)).then(|| ps / rate) }
    }

    /// Sample `i` is at `i / rate` seconds, rounded to the nearest picosecond.
    fn time(self, i: u64) -> Ps {
        // `i * step + rate / 2` divided by `rate` is `i * step`: `rate / 2 < rate`.
        if let Some(step) = self.step {
            return (i128::from(i) * i128::from(step)) as Ps;
        }
        // The 64-bit division when the product fits (an i128 division costs several times more).
        if let Some(n) = i.checked_mul(PS_PER_S as u64).and_then(|n| n.checked_add(self.rate / 2)) {
            return (n / self.rate) as Ps;
        }
        let rate = i128::from(self.rate);
        ((i128::from(i) * i128::from(PS_PER_S) + rate / 2) / rate) as Ps
    }
    fn period_ps(self) -> f64 {
        PS_PER_S as f64 / self.rate as f64
    }
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
        DigitalTrack::push(self, clock.time(sample), level);
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
    /// Channels left out by the track selection, with their transitions (counted only).
    others: Vec<String>,
    uncounted_transitions: u64,
    warnings: Vec<String>,
}

fn read_logic(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    names: &[String],
    capture: &str,
    meta: &DeviceMetadata,
    clock: SampleClock,
    ctl: &LoadControl,
    source: &mut Source,
) -> Result<Option<u64>, ParseFailure> {
    let read = read_logic_channels(zip, names, capture, meta, clock, ctl, |name| DigitalTrack::new(name, 0))?;
    for w in read.warnings {
        source.diagnostics.warn(w);
    }
    source.metadata.push(("logic samples".into(), read.samples.to_string()));
    if !read.others.is_empty() {
        source.metadata.push((
            "logic channels not decoded".into(),
            format!("{} ({} transitions)", read.others.join(", "), read.uncounted_transitions),
        ));
    }
    let end = clock.time(read.samples.saturating_sub(1));
    for mut track in read.channels {
        track.end = end;
        source.digital.push(track);
    }
    Ok((!read.others.is_empty()).then_some(read.uncounted_transitions))
}

fn read_logic_channels<T: Transitions>(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    names: &[String],
    capture: &str,
    meta: &DeviceMetadata,
    clock: SampleClock,
    ctl: &LoadControl,
    make: impl Fn(&str) -> T,
) -> Result<LogicRead<T>, ParseFailure> {
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
    let mut channels: Vec<LogicChannel<T>> = Vec::new();
    for i in 1..=total_probes.min(unitsize * 8) {
        if let Some(name) = meta.get(&format!("probe{i}")) {
            let bit = i - 1;
            channels.push(LogicChannel { byte: bit / 8, mask: 1 << (bit % 8), track: make(name) });
        }
    }
    // A selection that keeps none of the logic channels decodes them all: the capture's
    // time range comes from its logic tracks, and the rule names none of them anyway.
    let (channels, others): (Vec<LogicChannel<T>>, Vec<LogicChannel<T>>) =
        channels.into_iter().partition(|c| ctl.wants_track(c.track.name()));
    let (channels, others) = if channels.is_empty() { (others, Vec::new()) } else { (channels, others) };
    let mut warnings = Vec::new();
    let (members, skipped) = chunk_members(names, capture);
    if let Some(n) = skipped {
        warnings.push(format!(
            "logic chunk {capture}-{n} follows a gap in the numbering and was not read (libsigrok stops at the gap too)"
        ));
    }
    let mut decoder = LogicDecoder::new(unitsize, channels, clock);
    decoder.count_only(&others);
    for (i, name) in members.iter().enumerate() {
        match stream_member(zip, name, ctl, |bytes| decoder.feed(bytes)) {
            Ok(()) => {}
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
    if decoder.partial_len > 0 {
        warnings.push(format!(
            "logic data ends with {} byte(s) that do not make a whole {unitsize}-byte sample; ignored",
            decoder.partial_len
        ));
    }
    Ok(LogicRead {
        samples: decoder.samples,
        others: others.iter().map(|c| c.track.name().to_owned()).collect(),
        uncounted_transitions: decoder.uncounted_transitions,
        channels: decoder.channels.into_iter().map(|c| c.track).collect(),
        warnings,
    })
}

/// Turns a stream of packed samples into per-channel transitions.
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
    /// With one-byte samples, the channel of each bit.
    by_bit: [Option<usize>; 8],
}

impl<T: Transitions> LogicDecoder<T> {
    fn new(unitsize: usize, channels: Vec<LogicChannel<T>>, clock: SampleClock) -> Self {
        let mut by_bit = [None; 8];
        for (i, ch) in channels.iter().enumerate() {
            if ch.byte == 0 {
                by_bit[ch.mask.trailing_zeros() as usize] = Some(i);
            }
        }
        Self {
            by_bit,
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
        if self.unitsize == 1 {
            self.feed_bytes(body)?;
        } else {
            for sample in body.chunks_exact(self.unitsize) {
                self.sample(sample)?;
            }
        }
        self.partial[..rest.len()].copy_from_slice(rest);
        self.partial_len = rest.len();
        Ok(())
    }

    /// The common 8-channel case: skip runs without a decoded channel's change quickly.
    fn feed_bytes(&mut self, body: &[u8]) -> Result<(), ParseFailure> {
        let mut i = 0;
        if self.prev.is_none() {
            let Some(&first) = body.first() else { return Ok(()) };
            self.sample(&[first])?;
            i = 1;
        }
        let Some(&last) = body.last() else { return Ok(()) };
        // The stream's previous byte (all its bits: `prev` below keeps only the decoded
        // channels' bits current).
        let before = self.prev.as_ref().map_or(0, |p| p[0]);
        if self.counted_bits[0] != 0 {
            self.uncounted_transitions += count_changes(before, &body[i..], self.counted_bits[0]);
        }
        let bits = self.decoded_bits[0];
        let base = self.samples - i as u64;
        if bits != 0 {
            // Eight samples at a time: each byte XOR the one before it, masked to the decoded
            // channels, is nonzero exactly where one of them flips; dense clocks flip every
            // few samples, so the flips are found without a branch per sample.
            let spread = u64::from(bits) * 0x0101_0101_0101_0101;
            let mut prev = before;
            let mut at = base + i as u64;
            let (words, tail) = body[i..].as_chunks::<8>();
            for word in words {
                let w = u64::from_le_bytes(*word);
                let mut d = (w ^ ((w << 8) | u64::from(prev))) & spread;
                prev = word[7];
                while d != 0 {
                    let k = d.trailing_zeros() / 8;
                    self.flips(at + u64::from(k), (d >> (8 * k)) as u8, word[k as usize])?;
                    d &= !(0xFF << (8 * k));
                }
                at += 8;
            }
            for &b in tail {
                let d = (b ^ prev) & bits;
                if d != 0 {
                    self.flips(at, d, b)?;
                }
                prev = b;
                at += 1;
            }
        }
        self.samples = base + body.len() as u64;
        if let Some(p) = self.prev.as_mut() {
            p[0] = last;
        }
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

    /// The one-byte-sample case of [`Self::edges`]: `diff` has the decoded channels' bits
    /// that flip at sample `index`, `now` is the sample.
    #[inline]
    fn flips(&mut self, index: u64, diff: u8, now: u8) -> Result<(), ParseFailure> {
        let mut d = diff;
        while d != 0 {
            let bit = d.trailing_zeros();
            d &= d - 1;
            if let Some(c) = self.by_bit[bit as usize] {
                self.transition(c, index, (now >> bit) & 1)?;
            }
        }
        Ok(())
    }

    /// Stores channel `c`'s transition to `level` at sample `index`, counted against the
    /// limit before it is stored, so the tracks never hold more than it.
    #[inline]
    fn transition(&mut self, c: usize, index: u64, level: u8) -> Result<(), ParseFailure> {
        let Some(ch) = self.channels.get_mut(c) else { return Ok(()) };
        if self.transitions >= MAX_TRANSITIONS {
            return Err(too_many_transitions(ch.track.name(), index));
        }
        ch.track.push(index, self.clock, level, MAX_TRANSITIONS - self.transitions);
        self.transitions += 1;
        Ok(())
    }

    fn edges(&mut self, index: u64, prev: &[u8], now: &[u8]) -> Result<(), ParseFailure> {
        for c in 0..self.channels.len() {
            let (byte, mask) = (self.channels[c].byte, self.channels[c].mask);
            if (prev[byte] ^ now[byte]) & mask != 0 {
                self.transition(c, index, u8::from(now[byte] & mask != 0))?;
            }
        }
        Ok(())
    }
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

/// Transitions of the `bits` channels in `bytes` (one-byte samples) after `before`.
fn count_changes(before: u8, bytes: &[u8], bits: u8) -> u64 {
    let Some(&first) = bytes.first() else { return 0 };
    let rest: u64 =
        bytes.iter().zip(&bytes[1..]).map(|(&a, &b)| u64::from(((a ^ b) & bits).count_ones())).sum();
    u64::from(((before ^ first) & bits).count_ones()) + rest
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

    #[test]
    fn decoder_handles_split_samples_and_unitsize_above_one() {
        let ch = |bit: usize| LogicChannel {
            byte: bit / 8,
            mask: 1 << (bit % 8),
            track: DigitalTrack::new("c", 0),
        };
        let clock = SampleClock::new(1_000_000);
        let mut d = LogicDecoder::new(2, vec![ch(0), ch(9)], clock);
        // samples: 0x0001, 0x0201, 0x0200, 0x0000; fed split mid-sample.
        d.feed(&[0x01, 0x00, 0x01]).unwrap();
        d.feed(&[0x02, 0x00, 0x02, 0x00]).unwrap();
        d.feed(&[0x00, 0x07]).unwrap();
        assert_eq!(d.samples, 4);
        assert_eq!(d.partial_len, 1);
        assert_eq!(d.channels[0].track.initial, 1);
        assert_eq!(d.channels[0].track.times, [2_000_000]);
        assert_eq!(d.channels[1].track.times, [1_000_000, 3_000_000]);
        assert_eq!(d.channels[1].track.levels, [1, 0]);
    }

    #[test]
    fn single_byte_fast_path_matches_generic_path() {
        let data: Vec<u8> = (0..10_000u32).map(|i| ((i / 7) ^ (i / 13)) as u8).collect();
        let clock = SampleClock::new(3_000_000);
        let run = |split: usize| {
            let chans = (0..8)
                .map(|b| LogicChannel { byte: 0, mask: 1 << b, track: DigitalTrack::new("c", 0) })
                .collect();
            let mut d = LogicDecoder::new(1, chans, clock);
            for part in data.chunks(split) {
                d.feed(part).unwrap();
            }
            d.channels
                .into_iter()
                .map(|c| (c.track.initial, c.track.times, c.track.levels))
                .collect::<Vec<_>>()
        };
        let reference = {
            let chans: Vec<LogicChannel<DigitalTrack>> = (0..8)
                .map(|b| LogicChannel { byte: 0, mask: 1 << b, track: DigitalTrack::new("c", 0) })
                .collect();
            let mut d = LogicDecoder::new(1, chans, clock);
            for s in &data {
                d.sample(std::slice::from_ref(s)).unwrap();
            }
            d.channels
                .into_iter()
                .map(|c| (c.track.initial, c.track.times, c.track.levels))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), reference);
        assert_eq!(run(4096), reference);
        assert_eq!(run(10_000), reference);
        // 3 MHz has no whole-picosecond period: sample 1 is at 333 333 ps, sample 2 at 666 667.
        assert_eq!((clock.time(1), clock.time(2), clock.time(3)), (333_333, 666_667, 1_000_000));
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

    #[test]
    fn a_selective_decode_counts_what_it_skips() {
        let data: Vec<u8> = (0..10_000u32).map(|i| ((i / 7) ^ (i / 13) ^ ((i / 3) & 0x40)) as u8).collect();
        let clock = SampleClock::new(3_000_000);
        let chans = |bits: &[u8]| -> Vec<LogicChannel<DigitalTrack>> {
            bits.iter()
                .map(|&b| LogicChannel { byte: 0, mask: 1 << b, track: DigitalTrack::new("c", 0) })
                .collect()
        };
        let mut full = LogicDecoder::new(1, chans(&[0, 1, 2, 3, 4, 5, 6, 7]), clock);
        full.feed(&data).unwrap();
        for split in [1, 5, 4096] {
            let mut part = LogicDecoder::new(1, chans(&[2, 6]), clock);
            part.count_only(&chans(&[0, 1, 3, 4, 5, 7]));
            for piece in data.chunks(split) {
                part.feed(piece).unwrap();
            }
            assert_eq!(part.channels[0].track, full.channels[2].track);
            assert_eq!(part.channels[1].track, full.channels[6].track);
            let others: usize =
                [0, 1, 3, 4, 5, 7].iter().map(|&c| full.channels[c].track.transitions()).sum();
            assert_eq!(part.uncounted_transitions, others as u64);
            assert_eq!(part.samples, full.samples);
        }
    }
}
