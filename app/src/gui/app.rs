//! The workbench: the document, the view of it and the other rooms, the jobs, and the
//! frame. A frame drains the jobs' messages, reads the keyboard, draws the views (which read
//! the state and return messages) and applies the messages with [`Workbench::update`] (in
//! `update/`), the one place state changes.

use super::analysis::AnalysisState;
use super::dialogs::Dialogs;
use super::document::{Document, SourceId, SourceStamp};
use super::errors::Errors;
use super::export::PngRequest;
use super::fleet::FleetState;
use super::jobs::{JobKind, JobRunner, Outbox, RunningJob};
use super::message::{DerivedLane, FileMsg, Message, SaveMsg};
use super::picker::FilePicker;
use super::prepare::Prepared;
use super::query::QueryState;
use super::record::RecordState;
use super::session::PendingSession;
use super::sim::SimState;
use super::table::TableState;
use super::theme::{self, ThemeKind};
use super::view::ViewState;
use super::views::{self, FrameCache};
use latscope_decoders::spec::Stack;
use latscope_engine::Registry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// A fleet dataset to aggregate in the fleet window, and its `--group-by` and `--trend`.
    pub dataset: Option<PathBuf>,
    pub group_by: Vec<String>,
    pub trend: Option<String>,
    /// Decoder stacks to run once loaded, on each source that has their channels.
    pub decoders: Vec<String>,
}

/// What the command line asked the workbench to do once its files are loaded, parsed: each
/// step names its files by the ids their loads took.
#[derive(Debug)]
pub(super) struct Startup {
    /// The ids of the files given, in the order given (`None` for a session).
    pub files: Vec<Option<SourceId>>,
    /// `--align`, until it is sent.
    pub align: Option<latscope_analysis::align::AlignSpec>,
    /// Run the `--rule`s (after the alignment).
    pub run: bool,
    /// `--decoder`s, until they are sent (before the alignment).
    pub decoders: Vec<Stack>,
}

/// What jobs left to finish: loads that ended before an earlier one (sources join in the
/// order their files were given) and derived lanes waiting for their source to be free.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// By the load's ticket id: the source's id, its file and its data.
    pub loads: BTreeMap<u64, (SourceId, PathBuf, Arc<Prepared>)>,
    /// Derived tracks waiting to be added to their source in place: a job still reads it.
    pub derived: Vec<(SourceStamp, DerivedLane)>,
    /// A session whose files are loading.
    pub session: Option<PendingSession>,
    /// A restored session's rules, waiting for its decoders: they read the decoded events.
    pub session_rules: bool,
    /// The command line's steps, once the files are loaded.
    pub startup: Option<Startup>,
    /// A fleet worst pair to show once its capture has loaded.
    pub jump: Option<super::fleet::PendingJump>,
    /// Sources showing a load's preview, by the load's ticket id: the loaded source
    /// replaces it.
    pub previews: BTreeMap<u64, SourceId>,
}

const MAX_RECENT: usize = 10;
const RECENT_KEY: &str = "latscope.recent";
/// Where eframe's storage keeps the theme.
pub const THEME_KEY: &str = "latscope.theme";

/// The workbench, room by room.
pub struct Workbench {
    /// Presets and decoders by name: the engine's, shared with the workers.
    pub registry: Arc<Registry>,
    /// Every background job, its progress and its staleness ticket.
    pub(super) jobs: JobRunner<Message>,
    picker: Box<dyn FilePicker>,
    /// What is open: the sources, where they sit, the alignment.
    pub doc: Document,
    /// How it is shown: lanes, viewport, cursors, markers, panels.
    pub view: ViewState,
    pub analysis: AnalysisState,
    pub sim: SimState,
    pub table: TableState,
    /// The fleet window (a dataset of many captures).
    pub fleet: FleetState,
    /// The query window (SQL over the open sources' tables).
    pub query: QueryState,
    /// The record window (File > Record…) and the recording going on.
    pub record: RecordState,
    pub dialogs: Dialogs,
    /// The error banner, and the log of every error (`errors.log()`).
    pub errors: Errors,
    /// What the last save wrote, for the status bar.
    pub notice: Option<String>,
    pub recent: Vec<PathBuf>,
    /// The look; kept in eframe's storage and in sessions.
    pub theme: ThemeKind,
    /// `--screenshot`: where to save the window once everything is drawn, then close.
    pub(super) screenshot: Option<PathBuf>,
    /// Where the screenshot was saved, once it is.
    pub screenshot_saved: Option<PathBuf>,
    /// Set when the window should close (after a screenshot).
    pub quit: bool,
    /// A timeline PNG asked for: the next frame's pixels are taken for it.
    pub(super) png_request: Option<PngRequest>,
    /// A timeline PNG whose pixels were asked for and have not arrived yet.
    pub(super) png_waiting: bool,
    pub(super) pending: Pending,
    /// Set while `update` settles what the last message made due (no nested settling).
    pub(super) settling: bool,
    /// What the views keep between frames (meshes, layout): not state.
    pub frame: FrameCache,
}

