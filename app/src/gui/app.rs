//! The workbench: its state, the one [`Workbench::update`] that applies every [`Message`],
//! and the frame that lays out the panels. Views only read the state and return messages.

use super::align_dialog;
use super::analysis::{self, AnalysisResult};
use super::derive_dialog;
use super::export::PngRequest;
use super::file_browser::FileBrowser;
use super::message::{CursorId, EventSel, LaneId, Message, PanelId, SimCommand, TableSort};
use super::palette;
use super::picker::FilePicker;
use super::prepare::{LaneKind, Prepared};
use super::session::{self, PendingSession};
use super::sim_panel::{self, SimState};
use super::table::{self, TableState};
use super::theme;
use super::theme::ThemeKind;
use super::timeline::{self, Layout, MeshCache, Overlay, SourceView, Viewport};
use super::workers::{self, Outbox, SimHandle};
use latscope_analysis::align::Alignment;
use latscope_importers::LoadControl;
use latscope_model::{Ps, Source, format_seconds};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;

/// A file being loaded.
#[derive(Debug)]
pub struct LoadJob {
    pub job: u64,
    pub path: PathBuf,
    pub ctl: LoadControl,
}

/// How the workbench starts.
#[derive(Debug, Default, Clone)]
pub struct Options {
    pub files: Vec<PathBuf>,
    /// Save a screenshot of the window here once everything is drawn, then close.
    pub screenshot: Option<PathBuf>,
    /// With no file: start the simulator demo.
    pub demo: bool,
    /// Rules (specs or preset names) to run once the files are loaded; opens the panel.
    pub rules: Vec<String>,
    /// `--align` (the report command's grammar, onto source 0) to apply once loaded.
    pub align: Option<String>,
}

#[derive(Debug)]
struct ScreenshotState {
    path: PathBuf,
    ready_frames: u32,
    requested: bool,
}

/// What the command line asked the workbench to do once its files are loaded.
#[derive(Debug)]
struct Startup {
    files: Vec<PathBuf>,
    /// `--align`, until it is sent.
    align: Option<String>,
    /// Run the `--rule`s (after the alignment).
    run: bool,
}

/// Builds the message of a shortcut or menu entry.
type MakeMessage = fn() -> Message;

const MAX_RECENT: usize = 10;
const RECENT_KEY: &str = "latscope.recent";

pub struct Workbench {
    outbox: Outbox,
    inbox: Receiver<Message>,
    picker: Box<dyn FilePicker>,
    pub sources: Vec<SourceView>,
    pub viewport: Viewport,
    pub overlay: Overlay,
    pub cache: MeshCache,
    scroll: f32,
    pub layout: Layout,
    pub loads: Vec<LoadJob>,
    next_job: u64,
    generation: u64,
    pub errors: Vec<String>,
    pub recent: Vec<PathBuf>,
    pub table: TableState,
    table_latest: Arc<AtomicU64>,
    /// Shared, so an export's worker takes them without a copy on the UI thread.
    pub analysis: Arc<Vec<AnalysisResult>>,
    pub analysis_running: bool,
    /// The rules the analysis panel runs.
    pub rules: analysis::RuleEditor,
    analysis_generation: u64,
    pub sim: SimState,
    sim_runs: u64,
    pub show_tracks: bool,
    pub show_table: bool,
    pub show_analysis: bool,
    pub show_sim: bool,
    pub palette_open: bool,
    palette_query: String,
    screenshot: Option<ScreenshotState>,
    /// The view has been fitted to data once (first load); later loads keep the view.
    fitted: bool,
    /// Fit again once the timeline's width is known (the first fit may precede layout).
    refit: bool,
    themed: bool,
    /// Set when the window should close (after a screenshot).
    pub quit: bool,
    /// Where the screenshot was saved, once it is.
    pub screenshot_saved: Option<PathBuf>,
    /// The look; kept in eframe's storage and in sessions.
    pub theme: ThemeKind,
    pub(super) applied_theme: Option<ThemeKind>,
    /// What the last save wrote, for the status bar.
    pub notice: Option<String>,
    /// The sources the analysis results were computed from: what an export reports on.
    pub(super) analysis_inputs: Vec<Arc<Prepared>>,
    /// The placements `analysis_inputs` were analysed at (their alignment), in order.
    pub(super) analysis_placements: Vec<latscope_model::Placement>,
    pub(super) png_request: Option<PngRequest>,
    pub(super) pending_session: Option<PendingSession>,
    /// The in-window file browser, when the desktop has no dialog.
    pub browser: Option<FileBrowser>,
    /// Saves writing in the background.
    pub saves_running: usize,
    /// Session files being read in the background.
    pub(super) sessions_reading: usize,
    /// The analysis panel's plot choices.
    pub analysis_view: analysis::PanelView,
    pub align_dialog: align_dialog::AlignDialog,
    /// The alignment in force (rules then run across the sources together), if any.
    pub alignment: Option<Alignment>,
    /// The alignment job being fitted, if any.
    pub aligning: Option<u64>,
    align_jobs: u64,
    /// The job in `aligning` puts a source back on its own clock.
    align_resetting: bool,
    pub derive_dialog: derive_dialog::DeriveDialog,
    /// What the command line asked for once the files are loaded (`--align`, `--rule`).
    startup: Option<Startup>,
    /// Loads that finished before one started earlier: sources join the timeline in the
    /// order their files were given (A/B and source numbers follow the command line).
    finished_loads: std::collections::BTreeMap<u64, (PathBuf, Arc<Prepared>)>,
}

impl std::fmt::Debug for Workbench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workbench")
            .field("sources", &self.sources.len())
            .field("viewport", &self.viewport)
            .field("loads", &self.loads.len())
            .field("errors", &self.errors)
            .finish_non_exhaustive()
    }
}

