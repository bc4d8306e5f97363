//! Every change to the workbench's state is a [`Message`]: views return them, worker threads
//! send them, and `Workbench::update` (in `update/`) applies them in one place. Keyboard,
//! mouse, menus, the command palette, the command line and tests all go through here.
//!
//! A message is addressed to one room ([`FileMsg`], [`ViewMsg`], [`TableMsg`], …), and the
//! compiler routes it: `update` hands each room's enum to that room's handler, which matches
//! all of it. Messages carry parsed values and ids (an [`AlignSpec`], a decoder [`Stack`], a
//! [`SourceId`]), never command-line text or file names to look up. This module imports
//! only state and data types; the views import it, never the other way round.

use super::align_dialog::AlignDialog;
use super::analysis::{AnalysisResult, PlotKind, RuleEditor};
use super::decoder_dialog::DecoderDialog;
use super::derive_dialog::DeriveDialog;
use super::document::SourceId;
use super::export::SaveWhat;
use super::file_browser::{BrowsePurpose, BrowserAction};
use super::jobs::{JobEnded, SpawnFailed, Ticket};
use super::prepare::{Lane, Prepared};
use super::query::QueryResult;
use super::record::{RecordEnd, RecordForm};
use super::session::Session;
use super::sim::{SimCommand, SimEdit};
use super::table::{TableRows, TableSort};
use super::theme::ThemeKind;
use super::view::{CursorId, EventSel, LaneId, PanelId};
use latscope_analysis::align::{AlignSpec, Alignment};
use latscope_decoders::spec::Stack;
use latscope_fleet::{FleetReport, WorstPair};
use latscope_model::{DigitalTrack, Ps};
use std::path::PathBuf;
use std::sync::Arc;

/// A background job's failure, with its cause.
pub type JobResult<T> = anyhow::Result<T>;

#[derive(Debug)]
pub enum Message {
    Files(FileMsg),
    View(ViewMsg),
    Table(TableMsg),
    Analysis(AnalysisMsg),
    Align(AlignMsg),
    Derive(DeriveMsg),
    Decoder(DecoderMsg),
    Sim(SimMsg),
    Save(SaveMsg),
    Shell(ShellMsg),
    Fleet(FleetMsg),
    Query(QueryMsg),
    Record(RecordMsg),
    /// A job's thread has ended: everything it held (a source it read) is let go. Derived
    /// lanes that waited for their source to be free are added now.
    JobEnded(Ticket),
}

/// Opening, loading and closing files.
#[derive(Debug)]
pub enum FileMsg {
    /// Open files (command line, dialog, drag and drop, recent files).
    Open(Vec<PathBuf>),
    /// Ask the file picker (answers with `Open` from its own thread).
    Pick,
    /// Stop a background job (a load's Cancel button).
    CancelJob(Ticket),
    /// A preview of source `id` while its capture still loads (its channels at a coarse
    /// level of detail, see `LoadControl::with_preview`): shown until the load ends.
    Preview {
        ticket: Ticket,
        id: SourceId,
        prepared: Arc<Prepared>,
    },
    /// A load job's end: source `id` (reserved when the load started) from `path`.
    Loaded {
        ticket: Ticket,
        id: SourceId,
        path: PathBuf,
        result: JobResult<Arc<Prepared>>,
    },
    /// A source prepared elsewhere (a benchmark, a test) joins the document as a load
    /// would: source `id`, reserved with `Document::reserve_id`, read from `path`.
    Added {
        id: SourceId,
        path: PathBuf,
        prepared: Arc<Prepared>,
    },
    CloseAll,
}