impl std::fmt::Debug for Workbench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workbench")
            .field("sources", &self.doc.sources.len())
            .field("viewport", &self.view.viewport)
            .field("jobs", &self.jobs.running().map(|j| j.ticket).collect::<Vec<_>>())
            .field("errors", &self.errors)
            .finish_non_exhaustive()
    }
}

impl Workbench {
    pub fn new(options: Options, picker: Box<dyn FilePicker>, recent: Vec<PathBuf>) -> Self {
        let mut wb = Self {
            registry: Arc::new(Registry::native()),
            jobs: JobRunner::default(),
            picker,
            doc: Document::default(),
            view: ViewState::default(),
            analysis: AnalysisState::default(),
            sim: SimState::default(),
            table: TableState::default(),
            fleet: FleetState::default(),
            query: QueryState::default(),
            record: RecordState::default(),
            dialogs: Dialogs::default(),
            errors: Errors::default(),
            notice: None,
            recent,
            theme: ThemeKind::Dark,
            screenshot: options.screenshot.clone(),
            screenshot_saved: None,
            quit: false,
            png_request: None,
            png_waiting: false,
            pending: Pending::default(),
            settling: false,
            frame: FrameCache::default(),
        };
        wb.start(options);
        wb
    }

    pub(super) fn picker(&self) -> &dyn FilePicker {
        &*self.picker
    }

    /// The sender workers and pickers use; tests use it to inject messages.
    pub fn outbox(&self) -> Outbox<Message> {
        self.jobs.outbox()
    }

    /// The background jobs running, oldest first.
    pub fn jobs(&self) -> impl Iterator<Item = &RunningJob> {
        self.jobs.running()
    }

    /// The files being loaded, in the order they were given.
    pub fn loads(&self) -> Vec<&RunningJob> {
        self.jobs.of_kind(JobKind::Load).collect()
    }

    pub fn analysis_running(&self) -> bool {
        self.jobs.busy(JobKind::Analysis)
    }

    /// Whether an alignment is being fitted.
    pub fn aligning(&self) -> bool {
        self.jobs.busy(JobKind::Align)
    }

    /// Whether a newer table query than the rows shown is running.
    pub fn table_pending(&self) -> bool {
        self.jobs.busy(JobKind::Table)
    }

    /// Whether a query of the query window runs.
    pub fn query_pending(&self) -> bool {
        self.jobs.busy(JobKind::Query)
    }

    /// Saves writing in the background (a timeline PNG counts from when it is asked for).
    pub fn saves_running(&self) -> usize {
        self.jobs.of_kind(JobKind::Save).count() + usize::from(self.png_request.is_some() || self.png_waiting)
    }

