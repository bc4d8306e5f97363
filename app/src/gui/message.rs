//! Every change to the workbench's state is a [`Message`]: views return them, worker threads
//! send them, and [`super::app::Workbench::update`] applies them in one place. Keyboard,
//! mouse, menus, the command palette, the command line and tests all go through here.

use super::align_dialog::AlignDialog;
use super::analysis::{AnalysisResult, PlotKind, RuleEditor};
use super::decoder_dialog::DecoderDialog;
use super::derive_dialog::DeriveDialog;
use super::export::SaveWhat;
use super::file_browser::{BrowsePurpose, BrowserAction};
use super::jobs::Ticket;
use super::prepare::{Lane, Prepared};
use super::session::Session;
use super::theme::ThemeKind;
use latscope_analysis::align::Alignment;
use latscope_model::{DigitalTrack, Ps};
use std::path::PathBuf;
use std::sync::Arc;

/// Which of the two measurement cursors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorId {
    A,
    B,
}

/// A lane: source index and lane index within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaneId {
    pub source: usize,
    pub lane: usize,
}

/// Panels that can be shown or hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelId {
    Tracks,
    Table,
    Analysis,
    Simulator,
    /// Every error and warning of the session.
    Log,
}

/// Simulator controls.
#[derive(Debug, Clone, PartialEq)]
pub enum SimCommand {
    /// (Re)start `scenario` with these `KEY=VALUE` settings.
    Start {
        scenario: String,
        sets: Vec<String>,
        duration: Option<Ps>,
    },
    Play,
    Pause,
    Step,
    /// Simulated seconds per wall second; `None` runs as fast as possible.
    Speed(Option<f64>),
    Stop,
}

/// A selected event: its source and index in that source's event table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventSel {
    pub source: usize,
    pub index: usize,
}

/// A change to the simulator panel's settings.
#[derive(Debug, Clone, PartialEq)]
pub enum SimEdit {
    /// Pick a built-in scenario (its settings become the editable defaults).
    Scenario(String),
    /// Setting `index` of the list now has `value`.
    Setting(usize, latscope_sim::SettingValue),
    /// Simulated seconds per wall second.
    Speed(f64),
    MaxSpeed(bool),
    Follow(bool),
}

/// One row of the event table: event `index` of source `source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub source: u32,
    pub index: u32,
}

impl Row {
    pub fn sel(self) -> EventSel {
        EventSel { source: self.source as usize, index: self.index as usize }
    }
}

/// Rows of the event table after filtering and sorting (computed off the UI thread), over
/// every source the table shows.
#[derive(Debug, Clone, Default)]
pub struct TableRows {
    /// The sources queried (all open sources, or the one the source filter picks).
    pub sources: Vec<usize>,
    /// The filter text and sort the rows answer.
    pub filter: String,
    pub sort: TableSort,
    pub rows: Arc<Vec<Row>>,
}

