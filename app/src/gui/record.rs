//! The record window (*File > Record…*, issue 30): what to record — the kernel of this
//! machine or of a board over SSH, the presets and rules whose events are enabled and whose
//! statistics are shown live, more events, a logic analyzer through sigrok, the flight
//! recorder's triggers, keep and ring, where to save — and the recording going on: its live
//! lines (count, p50, p99, max per analysis), the events lost, the crossings, and the
//! source it grows on the timeline.
//!
//! This module owns the window's state ([`RecordState`]) and the form ([`RecordForm`]),
//! which says its request in `latscope record`'s words ([`RecordForm::request`]) so the
//! recorder's one [`latscope_record::plan`] checks both front ends alike. Its messages are
//! `RecordMsg` (in `message.rs`), handled in `update/record.rs`; the window is
//! `views::record`; the recording runs as a job (`workers::record`), stopped by a message
//! that sets its stop flag.

use super::document::SourceId;
use super::jobs::Ticket;
use latscope_engine::Registry;
use latscope_record::sigrok::SigrokSpec;
use latscope_record::{LiveStat, LogicLive, Request};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// Which kernel is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Machine {
    /// This machine's tracefs.
    #[default]
    Local,
    /// A board over SSH (`ssh_host`).
    Ssh,
    /// No kernel: the logic analyzer alone.
    None,
}

/// The form, as edited: each field as typed, in `latscope record`'s words.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordForm {
    pub machine: Machine,
    /// `[USER@]HOST[:PORT]`.
    pub ssh_host: String,
    /// Presets whose events are recorded and whose statistics are shown (`block`, `mmc`).
    pub presets: Vec<String>,
    /// Rule specs, one a line.
    pub rules: String,
    /// More events, comma-separated.
    pub events: String,
    /// A sigrok device, `DRIVER[:key=value…]` (empty: none).
    pub sigrok: String,
    /// Native decoder stacks run on the logic stream, one a line (`--decoder`).
    pub decoders: String,
    /// Beside the kernel: the shared markers that fit the logic capture's placement
    /// (`--align`, `REF_ENDPOINT -> ENDPOINT [drift]`; empty: host clocks).
    pub align: String,
    /// Stop after this long (empty: at Stop).
    pub duration: String,
    /// `ANALYSIS>DURATION`, comma-separated.
    pub triggers: String,
    pub keep: String,
    pub ring: String,
    pub max_saves: String,
    /// Where the capture is saved (empty: not saved); with triggers, the windows' folder.
    pub output: String,
    /// Record even when another tracer has the buffer.
    pub force: bool,
}

/// What the form asks for, checked: the recorder's request (its analyses resolved by the
/// registry) and the logic analyzer, if any.
#[derive(Debug, Clone)]
pub struct Asked {
    pub request: Request,
    pub sigrok: Option<SigrokSpec>,
    /// Whether a kernel is recorded (with the logic analyzer beside it, if any).
    pub kernel: bool,
}

