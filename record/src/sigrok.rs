//! A logic analyzer through `sigrok-cli` (`--sigrok DRIVER[:key=value…]`): the logic
//! channels streamed as `-O binary` (one `unitsize`-byte sample after another) while
//! `sigrok-cli --continuous` runs, and saved as a sigrok session (`.sr`: a zip of
//! `version`, `metadata` and `logic-1-N` chunks) that sigrok-cli and PulseView read.
//!
//! `sigrok-cli --continuous` stops as soon as its standard input closes, so the recorder
//! holds a pipe to it open and closes it to stop. Keys that configure the device
//! (`samplerate`, `limit_*`, `continuous`) go to `-c`; the others (`conn`, `serialcomm`,
//! `analog_channels`, …) are scan options of `-d`. Analog channels are not recorded.
//!
//! Decoder stacks (`--decoder`) run on the stream as it arrives: the reader thread feeds
//! each sample's level changes to latscope's streamed decoders ([`StreamDecoder`]), so
//! the live lines count annotations and run the analyses over them while the capture goes
//! on, and the end of the recording has the whole decode without reading the capture again.

use crate::decoded::DecodedGrowth;
use crate::{RecordError, save};
use latscope_decoders::{Annotation, Clock, Decoded, StreamDecoder};
use latscope_model::{DigitalTrack, SampleClock};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::thread::JoinHandle;

/// Device settings that `-c` takes rather than `-d`.
const CONFIG_KEYS: [&str; 4] = ["samplerate", "limit_samples", "limit_time", "captureratio"];

/// Bytes of one chunk of a saved session (as sigrok's own writer cuts them).
const CHUNK: usize = 4 << 20;

/// What `--sigrok` names: the driver and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigrokSpec {
    pub driver: String,
    pub scan: Vec<(String, String)>,
    pub config: Vec<(String, String)>,
    /// Native decoder stacks run on the stream as it arrives (`--decoder`).
    pub decoders: Vec<String>,
    /// Logic channels kept as level changes while the capture streams, for the analyses
    /// that read them and a window that shows them ([`LogicCapture::tracks`]).
    pub tracks: Vec<String>,
    /// The device's logic channels, once asked ([`logic_channels`] asks them only then).
    pub channels: Option<Vec<String>>,
}

impl SigrokSpec {
    pub fn parse(text: &str) -> Result<SigrokSpec, RecordError> {
        let mut parts = text.split(':');
        let driver = parts.next().unwrap_or_default().trim().to_owned();
        if driver.is_empty() {
            return Err(RecordError::Usage(format!("--sigrok {text:?}: expected DRIVER[:key=value...]")));
        }
        let (mut scan, mut config) = (Vec::new(), Vec::new());
        for p in parts {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| RecordError::Usage(format!("--sigrok {text:?}: {p:?} is not key=value")))?;
            let kv = (k.trim().to_owned(), v.trim().to_owned());
            if CONFIG_KEYS.contains(&kv.0.as_str()) { config.push(kv) } else { scan.push(kv) }
        }
        Ok(SigrokSpec { driver, scan, config, decoders: Vec::new(), tracks: Vec::new(), channels: None })
    }

    /// The same device with decoder stacks to run live on its stream.
    pub fn with_decoders(mut self, decoders: Vec<String>) -> SigrokSpec {
        self.decoders = decoders;
        self
    }

    /// The same device, keeping the level changes of the channels `tracks` as it streams.
    pub fn with_tracks(mut self, tracks: Vec<String>) -> SigrokSpec {
        self.tracks = tracks;
        self
    }

    /// The same device, whose logic channels are known to be `channels`.
    pub fn with_channels(mut self, channels: Vec<String>) -> SigrokSpec {
        self.channels = Some(channels);
        self
    }

    /// `DRIVER:k=v:…` for `-d`.
    fn device(&self) -> String {
        std::iter::once(self.driver.clone())
            .chain(self.scan.iter().map(|(k, v)| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(":")
    }

    fn samplerate(&self) -> Option<&str> {
        self.config.iter().find(|(k, _)| k == "samplerate").map(|(_, v)| v.as_str())
    }

    /// The sample rate asked for, in hertz.
    pub fn samplerate_hz(&self) -> Option<u64> {
        self.samplerate().and_then(rate_hz)
    }
}

/// Decoder stacks fed from the stream: sample `n`'s levels are the `unitsize` bytes at
/// `n * unitsize`, least significant channel first, as `-O binary` writes them.
///
/// The annotations each stack says are final are taken out as it goes, and their events
/// appended to a growing source ([`DecodedGrowth`]) that the live lines analyse: a tick
/// costs what was decoded since the last one. A UART with `baud=auto` frames at the rate
/// measured so far; when that rate changes, what its stack handed on is void and the
/// growing source starts again (a new generation). A stack that cannot say which are
/// final leaves every tick to analyse all it decoded so far.
#[derive(Debug)]
pub struct LiveDecoders {
    specs: Vec<String>,
    decoders: Vec<StreamDecoder>,
    unitsize: usize,
    /// Samples fed so far, and the levels of the last one.
    fed: u64,
    levels: u64,
    /// Each stack's final annotations taken out, in start order: the whole decode puts
    /// them before those the stack still holds.
    taken: Vec<Vec<Annotation>>,
    /// The final annotations as a growing source, while every stack says which are final.
    growth: Option<Growth>,
    /// [`REGROW_SLACK`], smaller in tests.
    regrow_slack: u64,
}

/// Each decoder stack's decode, with its spec.
pub type Decodes = Vec<(String, Decoded)>;

/// The growing source of a live decode, and how far into each stack's taken annotations
/// it has read.
#[derive(Debug, Default)]
struct Growth {
    source: DecodedGrowth,
    next: Vec<usize>,
    /// Times it started again from the annotations kept (a ring dropped old ones).
    generation: u64,
    /// Since it started, the ring dropped none of the annotations: it holds what is kept.
    holds_kept: bool,
}

impl Growth {
    /// Starts again from every annotation taken (a new generation, which analyses read from
    /// its beginning).
    fn start_again(&mut self) {
        self.source = DecodedGrowth::default();
        self.next.iter_mut().for_each(|n| *n = 0);
        self.generation += 1;
        self.holds_kept = true;
    }
}

/// The decoded annotations a live line reads.
#[derive(Debug, Clone)]
pub enum LiveDecode {
    /// The final ones, as a growing source.
    Growing(GrownDecode),
    /// Every one so far, with each stack's spec.
    Whole(Decodes),
}

/// A live decode's growing source as it stands: the events so far and how many times it
/// started again (analyses read a source of a new generation from its beginning).
#[derive(Debug, Clone)]
pub struct GrownDecode {
    pub source: latscope_model::Source,
    pub generation: u64,
    /// Every annotation before this time (picoseconds from the first sample) is in the
    /// source; those to come start at or after it.
    pub complete: latscope_model::Ps,
}

/// A growing source starts again from the annotations kept once it holds this many more
/// than twice as many, so that with a ring its memory stays within about three rings'
/// worth while each annotation is appended a few times at most.
const REGROW_SLACK: u64 = 1 << 16;

impl LiveDecoders {
    /// Prepares `specs` over `channels` (bit `i` is channel `i`), at `rate` Hz.
    fn new(specs: &[String], channels: &[String], rate: u64) -> Result<LiveDecoders, RecordError> {
        let named: Vec<(&str, u32)> = channels.iter().zip(0u32..).map(|(n, b)| (n.as_str(), b)).collect();
        let decoders = specs
            .iter()
            .map(|spec| {
                StreamDecoder::new(spec, &named, Clock::Samples(rate))
                    .map_err(|e| RecordError::Usage(format!("--decoder {spec:?}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LiveDecoders {
            specs: specs.to_vec(),
            taken: vec![Vec::new(); decoders.len()],
            growth: Some(Growth { next: vec![0; decoders.len()], holds_kept: true, ..Growth::default() }),
            decoders,
            unitsize: channels.len().div_ceil(8).max(1),
            fed: 0,
            levels: 0,
            regrow_slack: REGROW_SLACK,
        })
    }

    /// Feeds the whole samples in `bytes` (which start at a sample's first byte).
    fn feed(&mut self, bytes: &[u8]) {
        let wanted = self.decoders.iter().fold(0u64, |acc, d| acc | d.wanted());
        for levels in sample_words(bytes, self.unitsize) {
            if self.fed == 0 {
                self.decoders.iter_mut().for_each(|d| d.start(levels));
            } else {
                let changed = (levels ^ self.levels) & wanted;
                if changed != 0 {
                    // Sample numbers stay far below 2^63.
                    let tick = self.fed as i64;
                    self.decoders.iter_mut().for_each(|d| d.change(tick, changed, levels));
                }
            }
            self.levels = levels;
            self.fed += 1;
        }
    }

    /// Takes each stack's final annotations and appends what no stack can still precede
    /// to the growing source; `None` once a stack cannot say which are final.
    fn grow(&mut self) -> Option<GrownDecode> {
        let growth = self.growth.as_mut()?;
        let mut reach = latscope_model::Ps::MAX;
        let mut framed_again = false;
        for (d, taken) in self.decoders.iter_mut().zip(&mut self.taken) {
            if d.frames_again() {
                // Framed at another rate: what the stack handed on is void.
                taken.clear();
                framed_again = true;
            }
            match d.take_final(self.fed as i64, taken) {
                Some(r) => reach = reach.min(r),
                None => {
                    self.growth = None;
                    return None;
                }
            }
        }
        if framed_again {
            growth.start_again();
        }
        growth.source.advance(&self.taken, &mut growth.next, reach);
        Some(GrownDecode { source: growth.source.snapshot(), generation: growth.generation, complete: reach })
    }

    /// Each stack's annotations and errors so far, with its spec.
    fn counts(&self) -> Vec<crate::recorder::DecoderLive> {
        self.specs
            .iter()
            .zip(self.decoders.iter().zip(&self.taken))
            .map(|(spec, (d, taken))| {
                crate::recorder::DecoderLive::counted(spec, (taken.len() + d.held()) as u64, d.errors())
            })
            .collect()
    }

    /// Each stack's decode so far, with its spec: a copy of every annotation.
    pub fn so_far(&self) -> Decodes {
        self.specs
            .iter()
            .zip(self.decoders.iter().zip(&self.taken))
            .map(|(spec, (d, taken))| {
                let mut held = d.so_far();
                let mut all = taken.clone();
                all.append(&mut held.annotations);
                latscope_decoders::sort_by_start(&mut all);
                held.annotations = all;
                (spec.clone(), held)
            })
            .collect()
    }

    /// Drops the annotations that end before `t` (picoseconds from the first sample), the
    /// taken ones from the front; the growing source starts again from those kept once it
    /// holds more than twice as many ([`REGROW_SLACK`]).
    fn forget_before(&mut self, t: latscope_model::Ps) {
        self.decoders.iter_mut().for_each(|s| s.forget_before(t));
        let mut kept = 0;
        for (i, taken) in self.taken.iter_mut().enumerate() {
            let gone = taken.iter().take_while(|a| a.end < t).count();
            taken.drain(..gone);
            kept += taken.len() as u64;
            if let Some(g) = self.growth.as_mut() {
                g.next[i] = g.next[i].saturating_sub(gone);
                g.holds_kept &= gone == 0;
            }
        }
        if let Some(g) = self.growth.as_mut()
            && g.source.appended() > 2 * kept + self.regrow_slack
        {
            g.start_again();
        }
    }

    /// Ends the decodes at the last sample fed: each stack's whole decode (what was taken,
    /// then the rest) with its spec, and the growing source with every annotation appended
    /// when it holds exactly those (the last line then reads only what is new; else it
    /// reads the whole decode, as the saved capture holds it).
    fn finish(mut self) -> Result<(Decodes, Option<GrownDecode>), RecordError> {
        let last = self.fed.saturating_sub(1) as i64;
        let mut errors_and_clocks = Vec::new();
        for (i, (spec, d)) in self.specs.iter().zip(self.decoders).enumerate() {
            if d.frames_again() {
                // The whole line's rate is not the one framed at: the end frames it all again,
                // and the growing source no longer holds what the decode does.
                self.taken[i].clear();
                if let Some(g) = self.growth.as_mut() {
                    g.holds_kept = false;
                }
            }
            let mut rest =
                d.finish(last).map_err(|e| RecordError::Usage(format!("--decoder {spec:?}: {e}")))?;
            self.taken[i].append(&mut rest.annotations);
            errors_and_clocks.push(rest);
        }
        let grown = self.growth.as_mut().filter(|g| g.holds_kept).map(|g| {
            g.source.advance(&self.taken, &mut g.next, latscope_model::Ps::MAX);
            GrownDecode {
                source: g.source.snapshot(),
                generation: g.generation,
                complete: latscope_model::Ps::MAX,
            }
        });
        let decoded = self
            .specs
            .into_iter()
            .zip(self.taken.into_iter().zip(errors_and_clocks))
            .map(|(spec, (mut all, rest))| {
                // A stack that came out of start order after some were taken.
                latscope_decoders::sort_by_start(&mut all);
                (spec, Decoded { annotations: all, ..rest })
            })
            .collect();
        Ok((decoded, grown))
    }
}

/// Each whole sample of `bytes` as a word of levels (bit `i` is channel `i`; channels past
/// the 64th are not read).
fn sample_words(bytes: &[u8], unitsize: usize) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(unitsize).map(|sample| {
        let mut word = [0u8; 8];
        let n = sample.len().min(8);
        word[..n].copy_from_slice(&sample[..n]);
        u64::from_le_bytes(word)
    })
}

/// Logic channels kept as digital tracks while the capture streams: each sample's level
/// changes, at the capture's clock from the recording's first sample, as the saved `.sr`
/// reads. A snapshot shares the changes so far ([`DigitalTrack`]'s clone).
#[derive(Debug)]
struct LiveTracks {
    clock: SampleClock,
    /// Each track and its bit in the sample word; made at the first sample.
    tracks: Vec<(u32, DigitalTrack)>,
    names: Vec<(String, u32)>,
    mask: u64,
    unitsize: usize,
    fed: u64,
    levels: u64,
    /// Times the tracks forgot their oldest changes.
    generation: u64,
}

impl LiveTracks {
    /// Follows `names` (each one of `channels`, bit `i` channel `i`) at `rate` Hz; `None`
    /// when there is nothing to follow.
    fn new(names: &[String], channels: &[String], rate: u64) -> Option<LiveTracks> {
        let named: Vec<(String, u32)> = channels
            .iter()
            .zip(0u32..64)
            .filter(|(c, _)| names.contains(c))
            .map(|(c, b)| (c.clone(), b))
            .collect();
        if named.is_empty() {
            return None;
        }
        Some(LiveTracks {
            clock: SampleClock::new(rate),
            mask: named.iter().fold(0, |m, (_, b)| m | 1 << b),
            tracks: Vec::new(),
            names: named,
            unitsize: channels.len().div_ceil(8).max(1),
            fed: 0,
            levels: 0,
            generation: 0,
        })
    }

    /// Feeds the whole samples in `bytes` (which start at a sample's first byte).
    fn feed(&mut self, bytes: &[u8]) {
        for levels in sample_words(bytes, self.unitsize) {
            if self.fed == 0 {
                self.tracks = self
                    .names
                    .iter()
                    .map(|(n, b)| (*b, DigitalTrack::sampled(n.clone(), (levels >> b & 1) as u8, self.clock)))
                    .collect();
            } else if (levels ^ self.levels) & self.mask != 0 {
                for (b, t) in &mut self.tracks {
                    t.push_sample(self.clock, self.fed, (levels >> *b & 1) as u8);
                }
            }
            self.levels = levels;
            self.fed += 1;
        }
    }

    /// The tracks so far, each ending at the last sample fed.
    fn snapshot(&self) -> Vec<DigitalTrack> {
        let end = self.clock.time(self.fed.saturating_sub(1));
        self.tracks
            .iter()
            .map(|(_, t)| {
                let mut t = t.clone();
                t.end = end;
                t
            })
            .collect()
    }

    /// Forgets the changes before sample `sample` once they are most of what is kept (a
    /// ring keeps recent samples only): each track starts again at its level there.
    fn forget_before(&mut self, sample: u64) {
        let at = self.clock.time(sample);
        let due = self.tracks.iter().any(|(_, t)| {
            let gone = t.changes_before(at);
            gone > 0 && gone >= t.transitions() / 2
        });
        if !due {
            return;
        }
        self.generation += 1;
        for (_, t) in &mut self.tracks {
            let gone = t.changes_before(at);
            if gone == 0 {
                continue;
            }
            // The level the last forgotten change set; changes kept go by time from here.
            let mut kept = DigitalTrack::new(t.name.clone(), t.level(gone - 1));
            for i in gone..t.transitions() {
                kept.push(t.time(i), t.level(i));
            }
            kept.end = t.end;
            *t = kept;
        }
    }
}

/// The device as `sigrok-cli --show` describes it: its logic channels, in order (those
/// the spec already knows, [`SigrokSpec::with_channels`], without asking again).
pub fn logic_channels(spec: &SigrokSpec) -> Result<Vec<String>, RecordError> {
    if let Some(known) = &spec.channels {
        return Ok(known.clone());
    }
    let out = Command::new("sigrok-cli")
        .args(["-d", &spec.device(), "--show"])
        .output()
        .map_err(|error| RecordError::Command { command: "sigrok-cli".into(), error })?;
    let text = String::from_utf8_lossy(&out.stdout);
    // `    Logic: channels D0 D1 …` under "Channel groups"; a device without groups lists
    // its channels on its first line.
    let names: Vec<String> = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Logic: channels "))
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    if names.is_empty() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(RecordError::Usage(format!(
            "sigrok device {:?} not found or without logic channels ({}): check `sigrok-cli --scan`",
            spec.device(),
            err.trim()
        )));
    }
    Ok(names)
}

/// This machine's `CLOCK_MONOTONIC` in nanoseconds: the clock a kernel recording reads
/// (`trace_clock` `mono`), so a logic capture placed by it lands on the kernel's timeline.
pub fn mono_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec.max(0) as u64).saturating_mul(1_000_000_000).saturating_add(t.tv_nsec.max(0) as u64)
}