impl Workbench {
    pub fn new(options: Options, picker: Box<dyn FilePicker>, recent: Vec<PathBuf>) -> Self {
        let (outbox, inbox) = Outbox::new();
        let mut wb = Self {
            outbox,
            inbox,
            picker,
            sources: Vec::new(),
            viewport: Viewport::default(),
            overlay: Overlay::default(),
            cache: MeshCache::default(),
            scroll: 0.0,
            layout: Layout::default(),
            loads: Vec::new(),
            next_job: 1,
            generation: 1,
            errors: Vec::new(),
            recent,
            table: TableState::default(),
            table_latest: Arc::new(AtomicU64::new(0)),
            analysis: Arc::default(),
            analysis_running: false,
            rules: analysis::RuleEditor::default(),
            analysis_generation: 0,
            sim: SimState::default(),
            sim_runs: 0,
            show_tracks: true,
            show_table: true,
            show_analysis: false,
            show_sim: false,
            palette_open: false,
            palette_query: String::new(),
            screenshot: options.screenshot.map(|path| ScreenshotState {
                path,
                ready_frames: 0,
                requested: false,
            }),
            fitted: false,
            refit: false,
            themed: false,
            quit: false,
            screenshot_saved: None,
            theme: ThemeKind::Dark,
            applied_theme: None,
            notice: None,
            analysis_inputs: Vec::new(),
            analysis_placements: Vec::new(),
            png_request: None,
            pending_session: None,
            browser: None,
            saves_running: 0,
            sessions_reading: 0,
            analysis_view: analysis::PanelView::default(),
            align_dialog: align_dialog::AlignDialog::default(),
            alignment: None,
            aligning: None,
            align_jobs: 0,
            align_resetting: false,
            derive_dialog: derive_dialog::DeriveDialog::default(),
            finished_loads: Default::default(),
            startup: (options.align.is_some() || !options.rules.is_empty()).then(|| Startup {
                files: options.files.clone(),
                align: options.align.clone(),
                run: !options.rules.is_empty(),
            }),
        };
        if !options.rules.is_empty() {
            wb.rules.specs = options.rules.clone();
            wb.show_analysis = true;
        }
        if !options.files.is_empty() {
            wb.update(Message::OpenFiles(options.files));
        } else if options.demo {
            wb.show_sim = true;
            if wb.screenshot.is_some() {
                // A screenshot wants a finished, deterministic picture: run 40 ms flat out.
                wb.sim.max_speed = true;
                wb.sim.duration = Some(40_000_000_000);
            }
            let start = wb.sim.start_command();
            wb.update(Message::Sim(start));
        }
        wb
    }

    pub(super) fn picker(&self) -> &dyn FilePicker {
        &*self.picker
    }