fn words(text: &str, sep: char) -> Vec<String> {
    text.split(sep).map(str::trim).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

fn some(text: &str) -> Option<String> {
    Some(text.trim()).filter(|t| !t.is_empty()).map(str::to_owned)
}

impl RecordForm {
    /// The rule specs typed, one a line.
    pub fn rule_lines(&self) -> Vec<String> {
        words(&self.rules, '\n')
    }

    /// The form as `latscope record` would take it. Names are resolved by `registry` (as
    /// `--preset` and `--rule` are); what the recorder checks (triggers against the
    /// analyses, keep, ring, `-o`) is checked by [`latscope_record::plan`] on Start.
    pub fn request(&self, registry: &Registry) -> anyhow::Result<Asked> {
        let decoders = words(&self.decoders, '\n');
        let kernel = self.machine != Machine::None;
        // Beside a kernel, what reads the decoded logic (the decoders' presets, rules over
        // their events) is the logic analyzer's, as `latscope record` splits them; alone,
        // everything reads the logic.
        let mut specs = Vec::new();
        let mut logic_specs = Vec::new();
        let rules = self.rule_lines();
        for (text, is_rule) in self.presets.iter().map(|p| (p, false)).chain(rules.iter().map(|r| (r, true)))
        {
            let spec = if is_rule { registry.rule(text)? } else { registry.preset(text)? };
            if kernel && registry.reads_decoded(text, &decoders) {
                logic_specs.push(spec);
            } else {
                specs.push(spec);
            }
        }
        let sigrok = some(&self.sigrok)
            .map(|s| SigrokSpec::parse(&s).map(|s| s.with_decoders(decoders.clone())))
            .transpose()?;
        if sigrok.is_none() && !decoders.is_empty() {
            anyhow::bail!("decoders decode a logic analyzer's stream: name the sigrok device");
        }
        if let Some(d) = decoders.iter().find(|d| d.starts_with("sigrok:")) {
            anyhow::bail!("{d}: sigrok's decoders run on a saved capture, not live (use latscope's own)");
        }
        if !kernel && sigrok.is_none() {
            anyhow::bail!("nothing to record: choose a kernel (this machine or a board) or a sigrok device");
        }
        if self.machine == Machine::Ssh && sigrok.is_some() {
            anyhow::bail!(
                "a board's kernel and this machine's logic analyzer do not share a clock: record them apart \
                 and align them on a shared marker"
            );
        }
        let ssh = match self.machine {
            Machine::Ssh => {
                Some(some(&self.ssh_host).ok_or_else(|| anyhow::anyhow!("a board over SSH needs its host"))?)
            }
            Machine::Local | Machine::None => None,
        };
        let max_saves = some(&self.max_saves)
            .map(|n| n.parse::<u64>().map_err(|_| anyhow::anyhow!("max saves {n:?}: expected a number")))
            .transpose()?;
        let request = Request {
            specs,
            logic_specs,
            spec_texts: self.analysis_texts(),
            events: words(&self.events, ','),
            ssh,
            duration: some(&self.duration),
            triggers: words(&self.triggers, ','),
            keep: some(&self.keep),
            ring: some(&self.ring),
            max_saves,
            output: some(&self.output).map(PathBuf::from),
            force: self.force,
            command: Vec::new(),
            sigrok: sigrok.clone().filter(|_| kernel),
            align: some(&self.align).filter(|_| kernel && sigrok.is_some()),
        };
        Ok(Asked { request, sigrok, kernel })
    }

    /// The presets ticked and the rules typed, in the order the recording lists them.
    pub fn analysis_texts(&self) -> Vec<String> {
        self.presets.iter().cloned().chain(self.rule_lines()).collect()
    }

    /// The decoder stacks typed, one a line.
    pub fn decoder_lines(&self) -> Vec<String> {
        words(&self.decoders, '\n')
    }

    /// The kernel events the form's presets and rules read, and the extra ones: what the
    /// recording enables (shown in the window as it is edited).
    pub fn events_enabled(&self, registry: &Registry) -> Vec<String> {
        let decoders = words(&self.decoders, '\n');
        let rules = self.rule_lines();
        let kernel_reads = |t: &&String| !registry.reads_decoded(t, &decoders);
        let specs: Vec<_> = self
            .presets
            .iter()
            .filter(kernel_reads)
            .filter_map(|p| registry.preset(p).ok())
            .chain(rules.iter().filter(kernel_reads).filter_map(|r| registry.rule(r).ok()))
            .collect();
        let mut out = latscope_record::stats::events_for(&specs);
        // Beside a logic analyzer, what its decoders add is read from it (as its channels
        // are, which only the device knows).
        if some(&self.sigrok).is_some() {
            let decoded = registry.decoded_events(&decoders);
            out.retain(|e| !decoded.contains(e));
        }
        for e in words(&self.events, ',') {
            if !out.contains(&e) {
                out.push(e);
            }
        }
        out
    }
}

/// The presets a recorder can enable events for (those over kernel events), in the
/// registry's order.
pub fn kernel_presets() -> Vec<&'static str> {
    latscope_analysis::spec::PRESETS
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| latscope_analysis::presets::kernel_events(name).is_some())
        .collect()
}

/// The preset a "Not run" line of the analysis panel is about, when it is one whose events
/// a recording can enable (`mmc needs mmc_request_start …`): the panel then offers
/// *Record these*.
pub fn recordable(missing: &str) -> Option<&'static str> {
    kernel_presets()
        .into_iter()
        .find(|p| missing.strip_prefix(p).is_some_and(|rest| rest.starts_with(" needs ")))
}