/// Where a logic capture's first sample lies on this machine's monotonic clock, by the host's
/// clocks alone: after sigrok-cli was started, and before its first bytes arrived. (Not
/// "before, less the time those samples took at the rate": a device may hand over samples
/// faster than its rate, as sigrok's demo driver does, and the bound must hold.) `at_ns` is
/// the middle, `uncertainty_ns` half the width. It places the first sample only: a device
/// whose clock runs apart from the host's drifts further along the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct HostPlacement {
    pub at_ns: u64,
    pub uncertainty_ns: u64,
    /// The bounds it was taken from.
    pub after_ns: u64,
    pub before_ns: u64,
}

impl HostPlacement {
    /// From sigrok-cli's start (`spawned_ns`) and the first read's arrival (`first_ns`).
    pub fn of(spawned_ns: u64, first_ns: u64) -> HostPlacement {
        let before_ns = first_ns.max(spawned_ns);
        let after_ns = spawned_ns;
        HostPlacement {
            at_ns: after_ns + (before_ns - after_ns) / 2,
            uncertainty_ns: (before_ns - after_ns).div_ceil(2),
            after_ns,
            before_ns,
        }
    }
}

/// What the reader thread saw of the stream as it came.
#[derive(Debug, Default)]
struct Arrival {
    /// Bytes so far.
    bytes: std::sync::atomic::AtomicU64,
    /// The first read's arrival (monotonic ns), once there is one.
    first: std::sync::Mutex<Option<u64>>,
    /// The decoders run on the stream, if any.
    decoders: std::sync::Mutex<Option<LiveDecoders>>,
    /// The channels kept as tracks ([`SigrokSpec::tracks`]), if any.
    tracks: std::sync::Mutex<Option<LiveTracks>>,
    /// The samples kept.
    kept: std::sync::Mutex<Kept>,
    /// The first sample a window still to be saved needs: the ring keeps it (`u64::MAX`:
    /// none).
    keep_from: std::sync::atomic::AtomicU64,
}

/// The samples kept: all of them, or with a ring the most recent.
#[derive(Debug, Default)]
struct Kept {
    data: Vec<u8>,
    /// Samples dropped before `data`'s first.
    dropped: u64,
    /// At most this many bytes are kept (a little more between trims).
    ring_bytes: Option<usize>,
    /// Samples dropped before their owner was done with them: the ring held twice its size
    /// and the triggers had not caught up (a machine too slow for the rate).
    overrun: u64,
}

impl Kept {
    /// Drops the oldest samples beyond the ring, not `keep_from` or later while the ring
    /// holds less than twice its size: past that, memory wins, and the samples dropped
    /// before they were done with are counted (`overrun`). Trimmed once a quarter of the
    /// ring more has come, so each byte is moved a few times at most.
    fn trim(&mut self, unitsize: usize, keep_from: u64) {
        let Some(cap) = self.ring_bytes else { return };
        if self.data.len() <= cap + cap / 4 {
            return;
        }
        let over = ((self.data.len() - cap) / unitsize) as u64;
        let may = keep_from.saturating_sub(self.dropped);
        let drop = if self.data.len() > 2 * cap { over } else { over.min(may) };
        self.overrun += drop.saturating_sub(may);
        self.data.drain(..drop as usize * unitsize);
        self.dropped += drop;
    }
}

/// A logic capture streaming from `sigrok-cli`.
#[derive(Debug)]
pub struct LogicCapture {
    pub spec: SigrokSpec,
    pub channels: Vec<String>,
    child: Child,
    stdin: Option<ChildStdin>,
    reader: Option<JoinHandle<std::io::Result<()>>>,
    /// When sigrok-cli was started (monotonic ns).
    spawned_ns: u64,
    arrival: std::sync::Arc<Arrival>,
    /// The decodes, ended by [`Self::halt`], and their growing source with every
    /// annotation appended.
    finished: Option<Decodes>,
    finished_growth: Option<GrownDecode>,
}