    /// A fresh generation for a source whose data changed (invalidates its cached meshes).
    pub(super) fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }

    /// The sender workers and pickers use; tests use it to inject messages.
    pub fn outbox(&self) -> Outbox {
        self.outbox.clone()
    }

    fn data_width(&self) -> f64 {
        if self.layout.data_width > 1.0 { f64::from(self.layout.data_width) } else { 1200.0 }
    }

    /// The common-timeline range of everything loaded.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        let mut out: Option<(f64, f64)> = None;
        for sv in &self.sources {
            if let Some((a, b)) = sv.source().time_range() {
                let (a, b) = (sv.to_common(a), sv.to_common(b));
                out = Some(match out {
                    Some((lo, hi)) => (lo.min(a), hi.max(b)),
                    None => (a, b),
                });
            }
        }
        out
    }

    fn show_range(&mut self, from: f64, to: f64) {
        let span = (to - from).max(1.0);
        self.viewport.ps_per_px = span / self.data_width();
        self.viewport.start = from;
    }

    fn fit_all(&mut self) {
        if let Some((a, b)) = self.time_range() {
            let pad = (b - a).max(1.0) * 0.01;
            self.show_range(a - pad, b + pad);
        }
    }

    fn center_on(&mut self, t: f64) {
        self.viewport.start = t - self.viewport.ps_per_px * self.data_width() / 2.0;
    }

    fn ensure_visible(&mut self, t: f64) {
        let end = self.viewport.start + self.viewport.ps_per_px * self.data_width();
        if t < self.viewport.start || t > end {
            self.center_on(t);
        }
    }

    fn remember_recent(&mut self, path: &Path) {
        self.recent.retain(|p| p != path);
        self.recent.insert(0, path.to_owned());
        self.recent.truncate(MAX_RECENT);
    }

    fn add_source(&mut self, prepared: Arc<Prepared>) -> usize {
        self.generation += 1;
        self.sources.push(SourceView::new(prepared, self.generation));
        self.sources.len() - 1
    }

    /// Reruns the table query (filter and sort) for the table's source.
    fn refresh_table(&mut self) {
        let source = self.table.rows.source.min(self.sources.len().saturating_sub(1));
        let Some(sv) = self.sources.get(source) else {
            self.table.rows = Default::default();
            return;
        };
        let generation = self.table_latest.fetch_add(1, Ordering::Relaxed) + 1;
        self.table.pending = true;
        workers::table(
            generation,
            self.table_latest.clone(),
            source,
            sv.prepared.clone(),
            self.table.filter.clone(),
            self.table.sort,
            self.outbox.clone(),
        );
    }

    fn select(&mut self, sel: EventSel) {
        self.overlay.selected = Some(sel);
        self.table.scroll_to_selection = true;
    }

    /// The reference time for stepping: cursor A, else the selection, else the view's left edge.
    fn step_origin(&self) -> f64 {
        if let Some(a) = self.overlay.cursor_a {
            return a;
        }
        if let Some(sel) = self.overlay.selected
            && let Some(sv) = self.sources.get(sel.source)
            && let Some(&ts) = sv.source().events.ts.get(sel.index)
        {
            return sv.to_common(ts);
        }
        self.viewport.start
    }

    fn search_step(&mut self, forward: bool) {
        let Some(sv) = self.sources.get(self.table.rows.source) else { return };
        let ts = &sv.source().events.ts;
        let t = sv.to_source(self.step_origin()).round() as Ps;
        let rows = self.table.rows.rows.clone();
        let time = |r: &u32| ts.get(*r as usize).copied().unwrap_or(Ps::MAX);
        let found = if forward {
            rows.iter().filter(|r| time(r) > t).min_by_key(|r| (time(r), **r))
        } else {
            rows.iter().filter(|r| time(r) < t).max_by_key(|r| (time(r), **r))
        };
        if let Some(&index) = found {
            let tc = sv.to_common(time(&index));
            let source = self.table.rows.source;
            self.select(EventSel { source, index: index as usize });
            self.overlay.cursor_a = Some(tc);
            self.ensure_visible(tc);
        }
    }

    fn step_edge(&mut self, forward: bool) {
        let Some(id) = self.overlay.focused else {
            self.errors.push("Click a lane first: next/previous edge works on the focused lane".into());
            return;
        };
        let Some(sv) = self.sources.get(id.source) else { return };
        let Some(lane) = sv.data_lane(id.lane) else { return };
        let t = sv.to_source(self.step_origin()).round() as Ps;
        if let Some((at, event)) = timeline::step_edge(lane, sv.source(), t, forward) {
            let tc = sv.to_common(at);
            if let Some(index) = event {
                self.select(EventSel { source: id.source, index });
            }
            self.overlay.cursor_a = Some(tc);
            self.ensure_visible(tc);
        }
    }

    fn start_sim(&mut self, scenario: &str, sets: &[String], duration: Option<Ps>) {
        self.sim.handle = None;
        let d = duration.map(|d| format!("{}ps", d));
        match latscope_sim::prepare(scenario, sets, None, d.as_deref()) {
            Ok(sc) => {
                self.sim.live.restart(sc.clone());
                self.sim_runs += 1;
                self.sim.handle =
                    workers::simulate(self.sim_runs, sc, self.sim.speed_arg(), self.outbox.clone());
                self.sim.playing = true;
                self.sim.finished = false;
                self.sim.error = None;
                self.sim.snapshots = 0;
                self.sim.metrics.clear();
            }
            Err(e) => self.sim.error = Some(e.to_string()),
        }
    }

    /// Shows the samples of analysis `outcome` with latency in `[lo_ns, hi_ns]` (a histogram
    /// bar): one is shown as a pair (cursors and arrow), several by the range they span.
    fn show_latency_range(&mut self, outcome: usize, lo_ns: f64, hi_ns: f64) {
        let Some(r) = self.analysis.get(outcome) else { return };
        let found = analysis::samples_in_latency(&r.outcome, lo_ns, hi_ns);
        let Some(sv) = self.sources.get(r.outcome.source) else { return };
        let spans: Vec<(f64, f64)> = found
            .iter()
            .filter_map(|&i| r.outcome.samples.get(i))
            .map(|s| (sv.to_common(s.start), sv.to_common(s.end)))
            .collect();
        match spans[..] {
            [] => {}
            [_] => self.update(Message::ShowSample { outcome, sample: found[0] }),
            _ => {
                let a = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
                let b = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
                let pad = (b - a).max(1000.0) * 0.02;
                self.show_range(a - pad, b + pad);
                self.overlay.arrow = None;
            }
        }
    }

    /// Shades the analyses' stall windows and polling loops on the timeline.
    fn refresh_bands(&mut self) {
        let sources = &self.sources;
        self.overlay.bands = analysis::bands(&self.analysis, |i, t| sources.get(i).map(|sv| sv.to_common(t)));
    }

    /// Every source back on its own clock (offset 0, no drift).
    fn reset_alignment(&mut self) {
        let Some(a) = self.alignment.take() else { return };
        self.analysis_view.aligned = None;
        if let Some(sv) = self.sources.get(a.source) {
            self.align_jobs += 1;
            self.aligning = Some(self.align_jobs);
            self.align_resetting = true;
            // Aligning by hand with a zero offset is the reset, through the same worker.
            let reference = self.sources.first().map(|s| (s.prepared.clone(), s.placement));
            if let Some(r) = reference {
                let o = (a.source, sv.prepared.clone());
                align_dialog::spawn_align(self.align_jobs, r, o, "+0ps".into(), self.outbox.clone());
            }
        }
        self.analysis = Arc::default();
        self.overlay.bands.clear();
    }

    /// Once the files are loaded: the command line's alignment, then its rules.
    fn startup_step(&mut self) {
        if !self.loads.is_empty() || self.aligning.is_some() || self.sources.is_empty() {
            return;
        }
        let Some(mut startup) = self.startup.take() else { return };
        if let Some(text) = startup.align.take() {
            // `N` counts the files as given; loads finish in any order.
            let loaded = |n: usize| {
                let name = startup.files.get(n)?.file_name()?.to_string_lossy().into_owned();
                self.sources.iter().position(|s| s.source().name == name)
            };
            let parsed = latscope_analysis::align::parse_align(&text);
            match (parsed, text.split_once(':')) {
                (Ok(spec), Some((_, rest))) => {
                    let n = match spec {
                        latscope_analysis::align::AlignSpec::Manual { source, .. }
                        | latscope_analysis::align::AlignSpec::Match { source, .. } => source,
                    };
                    match (loaded(0), loaded(n)) {
                        (Some(reference), Some(other)) => {
                            self.update(Message::Align { reference, other, spec: rest.to_owned() })
                        }
                        _ => self.errors.push(format!("--align {text:?}: no file {n} among the loaded ones")),
                    }
                }
                (Err(e), _) => self.errors.push(format!("--align {text:?}: {e}")),
                (Ok(_), None) => {}
            }
            // The rules wait for the alignment.
            self.startup = Some(startup);
            return;
        }
        if startup.run {
            self.update(Message::RunAnalysis);
        }
    }

    fn sim_handle(&self) -> Option<&SimHandle> {
        self.sim.handle.as_ref()
    }

    /// Applies one message.
    pub fn update(&mut self, msg: Message) {
        match msg {
            Message::OpenFiles(paths) => {
                let (sessions, paths): (Vec<_>, Vec<_>) =
                    paths.into_iter().partition(|p| session::is_session_path(p));
                for path in sessions {
                    self.sessions_reading += 1;
                    session::read_in_background(path, self.outbox.clone());
                }
                for path in paths {
                    let ctl = LoadControl::new();
                    let job = self.next_job;
                    self.next_job += 1;
                    self.remember_recent(&path);
                    workers::load(job, path.clone(), ctl.clone(), self.outbox.clone());
                    self.loads.push(LoadJob { job, path, ctl });
                }
            }
            Message::PickFiles => self.picker.pick(self.outbox.clone()),
            Message::CancelLoad(job) => {
                // The worker stops at its next check; its late answer is ignored.
                if let Some(j) = self.loads.iter().find(|j| j.job == job) {
                    j.ctl.cancel();
                }
                self.loads.retain(|j| j.job != job);
                self.add_finished_loads();
            }
            Message::Loaded { job, path, result } => {
                if !self.loads.iter().any(|j| j.job == job) {
                    return; // cancelled
                }
                self.loads.retain(|j| j.job != job);
                match result {
                    Ok(prepared) => {
                        self.finished_loads.insert(job, (path, prepared));
                    }
                    Err(e) => self.errors.push(e),
                }
                self.add_finished_loads();
            }
            Message::CloseAll => {
                self.sources.clear();
                self.finished_loads.clear();
                self.sim.handle = None;
                self.sim.source = None;
                self.overlay = Overlay::default();
                self.analysis = Arc::default();
                self.analysis_inputs.clear();
                self.table.rows = Default::default();
                self.fitted = false;
                // A late alignment or derivation would land on whatever is opened next.
                self.alignment = None;
                self.aligning = None;
                self.analysis_view.aligned = None;
            }
            Message::Zoom { factor, at } => {
                let at = if at.is_finite() {
                    at
                } else {
                    self.viewport.start + self.viewport.ps_per_px * self.data_width() / 2.0
                };
                self.viewport.zoom(factor, at);
            }
            Message::PanFraction(f) => self.viewport.start += f * self.viewport.ps_per_px * self.data_width(),
            Message::PanBy(d) => self.viewport.start += d,
            Message::FitAll => self.fit_all(),
            Message::ShowRange(a, b) => self.show_range(a, b),
            Message::CenterOn(t) => self.center_on(t),
            Message::SetCursor(CursorId::A, t) => self.overlay.cursor_a = Some(t),
            Message::SetCursor(CursorId::B, t) => self.overlay.cursor_b = Some(t),
            Message::ClearCursors => {
                self.overlay.cursor_a = None;
                self.overlay.cursor_b = None;
                self.overlay.arrow = None;
            }
            Message::FocusLane(id) => self.overlay.focused = Some(id),
            Message::ToggleLane(id) => {
                if let Some(v) = self.sources.get_mut(id.source).and_then(|s| s.lanes.get_mut(id.lane)) {
                    v.visible = !v.visible;
                }
            }
            Message::MoveLane(id, by) => {
                if let Some(sv) = self.sources.get_mut(id.source) {
                    let to = id.lane.saturating_add_signed(by).min(sv.lanes.len().saturating_sub(1));
                    if id.lane < sv.lanes.len() {
                        let v = sv.lanes.remove(id.lane);
                        sv.lanes.insert(to, v);
                        if self.overlay.focused == Some(id) {
                            self.overlay.focused = Some(LaneId { source: id.source, lane: to });
                        }
                    }
                }
            }
            Message::StepEdge(forward) => self.step_edge(forward),
            Message::SelectEvent(sel) => self.select(sel),
            Message::AddMarker => {
                let t = self.overlay.cursor_a.unwrap_or_else(|| {
                    self.viewport.start + self.viewport.ps_per_px * self.data_width() / 2.0
                });
                let name = format!("M{}", self.overlay.markers.len() + 1);
                self.overlay.markers.push((name, t));
            }
            Message::RenameMarker(i, name) => {
                if let Some(m) = self.overlay.markers.get_mut(i) {
                    m.0 = name;
                }
            }
            Message::RemoveMarker(i) => {
                if i < self.overlay.markers.len() {
                    self.overlay.markers.remove(i);
                }
            }
            Message::JumpMarker(i) => {
                if let Some(&(_, t)) = self.overlay.markers.get(i) {
                    self.center_on(t);
                }
            }
            Message::TogglePanel(p) => {
                let flag = match p {
                    PanelId::Tracks => &mut self.show_tracks,
                    PanelId::Table => &mut self.show_table,
                    PanelId::Analysis => &mut self.show_analysis,
                    PanelId::Simulator => &mut self.show_sim,
                };
                *flag = !*flag;
            }
            Message::TogglePalette => {
                self.palette_open = !self.palette_open;
                self.palette_query.clear();
            }
            Message::SetFilter(f) => {
                self.table.filter = f;
                self.refresh_table();
            }
            Message::SortTable(s) => {
                self.table.sort = s;
                self.refresh_table();
            }
            Message::TableReady(rows) => {
                if rows.generation == self.table_latest.load(Ordering::Relaxed) {
                    self.table.rows = rows;
                    self.table.pending = false;
                }
            }
            Message::SearchStep(forward) => self.search_step(forward),
            Message::RunAnalysis => {
                if !self.sources.is_empty() {
                    self.analysis_generation += 1;
                    self.analysis_running = true;
                    self.show_analysis = true;
                    let sources: Vec<_> = self.sources.iter().map(|s| s.prepared.clone()).collect();
                    self.analysis_inputs = sources.clone();
                    let placements: Vec<_> = self.sources.iter().map(|s| s.placement).collect();
                    self.analysis_placements = placements.clone();
                    let specs = self.rules.specs.clone();
                    // Sources placed on one clock (the Align dialog, or offsets restored
                    // from a session) are one aligned trace, as with `report --align`.
                    let together = self.alignment.is_some() || placements.iter().any(|p| !p.is_identity());
                    let (generation, outbox) = (self.analysis_generation, self.outbox.clone());
                    analysis::spawn_analysis(generation, sources, placements, specs, together, outbox);
                }
            }
            Message::AnalysisDone { generation, results, errors } => {
                if generation == self.analysis_generation {
                    self.analysis_running = false;
                    self.analysis = Arc::new(results);
                    self.refresh_bands();
                    self.errors.extend(errors);
                }
            }
            Message::ShowSample { outcome, sample } => {
                let found = self.analysis.get(outcome).and_then(|r| {
                    let s = r.outcome.samples.get(sample)?;
                    let sv = self.sources.get(r.outcome.source)?;
                    Some((sv.to_common(s.start), sv.to_common(s.end)))
                });
                if let Some((a, b)) = found {
                    let pad = (b - a).max(1000.0) * 1.5;
                    self.show_range(a - pad, b + pad);
                    self.overlay.cursor_a = Some(a);
                    self.overlay.cursor_b = Some(b);
                    self.overlay.arrow = Some((a, b));
                }
            }
            Message::Sim(cmd) => match cmd {
                SimCommand::Start { scenario, sets, duration } => self.start_sim(&scenario, &sets, duration),
                SimCommand::Stop => {
                    // The last snapshot stays as a source like any capture.
                    self.sim.handle = None;
                    self.sim.source = None;
                }
                other => {
                    match other {
                        SimCommand::Play => self.sim.playing = true,
                        SimCommand::Pause => self.sim.playing = false,
                        _ => {}
                    }
                    if let Some(h) = self.sim_handle() {
                        h.send(other);
                    }
                }
            },
            Message::SimSnapshot { run, prepared, now, events, finished } => {
                if self.sim.handle.as_ref().is_none_or(|h| h.run != run) {
                    return;
                }
                self.sim.now = now;
                self.sim.events = events;
                self.sim.finished = finished;
                self.sim.snapshots += 1;
                self.generation += 1;
                let snapshot = prepared.clone();
                let index = match self.sim.source.filter(|&i| i < self.sources.len()) {
                    Some(i) => {
                        if let Some(sv) = self.sources.get_mut(i) {
                            sv.replace(prepared, self.generation);
                        }
                        i
                    }
                    None => {
                        let i = self.add_source(prepared);
                        self.sim.source = Some(i);
                        // Start with about 20 ms on screen.
                        self.viewport.ps_per_px = 20e9 / self.data_width();
                        i
                    }
                };
                if self.sim.follow
                    && let Some(sv) = self.sources.get(index)
                {
                    let head = sv.to_common(now);
                    self.viewport.start = head - self.viewport.ps_per_px * self.data_width() * 0.92;
                }
                if finished && self.screenshot.is_some() {
                    self.fit_all();
                    self.refit = true;
                }
                if self.table.rows.source == index {
                    self.refresh_table();
                }
                if self.sim.live.due(finished) {
                    self.sim.live.start(snapshot, index, self.outbox.clone());
                }
            }
            Message::SimError(e) => self.sim.error = Some(e),
            Message::SimMetrics { run, metrics } => {
                if self.sim.handle.as_ref().is_some_and(|h| h.run == run) {
                    match metrics {
                        Ok(m) => self.sim.metrics = m,
                        Err(e) => self.sim.error = Some(e),
                    }
                }
            }
            Message::Error(e) => self.errors.push(e),
            Message::DismissError(i) => {
                if i < self.errors.len() {
                    self.errors.remove(i);
                }
            }
            Message::ShowLatencyRange { outcome, lo_ns, hi_ns } => {
                self.show_latency_range(outcome, lo_ns, hi_ns)
            }
            Message::OpenAlign => {
                self.align_dialog.open = true;
                if self.align_dialog.other >= self.sources.len() {
                    self.align_dialog.other = 1;
                }
            }
            Message::Align { reference, other, spec } => {
                if let (Some(r), Some(o)) = (self.sources.get(reference), self.sources.get(other)) {
                    self.align_jobs += 1;
                    self.aligning = Some(self.align_jobs);
                    self.align_resetting = false;
                    let (r, o) = ((r.prepared.clone(), r.placement), (other, o.prepared.clone()));
                    align_dialog::spawn_align(self.align_jobs, r, o, spec, self.outbox.clone());
                }
            }
            Message::Aligned { job, source, result } => {
                if self.aligning != Some(job) {
                    return;
                }
                self.aligning = None;
                match result {
                    Ok(alignment) => {
                        // Only the placement changes: the source's data and lanes stay; cached
                        // meshes are drawn at the old place, so they are invalidated.
                        self.generation += 1;
                        if let Some(sv) = self.sources.get_mut(source) {
                            sv.placement = alignment.placement;
                            sv.generation = self.generation;
                        }
                        if std::mem::take(&mut self.align_resetting) {
                            self.analysis_view.aligned = None;
                            self.alignment = None;
                        } else {
                            self.analysis_view.aligned = Some(align_dialog::describe(&alignment));
                            self.alignment = Some(alignment);
                        }
                        self.align_dialog.open = false;
                        // Results of the per-source run no longer describe what a run gives.
                        self.analysis = Arc::default();
                        self.overlay.bands.clear();
                    }
                    Err(e) => {
                        self.align_resetting = false;
                        self.errors.push(format!("align: {e}"));
                    }
                }
            }
            Message::ResetAlign => self.reset_alignment(),
            Message::LiveAnalysisDone { generation, results } => {
                if let Some(results) = self.sim.live.accept(generation, results) {
                    self.analysis = Arc::new(results);
                    self.refresh_bands();
                }
            }
            Message::OpenDeriveDigital(id) => {
                let analog = self.sources.get(id.source).and_then(|sv| match sv.data_lane(id.lane)?.kind {
                    LaneKind::Analog { track, .. } => Some((sv, track)),
                    _ => None,
                });
                if let Some((sv, track)) = analog {
                    self.derive_dialog.open_on(sv.source(), id.source, track);
                }
            }
            Message::DeriveDigital { source, track, threshold } => {
                if let Some(sv) = self.sources.get(source) {
                    let (p, out) = (sv.prepared.clone(), self.outbox.clone());
                    derive_dialog::spawn_derive(source, p, track, threshold, out);
                }
            }
            Message::Derived { source, result } => match result {
                Ok(prepared) => {
                    self.generation += 1;
                    if let Some(sv) = self.sources.get_mut(source) {
                        sv.replace(prepared, self.generation);
                    }
                }
                Err(e) => self.errors.push(format!("derive digital: {e}")),
            },
            Message::ScreenshotTaken(image) => {
                if let Some(st) = &self.screenshot {
                    // Encoding a big window takes a while: off the thread that paints. The
                    // window closes when `ScreenshotSaved` arrives.
                    let (path, inputs, out) = (st.path.clone(), self.input_paths(), self.outbox.clone());
                    let spawned =
                        std::thread::Builder::new().name("latscope-screenshot".into()).spawn(move || {
                            let result = save_png(&path, &image, &inputs).map(|()| path);
                            out.send(Message::ScreenshotSaved(result.map_err(|e| format!("{e:#}"))));
                        });
                    if let Err(e) = spawned {
                        self.errors.push(format!("cannot start the screenshot thread: {e}"));
                        self.quit = true;
                    }
                }
            }
            Message::ScreenshotSaved(result) => {
                match result {
                    Ok(path) => self.screenshot_saved = Some(path),
                    Err(e) => self.errors.push(e),
                }
                self.quit = true;
            }
            Message::Export(what) => self.ask_save(what),
            Message::SaveTo(what, path) => self.save_to(what, path),
            Message::Saved(result) => self.saved(result),
            Message::SessionRead { path, result } => self.session_read(&path, result),
            Message::SetTheme(kind) => self.theme = kind,
            Message::ToggleTheme => self.theme = self.theme.other(),
            Message::RenameLane(id, name) => self.rename_lane(id, name),
            Message::SetLaneColor(id, color) => self.set_lane_color(id, color),
            Message::BrowseFiles(purpose) => self.browse(purpose),
        }
    }

    /// Drains worker messages.
    pub fn poll(&mut self) {
        while let Ok(msg) = self.inbox.try_recv() {
            self.update(msg);
        }
    }

    fn keyboard(&mut self, ctx: &egui::Context) -> Vec<Message> {
        use egui::{Key, Modifiers};
        let mut msgs = Vec::new();
        let typing = ctx.egui_wants_keyboard_input();
        ctx.input_mut(|i| {
            if i.consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::P) {
                msgs.push(Message::TogglePalette);
            }
            if i.consume_key(Modifiers::COMMAND, Key::O) {
                msgs.push(Message::PickFiles);
            }
            if i.consume_key(Modifiers::SHIFT, Key::F3) {
                msgs.push(Message::SearchStep(false));
            }
            if i.consume_key(Modifiers::NONE, Key::F3) {
                msgs.push(Message::SearchStep(true));
            }
            if typing || self.palette_open {
                return;
            }
            let plain: &[(Key, MakeMessage)] = &[
                (Key::W, || Message::Zoom { factor: 0.5, at: f64::NAN }),
                (Key::S, || Message::Zoom { factor: 2.0, at: f64::NAN }),
                (Key::A, || Message::PanFraction(-0.2)),
                (Key::D, || Message::PanFraction(0.2)),
                (Key::F, || Message::FitAll),
                (Key::M, || Message::AddMarker),
                (Key::Escape, || Message::ClearCursors),
            ];
            for (key, make) in plain {
                if i.consume_key(Modifiers::NONE, *key) {
                    msgs.push(make());
                }
            }
            if i.consume_key(Modifiers::SHIFT, Key::N) {
                msgs.push(Message::StepEdge(false));
            }
            if i.consume_key(Modifiers::NONE, Key::N) {
                msgs.push(Message::StepEdge(true));
            }
        });
        if ctx.input_mut(|i| i.consume_key(Modifiers::COMMAND, Key::F)) {
            self.show_table = true;
            ctx.memory_mut(|m| m.request_focus(egui::Id::unique("event-filter")));
        }
        let dropped: Vec<PathBuf> =
            ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if !dropped.is_empty() {
            msgs.push(Message::OpenFiles(dropped));
        }
        msgs
    }

    fn menu(&self, ui: &mut egui::Ui) -> Vec<Message> {
        let mut msgs = Vec::new();
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…  Ctrl+O").clicked() {
                    msgs.push(Message::PickFiles);
                }
                ui.menu_button("Open recent", |ui| {
                    if self.recent.is_empty() {
                        ui.weak("nothing yet");
                    }
                    for p in &self.recent {
                        if ui.button(p.display().to_string()).clicked() {
                            msgs.push(Message::OpenFiles(vec![p.clone()]));
                        }
                    }
                });
                if ui.button("Close all").clicked() {
                    msgs.push(Message::CloseAll);
                }
                ui.separator();
                msgs.extend(super::extras::file_menu_entries(ui));
            });
            ui.menu_button("View", |ui| {
                for (label, msg) in [
                    ("Fit all  F", (|| Message::FitAll) as fn() -> Message),
                    ("Zoom in  W", || Message::Zoom { factor: 0.5, at: f64::NAN }),
                    ("Zoom out  S", || Message::Zoom { factor: 2.0, at: f64::NAN }),
                    ("Track list", || Message::TogglePanel(PanelId::Tracks)),
                    ("Event table", || Message::TogglePanel(PanelId::Table)),
                    ("Analysis", || Message::TogglePanel(PanelId::Analysis)),
                    ("Simulator", || Message::TogglePanel(PanelId::Simulator)),
                    ("Command palette  Ctrl+Shift+P", || Message::TogglePalette),
                    ("Light / dark theme", || Message::ToggleTheme),
                ] {
                    if ui.button(label).clicked() {
                        msgs.push(msg());
                    }
                }
            });
            ui.menu_button("Analysis", |ui| {
                if ui.button("Run the analysis panel's rules").clicked() {
                    msgs.push(Message::RunAnalysis);
                }
                if ui.button("Align sources…").clicked() {
                    msgs.push(Message::OpenAlign);
                }
            });
            ui.add_space(16.0);
            for s in &self.sources {
                ui.weak(format!("{} · {}", s.source().name, s.source().format));
            }
        });
        msgs
    }

    fn status_bar(&self, ui: &mut egui::Ui) -> Vec<Message> {
        let mut msgs = Vec::new();
        ui.horizontal(|ui| {
            let clock = self.sources.first();
            let fmt = |t: f64| match clock {
                Some(sv) => timeline::clock_text(sv.source(), sv.to_source(t).round() as Ps),
                None => format_seconds(t.round() as Ps),
            };
            if let Some(a) = self.overlay.cursor_a {
                ui.colored_label(theme::CURSOR_A, format!("A {}", fmt(a)));
            }
            if let Some(b) = self.overlay.cursor_b {
                ui.colored_label(theme::CURSOR_B, format!("B {}", fmt(b)));
            }
            if let (Some(a), Some(b)) = (self.overlay.cursor_a, self.overlay.cursor_b) {
                let d = (b - a).abs();
                let hz = if d > 0.0 { 1e12 / d } else { 0.0 };
                ui.strong(format!("Δ {}  1/Δ {}", format_seconds(d.round() as Ps), format_hz(hz)));
            }
            ui.separator();
            ui.weak(format!(
                "{} / px · view {}",
                format_seconds(self.viewport.ps_per_px.round() as Ps),
                format_seconds((self.viewport.ps_per_px * self.data_width()).round() as Ps)
            ));
            ui.weak(sources_summary(self.sources.iter().map(|s| s.source())));
            for j in &self.loads {
                ui.separator();
                let name = j
                    .path
                    .file_name()
                    .map_or_else(|| j.path.display().to_string(), |n| n.to_string_lossy().into());
                ui.add(
                    egui::ProgressBar::new(j.ctl.fraction())
                        .desired_width(140.0)
                        .text(format!("loading {name}")),
                );
                if ui.small_button("Cancel").clicked() {
                    msgs.push(Message::CancelLoad(j.job));
                }
            }
            if self.analysis_running {
                ui.spinner();
                ui.weak("analysing");
            }
            if let Some(n) = &self.notice {
                ui.separator();
                ui.weak(n);
            }
        });
        msgs
    }

    fn tracks_panel(&self, ui: &mut egui::Ui) -> Vec<Message> {
        let mut msgs = Vec::new();
        egui::ScrollArea::vertical().id_salt("tracks").show(ui, |ui| {
            for (si, sv) in self.sources.iter().enumerate() {
                egui::CollapsingHeader::new(egui::RichText::new(&sv.source().name).strong())
                    .id_salt(("source", si))
                    .default_open(true)
                    .show(ui, |ui| {
                        for (vi, v) in sv.lanes.iter().enumerate() {
                            let id = LaneId { source: si, lane: vi };
                            ui.horizontal(|ui| {
                                let mut visible = v.visible;
                                if ui.checkbox(&mut visible, "").on_hover_text("show / hide").changed() {
                                    msgs.push(Message::ToggleLane(id));
                                }
                                let (r, p) = ui.allocate_painter(egui::vec2(8.0, 14.0), egui::Sense::hover());
                                p.rect_filled(r.rect, 2.0, v.color);
                                let focused = self.overlay.focused == Some(id);
                                let kind = sv.data_lane(vi).map_or("", |l| l.kind_name());
                                let label = ui.selectable_label(focused, &v.name).on_hover_text(kind);
                                if label.clicked() {
                                    msgs.push(Message::FocusLane(id));
                                }
                                label.context_menu(|ui| {
                                    msgs.extend(super::extras::lane_menu(ui, id, v));
                                    if kind == "analog" {
                                        ui.separator();
                                        if ui.button("Derive digital…").clicked() {
                                            msgs.push(Message::OpenDeriveDigital(id));
                                            ui.close();
                                        }
                                    }
                                });
                                if focused {
                                    if ui.small_button("up").clicked() {
                                        msgs.push(Message::MoveLane(id, -1));
                                    }
                                    if ui.small_button("down").clicked() {
                                        msgs.push(Message::MoveLane(id, 1));
                                    }
                                }
                            });
                        }
                    });
            }
            if !self.overlay.markers.is_empty() {
                ui.separator();
                ui.strong("Markers");
                for (i, (name, _)) in self.overlay.markers.iter().enumerate() {
                    ui.horizontal(|ui| {
                        let mut text = name.clone();
                        if ui.add(egui::TextEdit::singleline(&mut text).desired_width(90.0)).changed() {
                            msgs.push(Message::RenameMarker(i, text));
                        }
                        if ui.small_button("go").clicked() {
                            msgs.push(Message::JumpMarker(i));
                        }
                        if ui.small_button("x").clicked() {
                            msgs.push(Message::RemoveMarker(i));
                        }
                    });
                }
            }
        });
        msgs
    }

    fn errors_ui(errors: &[String], ui: &mut egui::Ui) -> Vec<Message> {
        let mut msgs = Vec::new();
        for (i, e) in errors.iter().enumerate().rev().take(4) {
            egui::Frame::new()
                .fill(theme::IRQ.gamma_multiply(0.25))
                .inner_margin(egui::Margin::symmetric(8, 4))
                .corner_radius(4)
                .show(ui, |ui| {
                    ui.horizontal(|ui| {
                        ui.label(egui::RichText::new(e).color(theme::TEXT));
                        if ui.small_button("x").clicked() {
                            msgs.push(Message::DismissError(i));
                        }
                    });
                });
        }
        msgs
    }

    /// One frame: drain workers, handle input, draw, apply what the views returned.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.outbox.set_context(&ctx);
        if !self.themed {
            theme::apply_kind(&ctx, self.theme);
            self.applied_theme = Some(self.theme);
            self.themed = true;
        }
        self.poll();
        self.startup_step();
        let mut msgs = self.keyboard(&ctx);

        egui::Panel::top("menu").show(ui, |ui| msgs.extend(self.menu(ui)));
        egui::Panel::bottom("status").show(ui, |ui| msgs.extend(self.status_bar(ui)));
        // Waveform-only captures have no events to list: the timeline gets the room.
        let has_events = self.sources.iter().any(|s| !s.source().events.is_empty());
        if self.show_table && has_events {
            egui::Panel::bottom("table").resizable(true).default_size(230.0).show(ui, |ui| {
                ui.columns(2, |cols| {
                    let sources = &self.sources;
                    msgs.extend(table::show(&mut cols[0], &mut self.table, sources, self.overlay.selected));
                    table::inspector(&mut cols[1], sources, self.overlay.selected);
                });
            });
        }
        if self.show_tracks {
            egui::Panel::left("tracks").resizable(true).default_size(220.0).show(ui, |ui| {
                ui.strong("Tracks");
                msgs.extend(self.tracks_panel(ui));
            });
        }
        if self.show_sim || self.show_analysis {
            egui::Panel::right("side").resizable(true).default_size(320.0).show(ui, |ui| {
                if self.show_sim {
                    msgs.extend(sim_panel::panel(ui, &mut self.sim));
                    ui.separator();
                }
                if self.show_analysis {
                    ui.heading("Analysis");
                    let names: Vec<String> = self.sources.iter().map(|s| s.source().name.clone()).collect();
                    msgs.extend(analysis::panel(
                        ui,
                        &mut self.rules,
                        &mut self.analysis_view,
                        &self.analysis,
                        self.analysis_running,
                        &names,
                    ));
                }
            });
        }
        egui::CentralPanel::no_frame().show(ui, |ui| {
            if !self.errors.is_empty() {
                msgs.extend(Self::errors_ui(&self.errors, ui));
            }
            if self.sources.is_empty() && self.loads.is_empty() {
                ui.centered_and_justified(|ui| {
                    ui.weak("Open a capture (Ctrl+O), drop files here, or start the simulator (View > Simulator).");
                });
            } else {
                msgs.extend(timeline::show(
                    ui,
                    &self.sources,
                    &self.viewport,
                    &self.overlay,
                    &mut self.cache,
                    &mut self.scroll,
                    &mut self.layout,
                ));
            }
        });
        if self.palette_open {
            let mut open = true;
            msgs.extend(palette::show(&ctx, &mut self.palette_query, &mut open));
            if !open {
                self.palette_open = false;
            }
        }
        if self.derive_dialog.open {
            msgs.extend(derive_dialog::show(&ctx, &mut self.derive_dialog));
        }
        if self.align_dialog.open {
            let names: Vec<String> = self.sources.iter().map(|s| s.source().name.clone()).collect();
            msgs.extend(align_dialog::show(&ctx, &mut self.align_dialog, &names, self.aligning.is_some()));
        }
        for m in msgs {
            self.update(m);
        }
        if self.refit && self.layout.data_width > 1.0 {
            self.refit = false;
            self.fit_all();
        }
        self.frame_extras(&ctx);
        self.screenshot_step(&ctx);
        if !self.loads.is_empty()
            || (self.sim.handle.is_some() && !self.sim.finished)
            || self.analysis_running
        {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        if self.quit {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    /// Whether everything asked for at start is on screen (for `--screenshot`).
    pub fn settled(&self) -> bool {
        let sim_done = self.sim.handle.is_none() || self.sim.finished;
        self.loads.is_empty()
            && sim_done
            && !self.table.pending
            && !self.session_busy()
            && self.startup.is_none()
            && self.aligning.is_none()
            && !self.analysis_running
    }

    fn screenshot_step(&mut self, ctx: &egui::Context) {
        let settled = self.settled();
        let Some(st) = &mut self.screenshot else { return };
        if st.requested {
            return;
        }
        if settled {
            st.ready_frames += 1;
        }
        // A few frames after the data arrived, so layout and meshes have settled.
        if st.ready_frames >= 4 {
            st.requested = true;
            let out = self.outbox.clone();
            ctx.request_screenshot(move |image| out.send(Message::ScreenshotTaken(image)));
        }
        ctx.request_repaint();
    }

    /// Seeds the view with a source prepared elsewhere (tests, benchmarks).
    /// Adds the finished loads that no earlier, still running load must precede.
    fn add_finished_loads(&mut self) {
        let first_running = self.loads.iter().map(|j| j.job).min().unwrap_or(u64::MAX);
        while let Some(entry) = self.finished_loads.first_entry() {
            if *entry.key() > first_running {
                break;
            }
            let (path, prepared) = entry.remove();
            for w in prepared.source.diagnostics.summary().into_iter().take(3) {
                self.errors.push(format!("{}: {w}", path.display()));
            }
            self.add_source(prepared);
            if !self.fitted || self.loads.is_empty() {
                self.fit_all();
                self.fitted = true;
                self.refit = true;
            }
            self.refresh_table();
        }
    }

    pub fn add_prepared(&mut self, prepared: Prepared) -> usize {
        let i = self.add_source(Arc::new(prepared));
        self.fit_all();
        i
    }

    /// Sorting the table by column (for tests and the palette).
    pub fn set_sort(&mut self, sort: TableSort) {
        self.update(Message::SortTable(sort));
    }
}

fn format_hz(hz: f64) -> String {
    if hz >= 1e9 {
        format!("{:.3} GHz", hz / 1e9)
    } else if hz >= 1e6 {
        format!("{:.3} MHz", hz / 1e6)
    } else if hz >= 1e3 {
        format!("{:.3} kHz", hz / 1e3)
    } else {
        format!("{hz:.3} Hz")
    }
}

/// Writes an egui screenshot as an 8-bit RGBA PNG at `path`, atomically and never over one
/// of `inputs` (the `--screenshot` worker's job).
pub fn save_png(path: &Path, image: &egui::ColorImage, inputs: &[PathBuf]) -> anyhow::Result<()> {
    let bytes = super::export::encode_png(image)?;
    latscope_analysis::atomic::write_atomic(path, &bytes, inputs)?;
    Ok(())
}

impl eframe::App for Workbench {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        Workbench::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.screenshot.is_none() {
            eframe::set_value(storage, RECENT_KEY, &self.recent);
            self.save_look(storage);
        }
    }
}