/// The view: range, cursors, lanes, markers, panels, selection.
#[derive(Debug)]
pub enum ViewMsg {
    /// Zoom by `factor` (< 1 zooms in) keeping common time `at` at the same x.
    Zoom {
        factor: f64,
        at: f64,
    },
    /// Pan by a fraction of the visible width (negative: left).
    PanFraction(f64),
    /// Pan by a time delta (ps, common timeline).
    PanBy(f64),
    FitAll,
    /// Show `[from, to]` (common ps).
    ShowRange(f64, f64),
    CenterOn(f64),
    SetCursor(CursorId, f64),
    ClearCursors,
    FocusLane(LaneId),
    ToggleLane(LaneId),
    /// Pin a lane to the top of the timeline, or unpin it.
    PinLane(LaneId),
    MoveLane(LaneId, isize),
    /// Rename a lane in the track list and timeline (the data keeps its name).
    RenameLane(LaneId, String),
    SetLaneColor(LaneId, egui::Color32),
    /// Scroll the lanes by this many points (positive: down).
    ScrollLanes(f32),
    AddMarker,
    RenameMarker(usize, String),
    RemoveMarker(usize),
    JumpMarker(usize),
    TogglePanel(PanelId),
    /// Next (`true`) or previous edge/event on the focused lane, from cursor A.
    StepEdge(bool),
    SelectEvent(EventSel),
    /// The timeline was laid out at this data width, with this much to scroll: a view
    /// fitted or showing a pair keeps showing it at the new width.
    Laid {
        width: f32,
        max_scroll: f32,
    },
}

/// The event table and search.
#[derive(Debug)]
pub enum TableMsg {
    /// Filter text for the table and search (searched off the UI thread).
    SetFilter(String),
    Sort(TableSort),
    /// A query's rows.
    Ready {
        ticket: Ticket,
        rows: TableRows,
    },
    /// Show the event table and put the keyboard in its filter (Ctrl+F).
    FocusFilter,
    /// The table view did what it was asked once: scrolled to the selection, focused the filter.
    RequestsDone,
    /// Jump to the next (`true`) or previous match of the filter.
    SearchStep(bool),
    /// Show the events of one source in the table (and search only it), or of all (`None`).
    SetSource(Option<SourceId>),
    /// A row was clicked: select its event and centre the view on it.
    Select(EventSel),
    /// Add a term to the filter (`pid=123`, `-cpu=1`: a row's menu narrows to a task or a
    /// CPU, or hides one, as KernelShark's filters do).
    AddTerm(String),
    /// Move the selection this many rows (the arrow keys).
    Step(isize),
    /// Keep the list on the timeline's view.
    SetFollow(bool),
    /// Show each event's own clock in a column.
    SetOwnClock(bool),
}

/// The analysis panel.
#[derive(Debug)]
pub enum AnalysisMsg {
    /// Run the panel's rules.
    Run,
    /// Run every preset whose events the sources hold (files opened).
    RunPresets,
    Done {
        ticket: Ticket,
        results: Vec<AnalysisResult>,
        /// Rules that did not parse or apply to no source.
        errors: Vec<anyhow::Error>,
        /// When the presets were chosen by what the sources hold: which.
        chosen: Option<Vec<String>>,
        /// Presets that cannot run: what is missing and how to record it.
        missing: Vec<String>,
    },
    /// Show sample `sample` of result `outcome` on the timeline.
    ShowSample { outcome: usize, sample: usize },
    /// Show the samples of result `outcome` whose latency lies in `[lo_ns, hi_ns]` (a
    /// histogram bar).
    ShowLatencyRange { outcome: usize, lo_ns: f64, hi_ns: f64 },
    /// The rule list and the rule being typed, as edited in the panel.
    EditRules(RuleEditor),
    /// The panel's plot and its latency axis.
    SetPlot { plot: PlotKind, log_x: bool },
    /// Statistics of a live simulator snapshot: the scenario's analyses and the user's
    /// rules, and why each of the user's rules that could not answer on it did not.
    LiveDone { ticket: Ticket, results: Vec<AnalysisResult>, errors: Vec<String> },
}

/// Alignment of one source onto another.
#[derive(Debug)]
pub enum AlignMsg {
    Open,
    /// The dialog as edited (or closed).
    Edit(AlignDialog),
    /// Align `other` onto `reference` by `spec` (whatever source index `spec` names, it
    /// aligns `other`).
    Align {
        reference: SourceId,
        other: SourceId,
        spec: AlignSpec,
    },
    /// The worker's answer: the placement fitted for `source`.
    Aligned {
        ticket: Ticket,
        source: SourceId,
        reset: bool,
        result: JobResult<Alignment>,
    },
    /// Every source back on its own clock.
    Reset,
}