impl LogicCapture {
    /// Starts `sigrok-cli --continuous -O binary` on the device's logic channels, keeping
    /// only the most recent samples with a `ring` (`None`: all of them).
    pub fn start(spec: SigrokSpec, ring: Option<LogicRing>) -> Result<LogicCapture, RecordError> {
        let channels = logic_channels(&spec)?;
        LogicCapture::start_on(spec, channels, ring)
    }

    /// [`Self::start`] on a device whose logic channels are known ([`logic_channels`]).
    pub fn start_on(
        spec: SigrokSpec,
        channels: Vec<String>,
        ring: Option<LogicRing>,
    ) -> Result<LogicCapture, RecordError> {
        let rate = |what: &str| {
            spec.samplerate_hz().ok_or_else(|| {
                RecordError::Usage(format!(
                    "{what} needs the capture's sample rate: add it to --sigrok ({}:samplerate=1M)",
                    spec.device()
                ))
            })
        };
        let decoders = if spec.decoders.is_empty() {
            None
        } else {
            Some(LiveDecoders::new(&spec.decoders, &channels, rate("--decoder")?)?)
        };
        let tracks = if spec.tracks.is_empty() {
            None
        } else {
            LiveTracks::new(&spec.tracks, &channels, rate("an analysis of logic channels")?)
        };
        let mut cmd = Command::new("sigrok-cli");
        cmd.args(["-d", &spec.device(), "--channels", &channels.join(",")]);
        for (k, v) in &spec.config {
            cmd.args(["-c", &format!("{k}={v}")]);
        }
        cmd.args(["--continuous", "-O", "binary"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let spawned_ns = mono_ns();
        let mut child =
            cmd.spawn().map_err(|error| RecordError::Command { command: "sigrok-cli".into(), error })?;
        let stdin = child.stdin.take();
        let mut out =
            child.stdout.take().ok_or_else(|| RecordError::Usage("sigrok-cli gave no output".into()))?;
        let unitsize = channels.len().div_ceil(8).max(1);
        let ring_bytes = ring.map(|r| {
            let bytes = match r {
                LogicRing::Bytes(b) => b,
                LogicRing::Samples(n) => n.saturating_mul(unitsize as u64),
            };
            usize::try_from(bytes).unwrap_or(usize::MAX).max(unitsize)
        });
        let arrival = std::sync::Arc::new(Arrival {
            decoders: std::sync::Mutex::new(decoders),
            tracks: std::sync::Mutex::new(tracks),
            kept: std::sync::Mutex::new(Kept { ring_bytes, ..Kept::default() }),
            // With a ring, nothing is dropped until the owner says what it still needs.
            keep_from: std::sync::atomic::AtomicU64::new(if ring_bytes.is_some() { 0 } else { u64::MAX }),
            ..Arrival::default()
        });
        let seen = arrival.clone();
        let reader = std::thread::Builder::new()
            .name("sigrok".into())
            .spawn(move || {
                // Bytes read after the last whole sample.
                let mut carry: Vec<u8> = Vec::new();
                let mut buf = vec![0u8; 1 << 16];
                let mut total = 0u64;
                loop {
                    let n = match out.read(&mut buf) {
                        Ok(0) => return Ok(()),
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    };
                    if total == 0
                        && let Ok(mut first) = seen.first.lock()
                    {
                        *first = Some(mono_ns());
                    }
                    carry.extend_from_slice(&buf[..n]);
                    let whole = carry.len() / unitsize * unitsize;
                    if let Ok(mut live) = seen.decoders.lock()
                        && let Some(d) = live.as_mut()
                    {
                        d.feed(&carry[..whole]);
                    }
                    if let Ok(mut live) = seen.tracks.lock()
                        && let Some(t) = live.as_mut()
                    {
                        t.feed(&carry[..whole]);
                    }
                    if let Ok(mut kept) = seen.kept.lock() {
                        kept.data.extend_from_slice(&carry[..whole]);
                        kept.trim(unitsize, seen.keep_from.load(std::sync::atomic::Ordering::Relaxed));
                    }
                    carry.drain(..whole);
                    total += n as u64;
                    seen.bytes.store(total, std::sync::atomic::Ordering::Relaxed);
                }
            })
            .map_err(|e| RecordError::Command { command: "sigrok reader".into(), error: e })?;
        Ok(LogicCapture {
            spec,
            channels,
            child,
            stdin,
            reader: Some(reader),
            spawned_ns,
            arrival,
            finished: None,
            finished_growth: None,
        })
    }

    /// Samples received so far.
    pub fn samples_so_far(&self) -> u64 {
        let unitsize = self.channels.len().div_ceil(8).max(1) as u64;
        self.arrival.bytes.load(std::sync::atomic::Ordering::Relaxed) / unitsize
    }

    /// Where the first sample lies by the host's clocks, once data has arrived.
    pub fn placement(&self) -> Option<HostPlacement> {
        let first = *self.arrival.first.lock().ok()?;
        Some(HostPlacement::of(self.spawned_ns, first?))
    }

    /// The decoded annotations now: the growing source of the final ones (appended since
    /// the last call), or, when a stack cannot say which are final, every annotation so far.
    /// Each decoder's counts come with them.
    pub fn grown(&self) -> (LiveDecode, Vec<crate::recorder::DecoderLive>) {
        let counts = |decoded: &[(String, Decoded)]| {
            decoded.iter().map(|(spec, d)| crate::recorder::DecoderLive::of(spec, d)).collect()
        };
        if let Some(done) = &self.finished {
            return match &self.finished_growth {
                Some(g) => (LiveDecode::Growing(g.clone()), counts(done)),
                None => (LiveDecode::Whole(done.clone()), counts(done)),
            };
        }
        let Ok(mut live) = self.arrival.decoders.lock() else {
            return (LiveDecode::Whole(Vec::new()), Vec::new());
        };
        let Some(d) = live.as_mut() else { return (LiveDecode::Whole(Vec::new()), Vec::new()) };
        match d.grow() {
            Some(g) => (LiveDecode::Growing(g), d.counts()),
            None => {
                let all = d.so_far();
                let c = counts(&all);
                (LiveDecode::Whole(all), c)
            }
        }
    }

    /// The channels of [`SigrokSpec::tracks`] so far, as digital tracks timed from the
    /// recording's first sample (empty before any sample came), and how often they forgot
    /// their oldest changes: tracks of another generation do not extend earlier ones.
    pub fn tracks(&self) -> (Vec<DigitalTrack>, u64) {
        self.arrival
            .tracks
            .lock()
            .ok()
            .and_then(|t| t.as_ref().map(|t| (t.snapshot(), t.generation)))
            .unwrap_or_default()
    }

    /// [`Self::tracks`] as a logic source of their own, with their generation: what a
    /// window showing the capture as it streams draws.
    pub fn tracks_source(&self) -> (latscope_model::Source, u64) {
        let (tracks, generation) = self.tracks();
        let mut source = logic_source();
        source.digital = tracks.into();
        (source, generation)
    }

    /// The bytes of samples kept (a ring keeps the most recent).
    pub fn kept_bytes(&self) -> u64 {
        self.arrival.kept.lock().map_or(0, |k| k.data.len() as u64)
    }

    /// Samples the ring dropped before the triggers looked at them.
    pub fn overrun(&self) -> u64 {
        self.arrival.kept.lock().map_or(0, |k| k.overrun)
    }

    /// Whether sigrok-cli ended by itself (a device that went away).
    pub fn ended(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Stops the capture (closing sigrok-cli's standard input) and returns its samples.
    pub fn stop(mut self) -> Result<Logic, RecordError> {
        self.halt()?;
        self.into_logic()
    }

    /// Stops sigrok-cli and reads what it still sent, and ends the decodes; the samples
    /// stay here ([`Self::window`] still cuts from them) until [`Self::stop`].
    pub fn halt(&mut self) -> Result<(), RecordError> {
        if self.reader.is_none() {
            return Ok(());
        }
        drop(self.stdin.take());
        // A device streaming flat out may keep sigrok-cli from noticing its closed input:
        // then SIGINT (its own clean stop), and at last SIGKILL.
        let pid = self.child.id().to_string();
        for (wait_ms, signal) in [(1000, Some("-INT")), (1000, Some("-KILL")), (0, None)] {
            let until = std::time::Instant::now() + std::time::Duration::from_millis(wait_ms);
            while std::time::Instant::now() < until && !self.ended() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if self.ended() {
                break;
            }
            if let Some(sig) = signal {
                let _ = Command::new("kill").args([sig, &pid]).status();
            }
        }
        match self.reader.take().map(JoinHandle::join) {
            Some(Ok(Ok(()))) => {}
            Some(Ok(Err(error))) => return Err(RecordError::Command { command: "sigrok-cli".into(), error }),
            _ => return Err(RecordError::Usage("the sigrok reader failed".into())),
        }
        let _ = self.child.wait();
        let live = self.arrival.decoders.lock().ok().and_then(|mut d| d.take());
        if let Some((decoded, grown)) = live.map(LiveDecoders::finish).transpose()? {
            self.finished = Some(decoded);
            self.finished_growth = grown;
        }
        Ok(())
    }

    fn into_logic(mut self) -> Result<Logic, RecordError> {
        let unitsize = self.unitsize();
        let (data, first_sample, overrun) = match self.arrival.kept.lock() {
            Ok(mut k) => (std::mem::take(&mut k.data), k.dropped, k.overrun),
            Err(_) => return Err(RecordError::Usage("the sigrok reader failed".into())),
        };
        let placement = self.placement();
        let decoded = self.finished.take().unwrap_or_default();
        Ok(Logic {
            samplerate: self.spec.samplerate().map(str::to_owned),
            channels: std::mem::take(&mut self.channels),
            unitsize,
            data,
            first_sample,
            overrun,
            placement,
            decoded,
        })
    }

    fn unitsize(&self) -> usize {
        self.channels.len().div_ceil(8).max(1)
    }

    /// Keeps samples from `sample` on while a window still needs them (`None`: no window
    /// waits).
    pub fn keep_from(&self, sample: Option<u64>) {
        self.arrival.keep_from.store(sample.unwrap_or(u64::MAX), std::sync::atomic::Ordering::Relaxed);
    }

    /// The first sample the ring still holds.
    pub fn first_kept(&self) -> u64 {
        self.arrival.kept.lock().map_or(0, |k| k.dropped)
    }

    /// Drops the decoded annotations that end before `t` (picoseconds from the first
    /// sample): a ring keeps recent annotations only, as it keeps recent samples.
    pub fn forget_decoded_before(&self, t: latscope_model::Ps) {
        if let Ok(mut live) = self.arrival.decoders.lock()
            && let Some(d) = live.as_mut()
        {
            d.forget_before(t);
        }
    }

    /// Lets the tracks forget the level changes before the first sample the ring keeps.
    pub fn forget_tracks_before_kept(&self) {
        let first = self.first_kept();
        if let Ok(mut live) = self.arrival.tracks.lock()
            && let Some(t) = live.as_mut()
        {
            t.forget_before(first);
        }
    }

    /// The kept samples from `from` to `to` (sample numbers, both included) as a capture of
    /// their own, if any are kept.
    pub fn window(&self, from: u64, to: u64) -> Option<Logic> {
        let kept = self.arrival.kept.lock().ok()?;
        let unitsize = self.unitsize();
        let held = (kept.data.len() / unitsize) as u64;
        let first = from.max(kept.dropped);
        let end = to.saturating_add(1).min(kept.dropped + held);
        if first >= end {
            return None;
        }
        let range = (first - kept.dropped) as usize * unitsize..(end - kept.dropped) as usize * unitsize;
        Some(Logic {
            samplerate: self.spec.samplerate().map(str::to_owned),
            channels: self.channels.clone(),
            unitsize,
            data: kept.data[range].to_vec(),
            first_sample: first,
            overrun: 0,
            placement: None,
            decoded: Vec::new(),
        })
    }
}

/// A finished logic capture.
#[derive(Debug, Clone)]
pub struct Logic {
    /// As given (`100k`, `1 MHz`), else the device's default (left out of the metadata).
    pub samplerate: Option<String>,
    pub channels: Vec<String>,
    pub unitsize: usize,
    /// The samples, `unitsize` bytes each, least significant channel first.
    pub data: Vec<u8>,
    /// The number of `data`'s first sample in the recording (not 0 when a ring dropped the
    /// oldest).
    pub first_sample: u64,
    /// Samples a ring dropped before the flight recorder had looked at them.
    pub overrun: u64,
    /// Where its first sample lies on this machine's monotonic clock, if any data came.
    pub placement: Option<HostPlacement>,
    /// Each `--decoder` stack's decode of the whole capture, made as it streamed, with its
    /// spec.
    pub decoded: Vec<(String, Decoded)>,
}

impl Logic {
    /// Every channel as a digital track, timed from the first sample kept, as the saved
    /// `.sr` reads (empty without a rate).
    pub fn tracks(&self) -> Vec<DigitalTrack> {
        let rate = self.samplerate.as_deref().and_then(rate_hz);
        let Some(mut t) = rate.and_then(|r| LiveTracks::new(&self.channels, &self.channels, r)) else {
            return Vec::new();
        };
        t.feed(&self.data);
        t.snapshot()
    }

    /// The capture as `latscope report` reads it saved with its decodes: every channel as
    /// a track, and the annotations as events. (A ring's tracks start at the first sample
    /// kept, its annotations count from the recording's first.)
    pub fn source(&self) -> Result<latscope_model::Source, RecordError> {
        let mut source = decoded_source(&self.decoded)?;
        source.digital = self.tracks().into();
        Ok(source)
    }

    pub fn samples(&self) -> usize {
        self.data.len() / self.unitsize
    }

    /// Saves a sigrok session at `path`, atomically.
    pub fn save(&self, path: &Path) -> Result<(), RecordError> {
        save::file(path, |w| {
            let mut buf = std::io::Cursor::new(Vec::new());
            {
                let mut zip = zip::ZipWriter::new(&mut buf);
                let opts = zip::write::SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Deflated);
                zip.start_file("version", opts).map_err(std::io::Error::other)?;
                zip.write_all(b"2")?;
                zip.start_file("metadata", opts).map_err(std::io::Error::other)?;
                zip.write_all(self.metadata().as_bytes())?;
                for (i, chunk) in self.data.chunks(CHUNK).enumerate() {
                    zip.start_file(format!("logic-1-{}", i + 1), opts).map_err(std::io::Error::other)?;
                    zip.write_all(chunk)?;
                }
                zip.finish().map_err(std::io::Error::other)?;
            }
            w.write_all(buf.get_ref())
        })
    }

    /// Saves a new folder at `dir`, atomically: `logic.sr` and `session.latscope.json`,
    /// which opens it with `decoders` and `rules`, and the cursors when given (picoseconds
    /// from the folder's first sample).
    pub fn save_folder(
        &self,
        dir: &Path,
        decoders: &[String],
        rules: &[String],
        cursors: Option<(f64, f64)>,
    ) -> Result<(), RecordError> {
        let session = crate::window::logic_session_json(decoders, rules, cursors);
        save::folder(dir, |tmp| {
            self.save(&tmp.join("logic.sr"))?;
            save::file(&tmp.join("session.latscope.json"), |w| w.write_all(session.as_bytes()))
        })
    }

    fn metadata(&self) -> String {
        let mut m = String::from("[global]\nsigrok version=0.5.2\n\n[device 1]\ncapturefile=logic-1\n");
        m.push_str(&format!("total probes={}\n", self.channels.len()));
        if let Some(rate) = &self.samplerate {
            m.push_str(&format!("samplerate={}\n", human_rate(rate)));
        }
        m.push_str("total analog=0\n");
        for (i, name) in self.channels.iter().enumerate() {
            m.push_str(&format!("probe{}={name}\n", i + 1));
        }
        m.push_str(&format!("unitsize={}\n", self.unitsize));
        m
    }
}

/// The samples taken in `ns` nanoseconds at `hz` (the sample number at that time after the
/// first).
pub(crate) fn samples_in(ns: u64, hz: u64) -> u64 {
    (u128::from(ns) * u128::from(hz) / 1_000_000_000) as u64
}

/// When sample `n` was taken at `hz`, in nanoseconds after the first.
pub(crate) fn ns_of_sample(n: u64, hz: u64) -> u64 {
    (u128::from(n) * 1_000_000_000 / u128::from(hz.max(1))) as u64
}

/// `100k`, `1M`, `1 MHz`, `200 Hz` or `200` in hertz.
pub(crate) fn rate_hz(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t.strip_suffix("Hz").or_else(|| t.strip_suffix("hz")).unwrap_or(t).trim_end();
    let hz = scaled(t)?;
    (hz >= 1.0 && hz.fract() == 0.0 && hz < 1e15).then_some(hz as u64)
}

/// `100k`, `2.5M`, `1G` or `200` as a number: an SI letter scales it.
fn scaled(t: &str) -> Option<f64> {
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    Some(num.trim().parse::<f64>().ok()? * mult)
}

/// `100k` → `100 kHz`, as sigrok writes rates (`1 MHz`, `200 Hz`); text already with a unit
/// is kept.
fn human_rate(text: &str) -> String {
    let t = text.trim();
    if t.to_ascii_lowercase().ends_with("hz") {
        return t.to_owned();
    }
    let hz = scaled(t).unwrap_or(0.0);
    for (div, unit) in [(1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz")] {
        if hz >= div && (hz / div).fract() == 0.0 {
            return format!("{} {unit}", hz / div);
        }
    }
    format!("{hz} Hz")
}

/// Records a logic analyzer alone until COMMAND exits, `--duration` passes or Ctrl-C
/// (or `opts.stop`). With decoders, `live` is told each `opts.tick` what they found so far
/// and the statistics of `opts.specs` over it; the last line covers what was kept. With
/// triggers (`opts.windows_dir`), each pair that crosses one is counted and the samples
/// around it saved as `NNNN-ANALYSIS-<seconds>s/` (`logic.sr` and a session with the
/// decoders and both cursors on the pair), from a ring of recent samples (`opts.ring`).
pub fn record_logic(
    spec: SigrokSpec,
    opts: &crate::Options,
    live: &mut dyn FnMut(&crate::Live),
) -> Result<(Logic, LogicEnd), RecordError> {
    record_logic_with(spec, opts, live, &mut |_| {})
}

/// [`record_logic`], also handing `snapshot` every channel so far at each line with
/// [`crate::Options::show_logic`] ([`crate::Snapshot::Logic`], offset 0: there is no other
/// timeline), for a window that shows them as they come.
pub fn record_logic_with(
    spec: SigrokSpec,
    opts: &crate::Options,
    live: &mut dyn FnMut(&crate::Live),
    snapshot: &mut dyn FnMut(crate::Snapshot),
) -> Result<(Logic, LogicEnd), RecordError> {
    use crate::Stopped;
    let rate = spec.samplerate_hz();
    let mut flight = opts.windows_dir.clone().map(|dir| crate::window::Flight::new(opts, dir));
    if flight.is_some() && rate.is_none() {
        return Err(RecordError::Usage(
            "--trigger on a logic analyzer reads its analyses, which need its rate (--sigrok DRIVER:samplerate=…)"
                .into(),
        ));
    }
    let ring_samples = match (opts.ring, rate) {
        (crate::Ring::All, _) => None,
        (crate::Ring::Bytes(b), _) => Some(LogicRing::Bytes(b)),
        (crate::Ring::Nanos(ns), Some(hz)) => Some(LogicRing::Samples(samples_in(ns, hz))),
        (crate::Ring::Nanos(_), None) => {
            return Err(RecordError::Usage(
                "--ring in time needs the logic analyzer's rate (--sigrok DRIVER:samplerate=…), or give it in MiB".into(),
            ));
        }
    };
    let signals = crate::recorder::Signals::unless_stoppable(opts);
    let decoders = spec.decoders.clone();
    // The analyses that name a channel read it as a track, followed as the samples arrive.
    let channels = logic_channels(&spec)?;
    let (mut lines, followed) = LogicLines::alone(&opts.specs, &channels, &decoders);
    let followed = if opts.show_logic { channels.clone() } else { followed };
    let mut capture = LogicCapture::start_on(spec.with_tracks(followed), channels, ring_samples)?;
    if flight.is_none() {
        // A ring without triggers keeps only the most recent samples; with them, nothing is
        // dropped before the first look at the pairs.
        capture.keep_from(None);
    }
    let started = std::time::Instant::now();
    let mut child = match opts.command.split_first() {
        Some((program, args)) => Some(
            Command::new(program)
                .args(args)
                .spawn()
                .map_err(|error| RecordError::Command { command: program.clone(), error })?,
        ),
        None => None,
    };
    let mut next_tick = started + opts.tick;
    let mut next_look = started + LOOK_EVERY;
    let ns_of = |sample: u64| rate.map_or(0, |hz| ns_of_sample(sample, hz));
    let sample_of = |ns: u64| rate.map_or(0, |hz| samples_in(ns, hz));
    let stopped = loop {
        if signals.raised() {
            break Stopped::Interrupted;
        }
        if opts.stop_asked() {
            break Stopped::Asked;
        }
        if let Some(c) = child.as_mut()
            && let Ok(Some(status)) = c.try_wait()
        {
            break Stopped::Exited(status);
        }
        if opts.duration.is_some_and(|d| started.elapsed() >= d) {
            break Stopped::Duration;
        }
        if capture.ended() {
            break Stopped::Failed("sigrok-cli ended by itself (was the device unplugged?)".into());
        }
        let now = std::time::Instant::now();
        let line_due = now >= next_tick;
        // The flight recorder looks at the pairs ten times a second: what it has not looked
        // at yet stays in the ring, so looking often keeps the ring near its size at any rate.
        let look_due = flight.is_some() && now >= next_look;
        if line_due || look_due {
            let (outcomes, line) = logic_line(&mut lines, started.elapsed(), &capture, false);
            if line_due {
                next_tick += opts.tick;
                live(&line);
                if opts.show_logic {
                    let (source, generation) = capture.tracks_source();
                    snapshot(crate::Snapshot::Logic {
                        source,
                        offset_ps: 0,
                        placed_by: String::new(),
                        generation,
                    });
                }
            }
            if let Some(f) = flight.as_mut() {
                next_look = now + LOOK_EVERY;
                let newest = ns_of(capture.samples_so_far());
                f.observe(&outcomes, 0, newest, 0, false);
                for due in f.take_due(newest, false) {
                    let saved = save_logic_window(&capture, &due, &decoders, f.rules(), &sample_of, &ns_of);
                    live(&f.note_saved(due, saved));
                }
                // The ring keeps what a window waits for and what was not looked at yet (the
                // analyses see the annotations kept, which go with the samples).
                capture.keep_from(Some(sample_of(f.needed_from(newest))));
                capture.forget_decoded_before(ns_of(capture.first_kept()) as i64 * latscope_model::PS_PER_NS);
                capture.forget_tracks_before_kept();
            } else if line_due && ring_samples.is_some() {
                // Without triggers too, a ring keeps the annotations and level changes of the
                // samples it keeps.
                capture.forget_decoded_before(ns_of(capture.first_kept()) as i64 * latscope_model::PS_PER_NS);
                capture.forget_tracks_before_kept();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // The capture's length, not the second sigrok-cli may take to notice it should stop.
    let elapsed = started.elapsed();
    // The last windows are cut from what arrived until sigrok-cli stopped, before the
    // samples are handed over.
    capture.halt()?;
    let newest = ns_of(capture.samples_so_far());
    let mut end = LogicEnd { stopped, crossings: 0, saved: Vec::new() };
    // The last line, over the whole decode: said after the last windows' crossings.
    let (outcomes, last_line) = logic_line(&mut lines, elapsed, &capture, true);
    if let Some(f) = flight.as_mut() {
        f.observe(&outcomes, 0, newest, 0, true);
        for due in f.take_due(newest, true) {
            let saved = save_logic_window(&capture, &due, &decoders, f.rules(), &sample_of, &ns_of);
            live(&f.note_saved(due, saved));
        }
    }
    let logic = capture.stop()?;
    live(&last_line);
    if let Some(f) = flight {
        end.crossings = f.crossings;
        end.saved = f.saved;
    }
    Ok((logic, end))
}

/// How often the flight recorder of a logic analyzer looks at the pairs.
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// How a logic recording ended: why it stopped, and the flight recorder's crossings and
/// windows.
#[derive(Debug)]
pub struct LogicEnd {
    pub stopped: crate::Stopped,
    pub crossings: u64,
    pub saved: Vec<crate::Saved>,
}

/// How much of a logic capture a ring keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicRing {
    Bytes(u64),
    Samples(u64),
}

/// Saves a crossing's window of samples as a folder (raw ns here are nanoseconds from the
/// recording's first sample).
fn save_logic_window(
    capture: &LogicCapture,
    due: &crate::window::Due,
    decoders: &[String],
    rules: &[String],
    sample_of: &dyn Fn(u64) -> u64,
    ns_of: &dyn Fn(u64) -> u64,
) -> Result<crate::Saved, RecordError> {
    let (from, to) = (sample_of(due.window.0), sample_of(due.window.1));
    let window = capture
        .window(from, to)
        .ok_or_else(|| RecordError::Usage("the ring no longer holds the window's samples".into()))?;
    // The window's time zero is its first sample.
    let zero_ps = ns_of(window.first_sample) as f64 * latscope_model::PS_PER_NS as f64;
    let at = |raw: u64| raw as f64 * latscope_model::PS_PER_NS as f64 - zero_ps;
    let p = &due.pending;
    window.save_folder(&due.dir, decoders, rules, Some((at(p.start_raw), at(p.end_raw))))?;
    Ok(crate::Saved {
        dir: due.dir.clone(),
        analysis: p.analysis.clone(),
        latency_ns: p.latency_ns,
        start_raw: p.start_raw,
        end_raw: p.end_raw,
        records: window.samples() as u64,
    })
}

/// An empty source named as a logic capture's live data is (`decoded_source`, the live
/// tracks).
pub(crate) fn logic_source() -> latscope_model::Source {
    latscope_model::Source::new("logic", "sigrok-sr", latscope_model::SourceKind::File)
}

/// The decodes so far as a source: the annotations as events, as `latscope report` sees
/// a decoded capture.
pub fn decoded_source(decoded: &[(String, Decoded)]) -> Result<latscope_model::Source, RecordError> {
    let mut source = logic_source();
    let all = Decoded::merged(decoded.iter().map(|(_, d)| d.clone()));
    all.attach(&mut source).map_err(|e| RecordError::Decode(format!("the live decode: {e}")))?;
    Ok(source)
}

/// Whether `spec` reads a logic analyzer alone: every event or track it names is one of
/// its `channels` or an event its `decoders` add (a rule between two channels' edges, a
/// channel's pulses, stalls or polling runs, a rule from a channel's edge to a decoded
/// event, or one over decoded events).
pub fn reads_logic(spec: &latscope_analysis::spec::Spec, channels: &[String], decoders: &[String]) -> bool {
    let decoded = latscope_decoders::registry::events_of_stacks(decoders);
    let names = crate::recorder::names_read(spec);
    !names.is_empty() && names.iter().all(|n| channels.iter().chain(&decoded).any(|c| c == n))
}

/// The analyses of a logic capture, kept up to date from tick to tick: those over its
/// decodes read only what the growing source of final annotations appended since; alone,
/// those that name a channel read its followed track as it grows (as they do beside the
/// kernel, `recorder::Joint`, here over no kernel).
pub(crate) struct LogicLines {
    /// The analyses over the decoded events alone.
    specs: Vec<latscope_analysis::spec::Spec>,
    analyses: latscope_analysis::live::LiveAnalyses,
    /// The growing source's generation the analyses read.
    generation: Option<u64>,
    /// The analyses that name a channel, and the empty kernel they are placed beside.
    channels: Option<(crate::recorder::Joint, latscope_model::Source)>,
    /// Whether each analysis, in the order given, is one of `channels`: the lines keep that
    /// order.
    of_channels: Vec<bool>,
}

impl std::fmt::Debug for LogicLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogicLines")
            .field("specs", &self.specs)
            .field("channels", &self.of_channels.iter().filter(|c| **c).count())
            .finish_non_exhaustive()
    }
}

/// One tick of [`LogicLines`]: each analysis's standing and line, each decoder's counts,
/// and the annotations decoded so far.
pub(crate) struct LogicTick {
    pub standings: Vec<latscope_analysis::live::Standing>,
    pub lines: Vec<crate::LiveStat>,
    pub decoders: Vec<crate::recorder::DecoderLive>,
    pub annotations: u64,
    /// The decoded events the analyses read, as a source.
    pub decoded: Option<latscope_model::Source>,
    /// When they grow: the time before which they are all there, and their generation.
    pub decoded_growth: Option<(latscope_model::Ps, u64)>,
}

impl LogicLines {
    /// `specs` over the decoded events (beside the kernel, which reads the channels).
    pub(crate) fn new(specs: &[latscope_analysis::spec::Spec]) -> LogicLines {
        LogicLines {
            specs: specs.to_vec(),
            analyses: latscope_analysis::live::LiveAnalyses::for_standing(specs.to_vec()),
            generation: None,
            channels: None,
            of_channels: vec![false; specs.len()],
        }
    }

    /// `specs` over a logic analyzer alone whose logic channels are `channels`, decoded by
    /// `decoders`; with the channels the analyses name, which the capture must follow as
    /// tracks ([`SigrokSpec::with_tracks`]).
    pub(crate) fn alone(
        specs: &[latscope_analysis::spec::Spec],
        channels: &[String],
        decoders: &[String],
    ) -> (LogicLines, Vec<String>) {
        let names_channel = |s: &latscope_analysis::spec::Spec| {
            reads_logic(s, channels, decoders)
                && crate::recorder::names_read(s).iter().any(|n| channels.iter().any(|c| c == n))
        };
        let of_channels: Vec<bool> = specs.iter().map(names_channel).collect();
        let of = |channel: bool| -> Vec<latscope_analysis::spec::Spec> {
            specs.iter().zip(&of_channels).filter(|(_, c)| **c == channel).map(|(s, _)| s.clone()).collect()
        };
        let (read, decoded) = (of(true), of(false));
        let followed: Vec<String> = channels
            .iter()
            .filter(|c| read.iter().any(|s| crate::recorder::names_read(s).contains(&c.as_str())))
            .cloned()
            .collect();
        let mut lines = LogicLines::new(&decoded);
        if !read.is_empty() {
            // No kernel: the logic's times are the common ones (its origin and offset 0).
            let kernel = latscope_model::Source::new("kernel", "none", latscope_model::SourceKind::File);
            lines.channels = Some((crate::recorder::Joint::of(&read, &followed, decoders), kernel));
        }
        lines.of_channels = of_channels;
        (lines, followed)
    }

    /// The analyses' standings and lines now; `last` runs those over the channels whole,
    /// as `latscope report` runs the saved capture.
    pub(crate) fn tick(&mut self, capture: &LogicCapture, last: bool) -> LogicTick {
        let (decode, decoders) = capture.grown();
        let annotations = decoders.iter().map(|d| d.annotations).sum();
        let mut decoded_growth = None;
        let (mut standings, lines, decoded) = match decode {
            LiveDecode::Growing(g) => {
                if self.generation.is_some_and(|was| was != g.generation) {
                    self.analyses.reset();
                }
                self.generation = Some(g.generation);
                decoded_growth = Some((g.complete, g.generation));
                let (standings, lines) = crate::stats::lines_of(&self.specs, self.analyses.stand(&g.source));
                (standings, lines, Some(g.source))
            }
            LiveDecode::Whole(decoded) => match decoded_source(&decoded) {
                Ok(source) => {
                    let (standings, lines) = crate::stats::run(&self.specs, &source);
                    (standings, lines, Some(source))
                }
                Err(e) => (Vec::new(), vec![crate::LiveStat::unanswered("(logic decode)", e)], None),
            },
        };
        let lines = match &mut self.channels {
            Some((joint, kernel)) => {
                let so_far = crate::recorder::LogicSoFar { decoded: decoded.clone(), growth: decoded_growth };
                let (read, read_lines) = joint.lines_over(kernel, 0, 0, capture.tracks(), so_far, last);
                standings.extend(read.into_iter().map(|(_, s)| s));
                in_order(&self.of_channels, lines, read_lines)
            }
            None => lines,
        };
        LogicTick { standings, lines, decoders, annotations, decoded, decoded_growth }
    }
}

/// The lines of the analyses over the decoded events and of those over the channels, in
/// the order `of_channels` gives (one each); else one after the other.
fn in_order(
    of_channels: &[bool],
    decoded: Vec<crate::LiveStat>,
    channels: Vec<crate::LiveStat>,
) -> Vec<crate::LiveStat> {
    let wanted = of_channels.iter().filter(|c| **c).count();
    if channels.len() != wanted || decoded.len() != of_channels.len() - wanted {
        return decoded.into_iter().chain(channels).collect();
    }
    let (mut decoded, mut channels) = (decoded.into_iter(), channels.into_iter());
    of_channels.iter().filter_map(|c| if *c { channels.next() } else { decoded.next() }).collect()
}

/// A live line of a logic capture: its samples, each decoder stack's annotations and
/// errors, and the analyses.
fn logic_line(
    lines: &mut LogicLines,
    elapsed: std::time::Duration,
    capture: &LogicCapture,
    last: bool,
) -> (Vec<latscope_analysis::live::Standing>, crate::Live) {
    let t = lines.tick(capture, last);
    let line = crate::Live::Stats {
        elapsed_s: elapsed.as_secs_f64(),
        events: t.annotations,
        lost: capture.overrun(),
        kept_bytes: capture.kept_bytes(),
        analyses: t.lines,
        logic: Some(crate::LogicLive {
            samples: capture.samples_so_far(),
            // Alone, there is no kernel timeline to place it on.
            start_s: None,
            uncertainty_ns: None,
            decoders: t.decoders,
        }),
        last,
    };
    (t.standings, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_split_scan_options_from_device_settings() {
        let s = SigrokSpec::parse("demo:analog_channels=0:samplerate=100k").unwrap();
        assert_eq!(s.device(), "demo:analog_channels=0");
        assert_eq!(s.samplerate(), Some("100k"));
        assert!(SigrokSpec::parse(":x=1").is_err());
        assert!(SigrokSpec::parse("demo:nokey").is_err());
    }

    #[test]
    fn a_placement_lies_between_the_start_and_the_first_datas_acquisition() {
        // Started at 1 s, the first data arrived at 1.06 s: the first sample was taken
        // between them.
        let p = HostPlacement::of(1_000_000_000, 1_060_000_000);
        assert_eq!((p.after_ns, p.before_ns), (1_000_000_000, 1_060_000_000));
        assert_eq!((p.at_ns, p.uncertainty_ns), (1_030_000_000, 30_000_000));
        // An odd width rounds the uncertainty up, so the interval still holds both ends.
        let p = HostPlacement::of(10, 15);
        assert!(p.at_ns - p.uncertainty_ns <= 10 && p.at_ns + p.uncertainty_ns >= 15);
    }

    #[test]
    fn rates_read_as_sigrok_writes_them() {
        assert_eq!(human_rate("100k"), "100 kHz");
        assert_eq!(human_rate("1M"), "1 MHz");
        assert_eq!(human_rate("200"), "200 Hz");
        assert_eq!(human_rate("1 MHz"), "1 MHz");
        for (text, hz) in
            [("100k", 100_000), ("1M", 1_000_000), ("1 MHz", 1_000_000), ("200 Hz", 200), ("2.5M", 2_500_000)]
        {
            assert_eq!(rate_hz(text), Some(hz), "{text}");
        }
        assert_eq!(rate_hz("fast"), None);
        assert_eq!(rate_hz("0.5"), None);
    }

    #[test]
    fn the_ring_keeps_what_is_still_needed_up_to_twice_its_size_and_counts_what_it_drops() {
        let mut k = Kept { ring_bytes: Some(100), ..Kept::default() };
        k.data = vec![0; 126];
        // Everything from sample 10 on is still needed: only 10 go.
        k.trim(1, 10);
        assert_eq!((k.dropped, k.data.len(), k.overrun), (10, 116, 0));
        // Below a quarter over the ring, nothing is trimmed.
        k.trim(1, u64::MAX);
        assert_eq!((k.dropped, k.data.len()), (10, 116));
        // Nothing needed any more: down to the ring.
        k.data.extend(vec![0; 10]);
        k.trim(1, u64::MAX);
        assert_eq!((k.dropped, k.data.len(), k.overrun), (36, 100, 0));
        // Past twice the ring, memory wins over what is still needed, and that is counted.
        k.data.extend(vec![0; 110]);
        k.trim(1, 36);
        assert_eq!((k.dropped, k.data.len(), k.overrun), (146, 100, 110));
    }

    /// Beside the kernel, a rule between two channels' edges, a channel's pulses, its
    /// stalls and its polling runs read the followed tracks alone, what is new each tick
    /// (`recorder::Joint`): over a real SPI capture streamed in pieces, each tick's lines
    /// are the whole runner's over the kernel and the logic so far, placed as the session
    /// places them; the samples handed on since the last start, with a run still going,
    /// are the whole run's; and tracks that forget their oldest changes start them again
    /// (the stall too: the clock's median gap holds, so its windows only grow).
    #[test]
    fn channel_analyses_beside_the_kernel_read_what_is_new_and_answer_as_the_whole_run() {
        use crate::recorder::LogicSoFar;
        use latscope_analysis::runner::Scope;
        use latscope_analysis::spec::{Spec, parse_spec};
        use latscope_model::Placed;
        // 1.2 M samples (50 ms) at 24 MHz, of 10 M: three transfers, 20 ms apart.
        let samples = lazysig_spi_samples();
        let samples = &samples[..1_200_000];
        let texts = [
            "frame=CS:fall -> CS:rise",
            "first=CS:fall -> CLK:rise policy next",
            "pulse:CLK",
            "stall:CLK factor 3",
            // A transfer's clock bursts, as polling runs.
            "poll:CLK:rise within 2us min 4",
        ];
        let specs: Vec<Spec> = texts.iter().map(|t| parse_spec(t).unwrap()).collect();
        let (channels, rate) = (spi_channels(), SPI_RATE);
        let SpiBesideAKernel { mut joint, kernel, at_ns, at } = spi_beside_a_kernel(&specs, &[]);
        let mut tracks = LiveTracks::new(&channels, &channels, rate).unwrap();
        let mut handed: Vec<Vec<latscope_analysis::outcome::Sample>> = vec![Vec::new(); specs.len()];
        let mut grown_ticks = 0;
        for (k, piece) in samples.chunks(97_531).enumerate() {
            tracks.feed(piece);
            if k == 6 {
                // A ring keeps the samples from here on: the tracks forget what is before.
                tracks.forget_before(tracks.fed - 40_000);
                assert_eq!(tracks.generation, 1, "forgot");
            }
            let snapshot = tracks.snapshot();
            let so_far = LogicSoFar { decoded: None, growth: None };
            let (standings, lines) =
                joint.lines_over(&kernel, 0, at_ns, (snapshot.clone(), tracks.generation), so_far, false);
            let mut logic = logic_source();
            logic.digital = snapshot.into();
            let placed = [Placed::new(&kernel, latscope_model::Placement::IDENTITY), Placed::new(&logic, at)];
            let (whole, whole_lines) = crate::stats::run_placed(&specs, &placed, Scope::Together);
            assert_eq!(lines, whole_lines, "tick {k}");
            assert_eq!(standings.len(), specs.len());
            for (i, ((home, s), (whole_home, w))) in standings.into_iter().zip(whole).enumerate() {
                assert_eq!((home, &s.name), (whole_home, &w.name), "tick {k}");
                if s.anew {
                    handed[i].clear();
                }
                // Each reads on from the tick before, but where the tracks forgot.
                if k > 0 && k != 6 {
                    assert!(!s.anew, "{} read anew at tick {k}", s.name);
                    grown_ticks += 1;
                }
                handed[i].extend(s.added);
                let mut got = handed[i].clone();
                got.extend(s.open);
                got.sort_by_key(|s| (s.start, s.end));
                assert_eq!(got, w.added, "{} at tick {k}", s.name);
            }
        }
        assert!(grown_ticks >= 5 * 10, "{grown_ticks}");
        assert!(handed.iter().all(|h| !h.is_empty()), "every analysis found something");
    }

    /// Beside the kernel, rules between a channel's edge and a decoded event read what is
    /// new while the tracks and the decode grow, each to its own reach. Over the corpus's
    /// SPI capture streamed in pieces that end between transfers and inside them (where the
    /// decode holds back what the tracks already have), decoded as it arrives: every sample
    /// handed on is one of the whole run's over the kernel and the whole logic (its decode
    /// and its tracks), none is read again, and at the end they are all of them, with the
    /// whole run's lines; not waiting for the decode made it fail. A transfer's annotations
    /// start and end on the chip select's edges, so events and edges meet at the same
    /// instant, where one source orders events first.
    #[test]
    fn rules_between_a_channel_and_a_decoded_event_beside_the_kernel_read_what_is_new() {
        use crate::recorder::{Joint, LogicSoFar};
        use latscope_analysis::runner::Scope;
        use latscope_analysis::spec::{Spec, parse_spec};
        use latscope_model::{Placed, Ps};
        // 10 M samples (0.42 s): 21 transfers of two bytes, 20 ms apart.
        let samples = lazysig_spi_samples();
        let samples = &samples[..];
        let stacks = ["spi:clk=CLK,miso=MISO,mosi=MOSI,cs=CS".to_owned()];
        let texts = [
            "select-to-byte=CS:fall -> spi_mosi policy next",
            "transfer-to-deselect=spi_transfer_end -> CS:rise",
            "byte-to-clock=spi_mosi -> CLK:rise policy next",
        ];
        let specs: Vec<Spec> = texts.iter().map(|t| parse_spec(t).unwrap()).collect();
        let (channels, rate) = (spi_channels(), SPI_RATE);
        let SpiBesideAKernel { mut joint, kernel, at_ns, at } = spi_beside_a_kernel(&specs, &stacks);
        // The oracle: the whole run over the kernel and the logic decoded in one go.
        let mut once = LiveDecoders::new(&stacks, &channels, rate).unwrap();
        once.feed(samples);
        let mut logic = decoded_source(&once.finish().unwrap().0).unwrap();
        let mut all_tracks = LiveTracks::new(&channels, &channels, rate).unwrap();
        all_tracks.feed(samples);
        logic.digital = all_tracks.snapshot().into();
        let placed = [Placed::new(&kernel, latscope_model::Placement::IDENTITY), Placed::new(&logic, at)];
        let (whole, whole_lines) = crate::stats::run_placed(&specs, &placed, Scope::Together);
        let whole_samples: Vec<Vec<latscope_analysis::outcome::Sample>> =
            whole.iter().map(|(_, w)| w.added.clone()).collect();
        assert!(whole_samples.iter().flatten().any(|s| s.start_event.is_some()), "events named");
        let whole: Vec<Vec<(Ps, Ps)>> = whole
            .iter()
            .map(|(home, w)| {
                assert_eq!(*home, 1, "{}: in the logic's time", w.name);
                let mut t: Vec<(Ps, Ps)> = w.added.iter().map(|s| (s.start, s.end)).collect();
                t.sort_unstable();
                t
            })
            .collect();
        assert!(whole.iter().all(|w| w.len() >= 20), "{:?}", whole.iter().map(Vec::len).collect::<Vec<_>>());

        let mut tracks = LiveTracks::new(&channels, &channels, rate).unwrap();
        let mut decoders = LiveDecoders::new(&stacks, &channels, rate).unwrap();
        let mut handed = vec![Vec::new(); specs.len()];
        type Handed = Vec<Vec<(Ps, Ps)>>;
        let tick = |joint: &mut Joint,
                    handed: &mut Handed,
                    tracks: &LiveTracks,
                    grown: GrownDecode,
                    k: usize| {
            let so_far =
                LogicSoFar { decoded: Some(grown.source), growth: Some((grown.complete, grown.generation)) };
            let (standings, lines) =
                joint.lines_over(&kernel, 0, at_ns, (tracks.snapshot(), tracks.generation), so_far, false);
            assert_eq!(standings.len(), specs.len(), "tick {k}");
            for (i, (home, s)) in standings.into_iter().enumerate() {
                assert_eq!(home, 1, "{} at tick {k}", s.name);
                assert!(!s.anew || k == 0, "{} read anew at tick {k}", s.name);
                for a in &s.added {
                    // Its times, and the events it names, as the whole run names them.
                    assert!(whole_samples[i].contains(a), "{} at tick {k}: {a:?}", s.name);
                }
                handed[i].extend(s.added.iter().map(|a| (a.start, a.end)));
                assert_eq!(s.count, handed[i].len() as u64, "{} at tick {k}", s.name);
            }
            lines
        };
        // Pieces that end halfway between transfers, and inside them, 100 samples after
        // each chip select falls but the first: there the tracks run ahead of what the
        // decode can say is final.
        let per_us = (SPI_RATE / 1_000_000) as i64;
        let falls: Vec<usize> =
            whole_samples[0].iter().map(|s| (s.start * per_us / 1_000_000) as usize).collect();
        let mut cuts: Vec<usize> = falls.windows(2).flat_map(|w| [(w[0] + w[1]) / 2, w[1] + 100]).collect();
        cuts.push(samples.len());
        let pieces = cuts.len();
        let mut from = 0;
        for (k, &to) in cuts.iter().enumerate() {
            tracks.feed(&samples[from..to]);
            decoders.feed(&samples[from..to]);
            from = to;
            let grown = decoders.grow().expect("SPI says which annotations are final");
            tick(&mut joint, &mut handed, &tracks, grown, k);
        }
        let before_end: Vec<usize> = handed.iter().map(Vec::len).collect();
        let grown = decoders.finish().unwrap().1.expect("the growing decode holds the whole decode");
        let lines = tick(&mut joint, &mut handed, &tracks, grown, pieces);
        for (i, h) in handed.iter_mut().enumerate() {
            assert!(
                before_end[i] * 10 >= whole[i].len() * 9,
                "{}: {} of {} live",
                texts[i],
                before_end[i],
                whole[i].len()
            );
            h.sort_unstable();
            assert_eq!(*h, whole[i], "{}: the samples handed on", texts[i]);
        }
        assert_eq!(lines, whole_lines, "the last lines");
    }

    /// The channels of the corpus's SPI capture, and its rate.
    fn spi_channels() -> [String; 4] {
        ["MISO", "MOSI", "CLK", "CS"].map(String::from)
    }
    const SPI_RATE: u64 = 24_000_000;

    /// The joint analyses of `specs` over the SPI capture's channels (decoded by `stacks`)
    /// beside a kernel source: the kernel (no events, its time zero 7 s on the host's
    /// clock), the host time of the logic's first sample, 3 ms after it, and where the
    /// session places the logic.
    struct SpiBesideAKernel {
        joint: crate::recorder::Joint,
        kernel: latscope_model::Source,
        at_ns: u64,
        at: latscope_model::Placement,
    }

    fn spi_beside_a_kernel(specs: &[latscope_analysis::spec::Spec], stacks: &[String]) -> SpiBesideAKernel {
        let sigrok = SigrokSpec::parse("demo").unwrap().with_decoders(stacks.to_vec());
        let opts = crate::recorder::Options {
            joint_specs: specs.to_vec(),
            sigrok: Some(sigrok.with_tracks(spi_channels().to_vec())),
            ..crate::recorder::Options::default()
        };
        let mut kernel = latscope_model::Source::new("kernel", "trace.dat", latscope_model::SourceKind::File);
        kernel.origin.secs = 7;
        SpiBesideAKernel {
            joint: crate::recorder::Joint::new(&opts),
            kernel,
            at_ns: 7_003_000_000,
            at: latscope_model::Placement::new(3_000_000_000, 0.0),
        }
    }

    /// The samples of a real 24 MHz SPI capture (MIT, from LazySig) with CS framing
    /// transfers, channels MISO, MOSI, CLK and CS, a byte each.
    fn lazysig_spi_samples() -> Vec<u8> {
        corpus_samples("lazysig_spi_24mhz.sr")
    }

    /// The samples of the corpus's sigrok capture `name`, as a logic analyzer streams them.
    fn corpus_samples(name: &str) -> Vec<u8> {
        use std::io::Read;
        let path = format!("{}/../samples/corpus/sigrok/{name}", env!("CARGO_MANIFEST_DIR"));
        let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        let mut samples = Vec::new();
        // Captures saved before libsigrok 0.3 hold one chunk with no number.
        if let Ok(mut chunk) = zip.by_name("logic-1") {
            chunk.read_to_end(&mut samples).unwrap();
        }
        for i in 1.. {
            let Ok(mut chunk) = zip.by_name(&format!("logic-1-{i}")) else { break };
            chunk.read_to_end(&mut samples).unwrap();
        }
        samples
    }

    use crate::decoded::event_rows;

    /// How a live decode grew against the same samples decoded in one go.
    struct Grown {
        /// The whole decode's lines and events.
        whole_lines: Vec<crate::LiveStat>,
        whole_events: usize,
        /// Events the growing source held before the end.
        grown_before: usize,
    }

    /// Feeds `samples` to the stacks `specs` over `channels` at `rate` Hz, `piece` bytes (whole
    /// samples) at a time, with no ring. The oracle is the same samples decoded in one go, nothing
    /// taken out early. After each piece the growing source's events are a prefix of the
    /// whole decode's (time, name and every field) and `rules` answer from what was
    /// appended since as a whole run on them; at the end they are the whole decode's, and
    /// the whole decode puts the taken annotations back before the rest.
    fn grows_as_its_whole_decode(
        samples: &[u8],
        channels: &[String],
        specs: &[String],
        rate: u64,
        rules: &[latscope_analysis::spec::Spec],
        piece: usize,
    ) -> Grown {
        let mut once = LiveDecoders::new(specs, channels, rate).unwrap();
        once.feed(samples);
        let whole = decoded_source(&once.finish().unwrap().0).unwrap();
        let whole_rows = event_rows(&whole);
        let (_, whole_lines) = crate::stats::run(rules, &whole);

        let mut live = LiveDecoders::new(specs, channels, rate).unwrap();
        let mut analyses = latscope_analysis::live::LiveAnalyses::for_standing(rules.to_vec());
        let mut grown_before = 0;
        for piece in samples.chunks(piece) {
            live.feed(piece);
            let grown = live.grow().expect("the stacks say which annotations are final");
            assert_eq!(grown.generation, 0);
            let rows = event_rows(&grown.source);
            assert!(
                rows.len() >= grown_before && rows[..] == whole_rows[..rows.len()],
                "a prefix of the whole"
            );
            if rows.len() > grown_before {
                grown_before = rows.len();
                let (_, lines) = crate::stats::lines_of(rules, analyses.stand(&grown.source));
                assert_eq!(lines, crate::stats::run(rules, &grown.source).1);
            }
        }
        let (decoded, grown) = live.finish().unwrap();
        let grown = grown.unwrap();
        assert_eq!(event_rows(&grown.source), whole_rows);
        let (_, lines) = crate::stats::lines_of(rules, analyses.stand(&grown.source));
        assert_eq!(lines, whole_lines);
        assert_eq!(event_rows(&decoded_source(&decoded).unwrap()), whole_rows);
        Grown { whole_lines, whole_events: whole_rows.len(), grown_before }
    }

    #[test]
    fn a_real_spi_capture_fed_in_pieces_grows_the_events_and_answers_of_its_whole_decode() {
        // One stack with CS (its transfer is amended until CS releases) and one without,
        // merged.
        let samples = lazysig_spi_samples();
        assert!(samples.len() > 10_000_000, "{}", samples.len());
        let channels = ["MISO", "MOSI", "CLK", "CS"].map(String::from);
        let specs = ["spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS".to_owned(), "spi:clk=CLK,miso=MISO".to_owned()];
        let rules: Vec<_> = ["transfer=spi_transfer -> spi_transfer_end", "gap=spi_miso_end -> spi_miso"]
            .iter()
            .map(|r| latscope_analysis::spec::parse_spec(r).unwrap())
            .collect();
        // Pieces of about 9 µs: shorter than a transfer, so reads end inside them.
        let g = grows_as_its_whole_decode(&samples, &channels, &specs, 24_000_000, &rules, 211);
        assert!(g.whole_lines.iter().all(|l| l.count > 20), "{:?}", g.whole_lines);
        assert!(g.grown_before > g.whole_events / 2, "{} of {} grew live", g.grown_before, g.whole_events);
    }

    /// SD puts its annotations out of start order, yet grows live too. A real 4-bit SD bus
    /// (i.MX6, 40 MHz), decoded by a stack of CMD alone and one with the DAT lines, fed in
    /// pieces of 25 µs: the growing events are always a prefix of the whole decode's, and
    /// `sd-cmd-resp` answers as a whole run on them.
    #[test]
    fn a_real_sd_capture_fed_in_pieces_grows_the_events_and_answers_of_its_whole_decode() {
        let samples = corpus_samples("sd_imx6_working_snippet.sr");
        let mut channels: Vec<String> =
            ["CLK", "DAT0", "DAT1", "DAT2", "CMD", "DAT3"].map(String::from).to_vec();
        channels.extend((6..16).map(|i| i.to_string()));
        let specs = [
            "sd:clk=CLK,cmd=CMD".to_owned(),
            "sd:clk=CLK,cmd=CMD,dat0=DAT0,dat1=DAT1,dat2=DAT2,dat3=DAT3".to_owned(),
        ];
        let rule = latscope_decoders::presets::rule_for("sd-cmd-resp").unwrap();
        let rules = vec![latscope_analysis::spec::parse_spec(rule).unwrap()];
        let g = grows_as_its_whole_decode(&samples, &channels, &specs, 40_000_000, &rules, 2 * 1000);
        assert!(g.whole_lines[0].count >= 3, "{:?}", g.whole_lines);
        // All but the last CMD55 (of each stack) and the token cut by the end: the capture
        // ends before CMD55's response, and a command still unanswered may yet be said to
        // have none, at its start.
        assert_eq!(g.grown_before + 8, g.whole_events, "{} of {} grew live", g.grown_before, g.whole_events);
    }

    /// SD over SPI, stacked, grows live too: until now a stacked decoder could not say
    /// which annotations were final, and every tick analysed the whole decode so far. A
    /// real card's init and CSD read (4 MHz) fed in pieces of 1,000 samples (250 µs):
    /// the growing events are always a prefix of the whole decode's, and a command-to-
    /// response rule answers as a whole run on them.
    #[test]
    fn a_real_sd_over_spi_capture_fed_in_pieces_grows_the_events_and_answers_of_its_whole_decode() {
        let samples = corpus_samples("sd_spi_xmore_get_csd.sr");
        let channels = ["CS#", "MOSI", "CLK", "MISO"].map(String::from);
        let specs = ["spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS# | sd-spi".to_owned()];
        let rules: Vec<_> =
            ["cmd-resp=sd_spi_cmd -> sd_spi_resp by seq", "block=sd_spi_data -> sd_spi_data_end"]
                .iter()
                .map(|r| latscope_analysis::spec::parse_spec(r).unwrap())
                .collect();
        let g = grows_as_its_whole_decode(&samples, &channels, &specs, 4_000_000, &rules, 1000);
        assert!(g.whole_lines[0].count >= 5 && g.whole_lines[1].count >= 1, "{:?}", g.whole_lines);
        assert!(
            g.grown_before > g.whole_events * 9 / 10,
            "{} of {} grew live",
            g.grown_before,
            g.whole_events
        );
    }

    #[test]
    fn with_a_ring_the_growing_decode_starts_again_from_the_annotations_kept() {
        let samples = lazysig_spi_samples();
        let channels = ["MISO", "MOSI", "CLK", "CS"].map(String::from);
        let specs = ["spi:clk=CLK,miso=MISO".to_owned()];
        let mut once = LiveDecoders::new(&specs, &channels, 24_000_000).unwrap();
        once.feed(&samples);
        let whole_rows = event_rows(&decoded_source(&once.finish().unwrap().0).unwrap());
        let mut live = LiveDecoders::new(&specs, &channels, 24_000_000).unwrap();
        live.regrow_slack = 8;
        let mut generations = 0;
        for piece in samples.chunks(1 << 18) {
            live.feed(piece);
            // A ring of about 20 ms (each sample is 1/24 µs).
            let t = (live.fed as i64 - 480_000) * 1_000_000 / 24;
            live.forget_before(t);
            let grown = live.grow().unwrap();
            generations = grown.generation;
            let kept: u64 = live.taken.iter().map(|t| t.len() as u64).sum();
            assert!(
                grown.source.events.len() as u64 <= 2 * (2 * kept + 8 + 1),
                "bounded by the annotations kept"
            );
            // What it holds appears in the whole decode's events, in the same order.
            let rows = event_rows(&grown.source);
            let mut whole = whole_rows.iter();
            assert!(rows.iter().all(|r| whole.any(|w| w == r)), "a subsequence of the whole decode's events");
        }
        assert!(generations > 0, "the ring made the growing source start again");
        // The last answer reads what the ring kept: the growing source only if it holds
        // exactly that.
        let (decoded, grown) = live.finish().unwrap();
        let kept = event_rows(&decoded_source(&decoded).unwrap());
        let mut whole = whole_rows.iter();
        assert!(kept.iter().all(|r| whole.any(|w| w == r)));
        if let Some(g) = grown {
            assert_eq!(event_rows(&g.source), kept);
        }
    }

    /// A UART with `baud=auto` grows live: framed at the rate measured so far (0xCC's
    /// pulses are two bits and more: half the line's rate), then, once 0x55's one-bit
    /// pulses arrive, framed again at the line's rate, the growing source starting again.
    /// From then on it grows as a prefix of the whole decode's events, and ends as them.
    #[test]
    fn a_uart_with_auto_baud_grows_live_and_starts_again_when_its_rate_changes() {
        let channels = ["D0".to_owned(), "D1".to_owned()];
        let specs = ["uart:rx=D1,baud=auto".to_owned()];
        let bytes = [0xCCu8, 0xCC, 0xCC, 0xCC, 0x55, 0x55, 0xCC, 0xCC, 0xCC];
        let mut bits = vec![1u8; 3];
        for byte in bytes {
            bits.push(0);
            bits.extend((0..8).map(|i| (byte >> i) & 1));
            bits.extend([1, 1, 1]);
        }
        // 10 samples a bit at 10 kHz: 1000 baud.
        let samples: Vec<u8> = bits.iter().flat_map(|&b| [b << 1; 10]).collect();
        let mut once = LiveDecoders::new(&specs, &channels, 10_000).unwrap();
        once.feed(&samples);
        let decoded_once = once.finish().unwrap().0;
        let data: Vec<String> = decoded_once[0]
            .1
            .annotations
            .iter()
            .filter(|a| a.row == "data")
            .map(|a| a.text.to_string())
            .collect();
        let want: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(data, want, "the whole line at 1000 baud");
        let whole_rows = event_rows(&decoded_source(&decoded_once).unwrap());

        let mut live = LiveDecoders::new(&specs, &channels, 10_000).unwrap();
        let (mut generations, mut grew_at_first_rate, mut grew_after) = (Vec::new(), 0, 0);
        for piece in samples.chunks(37) {
            live.feed(piece);
            let grown = live.grow().expect("a UART with baud=auto says which annotations are final");
            let rows = event_rows(&grown.source);
            if grown.generation == 0 {
                grew_at_first_rate = grew_at_first_rate.max(rows.len());
            } else {
                assert!(rows[..] == whole_rows[..rows.len()], "a prefix of the whole decode's events");
                grew_after = rows.len();
            }
            generations.push(grown.generation);
        }
        assert!(grew_at_first_rate > 0, "framed at the first rate and handed on");
        assert!(grew_after >= whole_rows.len() - 2, "most of it before the end: {grew_after}");
        assert_eq!(generations.last(), Some(&1), "started again once: {generations:?}");
        let (decoded, grown) = live.finish().unwrap();
        assert_eq!(event_rows(&decoded_source(&decoded).unwrap()), whole_rows);
        assert_eq!(event_rows(&grown.expect("it holds what the decode does").source), whole_rows);
    }

    #[test]
    fn live_decoders_see_the_stream_as_it_arrives() {
        // UART 8N1 at 10 samples per bit on channel D1 (bit 1); D0 toggles as noise the
        // decoder must not see. Bytes 0x55 then 0xA3, fed in two reads.
        let channels = ["D0".to_owned(), "D1".to_owned()];
        let specs = ["uart:rx=D1,baud=1000".to_owned()];
        let mut bits = vec![1u8; 3];
        for byte in [0x55u8, 0xA3] {
            bits.push(0);
            bits.extend((0..8).map(|i| (byte >> i) & 1));
            bits.push(1);
        }
        bits.extend([1, 1, 1]);
        let samples: Vec<u8> =
            bits.iter().flat_map(|&b| [b; 10]).enumerate().map(|(i, b)| (b << 1) | (i as u8 & 1)).collect();
        let mut live = LiveDecoders::new(&specs, &channels, 10_000).unwrap();
        let (a, b) = samples.split_at(150);
        live.feed(a);
        let early = live.so_far();
        live.feed(b);
        let whole = live.finish().unwrap().0;
        let data = |d: &Decoded| -> Vec<String> {
            d.annotations.iter().filter(|a| a.row == "data").map(|a| a.text.to_string()).collect()
        };
        assert_eq!(data(&whole[0].1), ["55", "A3"], "{:?}", whole[0].1.annotations);
        assert!(whole[0].1.errors.is_empty(), "{:?}", whole[0].1.errors);
        // 150 samples in (3 idle bits, a frame of 10, half the next start bit), the first
        // byte had ended and the second had not.
        assert_eq!(data(&early[0].1), ["55"]);
    }

    #[test]
    fn live_tracks_fed_in_pieces_are_the_tracks_the_saved_capture_reads() {
        // Four channels of scrambled levels at 100 kHz; D1 and D3 followed.
        let mut x = 0x2545_f491_u32;
        let data: Vec<u8> = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                // Runs of equal levels, as a bus has.
                if x.is_multiple_of(7) { (x >> 8) as u8 & 0x0f } else { 0xff }
            })
            .scan(0u8, |held, next| {
                if next != 0xff {
                    *held = next;
                }
                Some(*held)
            })
            .collect();
        let channels: Vec<String> = (0..4).map(|i| format!("D{i}")).collect();
        let logic = Logic {
            samplerate: Some("100k".into()),
            channels: channels.clone(),
            unitsize: 1,
            data: data.clone(),
            first_sample: 0,
            overrun: 0,
            placement: None,
            decoded: Vec::new(),
        };
        let path = std::env::temp_dir().join(format!("latscope-live-tracks-{}.sr", std::process::id()));
        logic.save(&path).unwrap();
        let saved = latscope_importers::sigrok::parse(&std::fs::read(&path).unwrap(), &Default::default());
        let _ = std::fs::remove_file(&path);
        let saved = saved.unwrap();
        let followed = ["D1".to_owned(), "D3".to_owned()];
        let mut live = LiveTracks::new(&followed, &channels, 100_000).unwrap();
        for piece in data.chunks(777) {
            live.feed(piece);
        }
        let tracks = live.snapshot();
        let oracle: Vec<&DigitalTrack> =
            saved.digital.iter().filter(|t| followed.contains(&t.name)).collect();
        assert_eq!(oracle.len(), 2);
        assert!(tracks[0].transitions() > 100, "a test of something: {}", tracks[0].transitions());
        assert!(tracks.iter().eq(oracle.iter().copied()), "the followed tracks differ from the saved ones");
        // Every channel at once is what a finished capture gives.
        assert!(logic.tracks().iter().eq(saved.digital.iter()), "a finished capture's tracks differ");
        // Forgetting the first three quarters keeps every change after them and the level
        // there (the changes before are most of them, so they go).
        let cut = 15_000u64;
        let at = SampleClock::new(100_000).time(cut);
        live.forget_before(cut);
        for (kept, whole) in live.snapshot().iter().zip(oracle) {
            let after: Vec<_> = whole.changes().filter(|(t, _)| *t >= at).collect();
            assert!(kept.transitions() < whole.transitions(), "{} forgot nothing", whole.name);
            assert!(kept.changes().eq(after), "{}: the changes after the cut differ", whole.name);
            assert_eq!(kept.level_at(at), whole.level_at(at), "{}", whole.name);
            assert_eq!(kept.end, whole.end);
        }
    }
}