/// Opens the real window (DESIGN §7: `latscope [FILE...]`, `latscope --screenshot PNG`).
pub fn run_native(options: Options) -> anyhow::Result<()> {
    let screenshot = options.screenshot.clone();
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("latscope")
            .with_inner_size([1500.0, 920.0])
            .with_min_inner_size([640.0, 400.0])
            .with_drag_and_drop(true),
        persist_window: screenshot.is_none(),
        renderer: eframe::Renderer::Glow,
        ..Default::default()
    };
    let saved = std::sync::Arc::new(std::sync::Mutex::new(None::<PathBuf>));
    let saved_out = saved.clone();
    let frame_stats = super::frame_stats::FrameStats::from_env();
    eframe::run_native(
        "latscope",
        native,
        Box::new(move |cc| {
            let recent: Vec<PathBuf> = match (&options.screenshot, cc.storage) {
                (None, Some(s)) => eframe::get_value(s, RECENT_KEY).unwrap_or_default(),
                _ => Vec::new(),
            };
            let demo = options.files.is_empty();
            let mut wb =
                Workbench::new(Options { demo, ..options }, Box::new(super::picker::RfdPicker), recent);
            if let Some(s) = cc.storage {
                wb.restore_look(s);
            }
            Ok(Box::new(ScreenshotWatch { wb, saved: saved_out, frame_stats }))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))?;
    if let Some(path) = screenshot {
        let ok = saved.lock().map(|s| s.is_some()).unwrap_or(false);
        if !ok {
            anyhow::bail!("{}: no screenshot was taken", path.display());
        }
    }
    Ok(())
}

