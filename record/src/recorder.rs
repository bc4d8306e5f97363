//! The recording: tracefs prepared (events, the mono clock, an empty buffer), one reader
//! thread per CPU taking whole pages from its `trace_pipe_raw` without blocking, and a loop
//! that keeps the pages (all of them, or a ring), reports live statistics every tick, runs
//! the flight recorder and stops at the command's exit, `--duration`, Ctrl-C (SIGINT or
//! SIGTERM) or an error. tracefs is put back however it ends ([`crate::tracefs::Guard`]).

use crate::growing::Growing;
use crate::stats::{self, LiveStat};
use crate::tracefs::{self, EventName, Guard, PagePipe, Tracefs};
use crate::window::{Flight, Saved, Trigger};
use crate::{RecordError, save};
use latscope_analysis::live::{AcrossStanding, CmdIrqStanding, LiveAnalyses, Standing};
use latscope_analysis::presets::cmd_irq_rule;
use latscope_analysis::runner::Scope;
use latscope_analysis::spec::{Preset, Spec};
use latscope_importers::LoadControl;
use latscope_importers::tracedat::live::{CpuPages, KernelMeta, PageDecoder, write_v6};
use latscope_model::{PS_PER_NS, Placed, Placement, Ps, Source};
use std::collections::{BTreeMap, VecDeque};
use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much recent data a flight recorder keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ring {
    /// Everything (a plain recording, saved whole).
    All,
    /// The pages of the last so many nanoseconds.
    Nanos(u64),
    /// At most so many bytes of pages.
    Bytes(u64),
}

impl Ring {
    /// The flight recorder's default: 64 MiB of pages (about 1.3 M events).
    pub const DEFAULT: Ring = Ring::Bytes(64 << 20);

    /// `30s`, `500ms`, `64MiB`, `1GiB`, `512KiB`.
    pub fn parse(text: &str) -> Result<Ring, RecordError> {
        let t = text.trim();
        for (unit, mult) in [("KiB", 1u64 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)] {
            if let Some(n) = t.strip_suffix(unit) {
                return n
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .map(|n| Ring::Bytes(n.saturating_mul(mult)))
                    .ok_or_else(|| {
                        RecordError::Usage(format!("--ring {text:?}: expected a size such as 64MiB"))
                    });
            }
        }
        match latscope_analysis::report::threshold::parse_duration_ns(t) {
            Some(ns) if ns > 0.0 => Ok(Ring::Nanos(ns as u64)),
            _ => Err(RecordError::Usage(format!(
                "--ring {text:?}: expected a duration (30s, 500ms) or a size (64MiB, 1GiB)"
            ))),
        }
    }
}

/// What to record and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Events to enable, as typed (`block_rq_issue`, `sched:sched_switch`); markers need none.
    pub events: Vec<String>,
    /// A board to record over SSH (`[USER@]HOST[:PORT]`) instead of this machine.
    pub ssh: Option<String>,
    /// The analyses of the live lines and the triggers, and their texts (for sessions).
    pub specs: Vec<Spec>,
    /// Beside the kernel, the analyses over the logic analyzer's decoded events.
    pub logic_specs: Vec<Spec>,
    /// Beside the kernel, the analyses that read the kernel and the logic analyzer
    /// together: set by the recorder from `specs` that name one of the device's channels or
    /// an event its decoders add ([`beside_logic`]).
    pub joint_specs: Vec<Spec>,
    pub spec_texts: Vec<String>,
    pub duration: Option<Duration>,
    /// A command to run once tracing is on; the recording stops when it exits.
    pub command: Vec<String>,
    /// Record even if another user has the buffer.
    pub force: bool,
    pub triggers: Vec<Trigger>,
    /// `--keep PRE,POST` in nanoseconds.
    pub keep_ns: (u64, u64),
    pub ring: Ring,
    pub max_saves: Option<u64>,
    /// Where the flight recorder's windows go (needed with triggers).
    pub windows_dir: Option<PathBuf>,
    /// How often the live statistics are computed.
    pub tick: Duration,
    /// Set from elsewhere (the workbench's Stop) to end the recording as Ctrl-C does.
    pub stop: Option<Arc<AtomicBool>>,
    /// A logic analyzer recorded beside the kernel (this machine's only), placed by the
    /// host's monotonic clock.
    pub sigrok: Option<crate::sigrok::SigrokSpec>,
    /// The shared markers that fit the logic analyzer's placement in what is saved.
    pub align: Option<latscope_analysis::spec::AlignSpec>,
    /// Follow every channel of the logic analyzer beside the kernel, and hand them to the
    /// snapshot sink each tick ([`Snapshot::Logic`]): a window shows them as they come.
    pub show_logic: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            events: Vec::new(),
            ssh: None,
            specs: Vec::new(),
            logic_specs: Vec::new(),
            joint_specs: Vec::new(),
            show_logic: false,
            spec_texts: Vec::new(),
            duration: None,
            command: Vec::new(),
            force: false,
            triggers: Vec::new(),
            keep_ns: (0, 0),
            ring: Ring::All,
            max_saves: None,
            windows_dir: None,
            tick: Duration::from_secs(1),
            stop: None,
            sigrok: None,
            align: None,
        }
    }
}

impl Options {
    /// Whether the recording was asked to stop (Ctrl-C aside).
    pub(crate) fn stop_asked(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Ordering::Acquire))
    }
}

/// What the recording says as it goes.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Live {
    /// Once a tick: the statistics of each analysis over what is kept.
    Stats {
        elapsed_s: f64,
        /// Events decoded so far (kept), and lost by the kernel (page headers' counts).
        events: u64,
        lost: u64,
        /// Pages kept and their bytes.
        kept_bytes: u64,
        analyses: Vec<LiveStat>,
        /// The logic analyzer beside the kernel, if one is recorded.
        #[serde(skip_serializing_if = "Option::is_none")]
        logic: Option<LogicLive>,
        /// Whether this is the last line (over everything recorded).
        #[serde(rename = "final")]
        last: bool,
    },
    /// A pair crossed a trigger; `saved` is its window, when one was saved.
    Crossing { analysis: String, latency_ns: f64, start_s: f64, saved: Option<PathBuf> },
}

/// The logic analyzer's part of a live line: its samples so far and where its first sample
/// sits on the kernel's timeline by the host's clocks, with the uncertainty of that.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LogicLive {
    pub samples: u64,
    /// The first sample's time on this machine's monotonic clock (the kernel's `mono`), s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_s: Option<f64>,
    /// Half the width of the interval the first sample lies in, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty_ns: Option<u64>,
    /// The decoder stacks run on the stream, in `--decoder` order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decoders: Vec<DecoderLive>,
}

/// One decoder stack's part of a live line: what it found so far.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DecoderLive {
    pub decoder: String,
    pub annotations: u64,
    /// Decoding errors (frame, CRC, cut off) by kind, and in all.
    pub errors: u64,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub error_kinds: std::collections::BTreeMap<String, u64>,
}

impl DecoderLive {
    pub(crate) fn of(spec: &str, d: &latscope_decoders::Decoded) -> DecoderLive {
        DecoderLive::counted(spec, d.annotations.len() as u64, d.errors.clone())
    }

    pub(crate) fn counted(spec: &str, annotations: u64, errors: BTreeMap<String, u64>) -> DecoderLive {
        DecoderLive {
            decoder: spec.to_owned(),
            annotations,
            errors: errors.values().sum(),
            error_kinds: errors,
        }
    }
}

impl LogicLive {
    /// The capture's line, with `decoders`, their work so far.
    fn of(capture: &crate::sigrok::LogicCapture, decoders: Vec<DecoderLive>) -> LogicLive {
        let placed = capture.placement();
        LogicLive {
            samples: capture.samples_so_far(),
            start_s: placed.map(|p| p.at_ns as f64 / 1e9),
            uncertainty_ns: placed.map(|p| p.uncertainty_ns),
            decoders,
        }
    }
}

/// Why the recording stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    Exited(ExitStatus),
    Duration,
    Interrupted,
    /// Its `Options::stop` was set (the workbench's Stop).
    Asked,
    /// A reader or the loop failed; what arrived before is kept.
    Failed(String),
}

impl Stopped {
    /// How the recording ended, as the end of a recording says it.
    pub fn describe(&self) -> String {
        match self {
            Stopped::Exited(status) => format!("the command exited ({status})"),
            Stopped::Duration => "--duration elapsed".to_owned(),
            Stopped::Interrupted => "interrupted".to_owned(),
            Stopped::Asked => "stopped".to_owned(),
            Stopped::Failed(why) => format!("stopped by an error: {why}"),
        }
    }
}