/// A digital lane derived from an analog one.
#[derive(Debug)]
pub enum DeriveMsg {
    /// Open the dialog on an analog lane.
    Open(LaneId),
    Edit(DeriveDialog),
    /// Add a digital lane to `source` from its analog track `track`: `threshold` is
    /// `(level, hysteresis)`, `None` for the automatic one.
    Derive {
        source: SourceId,
        track: usize,
        threshold: Option<(f64, f64)>,
    },
    /// The derived track and its lane, to add to the source in place.
    Derived {
        ticket: Ticket,
        source: SourceId,
        result: JobResult<DerivedLane>,
    },
}

/// Protocol decoders on a source.
#[derive(Debug)]
pub enum DecoderMsg {
    /// Open the dialog (on this source; `None`: the focused lane's, else the first with
    /// channels).
    Open(Option<SourceId>),
    Edit(DecoderDialog),
    /// Decode `source` with these stacks (a job: the source comes back rebuilt).
    Add {
        source: SourceId,
        stacks: Vec<Stack>,
    },
    Decoded {
        ticket: Ticket,
        source: SourceId,
        result: JobResult<Arc<Prepared>>,
    },
    /// Every decoder sigrok-cli knows, with its channels and options, to list beside the
    /// native ones (`sigrok:ID`).
    SigrokListed {
        ticket: Ticket,
        result: JobResult<Vec<latscope_engine::registry::DecoderInfo>>,
    },
}

/// The simulator.
#[derive(Debug)]
pub enum SimMsg {
    Command(SimCommand),
    Edit(SimEdit),
    Snapshot {
        ticket: Ticket,
        prepared: Arc<Prepared>,
        now: Ps,
        events: usize,
        finished: bool,
        /// Late events the accumulator placed by sorting again so far: a snapshot after
        /// one does not extend the snapshots before.
        reorders: usize,
    },
    Failed(anyhow::Error),
    /// The finished run's scenario metrics, measured on its trace by the same analyses
    /// `latscope sim` runs.
    Metrics {
        ticket: Ticket,
        metrics: JobResult<Vec<(String, f64)>>,
    },
}

/// Exports, sessions, the window's screenshot and the in-window file browser.
#[derive(Debug)]
pub enum SaveMsg {
    /// Ask where to save `what`; the picker answers with `SaveTo`.
    Export(SaveWhat),
    /// Save `what` at `path` (chosen in the desktop dialog or the in-window browser).
    SaveTo(SaveWhat, PathBuf),
    /// A background save finished: the file written, or why not.
    Saved {
        ticket: Ticket,
        result: JobResult<PathBuf>,
    },
    /// The pixels of a frame for an asked-for timeline PNG: save `rect_px` of them at `path`.
    TimelineShot {
        path: PathBuf,
        rect_px: egui::Rect,
        image: Arc<egui::ColorImage>,
    },
    /// The frame's pixels were asked for the asked-for timeline PNG (`true`), or there was
    /// no timeline on screen to take (`false`).
    PixelsAsked(bool),
    /// A session file was read and parsed off the UI thread.
    SessionRead {
        ticket: Ticket,
        path: PathBuf,
        result: JobResult<Session>,
    },
    ScreenshotTaken(Arc<egui::ColorImage>),
    /// The `--screenshot` PNG was encoded and written off the UI thread: where, or why not.
    ScreenshotSaved {
        ticket: Ticket,
        result: JobResult<PathBuf>,
    },
    /// The desktop dialog could not be shown: browse inside the window instead.
    BrowseFiles(BrowsePurpose),
    /// What the user did in the in-window browser.
    Browser(BrowserAction),
}

/// Errors, the palette and the look.
#[derive(Debug)]
pub enum ShellMsg {
    Error(anyhow::Error),
    DismissError(usize),
    /// Close the error banner (the log keeps the errors).
    DismissErrors,
    /// Esc: close the error banner if one is shown, else clear the cursors.
    Escape,
    SetTheme(ThemeKind),
    ToggleTheme,
    TogglePalette,
    ClosePalette,
    /// The palette's search text.
    PaletteQuery(String),
}