/// Forwards to the workbench and reports the saved screenshot to `run_native`.
struct ScreenshotWatch {
    wb: Workbench,
    saved: Arc<std::sync::Mutex<Option<PathBuf>>>,
    /// Set by `LATSCOPE_FRAME_LOG`: frame times, written when the window closes.
    frame_stats: Option<super::frame_stats::FrameStats>,
}

impl eframe::App for ScreenshotWatch {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let began = self.frame_stats.as_mut().map_or_else(std::time::Instant::now, |s| s.begin());
        eframe::App::ui(&mut self.wb, ui, frame);
        if let Some(stats) = &mut self.frame_stats {
            stats.frame(began);
        }
        if let Some(p) = &self.wb.screenshot_saved
            && let Ok(mut s) = self.saved.lock()
        {
            *s = Some(p.clone());
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::App::save(&mut self.wb, storage);
    }
}

/// The status bar's count of what is loaded: sources, then events and signals where there
/// are any (a waveform has signals and no events; "0 events" would read as an empty file).
fn sources_summary<'a>(sources: impl Iterator<Item = &'a Source>) -> String {
    let (mut n, mut events, mut signals) = (0usize, 0usize, 0usize);
    for s in sources {
        n += 1;
        events += s.events.len();
        signals += s.digital.len() + s.analog.len();
    }
    let plural = |k: usize, one: &str| format!("{k} {one}{}", if k == 1 { "" } else { "s" });
    let mut out = plural(n, "source");
    if events > 0 || signals == 0 {
        out += &format!(" · {}", plural(events, "event"));
    }
    if signals > 0 {
        out += &format!(" · {}", plural(signals, "signal"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_model::{DigitalTrack, SourceKind};

    #[test]
    fn the_status_counts_events_and_signals_that_are_there() {
        let mut wave = Source::new("fsm.ghw", "ghw", SourceKind::File);
        wave.digital.push(DigitalTrack::new("clk", 0));
        wave.digital.push(DigitalTrack::new("busy", 0));
        assert_eq!(sources_summary([&wave].into_iter()), "1 source · 2 signals");
        let empty = Source::new("none", "ftrace-text", SourceKind::File);
        assert_eq!(sources_summary([&empty].into_iter()), "1 source · 0 events");
        let trace = latscope_importers::open(
            std::path::Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../samples/ftrace/virtio_blk_direct_read.txt"
            )),
            &latscope_importers::LoadControl::new(),
        )
        .expect("sample loads");
        assert_eq!(sources_summary([&trace, &wave].into_iter()), "2 sources · 3289 events · 2 signals");
    }
}