/// A finished recording.
#[derive(Debug)]
pub struct Recording {
    pub meta: KernelMeta,
    /// Each CPU's pages, whole, in the order read (only the ring's, with a ring).
    pub pages: Vec<Vec<u8>>,
    pub stopped: Stopped,
    pub elapsed: Duration,
    pub events: u64,
    pub lost: u64,
    /// The final statistics, over what is kept.
    pub stats: Vec<LiveStat>,
    pub crossings: u64,
    pub saved: Vec<Saved>,
    /// Why tracefs could not be put back as found (a board's connection dropped), if so.
    pub unrestored: Option<String>,
    /// The logic analyzer recorded beside the kernel, with its placement.
    pub logic: Option<crate::sigrok::Logic>,
    /// `--align`: the shared markers that fit the logic capture's placement when saved.
    pub align: Option<latscope_analysis::spec::AlignSpec>,
    /// The analyses that read the kernel and the logic together ([`beside_logic`]).
    pub joint_specs: Vec<Spec>,
    /// How often the live lines' growing source started again from the kept pages,
    /// because a record arrived behind the watermark.
    pub live_restarts: u64,
    /// Of those, how far behind the watermark the latest late record was (ns, 0 if none).
    pub late_by_ns: u64,
    /// How often a ring's successor source took over the live lines from the one whose
    /// oldest pages the ring had dropped.
    pub live_handovers: u64,
    /// Events the live lines read over the whole recording: with a ring, more than the
    /// kept ones (`events`).
    pub events_read: u64,
    /// Whether the last line decoded the kept pages again, because the growing source
    /// did not hold exactly them (a ring dropped pages since it started, a late record).
    pub last_decoded_again: bool,
    /// What the user should know of how it was recorded (a board that could read its
    /// pages only as each event came).
    pub notes: Vec<String>,
}

impl Recording {
    /// The kept pages as a trace.dat (v6) written to `out`.
    pub fn write_dat(&self, out: &mut dyn std::io::Write) -> std::io::Result<u64> {
        write_dat(&self.meta, &self.pages, out)
    }

    /// Saves the capture at `path` atomically: `X.dat` alone, else a new folder with
    /// `kernel.dat` and `session.latscope.json`.
    ///
    /// With a logic analyzer beside the kernel, only a folder: `logic.sr` goes beside
    /// `kernel.dat`, and the session places it on the kernel's timeline by the host's clocks
    /// ([`Recording::logic_offset`]), or with `--align` on the shared markers of the saved
    /// files. Returns how the logic capture was placed, when there is one.
    pub fn save(&self, path: &Path, rules: &[String]) -> Result<Option<String>, RecordError> {
        if path.extension().is_some_and(|e| e == "dat") {
            if self.logic.is_some() {
                return Err(RecordError::Usage(
                    "-o X.dat writes the kernel alone: with --sigrok, -o names a new folder".into(),
                ));
            }
            return save::file(path, |w| self.write_dat(w).map(|_| ())).map(|()| None);
        }
        let logic = match &self.logic {
            Some(l) => Some((l, self.logic_offset()?)),
            None => None,
        };
        let mut said = None;
        save::folder(path, |dir| {
            save::file(&dir.join("kernel.dat"), |w| self.write_dat(w).map(|_| ()))?;
            let mut placed = None;
            let mut decoders: Vec<String> = Vec::new();
            if let Some((l, offset)) = &logic {
                l.save(&dir.join("logic.sr"))?;
                placed =
                    offset.clone().map(|(o, how)| crate::window::fit_logic(dir, self.align.as_ref(), o, how));
                decoders = l.decoded.iter().map(|(spec, _)| spec.clone()).collect();
            }
            said = placed.as_ref().map(|(_, how)| how.clone());
            let session = crate::window::session_json_with(
                rules,
                None,
                placed.map(|(p, how)| (p, how, decoders.as_slice())),
            );
            save::file(&dir.join("session.latscope.json"), |w| w.write_all(session.as_bytes()))
        })?;
        Ok(said)
    }

    /// Where the logic capture's first sample sits on the saved kernel trace's timeline
    /// (picoseconds from the kernel file's time zero), and how it was placed: by the host's
    /// monotonic clock, which the kernel recorded in (`trace_clock` `mono`), within the
    /// uncertainty said. `None` without logic data.
    pub fn logic_offset(&self) -> Result<Option<(i64, String)>, RecordError> {
        let Some(placed) = self.logic.as_ref().and_then(|l| l.placement) else { return Ok(None) };
        let kernel = self.source()?;
        // A ring may have dropped the first samples: the kept ones start later.
        let logic = self.logic.as_ref();
        let dropped_ns = logic
            .and_then(|l| Some((l.first_sample, crate::sigrok::rate_hz(l.samplerate.as_deref()?)?)))
            .map_or(0, |(n, hz)| crate::sigrok::ns_of_sample(n, hz));
        let offset = logic_offset_ps(&kernel, placed.at_ns.saturating_add(dropped_ns));
        Ok(Some((offset, placed_by(placed.uncertainty_ns))))
    }

    /// The recorded events as `latscope report` reads the saved file.
    pub fn source(&self) -> Result<Source, RecordError> {
        decode_all(&self.meta, &self.pages)
    }

    /// What the joint analyses read, as the saved folder holds it: the kernel's events, the
    /// logic's channels and decoded events, and where the logic sits on the kernel's
    /// timeline (picoseconds after its time zero, by the host's clocks). `None` without
    /// logic data.
    pub fn joint_sources(&self) -> Result<Option<(Source, Source, i64)>, RecordError> {
        let (Some(logic), Some((offset, _))) = (&self.logic, self.logic_offset()?) else { return Ok(None) };
        let mut source = crate::sigrok::decoded_source(&logic.decoded)?;
        source.digital = logic.tracks().into();
        Ok(Some((self.source()?, source, offset)))
    }
}

/// The ring of a logic analyzer beside the kernel: with triggers, as long as the kernel's
/// (in time, at its rate) or as large.
fn logic_ring(opts: &Options) -> Option<crate::sigrok::LogicRing> {
    opts.windows_dir.as_ref()?;
    match opts.ring {
        Ring::All => None,
        Ring::Bytes(b) => Some(crate::sigrok::LogicRing::Bytes(b)),
        Ring::Nanos(ns) => {
            let rate = opts.sigrok.as_ref()?.samplerate_hz()?;
            Some(crate::sigrok::LogicRing::Samples(crate::sigrok::samples_in(ns, rate)))
        }
    }
}

/// How a logic capture beside the kernel was placed, as sessions and live lines say it.
pub fn placed_by(uncertainty_ns: u64) -> String {
    format!(
        "host clocks (±{}): align on a shared marker to fit it",
        latscope_analysis::units::human_ns(uncertainty_ns as f64)
    )
}

fn write_dat(meta: &KernelMeta, pages: &[Vec<u8>], out: &mut dyn std::io::Write) -> std::io::Result<u64> {
    let mut readers: Vec<&[u8]> = pages.iter().map(Vec::as_slice).collect();
    let mut cpus: Vec<CpuPages<'_>> =
        readers.iter_mut().map(|r| CpuPages { len: r.len() as u64, data: r as &mut dyn Read }).collect();
    write_v6(meta, &mut cpus, out)
}

/// The pages decoded as a trace.dat file is (`latscope report`'s reader).
pub(crate) fn decode_all(meta: &KernelMeta, pages: &[Vec<u8>]) -> Result<Source, RecordError> {
    let mut bytes = Vec::with_capacity(pages.iter().map(Vec::len).sum::<usize>() + (1 << 16));
    write_dat(meta, pages, &mut bytes).map_err(|e| RecordError::Decode(format!("writing pages: {e}")))?;
    latscope_importers::tracedat::parse(&bytes, &LoadControl::new())
        .map_err(|e| RecordError::Decode(format!("decoding the recorded pages: {e}")))
}

/// One page kept, with its records' raw times.
#[derive(Debug)]
pub(crate) struct Page {
    /// The page's used bytes (header, records, lost count); the rest is zeros.
    pub data: Vec<u8>,
    pub first: u64,
    pub last: u64,
    /// Whether it holds records (else `first` and `last` are its header's time).
    pub records: bool,
}

/// The pages kept, per CPU.
#[derive(Debug)]
pub(crate) struct Store {
    pub cpus: Vec<VecDeque<Page>>,
    pub page_size: usize,
    pub bytes: u64,
    pub newest: u64,
    /// Bytes the ring has dropped since the recording began.
    pub dropped: u64,
    /// Per CPU: the pages pushed and dropped so far (a page's number is its place among
    /// its CPU's pushed pages), and the last record time of the newest dropped page that
    /// held records.
    pub pushed_pages: Vec<u64>,
    pub dropped_pages: Vec<u64>,
    pub last_dropped: Vec<Option<u64>>,
}

impl Store {
    fn new(cpus: usize, page_size: usize) -> Store {
        Store {
            cpus: (0..cpus).map(|_| VecDeque::new()).collect(),
            page_size,
            bytes: 0,
            newest: 0,
            dropped: 0,
            pushed_pages: vec![0; cpus],
            dropped_pages: vec![0; cpus],
            last_dropped: vec![None; cpus],
        }
    }

    fn push(&mut self, cpu: usize, page: Page) {
        self.bytes += page.data.len() as u64;
        self.newest = self.newest.max(page.last);
        if let Some(q) = self.cpus.get_mut(cpu) {
            q.push_back(page);
            self.pushed_pages[cpu] += 1;
        }
    }