    /// The common-timeline range of everything loaded.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        self.doc.time_range()
    }

    /// Whether a session is still being restored (its files loading).
    pub fn session_pending(&self) -> bool {
        self.pending.session.is_some()
    }

    /// Whether a session is being read or restored.
    pub fn session_busy(&self) -> bool {
        self.jobs.busy(JobKind::SessionRead) || self.pending.session.is_some()
    }

    /// Whether a fleet worst pair waits for its capture to load.
    /// How many sources show a preview of a capture still loading.
    pub fn previews_shown(&self) -> usize {
        self.pending.previews.len()
    }

    pub fn jump_pending(&self) -> bool {
        self.pending.jump.is_some()
    }

    /// Whether no derived track waits for its source.
    pub fn pending_derived_is_empty(&self) -> bool {
        self.pending.derived.is_empty()
    }

    pub(super) fn remember_recent(&mut self, path: &Path) {
        self.recent.retain(|p| p != path);
        self.recent.insert(0, path.to_owned());
        self.recent.truncate(MAX_RECENT);
    }

    /// Applies the messages the jobs (and pickers) sent since the last frame.
    pub fn poll(&mut self) {
        while let Some(msg) = self.jobs.try_recv() {
            self.update(msg);
        }
    }

    /// One frame: apply what the jobs sent, read the keyboard, draw the views (they only
    /// read the state), then apply what the user asked for.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.jobs.outbox().set_context(&ctx);
        if self.frame.applied_theme != Some(self.theme) {
            theme::apply_kind(&ctx, self.theme);
            self.frame.applied_theme = Some(self.theme);
        }
        self.poll();
        let mut msgs = views::panels::keyboard(&ctx, self.dialogs.palette_open);
        let scene = views::Scene {
            registry: &self.registry,
            doc: &self.doc,
            view: &self.view,
            analysis: &self.analysis,
            sim: &self.sim,
            table: &self.table,
            fleet: &self.fleet,
            query: &self.query,
            record: &self.record,
            dialogs: &self.dialogs,
            errors: &self.errors,
            notice: self.notice.as_deref(),
            recent: &self.recent,
            jobs: &self.jobs,
        };
        msgs.extend(views::panels::frame(&scene, ui, &mut self.frame));
        msgs.extend(self.ask_for_pixels(&ctx));
        let changed = !msgs.is_empty();
        for m in msgs {
            self.update(m);
        }
        if changed || self.frame.applied_theme != Some(self.theme) {
            // Drawn before the messages were applied: draw what they changed.
            ctx.request_repaint();
        }
        if self.jobs.busy(JobKind::Load)
            || self.jobs.busy(JobKind::Fleet)
            || (self.sim.handle.is_some() && !self.sim.finished)
            || self.record.running()
            || self.analysis_running()
            || !self.pending.derived.is_empty()
        {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        if self.quit {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    /// The frame's pixels, asked of egui for what needs them: an asked-for timeline PNG,
    /// and `--screenshot` a few frames after everything settled. They arrive as messages.
    fn ask_for_pixels(&mut self, ctx: &egui::Context) -> Vec<Message> {
        let mut msgs = Vec::new();
        if let Some(req) = &self.png_request {
            let on_screen = self.frame.layout.rect.filter(|_| !self.doc.sources.is_empty());
            if let Some(rect) = on_screen {
                let ppp = ctx.pixels_per_point();
                let rect_px = egui::Rect::from_min_max(
                    (rect.min.to_vec2() * ppp).to_pos2(),
                    (rect.max.to_vec2() * ppp).to_pos2(),
                );
                let (out, path) = (self.outbox(), req.path.clone());
                ctx.request_screenshot(move |image| {
                    out.send(SaveMsg::TimelineShot { path, rect_px, image }.into());
                });
                ctx.request_repaint();
            }
            msgs.push(SaveMsg::PixelsAsked(on_screen.is_some()).into());
        }
        if self.screenshot.is_some() && !self.frame.screenshot_asked {
            if self.settled() {
                self.frame.settled_frames += 1;
            }
            // A few frames after the data arrived, so layout and meshes have settled.
            if self.frame.settled_frames >= 4 {
                self.frame.screenshot_asked = true;
                let out = self.outbox();
                ctx.request_screenshot(move |image| out.send(SaveMsg::ScreenshotTaken(image).into()));
            }
            ctx.request_repaint();
        }
        msgs
    }

    /// Whether everything asked for at start is on screen (for `--screenshot`).
    pub fn settled(&self) -> bool {
        let sim_done = self.sim.handle.is_none() || self.sim.finished;
        !self.jobs.busy(JobKind::Load)
            && !self.jobs.busy(JobKind::Derive)
            && !self.jobs.busy(JobKind::Decode)
            && sim_done
            && !self.table_pending()
            && !self.session_busy()
            && self.pending.startup.is_none()
            && !self.analysis.presets_due
            && !self.aligning()
            && !self.analysis_running()
            && !self.jobs.busy(JobKind::Fleet)
    }

    /// Seeds the document with a source prepared elsewhere (tests, benchmarks), through the
    /// same message a load ends with.
    pub fn add_prepared(&mut self, prepared: Prepared) -> SourceId {
        let id = self.doc.reserve_id();
        let path = prepared.source.path.clone().unwrap_or_default();
        self.update(FileMsg::Added { id, path, prepared: Arc::new(prepared) }.into());
        id
    }

    /// What a session saved now would hold.
    pub fn session(&self) -> super::session::Session {
        super::session::Session::capture(&self.doc, &self.view, &self.analysis.rules.specs, self.theme)
    }

    /// Takes the theme kept in eframe's storage (the last one used).
    pub fn restore_look(&mut self, storage: &dyn eframe::Storage) {
        if let Some(kind) = eframe::get_value(storage, THEME_KEY) {
            self.update(super::message::ShellMsg::SetTheme(kind).into());
        }
    }

    /// Keeps the theme in eframe's storage.
    pub fn save_look(&self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, THEME_KEY, &self.theme);
    }
}