#[derive(Debug)]
pub enum Message {
    // --- files
    /// Open files (command line, dialog, drag and drop, recent files).
    OpenFiles(Vec<PathBuf>),
    /// Ask the file picker (answers with `OpenFiles` from its own thread).
    PickFiles,
    /// Stop a background job (a load's Cancel button).
    CancelJob(Ticket),
    /// A preview of a capture still loading (its channels at a coarse level of detail, see
    /// `LoadControl::with_preview`): shown until the load ends.
    Preview {
        ticket: Ticket,
        prepared: Arc<Prepared>,
    },
    /// A load job's progress is polled; this is its end.
    Loaded {
        ticket: Ticket,
        path: PathBuf,
        result: Result<Arc<Prepared>, String>,
    },
    CloseAll,
    // --- view
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
    MoveLane(LaneId, isize),
    /// Next (`true`) or previous edge/event on the focused lane, from cursor A.
    StepEdge(bool),
    SelectEvent(EventSel),
    AddMarker,
    RenameMarker(usize, String),
    RemoveMarker(usize),
    JumpMarker(usize),
    TogglePanel(PanelId),
    TogglePalette,
    ClosePalette,
    /// The palette's search text.
    PaletteQuery(String),
    /// Scroll the lanes by this many points (positive: down).
    ScrollLanes(f32),
    // --- table and search
    /// Filter text for the table and search (searched off the UI thread).
    SetFilter(String),
    SortTable(TableSort),
    TableReady {
        ticket: Ticket,
        rows: TableRows,
    },
    /// Show the event table and put the keyboard in its filter (Ctrl+F).
    FocusFilter,
    /// The table view did what it was asked once: scrolled to the selection, focused the filter.
    TableRequestsDone,
    /// Jump to the next (`true`) or previous match of the filter.
    SearchStep(bool),
    /// Show the events of one source in the table (and search only it), or of all (`None`).
    SetTableSource(Option<usize>),
    // --- analysis
    RunAnalysis,
    AnalysisDone {
        ticket: Ticket,
        results: Vec<AnalysisResult>,
        /// Rules that did not parse or apply to no source.
        errors: Vec<String>,
        /// When the presets were chosen by what the sources hold (files opened): which.
        chosen: Option<Vec<String>>,
        /// Presets that cannot run: what is missing and how to record it.
        missing: Vec<String>,
    },
    ShowSample {
        outcome: usize,
        sample: usize,
    },
    /// The rule list and the rule being typed, as edited in the panel.
    EditRules(RuleEditor),
    /// The analysis panel's plot and its latency axis.
    SetPlot {
        plot: PlotKind,
        log_x: bool,
    },
    // --- simulator
    Sim(SimCommand),
    SimEdit(SimEdit),
    SimSnapshot {
        ticket: Ticket,
        prepared: Arc<Prepared>,
        now: Ps,
        events: usize,
        finished: bool,
    },
    SimError(String),
    /// The finished run's scenario metrics, measured on its trace by the
    /// same analyses `latscope sim` runs.
    SimMetrics {
        ticket: Ticket,
        metrics: Result<Vec<(String, f64)>, String>,
    },
    // --- misc
    Error(String),
    DismissError(usize),
    /// Close the error banner (the log keeps the errors).
    DismissErrors,
    /// Esc: close the error banner if one is shown, else clear the cursors.
    Escape,
    ScreenshotTaken(Arc<egui::ColorImage>),
    /// The `--screenshot` PNG was encoded and written off the UI thread: where, or why not.
    ScreenshotSaved {
        ticket: Ticket,
        result: Result<PathBuf, String>,
    },
    /// The pixels of a frame for an asked-for timeline PNG: save `rect_px` of them at `path`.
    TimelineShot {
        path: PathBuf,
        rect_px: egui::Rect,
        image: Arc<egui::ColorImage>,
    },
    // --- export, session, look (export.rs, session.rs, file_browser.rs)
    /// Ask where to save `what`; the picker answers with `SaveTo`.
    Export(SaveWhat),
    /// Save `what` at `path` (chosen in the desktop dialog or the in-window browser).
    SaveTo(SaveWhat, PathBuf),
    /// A background save finished: the file written, or why not.
    Saved {
        ticket: Ticket,
        result: Result<PathBuf, String>,
    },
    /// A session file was read and parsed off the UI thread.
    SessionRead {
        ticket: Ticket,
        path: PathBuf,
        result: Result<Session, String>,
    },
    SetTheme(ThemeKind),
    ToggleTheme,
    /// Rename a lane in the track list and timeline (the data keeps its name).
    RenameLane(LaneId, String),
    SetLaneColor(LaneId, egui::Color32),
    /// The desktop dialog could not be shown: browse inside the window instead.
    BrowseFiles(BrowsePurpose),
    /// What the user did in the in-window browser.
    Browser(BrowserAction),
    // --- analysis plots, alignment, derived lanes, live statistics
    /// Show on the timeline the samples of analysis `outcome` whose latency lies in
    /// `[lo_ns, hi_ns]` (a histogram bar).
    ShowLatencyRange {
        outcome: usize,
        lo_ns: f64,
        hi_ns: f64,
    },
    /// Open the Align dialog.
    OpenAlign,
    /// The Align dialog as edited (or closed).
    EditAlign(AlignDialog),
    /// Align source `other` onto `reference` by `spec`: the `--align` text after `N:`.
    Align {
        reference: usize,
        other: usize,
        spec: String,
    },
    /// The alignment worker's answer: what was fitted (the source's new placement).
    Aligned {
        ticket: Ticket,
        source: usize,
        /// The job put the source back on its own clock (Remove alignment).
        reset: bool,
        result: Result<Alignment, String>,
    },
    /// Put every source back on its own clock.
    ResetAlign,
    /// Add a digital lane to `source` from its analog track `track`: `threshold` is
    /// `(level, hysteresis)`, `None` for the automatic one.
    DeriveDigital {
        source: usize,
        track: usize,
        threshold: Option<(f64, f64)>,
    },
    /// The derived digital track and its lane, or the source rebuilt with it (when the
    /// source was shared and could not take it in place), or why not.
    Derived {
        ticket: Ticket,
        source: usize,
        result: Result<DerivedLane, String>,
    },
    /// Statistics of a live simulator snapshot.
    LiveAnalysisDone {
        ticket: Ticket,
        results: Vec<AnalysisResult>,
    },
    /// Open the "Derive digital…" dialog on an analog lane.
    OpenDeriveDigital(LaneId),
    /// The "Derive digital…" dialog as edited (or closed).
    EditDerive(DeriveDialog),
    /// The fleet window (fleet_view.rs).
    Fleet(super::fleet_view::FleetMsg),
    /// Open the "Add decoder…" dialog (on this source; `None`: the focused lane's, else the
    /// first with channels).
    OpenDecoder(Option<usize>),
    /// The "Add decoder…" dialog as edited (or closed).
    EditDecoder(DecoderDialog),
    /// Decode `source` with decoder stacks `specs` (a background job: the source rebuilt
    /// with the annotations comes back as `Decoded`).
    AddDecoder {
        source: usize,
        specs: Vec<String>,
    },
    /// A decode job's answer: the source rebuilt with the decoders' annotations (span lanes
    /// and events), or why not.
    Decoded {
        ticket: Ticket,
        source: usize,
        result: Result<Arc<Prepared>, String>,
    },
}

/// What a derive job answers: the new track and its lane, to add to the source in place.
#[derive(Debug)]
pub struct DerivedLane {
    pub track: DigitalTrack,
    pub lane: Lane,
}

/// Sort order of the event table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableSort {
    #[default]
    Time,
    Cpu,
    Name,
    Task,
}