    /// Drops the oldest pages beyond `ring`, never one ending at or after `keep_from`.
    fn trim(&mut self, ring: Ring, keep_from: Option<u64>) {
        loop {
            let over = match ring {
                Ring::All => false,
                Ring::Bytes(max) => self.bytes > max,
                Ring::Nanos(ns) => self
                    .cpus
                    .iter()
                    .filter_map(|q| q.front())
                    .any(|p| p.last.saturating_add(ns) < self.newest),
            };
            if !over {
                return;
            }
            // The CPU whose oldest page ends first.
            let Some(cpu) = (0..self.cpus.len())
                .filter(|&c| !self.cpus[c].is_empty())
                .min_by_key(|&c| self.cpus[c].front().map_or(u64::MAX, |p| p.last))
            else {
                return;
            };
            if let Some(p) = self.cpus[cpu].front()
                && keep_from.is_some_and(|k| p.last >= k)
            {
                return;
            }
            if let Some(p) = self.cpus[cpu].pop_front() {
                self.bytes -= p.data.len() as u64;
                self.dropped += p.data.len() as u64;
                self.dropped_pages[cpu] += 1;
                if p.records {
                    self.last_dropped[cpu] = Some(p.last);
                }
            }
        }
    }

    /// Each CPU's pages, whole (padded to the page size), joined.
    pub(crate) fn joined(&self) -> Vec<Vec<u8>> {
        self.joined_between(0, u64::MAX)
    }

    /// Each CPU's pages that may hold records in `[from, to]`, joined.
    pub(crate) fn joined_between(&self, from: u64, to: u64) -> Vec<Vec<u8>> {
        self.cpus
            .iter()
            .map(|q| {
                let mut out = Vec::new();
                for p in q.iter().filter(|p| p.last >= from && p.first <= to) {
                    out.extend_from_slice(&p.data);
                    out.resize(out.len().div_ceil(self.page_size) * self.page_size, 0);
                }
                out
            })
            .collect()
    }
}

/// What a CPU's reader hands over.
enum Delivery {
    /// A page, as read.
    Page(usize, Vec<u8>),
    /// The reader found the CPU's buffer empty when it read at this raw `mono` time.
    Drained(usize, u64),
}

fn spawn_reader(
    fs: &Tracefs,
    cpu: usize,
    page_size: usize,
    tx: mpsc::Sender<Delivery>,
    stop: Arc<AtomicBool>,
    remote_children: &mut Vec<(Child, String)>,
) -> Result<JoinHandle<Result<(), RecordError>>, RecordError> {
    let path = fs.path(&format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
    let machine = fs.machine();
    let pipe = fs.pages(cpu, page_size)?;
    let source: Result<fs::File, Box<dyn Read + Send>> = match pipe {
        PagePipe::Local(f) => Ok(f),
        PagePipe::Remote(mut child) => {
            let mut out =
                child.stdout.take().ok_or_else(|| RecordError::Ssh("ssh gave no output pipe".into()))?;
            // The stream starts with the board's `cat`'s process id, to end it cleanly.
            let mut pid = Vec::new();
            let mut byte = [0u8; 1];
            while pid.len() < 32 && out.read_exact(&mut byte).is_ok() && byte[0] != b'\n' {
                pid.push(byte[0]);
            }
            let pid = String::from_utf8_lossy(&pid).trim().to_owned();
            if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RecordError::Ssh(format!("{machine}: cannot stream {}", path.display())));
            }
            remote_children.push((child, pid));
            Err(Box::new(out))
        }
    };
    let spawned = std::thread::Builder::new().name(format!("trace cpu{cpu}")).spawn(move || match source {
        Ok(f) => read_local(f, &path, cpu, page_size, &tx, &stop),
        Err(stream) => read_remote(stream, &machine, cpu, page_size, &tx, &stop),
    });
    spawned.map_err(|e| RecordError::io(&fs.path("per_cpu"), e))
}