/// Writes an egui screenshot as an 8-bit RGBA PNG at `path`, atomically and never over one
/// of `inputs` (the `--screenshot` worker's job).
pub fn save_png(path: &Path, image: &egui::ColorImage, inputs: &[PathBuf]) -> anyhow::Result<()> {
    let bytes = super::export::encode_png(image)?;
    latscope_engine::atomic::write_atomic(path, &bytes, inputs)?;
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

/// Opens the real window (`latscope [FILE...]`, `latscope --screenshot PNG`).
pub fn run_native(options: Options) -> anyhow::Result<()> {
    let screenshot = options.screenshot.clone();
    let native = eframe::NativeOptions {
        viewport: with_window_icon(egui::ViewportBuilder::default())
            .with_title("latscope")
            .with_app_id("latscope")
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
            let demo = options.files.is_empty() && options.dataset.is_none();
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

/// The application icon (`assets/icons/latscope-256.png`), embedded at build time.
const ICON_PNG: &[u8] = include_bytes!("../../../assets/icons/latscope-256.png");

/// Decodes an 8-bit RGBA PNG into the window icon's pixels.
pub fn decode_icon(png_bytes: &[u8]) -> anyhow::Result<egui::IconData> {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes)).read_info()?;
    let mut rgba = vec![0; reader.output_buffer_size().unwrap_or(0)];
    let info = reader.next_frame(&mut rgba)?;
    anyhow::ensure!(
        info.color_type == png::ColorType::Rgba && info.bit_depth == png::BitDepth::Eight,
        "the icon is not 8-bit RGBA"
    );
    rgba.truncate(info.buffer_size());
    Ok(egui::IconData { rgba, width: info.width, height: info.height })
}

/// The viewport with latscope's icon (without one if it cannot be decoded: the window still opens).
fn with_window_icon(viewport: egui::ViewportBuilder) -> egui::ViewportBuilder {
    match decode_icon(ICON_PNG) {
        Ok(icon) => viewport.with_icon(icon),
        Err(_) => viewport,
    }
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
            let shown = self.wb.doc.sources.len();
            if shown > 0 {
                let previews_only = self.wb.pending.previews.len() == shown;
                stats.mark_once(if previews_only { "preview_drawn" } else { "tracks_drawn" });
            }
            if self.wb.settled() && shown > 0 {
                stats.mark_once("settled");
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_icon_is_the_256_pixel_asset() {
        let icon = decode_icon(ICON_PNG).expect("the embedded icon decodes");
        assert_eq!((icon.width, icon.height), (256, 256));
        assert_eq!(icon.rgba.len(), 256 * 256 * 4);
        // Transparent corners (the rounded square), an opaque middle.
        assert_eq!(icon.rgba[3], 0);
        let middle = (128 * 256 + 128) * 4;
        assert_eq!(icon.rgba[middle + 3], 255);
    }
}