/// The recording going on.
#[derive(Debug)]
pub struct RecordRun {
    /// The record job's ticket: its lines, snapshots and end carry it.
    pub ticket: Ticket,
    /// Set by Stop: the recorder ends as at Ctrl-C, saves and puts tracefs back.
    pub stop: Arc<AtomicBool>,
    /// Whether Stop was asked (the job is finishing).
    pub stopping: bool,
    /// Hangs up when the job's work has returned (tracefs put back).
    pub finished: Receiver<()>,
}

/// How long closing the workbench waits for a recording to stop and put tracefs back.
const STOP_ON_CLOSE: Duration = Duration::from_secs(15);

impl RecordRun {
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.stopping = true;
    }
}

/// A recording still going on when the workbench closes is stopped, and the window waits
/// (a bounded time) for it to save and put tracefs back: a process that ended with it
/// running would leave the kernel tracing with the recording's events enabled.
impl Drop for RecordRun {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.finished.recv_timeout(STOP_ON_CLOSE);
    }
}

/// The last live line: everything the recorder said at its last tick.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LiveLine {
    pub elapsed_s: f64,
    pub events: u64,
    pub lost: u64,
    pub kept_bytes: u64,
    pub analyses: Vec<LiveStat>,
    /// The logic analyzer beside the kernel: samples so far and its placement by host clocks.
    pub logic: Option<LogicLive>,
    pub last: bool,
}

/// How a recording ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordEnd {
    /// How it stopped (`stopped`, `--duration elapsed`, an error).
    pub how: String,
    /// Events recorded (the kernel's), else samples (a logic analyzer alone).
    pub events: u64,
    /// What `events` counts: `events` or `samples`.
    pub counted: &'static str,
    pub lost: u64,
    /// What was saved: the capture, or the flight recorder's windows.
    pub saved: Vec<PathBuf>,
    pub crossings: u64,
    /// tracefs could not be put back (a board that dropped), if so.
    pub unrestored: Option<String>,
    /// A logic analyzer beside the kernel: how it was placed on the kernel's timeline.
    pub logic_placed: Option<String>,
    /// What the importer warned about the saved logic capture when it was opened (a capture
    /// too dense to load whole), each with the file's path.
    pub warnings: Vec<String>,
}

/// At most this many crossings are listed (all are counted).
pub const MAX_CROSSINGS_SHOWN: usize = 200;

/// The record window's room.
#[derive(Debug, Default)]
pub struct RecordState {
    pub open: bool,
    pub form: RecordForm,
    pub run: Option<RecordRun>,
    pub line: Option<LiveLine>,
    /// Crossings said so far: `analysis latency at time` and where it was saved.
    pub crossings: Vec<String>,
    pub crossings_total: u64,
    /// The source the recording grows in the document.
    pub source: Option<SourceId>,
    /// Snapshots received (each replaces the source's data).
    pub snapshots: u64,
    /// The logic analyzer recorded beside the kernel, once opened, and how it was placed.
    pub logic_source: Option<SourceId>,
    pub logic_placed: Option<String>,
    pub ended: Option<RecordEnd>,
    pub error: Option<String>,
    /// Logic captures written to the temporary directory to be opened: removed on exit.
    pub temporary: TemporaryFiles,
}

/// Files this workbench wrote to the temporary directory, removed when it is dropped (the
/// window closes). Each workbench removes only its own.
#[derive(Debug, Default)]
pub struct TemporaryFiles(Vec<PathBuf>);

impl TemporaryFiles {
    pub fn add(&mut self, path: PathBuf) {
        if !self.0.contains(&path) {
            self.0.push(path);
        }
    }

    pub fn paths(&self) -> &[PathBuf] {
        &self.0
    }
}

impl Drop for TemporaryFiles {
    fn drop(&mut self) {
        for p in &self.0 {
            // Already gone (the user moved it) is fine; nothing else can be done on exit.
            let _ = std::fs::remove_file(p);
        }
    }
}

impl RecordState {
    pub fn running(&self) -> bool {
        self.run.is_some()
    }
}