/// Reads a local `trace_pipe_raw` without blocking, every 20 ms, until `stop`; after it,
/// one more pass empties what is left. Each time it finds the buffer empty, it says when
/// it asked, on this machine's monotonic clock: the recording's trace clock (`mono`).
fn read_local(
    mut f: fs::File,
    path: &Path,
    cpu: usize,
    page_size: usize,
    tx: &mpsc::Sender<Delivery>,
    stop: &AtomicBool,
) -> Result<(), RecordError> {
    let mut last_pass = false;
    loop {
        let mut buf = vec![0u8; page_size];
        let asked_at = crate::sigrok::mono_ns();
        match f.read(&mut buf) {
            Ok(n) if n > 0 => {
                if tx.send(Delivery::Page(cpu, buf)).is_err() {
                    return Ok(());
                }
                continue;
            }
            Ok(_) => {
                let _ = tx.send(Delivery::Drained(cpu, asked_at));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let _ = tx.send(Delivery::Drained(cpu, asked_at));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(RecordError::io(path, e)),
        }
        if last_pass {
            return Ok(());
        }
        if stop.load(Ordering::Acquire) {
            last_pass = true;
            continue;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads a board's pages as its loop streams them (whole pages, one after another) until
/// the stream ends: after `stop` that is the end, before it the connection dropped. An
/// idle mark among them says the CPU's buffer was empty at that time on the board's trace
/// clock ([`crate::ssh::idle_mark`]).
fn read_remote(
    mut stream: Box<dyn Read + Send>,
    machine: &str,
    cpu: usize,
    page_size: usize,
    tx: &mpsc::Sender<Delivery>,
    stop: &AtomicBool,
) -> Result<(), RecordError> {
    let mut pages = 0u64;
    loop {
        let mut buf = vec![0u8; page_size];
        match stream.read_exact(&mut buf) {
            Ok(()) => {
                let delivery = match crate::ssh::idle_mark(&buf) {
                    Some(at) => Delivery::Drained(cpu, at),
                    None => {
                        pages += 1;
                        Delivery::Page(cpu, buf)
                    }
                };
                if tx.send(delivery).is_err() {
                    return Ok(());
                }
            }
            Err(_) if stop.load(Ordering::Acquire) => return Ok(()),
            Err(e) => {
                return Err(RecordError::Ssh(format!(
                    "the connection to {machine} dropped (CPU {cpu}'s stream ended after {pages} pages: {e})"
                )));
            }
        }
    }
}

/// SIGINT and SIGTERM set a flag while the recording runs (and no longer after).
pub(crate) struct Signals {
    pub(crate) flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    /// Catches SIGINT and SIGTERM only for a recording that has no other way to stop (the
    /// command line): one that can be asked to (`opts.stop`, the workbench's Stop) leaves
    /// them alone, since unregistering does not give a signal its default action back, and
    /// the window would no longer end on Ctrl-C in its terminal.
    pub(crate) fn unless_stoppable(opts: &Options) -> Signals {
        if opts.stop.is_some() {
            Signals { flag: Arc::new(AtomicBool::new(false)), ids: Vec::new() }
        } else {
            Signals::register()
        }
    }

    pub(crate) fn raised(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    fn register() -> Signals {
        let flag = Arc::new(AtomicBool::new(false));
        let ids = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
            .iter()
            .filter_map(|&s| signal_hook::flag::register(s, Arc::clone(&flag)).ok())
            .collect();
        Signals { flag, ids }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// The events to enable for `typed` names, checked against the kernel.
pub fn resolve_events(fs: &Tracefs, typed: &[String]) -> Result<Vec<EventName>, RecordError> {
    let mut out: Vec<EventName> = Vec::new();
    for t in typed {
        if let Some(e) = fs.event(t)?
            && !out.contains(&e)
        {
            out.push(e);
        }
    }
    Ok(out)
}

/// What a tick hands a window that shows the recording ([`record_with`]).
#[derive(Debug)]
pub enum Snapshot {
    /// The kernel's events the live lines were computed on (the events final so far, from
    /// the growing source; the last tick's are every page kept, as saved), and whether they
    /// continue the previous tick's: the same rows at the same places with the same
    /// strings, and more after them, so a view may walk only what was added.
    Kernel(Source, bool),
    /// With [`Options::show_logic`], the logic analyzer beside the kernel: every channel so
    /// far as tracks from its first sample, which the host's clocks place `offset_ps` after
    /// the time zero of the kernel snapshot handed with it, as `placed_by` says. Tracks of
    /// another `generation` forgot their oldest changes (a ring): they do not extend the
    /// last ones.
    Logic { source: Source, offset_ps: i64, placed_by: String, generation: u64 },
}

/// Records this machine's kernel (the tracefs found) as `opts` says, telling `live` what
/// it sees; tracefs is put back as found before this returns.
pub fn record(opts: &Options, live: &mut dyn FnMut(&Live)) -> Result<Recording, RecordError> {
    record_with(opts, live, &mut |_| {})
}

/// [`record`], also handing `snapshot` what each tick recorded, for a window that shows it
/// ([`Snapshot`]).
pub fn record_with(
    opts: &Options,
    live: &mut dyn FnMut(&Live),
    snapshot: &mut dyn FnMut(Snapshot),
) -> Result<Recording, RecordError> {
    let fs = match &opts.ssh {
        Some(target) => Tracefs::remote(crate::ssh::Ssh::connect(target)?)?,
        None => Tracefs::find()?,
    };
    record_on(&fs, opts, live, snapshot)
}

/// [`record_with`] on a given tracefs.
pub fn record_on(
    fs: &Tracefs,
    opts: &Options,
    live: &mut dyn FnMut(&Live),
    snapshot: &mut dyn FnMut(Snapshot),
) -> Result<Recording, RecordError> {
    if !opts.triggers.is_empty() && opts.windows_dir.is_none() {
        return Err(RecordError::Usage("--trigger needs -o OUT, the folder its windows are saved in".into()));
    }
    if opts.sigrok.is_some() && fs.remote.is_some() {
        return Err(RecordError::Usage(
            "--sigrok beside --ssh: the board's clock is not this machine's, so host clocks cannot place \
             the logic capture on its kernel's timeline; record them apart and align them on a shared marker"
                .into(),
        ));
    }
    // The device's channels before anything is enabled: the names the analyses read from
    // them are not kernel events, and a device that is missing touches nothing.
    let channels = opts.sigrok.as_ref().map(crate::sigrok::logic_channels).transpose()?;
    let joined;
    let opts = match &channels {
        Some(c) => {
            joined = beside_logic(opts, c);
            &joined
        }
        None => opts,
    };
    let events = resolve_events(fs, &opts.events)?;
    let mut guard = Guard::take(fs, opts.force)?;
    let result = run(fs, &events, opts, channels, live, snapshot, &mut guard);
    let restored = guard.restore();
    let rec = result?;
    restored?;
    Ok(rec)
}

/// Beside a logic analyzer whose logic channels are `channels`: the analyses of `opts.specs`
/// that name a channel, or an event the decoders add, become `joint_specs`, which read the
/// kernel and the logic together as the saved folder's session does; their channels are
/// followed as tracks, and those names are not kernel events to enable.
pub fn beside_logic(opts: &Options, channels: &[String]) -> Options {
    let Some(sigrok) = &opts.sigrok else { return opts.clone() };
    let decoded = latscope_decoders::registry::events_of_stacks(&sigrok.decoders);
    let of_logic = |name: &str| channels.iter().chain(&decoded).any(|n| n == name);
    let (joint, kernel): (Vec<Spec>, Vec<Spec>) =
        opts.specs.iter().cloned().partition(|s| names_read(s).into_iter().any(of_logic));
    let tracks = channels
        .iter()
        .filter(|c| opts.show_logic || joint.iter().any(|s| names_read(s).contains(&c.as_str())))
        .cloned()
        .collect();
    Options {
        events: opts.events.iter().filter(|e| !of_logic(e)).cloned().collect(),
        specs: kernel,
        joint_specs: opts.joint_specs.iter().cloned().chain(joint).collect(),
        sigrok: Some(sigrok.clone().with_tracks(tracks)),
        ..opts.clone()
    }
}

/// The events and tracks `spec` names: a rule's endpoints, a detector's track, and the
/// command and IRQ endpoints given to `cmd-irq` and `chain`.
pub(crate) fn names_read(spec: &Spec) -> Vec<&str> {
    use latscope_analysis::spec::{IrqSel, Preset};
    match spec {
        Spec::Preset(Preset::CmdIrq { opts, .. } | Preset::Chain { opts, .. }) => {
            let irq = match &opts.irq {
                Some(IrqSel::Endpoint(e)) => Some(e.target()),
                _ => None,
            };
            opts.cmd.iter().map(|e| e.target()).chain(irq).collect()
        }
        _ => spec.named_tracks().unwrap_or_default(),
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    fs: &Tracefs,
    events: &[EventName],
    opts: &Options,
    channels: Option<Vec<String>>,
    live: &mut dyn FnMut(&Live),
    snapshot: &mut dyn FnMut(Snapshot),
    guard: &mut Guard,
) -> Result<Recording, RecordError> {
    tracefs::prepare(fs, events)?;
    let mut meta = fs.meta(events)?;
    let decoder = PageDecoder::new(&meta, 0).map_err(|e| RecordError::Decode(e.to_string()))?;
    let page_size = meta.page_size as usize;
    let cpus = meta.cpus as usize;
    let signals = Signals::unless_stoppable(opts);
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Delivery>();
    let mut readers = Vec::new();
    let mut remote_children: Vec<(Child, String)> = Vec::new();
    for cpu in 0..cpus {
        readers.push(spawn_reader(fs, cpu, page_size, tx.clone(), Arc::clone(&stop), &mut remote_children)?);
    }
    drop(tx);
    let mut store = Store::new(cpus, page_size);
    let mut flight = opts.windows_dir.as_ref().map(|dir| Flight::new(opts, dir.clone()));
    fs.write("tracing_on", "1")?;
    // The logic analyzer once tracing is on (the kernel sees sigrok-cli start). Its samples
    // are placed by this machine's monotonic clock, the kernel's; a device that is missing
    // ends the recording before anything was recorded.
    let mut logic = match opts
        .sigrok
        .clone()
        .zip(channels)
        .map(|(spec, channels)| crate::sigrok::LogicCapture::start_on(spec, channels, logic_ring(opts)))
        .transpose()
    {
        Ok(l) => l,
        Err(e) => {
            let _ = fs.write("tracing_on", "0");
            stop.store(true, Ordering::Release);
            for h in readers {
                let _ = h.join();
            }
            return Err(e);
        }
    };
    let mut logic_lines = crate::sigrok::LogicLines::new(&opts.logic_specs);
    let mut joint = Joint::new(opts);
    let started = Instant::now();
    let mut child: Option<Child> = None;
    let mut stopped: Option<Stopped> = None;
    if let Some((program, args)) = opts.command.split_first() {
        let cmd = match &fs.remote {
            // On a board, the command runs there.
            Some(ssh) => {
                let words: Vec<String> = opts.command.iter().map(|w| crate::ssh::quote(w)).collect();
                ssh.command(&words.join(" ")).spawn()
            }
            None => Command::new(program).args(args).spawn(),
        };
        match cmd {
            Ok(c) => child = Some(c),
            Err(error) => {
                stopped = Some(Stopped::Failed(
                    RecordError::Command { command: program.clone(), error }.to_string(),
                ))
            }
        }
    }
    let mut next_tick = started + opts.tick;
    // How long a tick takes, averaged over the last few.
    let mut tick_cost = Duration::ZERO;
    let mut lost = 0u64;
    let mut first_raw: Option<u64> = None;
    let mut following = Following::new(cpus, page_size, &opts.specs);
    let take = |store: &mut Store,
                following: &mut Following,
                delivery: Delivery,
                lost: &mut u64,
                first_raw: &mut Option<u64>| {
        let (cpu, data) = match delivery {
            Delivery::Page(cpu, data) => (cpu, data),
            Delivery::Drained(cpu, at) => return following.drained(cpu, at),
        };
        let Some(span) = decoder.page_span(&data) else { return };
        let (first, last) = (span.first, span.last);
        if let Some(n) = decoder.lost_before(&data) {
            // A page that says only "some were lost" counts one.
            *lost += n.unwrap_or(1);
        }
        if first > 0 {
            *first_raw = Some(first_raw.map_or(first, |f: u64| f.min(first)));
        }
        let mut data = data;
        data.truncate(decoder.used_len(&data));
        following.push(cpu, &data, first, last, span.records > 0);
        store.push(cpu, Page { data, first, last, records: span.records > 0 });
    };
    while stopped.is_none() {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(d) => {
                take(&mut store, &mut following, d, &mut lost, &mut first_raw);
                while let Ok(d) = rx.try_recv() {
                    take(&mut store, &mut following, d, &mut lost, &mut first_raw);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                stopped = Some(Stopped::Failed("every CPU's reader stopped".into()));
            }
        }
        if signals.flag.load(Ordering::Relaxed) {
            stopped = Some(Stopped::Interrupted);
        } else if opts.stop_asked() {
            stopped = Some(Stopped::Asked);
        } else if let Some(c) = child.as_mut()
            && let Ok(Some(status)) = c.try_wait()
        {
            stopped = Some(Stopped::Exited(status));
        } else if opts.duration.is_some_and(|d| started.elapsed() >= d) {
            stopped = Some(Stopped::Duration);
        } else if logic.as_mut().is_some_and(crate::sigrok::LogicCapture::ended) {
            stopped = Some(Stopped::Failed("sigrok-cli ended by itself (was the device unplugged?)".into()));
        } else if let Some(i) = readers.iter().position(JoinHandle::is_finished) {
            let why = match readers.remove(i).join() {
                Ok(Err(e)) => e.to_string(),
                Ok(Ok(())) => "a CPU's reader ended".to_owned(),
                Err(_) => "a CPU's reader panicked".to_owned(),
            };
            stopped = Some(Stopped::Failed(why));
        }
        if stopped.is_none() && Instant::now() >= next_tick {
            let began = Instant::now();
            meta.cmdlines = fs.read("saved_cmdlines").unwrap_or_default();
            let sinks = Sinks { live: &mut *live, snapshot: &mut *snapshot };
            let at = Moment {
                started,
                lost,
                first_raw,
                last: false,
                capture: logic.as_ref().map(|c| (c, &mut logic_lines)),
                joint: &mut joint,
            };
            tick(&meta, &decoder, &mut store, &mut following, opts, flight.as_mut(), at, sinks);
            // A tick reads what is new, but analyses that run whole read everything: when
            // ticks grow slow, tick less often, so the live lines take at most about a
            // quarter of a core. The pace follows ticks' running cost, so that one slow
            // tick (a handover) does not hold the next line back four times as long.
            let took = began.elapsed();
            tick_cost = (tick_cost * 3 + took) / 4;
            next_tick = began + opts.tick.max(tick_cost * 4);
        }
    }
    let elapsed = started.elapsed();
    // sigrok-cli stops now; its samples stay with the capture until the last windows are cut.
    if let Some(Err(e)) = logic.as_mut().map(crate::sigrok::LogicCapture::halt) {
        stopped = Some(Stopped::Failed(format!("the logic analyzer: {e}")));
        logic = None;
    }
    // Tracing off first, so the readers' last pass empties a buffer that no longer grows.
    let off = fs.write("tracing_on", "0");
    stop.store(true, Ordering::Release);
    if let Some(ssh) = &fs.remote {
        // A board's `cat`s block on an empty buffer: give them time to pass on what is
        // left, end them there (their streams then end after the last byte), and wait for
        // the readers to reach that end.
        std::thread::sleep(Duration::from_millis(300));
        // Each stream's shell leads a process group (sshd starts a session): end it and its
        // `cat` together.
        let groups: Vec<String> = remote_children.iter().map(|(_, pid)| format!("-{pid}")).collect();
        let _ = ssh.run(&format!("kill -s TERM -- {} 2>/dev/null; true", groups.join(" ")));
        let deadline = Instant::now() + Duration::from_secs(5);
        while readers.iter().any(|h| !h.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for (c, _) in &mut remote_children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    let mut failure = None;
    for h in readers {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                failure.get_or_insert(e.to_string());
            }
            Err(_) => {
                failure.get_or_insert("a CPU's reader panicked".to_owned());
            }
        }
    }
    while let Ok(d) = rx.try_recv() {
        take(&mut store, &mut following, d, &mut lost, &mut first_raw);
    }
    let mut stopped = stopped.unwrap_or(Stopped::Interrupted);
    if let (Some(f), Stopped::Interrupted | Stopped::Duration | Stopped::Asked) = (&failure, &stopped) {
        stopped = Stopped::Failed(f.clone());
    }
    if let Some(mut c) = child.take()
        && !matches!(stopped, Stopped::Exited(_))
    {
        // The command outlived the recording (--duration, Ctrl-C): it keeps running; say
        // its status if it has one by now.
        if let Ok(Some(status)) = c.try_wait() {
            stopped = Stopped::Exited(status);
        }
    }
    if let Err(e) = off
        && !matches!(stopped, Stopped::Failed(_))
    {
        // A board that cannot be reached any more: what arrived is kept, and the restore
        // below says whether tracefs could be put back.
        stopped = Stopped::Failed(e.to_string());
    }
    meta.cmdlines = fs.read("saved_cmdlines").unwrap_or_default();
    meta.cpu_stats = fs.cpu_stats(meta.cpus);
    meta.kallsyms = fs.kallsyms();
    // tracefs goes back before the last statistics, which may take a while: tracing is
    // off meanwhile, and a program writing trace_marker would get EBADF. A board whose
    // connection dropped cannot be put back: what arrived is kept all the same.
    let unrestored =
        guard.restore().err().map(|e| format!("could not put tracefs back on {}: {e}", fs.machine()));
    let sinks = Sinks { live, snapshot };
    let at = Moment {
        started,
        lost,
        first_raw,
        last: true,
        capture: logic.as_ref().map(|c| (c, &mut logic_lines)),
        joint: &mut joint,
    };
    let (events_seen, stats) =
        tick(&meta, &decoder, &mut store, &mut following, opts, flight.as_mut(), at, sinks);
    let logic = match logic.map(crate::sigrok::LogicCapture::stop).transpose() {
        Ok(l) => l,
        Err(e) => {
            stopped = Stopped::Failed(format!("the logic analyzer: {e}"));
            None
        }
    };
    let (crossings, saved) = match flight {
        Some(f) => (f.crossings, f.saved),
        None => (0, Vec::new()),
    };
    let recording = Recording {
        pages: store.joined(),
        meta,
        stopped,
        elapsed,
        events: events_seen,
        lost,
        stats,
        crossings,
        saved,
        unrestored,
        logic,
        align: opts.align.clone(),
        joint_specs: opts.joint_specs.clone(),
        live_restarts: following.restarts,
        live_handovers: following.handovers,
        events_read: following.read,
        late_by_ns: following.late_by_ns,
        last_decoded_again: following.decoded_again,
        notes: fs.remote.as_ref().and_then(|ssh| ssh.reads().note(&ssh.dest)).into_iter().collect(),
    };
    // The live sources hold up to two rings' worth of events and samples, millions of
    // allocations: the caller has the recording without waiting for them (a command line
    // that exits meanwhile never does).
    free_elsewhere(following);
    Ok(recording)
}

/// Drops `value` on a thread of its own: freeing millions of allocations takes seconds,
/// and whoever holds it need not wait. With no thread to spare, it is freed here.
fn free_elsewhere<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new().name("latscope-free".into()).spawn(move || drop(value));
}

/// Each spec's answer over the live source, as `LiveAnalyses::stand` gives it.
type Answers = Vec<Result<Vec<Standing>, latscope_analysis::measure::AnalysisError>>;

/// What the live lines follow between ticks: the recorded events as a growing source, and
/// the analyses reading what it appends.
///
/// With a ring, the source cannot keep growing, and starting it again from the kept pages
/// decodes and analyses the whole ring in one tick. So when the ring first drops pages
/// the current source holds, a **successor** starts, empty, and is fed the same pages
/// from then on, its analyses reading along. Once the ring has dropped everything that
/// came before the successor, it takes over. Every page is then decoded and analysed
/// about twice, but at an even pace (the successor on a second thread): the live lines
/// cover between one and two rings' worth of the newest data, and no tick reads more than
/// what arrived since the one before.
struct Following {
    current: Generation,
    successor: Option<Generation>,
    /// Starts from the kept pages after a record arrived behind the watermark.
    restarts: u64,
    /// Successors that took over.
    handovers: u64,
    /// Events the live source appended, over every generation.
    read: u64,
    late_by_ns: u64,
    /// The generation (restarts plus handovers) when a tick last handed the source on.
    handed: Option<u64>,
    /// The last tick decoded the kept pages again.
    decoded_again: bool,
}

/// One growing source and the analyses reading it.
struct Generation {
    growing: Growing,
    analyses: LiveAnalyses,
    /// The store's pushed bytes (kept plus dropped) when this source started: it holds
    /// the pages pushed since.
    from: u64,
    /// Whether it started from exactly the pages the store kept, which had dropped this
    /// many bytes: then, while nothing more is dropped, it holds exactly the kept pages.
    kept_when: Option<u64>,
    /// Per CPU, the number of the first page it holds (`Store::pushed_pages` counts them).
    first_page: Vec<u64>,
}

impl Following {
    fn new(cpus: usize, page_size: usize, specs: &[Spec]) -> Following {
        Following {
            current: Generation {
                growing: Growing::new(cpus, page_size),
                analyses: LiveAnalyses::for_standing(specs.to_vec()),
                from: 0,
                kept_when: Some(0),
                first_page: vec![0; cpus],
            },
            successor: None,
            restarts: 0,
            handovers: 0,
            read: 0,
            late_by_ns: 0,
            handed: None,
            decoded_again: false,
        }
    }

    /// Takes a page into the current source and its successor.
    fn push(&mut self, cpu: usize, page: &[u8], first: u64, last: u64, records: bool) {
        self.current.growing.push(cpu, page, first, last, records);
        if let Some(s) = self.successor.as_mut() {
            s.growing.push(cpu, page, first, last, records);
        }
    }

    /// Says that `cpu`'s reader found its buffer empty at raw time `at`.
    fn drained(&mut self, cpu: usize, at: u64) {
        self.current.growing.drained(cpu, at);
        if let Some(s) = self.successor.as_mut() {
            s.growing.drained(cpu, at);
        }
    }

    /// How many times the live source was replaced, so that a tick knows whether it
    /// continues the one before.
    fn generation(&self) -> u64 {
        self.restarts + self.handovers
    }

    /// The events final so far and the analyses' answers on them, the successor brought
    /// up to date beside them on a second thread (type doc). A record that arrived behind
    /// the current source starts it again from the pages `store` keeps; one behind the
    /// successor starts the successor again.
    fn answer(&mut self, meta: &KernelMeta, decoder: &PageDecoder, store: &Store) -> (Source, Answers) {
        let pushed = store.bytes + store.dropped;
        let mut retired = None;
        if self.current.growing.late() > 0 {
            let mut growing = self.current.growing.renew();
            for (cpu, pages) in store.cpus.iter().enumerate() {
                for p in pages {
                    growing.push(cpu, &p.data, p.first, p.last, p.records);
                }
            }
            self.late_by_ns = self.late_by_ns.max(self.current.growing.late_by_ns());
            self.current.growing = growing;
            self.current.analyses.reset();
            self.current.from = store.dropped;
            self.current.kept_when = Some(store.dropped);
            self.current.first_page = store.dropped_pages.clone();
            self.successor = None;
            self.restarts += 1;
        }
        if let Some(s) = self.successor.as_ref()
            && s.growing.late() > 0
        {
            self.late_by_ns = self.late_by_ns.max(s.growing.late_by_ns());
            self.successor = None;
        }
        // Once the ring has dropped every page that came before the successor, on every
        // CPU, the successor holds all that is kept.
        let before_gone = |s: &Generation| s.first_page.iter().zip(&store.dropped_pages).all(|(f, d)| d >= f);
        if self.successor.as_ref().is_some_and(before_gone)
            && let Some(s) = self.successor.take()
        {
            retired = Some(std::mem::replace(&mut self.current, s));
            self.handovers += 1;
        }
        if self.successor.is_none() && store.dropped > self.current.from {
            self.successor = Some(Generation {
                growing: self.current.growing.renew(),
                analyses: LiveAnalyses::for_standing(self.current.analyses.specs().cloned().collect()),
                from: pushed,
                kept_when: None,
                first_page: store.pushed_pages.clone(),
            });
        }
        let Following { current, successor, read, .. } = self;
        // The two sources share nothing: the successor reads along on a second core, so a
        // tick with a ring takes about as long as one without.
        let answered = std::thread::scope(|scope| {
            if let Some(next) = successor.as_mut() {
                scope.spawn(|| {
                    next.growing.advance(meta);
                    if let Some(src) = next.growing.snapshot() {
                        next.analyses.follow(&src);
                    }
                });
            }
            *read += current.growing.advance(meta) as u64;
            let src = current.growing.snapshot().unwrap_or_else(|| decoder.empty_source());
            let answers = current.analyses.stand(&src);
            (src, answers)
        });
        // The replaced source holds up to two rings' worth of events and samples, millions
        // of allocations. Freed on this thread, they made the tick of a handover seconds
        // long; freed on another while this one answered, the two fought over the
        // allocator and the second core, and the tick still took four times as long. So
        // they go once the answer is made, in the time between two ticks.
        if let Some(old) = retired {
            free_elsewhere(old);
        }
        answered
    }

    /// Every kept page's events, as the saved trace.dat holds them, from the growing
    /// source (none late): the rest appended and the task names the last `saved_cmdlines`
    /// gives. When it holds exactly those pages (it started from them, none dropped since),
    /// the analyses go on, or read it anew if a task name changed; when it also holds pages
    /// the ring dropped since, it lets go of their rows and the analyses read it anew.
    /// `None` when the pages must be decoded again.
    fn finish(&mut self, meta: &KernelMeta, store: &Store) -> Option<Source> {
        if self.current.growing.late() > 0 {
            return None;
        }
        // Once the ring dropped pages this source holds, it serves only if it started at
        // or before each CPU's first kept page, and the rows of the dropped ones can be
        // told apart by time: each CPU's first kept record comes after its last dropped.
        let exact = self.current.kept_when == Some(store.dropped);
        if !exact && !self.holds_the_kept_pages_and_more(store) {
            return None;
        }
        let before = self.current.growing.appended();
        let renamed = self.current.growing.finish(meta);
        self.read += (self.current.growing.appended() - before) as u64;
        if exact {
            if renamed > 0 {
                self.current.analyses.reset();
            }
            return self.current.growing.snapshot();
        }
        // Another source: the analyses read it from its beginning.
        self.current.analyses.reset();
        self.current.growing.snapshot_after(meta, &store.last_dropped)
    }

    /// Whether the current source holds every page `store` keeps, and the records of the
    /// pages it dropped are each CPU's up to its last dropped record time.
    fn holds_the_kept_pages_and_more(&self, store: &Store) -> bool {
        (0..store.cpus.len()).all(|cpu| {
            let from_first = self.current.first_page.get(cpu).is_some_and(|&f| f <= store.dropped_pages[cpu]);
            let first_kept = store.cpus[cpu].iter().find(|p| p.records).map(|p| p.first);
            let apart = match (store.last_dropped[cpu], first_kept) {
                (Some(dropped), Some(kept)) => kept > dropped,
                _ => true,
            };
            from_first && apart
        })
    }
}

/// The analyses that read the kernel and the logic together (`joint_specs`), kept from
/// tick to tick: over the kernel's events so far, and the logic's followed channels and
/// decoded events, placed on the kernel's timeline by the host's clocks as the saved
/// session places them. A pair rule from a kernel event to a channel's edge or a decoded
/// event (or back) reads only what is new ([`AcrossStanding`]), and so does one between a
/// channel's edge and a decoded event; a rule between two channels' edges and a channel's
/// pulses, long phases, stalls and polling runs read the channels alone ([`LiveAnalyses`]).
/// The others, and the last line, run whole as `latscope report` runs the two saved files.
pub(crate) struct Joint {
    items: Vec<JointItem>,
    /// The generations the standings across read (the kernel source's, the tracks', the
    /// decode's): another of any does not extend what was read.
    read: Option<(u64, u64, Option<u64>)>,
    /// The tracks' generation the analyses of the channels alone read.
    tracks_read: Option<u64>,
}

struct JointItem {
    spec: Spec,
    reading: Reading,
}

/// How a joint analysis reads what arrives between ticks.
enum Reading {
    /// A pair rule across, read as it arrives; `reads_decoded` when its logic endpoint is
    /// a decoded event rather than a channel's edge.
    Across { standing: AcrossStanding, reads_decoded: bool },
    /// A `cmd-irq` whose command is the logic's and whose IRQ number is chosen as the
    /// commands and the kernel's IRQs arrive.
    CmdIrq { standing: CmdIrqStanding, reads_decoded: bool },
    /// It names channels only: it reads the followed tracks alone, as they grow. Its times
    /// are the logic's, as the runner gives them over both sources.
    Channels(LiveAnalyses),
    /// A pair rule between a channel's edge and a decoded event, read as they arrive over
    /// the logic source alone: the tracks and the decode grow to different reaches, so
    /// what lies past the earlier of the two waits. Its times are the logic's.
    Logic(AcrossStanding),
    /// Run whole each tick.
    Whole,
}

/// What a tick's joint analyses read of the logic: its source (the decoded events, to which
/// the tracks are added), and, while the decode grows, the time before which it is complete
/// and its generation.
pub(crate) struct LogicSoFar {
    pub decoded: Option<Source>,
    pub growth: Option<(Ps, u64)>,
}

impl Joint {
    pub(crate) fn new(opts: &Options) -> Joint {
        match &opts.sigrok {
            Some(s) => Joint::of(&opts.joint_specs, &s.tracks, &s.decoders),
            None => Joint::of(&opts.joint_specs, &[], &[]),
        }
    }

    /// The analyses `specs` over the logic's followed `channels` and the events its
    /// `decoders` add, and the kernel.
    pub(crate) fn of(specs: &[Spec], channels: &[String], decoders: &[String]) -> Joint {
        let decoded = latscope_decoders::registry::events_of_stacks(decoders);
        let channel_edge = |ep: &latscope_analysis::endpoint::Endpoint| {
            matches!(ep, latscope_analysis::endpoint::Endpoint::Edge { .. })
                && channels.iter().any(|c| c == ep.target())
        };
        let decoded_event = |ep: &latscope_analysis::endpoint::Endpoint| {
            matches!(ep, latscope_analysis::endpoint::Endpoint::Event { .. })
                && decoded.iter().any(|d| d == ep.target())
        };
        let of_logic = |ep: &latscope_analysis::endpoint::Endpoint| channel_edge(ep) || decoded_event(ep);
        // A detector whose track is a channel (a bare name the kernel lacks is a channel's
        // rising edge, as the runner reads it).
        let of_channels = |spec: &Spec| {
            let names = names_read(spec);
            !names.is_empty() && names.iter().all(|n| channels.iter().any(|c| c == n))
        };
        let items = specs
            .iter()
            .map(|spec| {
                // A cmd-irq whose command and IRQ are given is a pair rule (policy next).
                let rule = match spec {
                    Spec::Pair(rule) => Some(rule.clone()),
                    Spec::Preset(Preset::CmdIrq { name, opts }) => cmd_irq_rule(name, opts),
                    _ => None,
                };
                let choosing = match spec {
                    Spec::Preset(Preset::CmdIrq { name, opts }) => CmdIrqStanding::new(name, opts),
                    _ => None,
                };
                let reading = match (spec, rule, choosing) {
                    (_, Some(rule), _) if of_logic(&rule.start) != of_logic(&rule.end) => Reading::Across {
                        reads_decoded: decoded_event(&rule.start) || decoded_event(&rule.end),
                        standing: AcrossStanding::new(rule),
                    },
                    (_, _, Some(standing)) if standing.command().is_some_and(of_logic) => Reading::CmdIrq {
                        reads_decoded: standing.command().is_some_and(decoded_event),
                        standing,
                    },
                    (_, Some(rule), _)
                        if (channel_edge(&rule.start) && decoded_event(&rule.end))
                            || (decoded_event(&rule.start) && channel_edge(&rule.end)) =>
                    {
                        Reading::Logic(AcrossStanding::new(rule))
                    }
                    (Spec::Pair(rule), ..) if channel_edge(&rule.start) && channel_edge(&rule.end) => {
                        Reading::Channels(LiveAnalyses::for_standing(vec![spec.clone()]))
                    }
                    (Spec::Pulse { .. } | Spec::Stall { .. } | Spec::Long { .. } | Spec::Poll { .. }, ..)
                        if of_channels(spec) =>
                    {
                        Reading::Channels(LiveAnalyses::for_standing(vec![spec.clone()]))
                    }
                    _ => Reading::Whole,
                };
                JointItem { spec: spec.clone(), reading }
            })
            .collect();
        Joint { items, read: None, tracks_read: None }
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Each analysis's standings, with the index of the source their times are in (0 the
    /// kernel, 1 the logic), and a line each, over `kernel` (of generation `generation`)
    /// and what `capture` has so far; `whole` runs every one whole.
    fn lines(
        &mut self,
        kernel: &Source,
        generation: u64,
        capture: &crate::sigrok::LogicCapture,
        so_far: LogicSoFar,
        whole: bool,
    ) -> (Vec<(usize, Standing)>, Vec<LiveStat>) {
        let Some(placed) = capture.placement() else {
            let waiting =
                self.items.iter().map(|i| LiveStat::unanswered(i.spec.name(), "no logic samples yet"));
            return (Vec::new(), waiting.collect());
        };
        self.lines_over(kernel, generation, placed.at_ns, capture.tracks(), so_far, whole)
    }

    /// [`Joint::lines`] over the logic's followed `tracks` (of generation
    /// `tracks_generation`) whose first sample was taken at `logic_at_ns` (host monotonic).
    pub(crate) fn lines_over(
        &mut self,
        kernel: &Source,
        generation: u64,
        logic_at_ns: u64,
        (tracks, tracks_generation): (Vec<latscope_model::DigitalTrack>, u64),
        so_far: LogicSoFar,
        whole: bool,
    ) -> (Vec<(usize, Standing)>, Vec<LiveStat>) {
        let mut logic = so_far.decoded.unwrap_or_else(crate::sigrok::logic_source);
        let logic_end = tracks.first().map(|t| t.end);
        // The channels alone, for the analyses that read nothing else: the decoded events
        // grow to another reach than the tracks, and a source must only grow at its end.
        let mut channels = crate::sigrok::logic_source();
        channels.digital = tracks.clone().into();
        let at = Placement::new(logic_offset_ps(kernel, logic_at_ns), 0.0);
        let generations = (generation, tracks_generation, so_far.growth.map(|(_, g)| g));
        if self.read != Some(generations) {
            for item in &mut self.items {
                match &mut item.reading {
                    Reading::Across { standing, .. } | Reading::Logic(standing) => standing.reset(),
                    Reading::CmdIrq { standing, .. } => standing.reset(),
                    _ => {}
                }
            }
            self.read = Some(generations);
        }
        // Tracks that forgot their oldest changes start again from what they keep.
        if self.tracks_read != Some(tracks_generation) {
            for item in &mut self.items {
                if let Reading::Channels(analyses) = &mut item.reading {
                    analyses.reset();
                }
            }
            self.tracks_read = Some(tracks_generation);
        }
        let tracks_complete = logic_end.map_or(Ps::MIN, |e| at.to_common(e));
        // The common time before which the decode holds every annotation it will: `None`
        // for a decode that cannot say which are final.
        let decode_complete =
            so_far.growth.map(|(reach, _)| if reach == Ps::MAX { Ps::MAX } else { at.to_common(reach) });
        logic.digital = tracks.into();
        let sources = [Placed::new(kernel, Placement::IDENTITY), Placed::new(&logic, at)];
        // Nothing more arrives before the kernel's last event, nor before the last sample
        // or the decode's reach, whichever the rule reads.
        let kernel_complete = kernel.events.ts.last().copied().unwrap_or(Ps::MIN);
        let (mut standings, mut lines) = (Vec::new(), Vec::new());
        // The common time before which both sources hold all they will: the kernel's last
        // event, and the tracks' last sample or the decode's reach, whichever is read;
        // `None` for a decode that cannot say which annotations are final (read whole).
        let complete = |reads_decoded: bool| -> Option<Ps> {
            let logic = match (reads_decoded, decode_complete) {
                (false, _) => tracks_complete,
                (true, Some(decoded)) => decoded,
                (true, None) => return None,
            };
            Some(kernel_complete.min(logic))
        };
        for item in &mut self.items {
            let spec = std::slice::from_ref(&item.spec);
            // What is new, read as it arrives, with the index of the source its times are
            // in (the one the starts, the commands, are in); `None` to run it whole.
            let read_new = match &mut item.reading {
                _ if whole => None,
                Reading::Across { standing, reads_decoded } => complete(*reads_decoded).map(|complete| {
                    let home = if standing.rule().start.present_in(&sources[0]) { 0 } else { 1 };
                    (home, vec![standing.stand(&sources, complete).map(|s| vec![s])])
                }),
                Reading::CmdIrq { standing, reads_decoded } => complete(*reads_decoded).map(|complete| {
                    let home =
                        if standing.command().is_some_and(|c| c.present_in(&sources[0])) { 0 } else { 1 };
                    (home, vec![standing.stand(&sources, complete).map(|s| vec![s])])
                }),
                Reading::Channels(analyses) => Some((1, analyses.stand(&channels))),
                // Over the logic alone, complete to the earlier of the two reaches.
                Reading::Logic(standing) => decode_complete.map(|decoded| {
                    let complete = tracks_complete.min(decoded);
                    (1, vec![standing.stand(&sources[1..], complete).map(|s| vec![s])])
                }),
                Reading::Whole => None,
            }
            .map(|(home, answers)| {
                let (s, l) = stats::lines_of(spec, answers);
                (s.into_iter().map(|s| (home, s)).collect(), l)
            });
            let (s, l) = read_new.unwrap_or_else(|| stats::run_placed(spec, &sources, Scope::Together));
            standings.extend(s);
            lines.extend(l);
        }
        (standings, lines)
    }
}

/// Where a logic capture whose first sample was taken at `at_ns` (host monotonic ns, the
/// kernel's `mono` clock) sits on `kernel`'s timeline: picoseconds after its time zero.
fn logic_offset_ps(kernel: &Source, at_ns: u64) -> i64 {
    let origin_ps = i128::from(kernel.origin.secs) * 1_000_000_000_000 + i128::from(kernel.origin.ps);
    i64::try_from(i128::from(at_ns) * 1000 - origin_ps).unwrap_or(0)
}

/// When a tick happens: the recording's start, the events lost so far, the first raw time,
/// whether it is the last, and the logic analyzer's line.
struct Moment<'a> {
    started: Instant,
    lost: u64,
    first_raw: Option<u64>,
    last: bool,
    /// The logic analyzer beside the kernel: its line, its decoders' analyses, and the
    /// samples the windows cut too.
    capture: Option<(&'a crate::sigrok::LogicCapture, &'a mut crate::sigrok::LogicLines)>,
    /// The analyses of the kernel and the logic together.
    joint: &'a mut Joint,
}

/// Where a tick's answers go: the live lines, and the events they were computed on.
struct Sinks<'a> {
    live: &'a mut dyn FnMut(&Live),
    snapshot: &'a mut dyn FnMut(Snapshot),
}

/// One tick: append what is final, run the analyses on it, feed the flight recorder (which saves
/// the windows that are complete), let the ring drop what it no longer holds, and say the
/// statistics. Between ticks the ring may hold one tick's data beyond its size, so that
/// every pair is seen by the triggers.
#[allow(clippy::too_many_arguments)]
fn tick(
    meta: &KernelMeta,
    decoder: &PageDecoder,
    store: &mut Store,
    following: &mut Following,
    opts: &Options,
    mut flight: Option<&mut Flight>,
    at: Moment<'_>,
    sinks: Sinks<'_>,
) -> (u64, Vec<LiveStat>) {
    let Sinks { live, snapshot } = sinks;
    let Moment { started, lost, first_raw, last, capture, joint } = at;
    // The last line reads what is saved: the ring as it is trimmed (never what a pending
    // window or the triggers still need), and nothing is trimmed after it.
    if last {
        store.trim(opts.ring, flight.as_deref().and_then(Flight::keep_from));
    }
    // The last tick reads the growing source to its end when it holds what the saved
    // file holds, and decodes the kept pages again only when it does not.
    let (whole, answers) = match last {
        false => {
            let (src, answers) = following.answer(meta, decoder, store);
            (Ok(src), Some(answers))
        }
        true => match following.finish(meta, store) {
            Some(src) => {
                let answers = following.current.analyses.stand(&src);
                (Ok(src), Some(answers))
            }
            None => {
                following.decoded_again = true;
                (decode_all(meta, &store.joined()), None)
            }
        },
    };
    let (source, standings, mut lines): (Option<Source>, Vec<Standing>, Vec<LiveStat>) = match whole {
        Ok(src) => {
            let (o, l) = match answers {
                Some(answers) => stats::lines_of(&opts.specs, answers),
                None => stats::run(&opts.specs, &src),
            };
            (Some(src), o, l)
        }
        Err(e) => {
            let line = LiveStat::unanswered("(decode)", e);
            (None, Vec::new(), vec![line])
        }
    };
    // The decoders' analyses over what the logic analyzer decoded so far; their times count
    // from its first sample, which the host's clock places at `at_ns` on the kernel's.
    let (logic, logic_standings, capture, so_far) = match capture {
        Some((c, logic_lines)) => {
            let t = logic_lines.tick(c, last);
            lines.extend(t.lines);
            let so_far = LogicSoFar { decoded: t.decoded, growth: t.decoded_growth };
            (Some(LogicLive::of(c, t.decoders)), t.standings, Some(c), so_far)
        }
        None => (None, Vec::new(), None, LogicSoFar { decoded: None, growth: None }),
    };
    // The analyses of the kernel and the logic together, after the logic's own.
    let joint = match (capture, source.as_ref()) {
        (Some(c), Some(src)) if !joint.is_empty() => {
            let (standings, joint_lines) = joint.lines(src, following.generation(), c, so_far, last);
            lines.extend(joint_lines);
            standings
        }
        _ => Vec::new(),
    };
    let events = source.as_ref().map_or(0, |s| s.events.len() as u64);
    let mut said = Vec::new();
    if let (Some(f), Some(src)) = (flight.as_deref_mut(), source.as_ref()) {
        let origin_ns =
            (src.origin.secs as i128 * 1_000_000_000 + i128::from(src.origin.ps / PS_PER_NS)) as u64;
        f.observe(&standings, origin_ns, store.newest, first_raw.unwrap_or(origin_ns), last);
        if let Some(placed) = capture.and_then(crate::sigrok::LogicCapture::placement) {
            f.observe(&logic_standings, placed.at_ns, store.newest, first_raw.unwrap_or(origin_ns), last);
            // A joint analysis's times are those of the source its starts are in.
            let (of_logic, of_kernel): (Vec<_>, Vec<_>) = joint.into_iter().partition(|(i, _)| *i == 1);
            let untag = |v: Vec<(usize, Standing)>| v.into_iter().map(|(_, s)| s).collect::<Vec<_>>();
            f.observe(&untag(of_kernel), origin_ns, store.newest, first_raw.unwrap_or(origin_ns), last);
            f.observe(&untag(of_logic), placed.at_ns, store.newest, first_raw.unwrap_or(origin_ns), last);
        }
        said = f.save_due(meta, decoder, store, capture, last);
        // The logic analyzer's ring keeps what a window waits for and what the triggers
        // have not looked at yet, on its own clock.
        if let Some(c) = capture
            && let (Some(rate), Some(placed)) = (c.spec.samplerate_hz(), c.placement())
        {
            let needed = f.needed_from(store.newest).saturating_sub(placed.at_ns);
            c.keep_from(Some(crate::sigrok::samples_in(needed, rate)));
            c.forget_tracks_before_kept();
        }
    }
    // The last tick trimmed first (below): its pages are what is saved.
    if !last {
        store.trim(opts.ring, flight.as_deref().and_then(Flight::keep_from));
    }
    live(&Live::Stats {
        elapsed_s: started.elapsed().as_secs_f64(),
        events,
        lost,
        kept_bytes: store.bytes,
        analyses: lines.clone(),
        logic,
        last,
    });
    for s in &said {
        live(s);
    }
    if let Some(src) = source {
        // The logic beside the kernel follows it, placed on its time zero.
        let logic = capture.filter(|_| opts.show_logic).and_then(|c| {
            let placed = c.placement()?;
            let (logic, generation) = c.tracks_source();
            let offset_ps = logic_offset_ps(&src, placed.at_ns);
            let placed_by = placed_by(placed.uncertainty_ns);
            Some(Snapshot::Logic { source: logic, offset_ps, placed_by, generation })
        });
        let continues = !last && following.handed == Some(following.generation());
        following.handed = (!last).then_some(following.generation());
        snapshot(Snapshot::Kernel(src, continues));
        if let Some(logic) = logic {
            snapshot(logic);
        }
    }
    (events, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_sizes_and_durations() {
        assert_eq!(Ring::parse("64MiB").unwrap(), Ring::Bytes(64 << 20));
        assert_eq!(Ring::parse("512KiB").unwrap(), Ring::Bytes(512 << 10));
        assert_eq!(Ring::parse("1GiB").unwrap(), Ring::Bytes(1 << 30));
        assert_eq!(Ring::parse("30s").unwrap(), Ring::Nanos(30_000_000_000));
        assert_eq!(Ring::parse("500ms").unwrap(), Ring::Nanos(500_000_000));
        for bad in ["", "0MiB", "lots", "-3s", "12 parsecs"] {
            assert!(Ring::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn beside_a_logic_analyzer_what_names_its_channels_or_decoded_events_reads_both() {
        use latscope_analysis::spec::{parse_spec, preset_spec};
        let specs = vec![
            preset_spec("wakeup").unwrap(),
            parse_spec("gpio=print[text~go] -> D0:rise").unwrap(),
            preset_spec("cmd-irq:cmd=D2:fall").unwrap(),
            parse_spec("sd=sd_cmd -> irq_handler_entry").unwrap(),
            parse_spec("k=sched_switch -> sched_wakeup").unwrap(),
        ];
        let sigrok = crate::sigrok::SigrokSpec::parse("demo:samplerate=1M")
            .unwrap()
            .with_decoders(vec!["sd:clk=D4,cmd=D5".into()]);
        let opts =
            Options { events: stats::events_for(&specs), specs, sigrok: Some(sigrok), ..Options::default() };
        let channels: Vec<String> = (0..8).map(|i| format!("D{i}")).collect();
        let split = beside_logic(&opts, &channels);
        let names = |v: &[Spec]| v.iter().map(|s| s.name().to_owned()).collect::<Vec<_>>();
        assert_eq!(names(&split.specs), ["wakeup", "k"]);
        assert_eq!(names(&split.joint_specs), ["gpio", "cmd-irq:cmd=D2:fall", "sd"]);
        assert_eq!(split.sigrok.as_ref().unwrap().tracks, ["D0", "D2"]);
        for logic in ["D0", "sd_cmd"] {
            assert!(opts.events.iter().any(|e| e == logic), "{logic} was asked: {:?}", opts.events);
            assert!(!split.events.iter().any(|e| e == logic), "{logic} is not a kernel event");
        }
        assert!(split.events.iter().any(|e| e == "irq_handler_entry"), "{:?}", split.events);
        // Without a logic analyzer nothing moves.
        let alone = Options { sigrok: None, ..opts.clone() };
        assert_eq!(beside_logic(&alone, &channels).specs.len(), 5);
    }

    fn page(first: u64, last: u64) -> Page {
        Page { data: vec![0; 100], first, last, records: true }
    }

    #[test]
    fn a_ring_drops_the_oldest_pages_but_never_those_a_pending_window_needs() {
        let mut s = Store::new(2, 128);
        for i in 0..10u64 {
            s.push((i % 2) as usize, page(i * 10, i * 10 + 9));
        }
        s.trim(Ring::Bytes(500), None);
        assert_eq!(s.bytes, 500);
        let firsts: Vec<u64> = s.cpus.iter().flat_map(|q| q.iter().map(|p| p.first)).collect();
        assert_eq!(firsts, [60, 80, 50, 70, 90], "the five newest pages stay");
        s.trim(Ring::Bytes(100), Some(65));
        let kept: Vec<u64> = s.cpus.iter().flat_map(|q| q.iter().map(|p| p.first)).collect();
        assert_eq!(kept, [60, 80, 70, 90], "the page ending at 69 holds data from 65 on");
        s.trim(Ring::Nanos(15), None);
        let kept: Vec<u64> = s.cpus.iter().flat_map(|q| q.iter().map(|p| p.first)).collect();
        assert_eq!(kept, [80, 90], "pages ending more than 15 ns before the newest (99) go");
    }
}