/// The fleet window (a dataset of many captures).
#[derive(Debug)]
pub enum FleetMsg {
    /// Show the window (File > Open fleet dataset…).
    Show,
    Close,
    /// The form as edited: directory, group-by labels, trend label.
    Edit {
        dir: String,
        group_by: String,
        trend: String,
    },
    /// Aggregate the dataset (a job).
    Load,
    Loaded {
        ticket: Ticket,
        result: JobResult<Arc<FleetReport>>,
    },
    SelectAnalysis(String),
    SelectGroup(usize),
    /// Open a worst pair's capture and show the pair.
    OpenWorst(WorstPair),
}

/// The query window (SQL over the open sources' tables).
#[derive(Debug)]
pub enum QueryMsg {
    /// Show the window (Analysis > Query…).
    Show,
    Close,
    /// The SQL as edited.
    Edit(String),
    /// Run the SQL (a job).
    Run,
    Done {
        ticket: Ticket,
        result: JobResult<QueryResult>,
    },
    /// Row `n` of the result was clicked: go to the time it holds (the event there is
    /// selected, through the view's own messages).
    Row(usize),
}

/// The record window (File > Record…) and the recording it runs.
#[derive(Debug)]
pub enum RecordMsg {
    /// Show the window.
    Show,
    /// Show the window with these presets chosen (the analysis panel's *Record these* on a
    /// preset that did not run for want of its events).
    RecordPresets(Vec<String>),
    Close,
    /// The form as edited.
    Edit(RecordForm),
    /// Start recording what the form says (a job).
    Start,
    /// Stop the recording (it saves what it has and puts tracefs back).
    Stop,
    /// A live line or a crossing of the recording.
    Live {
        ticket: Ticket,
        live: latscope_record::Live,
    },
    /// What has been recorded so far, decoded (the recording's source grows with each).
    Snapshot {
        ticket: Ticket,
        prepared: Arc<Prepared>,
    },
    /// The logic analyzer beside the kernel as recorded so far (its channels): its first
    /// sample is `offset_ps` after the time zero of the kernel snapshot sent before it.
    LogicSnapshot {
        ticket: Ticket,
        prepared: Arc<Prepared>,
        offset_ps: i64,
        placed_by: String,
    },
    /// The logic analyzer recorded beside the kernel, opened once the recording stopped: its
    /// first sample is `offset_ps` after the kernel source's time zero, placed by the host's
    /// clocks as `placed_by` says (with the uncertainty).
    Logic {
        ticket: Ticket,
        prepared: Arc<Prepared>,
        offset_ps: i64,
        placed_by: String,
    },
    /// The recording wrote its logic capture to a temporary file (no path was given), to open
    /// it from there: the workbench removes the file when it exits.
    Temporary(std::path::PathBuf),
    /// The recording ended: how, and what it saved; or why it could not start.
    Ended {
        ticket: Ticket,
        result: JobResult<RecordEnd>,
    },
}

/// What a derive job answers: the new track and its lane, to add to the source in place.
#[derive(Debug)]
pub struct DerivedLane {
    pub track: DigitalTrack,
    pub lane: Lane,
}

macro_rules! into_message {
    ($($room:ident => $variant:ident),* $(,)?) => {
        $(impl From<$room> for Message {
            fn from(m: $room) -> Self {
                Message::$variant(m)
            }
        })*
    };
}

into_message!(
    FileMsg => Files,
    ViewMsg => View,
    TableMsg => Table,
    AnalysisMsg => Analysis,
    AlignMsg => Align,
    DeriveMsg => Derive,
    DecoderMsg => Decoder,
    SimMsg => Sim,
    SaveMsg => Save,
    ShellMsg => Shell,
    FleetMsg => Fleet,
    QueryMsg => Query,
    RecordMsg => Record,
);

impl From<SpawnFailed> for Message {
    fn from(e: SpawnFailed) -> Self {
        Message::Shell(ShellMsg::Error(e.into()))
    }
}

impl From<JobEnded> for Message {
    fn from(JobEnded(ticket): JobEnded) -> Self {
        Message::JobEnded(ticket)
    }
}
