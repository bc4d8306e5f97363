//! The workbench: its rooms of state, and the frame that lays out the panels. Views read
//! the state and return messages; [`Workbench::update`] (in `update.rs`) applies them.

use super::analysis;
use super::errors::{self, Errors};
use super::export::PngRequest;
use super::jobs::{JobKind, JobRunner, Outbox, RunningJob};
use super::keymap;
use super::message::{Message, TableSort};
use super::palette;
use super::picker::FilePicker;
use super::prepare::{LaneClass, Prepared};
use super::rooms::{AnalysisState, Dialogs, ViewState};
use super::session::PendingSession;
use super::sim_panel::{self, SimState};
use super::table::{self, TableState};
use super::theme;
use super::theme::ThemeKind;
use super::timeline;
use super::{align_dialog, decoder_dialog, derive_dialog};
use latscope_engine::Registry;
use latscope_model::{Ps, Source, format_seconds};
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

#[derive(Debug)]
struct ScreenshotState {
    path: PathBuf,
    ready_frames: u32,
    requested: bool,
}

/// What the command line asked the workbench to do once its files are loaded.
#[derive(Debug)]
pub(super) struct Startup {
    pub files: Vec<PathBuf>,
    /// `--align`, until it is sent.
    pub align: Option<String>,
    /// Run the `--rule`s (after the alignment).
    pub run: bool,
    /// `--decoder`s, until they are sent (before the alignment).
    pub decoders: Vec<String>,
}

const MAX_RECENT: usize = 10;
/// The room the focused track-list row keeps for its up/down buttons.
const MOVE_BUTTONS_WIDTH: f32 = 64.0;
/// The side panel's width at start (the analysis summary's six columns fit).
const SIDE_WIDTH: f32 = 400.0;
/// The track list's width at start; the user drags its edge to change it.
const TRACKS_WIDTH: f32 = 220.0;
const RECENT_KEY: &str = "latscope.recent";

/// The workbench, room by room.
pub struct Workbench {
    /// Presets and decoders by name: the engine's, shared with the workers.
    pub registry: Arc<Registry>,
    /// Every background job, its progress and its staleness ticket.
    pub(super) jobs: JobRunner,
    picker: Box<dyn FilePicker>,
    /// The sources and the view of them.
    pub view: ViewState,
    pub analysis: AnalysisState,
    pub sim: SimState,
    pub table: TableState,
    /// The fleet window (a dataset of many captures).
    pub fleet: super::fleet_view::FleetState,
    pub dialogs: Dialogs,
    /// The error banner, and the log of every error (`errors.log()`).
    pub errors: Errors,
    /// What the last save wrote, for the status bar.
    pub notice: Option<String>,
    pub recent: Vec<PathBuf>,
    /// The look; kept in eframe's storage and in sessions.
    pub theme: ThemeKind,
    pub(super) applied_theme: Option<ThemeKind>,
    screenshot: Option<ScreenshotState>,
    /// Where the screenshot was saved, once it is.
    pub screenshot_saved: Option<PathBuf>,
    /// Set when the window should close (after a screenshot).
    pub quit: bool,
    pub(super) png_request: Option<PngRequest>,
    /// A timeline PNG whose pixels were asked for and have not arrived yet.
    pub(super) png_waiting: bool,
    pub(super) pending_session: Option<PendingSession>,
    /// What the command line asked for once the files are loaded (`--align`, `--rule`).
    pub(super) startup: Option<Startup>,
}

impl std::fmt::Debug for Workbench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workbench")
            .field("sources", &self.view.sources.len())
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
            view: ViewState::default(),
            analysis: AnalysisState::default(),
            sim: SimState::default(),
            table: TableState::default(),
            fleet: Default::default(),
            dialogs: Dialogs::default(),
            errors: Errors::default(),
            notice: None,
            recent,
            theme: ThemeKind::Dark,
            applied_theme: None,
            screenshot: options.screenshot.map(|path| ScreenshotState {
                path,
                ready_frames: 0,
                requested: false,
            }),
            screenshot_saved: None,
            quit: false,
            png_request: None,
            png_waiting: false,
            pending_session: None,
            startup: (options.align.is_some() || !options.rules.is_empty() || !options.decoders.is_empty())
                .then(|| Startup {
                    files: options.files.clone(),
                    align: options.align.clone(),
                    run: !options.rules.is_empty(),
                    decoders: options.decoders.clone(),
                }),
        };
        if !options.rules.is_empty() {
            wb.analysis.chosen_by_files = false;
            wb.analysis.rules.specs = options.rules.clone();
            wb.view.panels.analysis = true;
        }
        if let Some(dir) = &options.dataset {
            super::fleet_view::start(&mut wb, dir, &options.group_by, options.trend.as_deref());
        }
        if !options.files.is_empty() {
            wb.update(Message::OpenFiles(options.files));
        } else if options.demo {
            wb.view.panels.simulator = true;
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

    /// The sender workers and pickers use; tests use it to inject messages.
    pub fn outbox(&self) -> Outbox {
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

    /// Saves writing in the background (a timeline PNG counts from when it is asked for).
    pub fn saves_running(&self) -> usize {
        self.jobs.of_kind(JobKind::Save).count() + usize::from(self.png_request.is_some() || self.png_waiting)
    }

    /// The common-timeline range of everything loaded.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        self.view.time_range()
    }

    pub(super) fn screenshot_pending(&self) -> bool {
        self.screenshot.is_some()
    }

    pub(super) fn remember_recent(&mut self, path: &Path) {
        self.recent.retain(|p| p != path);
        self.recent.insert(0, path.to_owned());
        self.recent.truncate(MAX_RECENT);
    }

    /// Drains worker messages.
    pub fn poll(&mut self) {
        while let Some(msg) = self.jobs.try_recv() {
            self.update(msg);
        }
        // A job that answered has let go of the sources it read only now, after its answer.
        if !self.view.pending_derived.is_empty() {
            self.add_pending_derived();
        }
    }

    /// The keyboard's messages this frame (the keymap's shortcuts) and dropped files.
    fn keyboard(&self, ctx: &egui::Context) -> Vec<Message> {
        let typing = ctx.egui_wants_keyboard_input() || self.dialogs.palette_open;
        let mut msgs = ctx.input_mut(|i| keymap::keyboard(i, typing));
        let dropped: Vec<PathBuf> =
            ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if !dropped.is_empty() {
            msgs.push(Message::OpenFiles(dropped));
        }
        msgs
    }

    fn menu(&self, ui: &mut egui::Ui) -> Vec<Message> {
        let mut msgs = Vec::new();
        let mut recent = |ui: &mut egui::Ui| {
            let mut msgs = Vec::new();
            if self.recent.is_empty() {
                ui.weak("nothing yet");
            }
            for p in &self.recent {
                if ui.button(p.display().to_string()).clicked() {
                    msgs.push(Message::OpenFiles(vec![p.clone()]));
                }
            }
            msgs
        };
        egui::MenuBar::new().ui(ui, |ui| {
            for (title, items) in keymap::MENUS {
                ui.menu_button(*title, |ui| msgs.extend(keymap::menu_items(ui, items, &mut recent)));
            }
            ui.add_space(16.0);
            for s in &self.view.sources {
                ui.weak(format!("{} · {}", s.source().name, s.source().format));
            }
        });
        msgs
    }

    fn status_bar(&self, ui: &mut egui::Ui) -> Vec<Message> {
        let mut msgs = Vec::new();
        let view = &self.view;
        ui.horizontal(|ui| {
            let clock = view.sources.first();
            let fmt = |t: f64| match clock {
                Some(sv) => timeline::clock_text(sv.source(), sv.to_source(t).round() as Ps),
                None => format_seconds(t.round() as Ps),
            };
            if let Some(a) = view.overlay.cursor_a {
                ui.colored_label(theme::CURSOR_A, format!("A {}", fmt(a)));
            }
            if let Some(b) = view.overlay.cursor_b {
                ui.colored_label(theme::CURSOR_B, format!("B {}", fmt(b)));
            }
            if let (Some(a), Some(b)) = (view.overlay.cursor_a, view.overlay.cursor_b) {
                let d = (b - a).abs();
                let hz = if d > 0.0 { 1e12 / d } else { 0.0 };
                ui.strong(format!("Δ {}  1/Δ {}", format_seconds(d.round() as Ps), format_hz(hz)));
            }
            ui.separator();
            ui.weak(format!(
                "{} / px · view {}",
                format_seconds(view.viewport.ps_per_px.round() as Ps),
                format_seconds((view.viewport.ps_per_px * view.data_width()).round() as Ps)
            ));
            ui.weak(sources_summary(view.sources.iter().map(|s| s.source())));
            for j in self.jobs.of_kind(JobKind::Load) {
                ui.separator();
                let name = j.path.as_deref().map_or_else(String::new, |p| {
                    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
                });
                ui.add(
                    egui::ProgressBar::new(j.progress()).desired_width(140.0).text(format!("loading {name}")),
                );
                if ui.small_button("Cancel").clicked() {
                    msgs.push(Message::CancelJob(j.ticket));
                }
            }
            if self.analysis_running() {
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
        let view = &self.view;
        // The list never sizes the panel: it scrolls in the width the user gave the panel, so
        // nothing drawn in it (a long name, the up/down buttons of the focused lane) can
        // widen the panel and move the timeline's time axis.
        egui::ScrollArea::both().id_salt("tracks").auto_shrink([false, false]).show(ui, |ui| {
            for (si, sv) in view.sources.iter().enumerate() {
                egui::CollapsingHeader::new(egui::RichText::new(&sv.source().name).strong())
                    .id_salt(("source", si))
                    .default_open(true)
                    .show(ui, |ui| {
                        // Where the source sits on the timeline: its offset and drift.
                        ui.add(
                            egui::Label::new(
                                egui::RichText::new(timeline::placement_text(&view.sources, si))
                                    .small()
                                    .weak(),
                            )
                            .wrap(),
                        )
                        .on_hover_text(sv.source().origin.domain.describe());
                        for (vi, v) in sv.lanes.iter().enumerate() {
                            let id = super::message::LaneId { source: si, lane: vi };
                            ui.horizontal(|ui| {
                                let mut visible = v.visible;
                                if ui.checkbox(&mut visible, "").on_hover_text("show / hide").changed() {
                                    msgs.push(Message::ToggleLane(id));
                                }
                                let (r, p) = ui.allocate_painter(egui::vec2(8.0, 14.0), egui::Sense::hover());
                                p.rect_filled(r.rect, 2.0, v.color);
                                let focused = view.overlay.focused == Some(id);
                                let lane = sv.data_lane(vi);
                                let kind = lane.map_or("", |l| l.kind.class().name());
                                // Names are cut at the list's width; the focused row keeps
                                // room for its up/down buttons, so it is no wider.
                                let reserve = if focused { MOVE_BUTTONS_WIDTH } else { 0.0 };
                                let name_width = (ui.available_width() - reserve).max(24.0);
                                let label = ui
                                    .scope(|ui| {
                                        ui.set_max_width(name_width);
                                        ui.add(egui::Button::selectable(focused, v.name.as_str()).truncate())
                                    })
                                    .inner
                                    .on_hover_text(format!("{} ({kind})", v.name));
                                if label.clicked() {
                                    msgs.push(Message::FocusLane(id));
                                }
                                label.context_menu(|ui| {
                                    msgs.extend(super::extras::lane_menu(ui, id, v));
                                    if lane.is_some_and(|l| l.kind.class() == LaneClass::Analog) {
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
            if !view.overlay.markers.is_empty() {
                ui.separator();
                ui.strong("Markers");
                for (i, (name, _)) in view.overlay.markers.iter().enumerate() {
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

    /// The error banner: the latest errors, each wrapped to the width it is given (a long
    /// message never widens the layout) and cut at [`errors::BANNER_CHARS`], with a close
    /// button; Esc closes them all. Every error is also in the log.
    fn errors_ui(errors: &Errors, ui: &mut egui::Ui) -> Vec<Message> {
        let mut msgs = Vec::new();
        let width = ui.available_width();
        let shown = errors.len().min(4);
        for (i, e) in errors.iter().enumerate().rev().take(shown) {
            egui::Frame::new()
                .fill(theme::IRQ.gamma_multiply(0.25))
                .inner_margin(egui::Margin::symmetric(8, 4))
                .corner_radius(4)
                .show(ui, |ui| {
                    ui.set_width(width - 16.0);
                    ui.horizontal_top(|ui| {
                        let text_width = (ui.available_width() - 60.0).max(40.0);
                        ui.allocate_ui_with_layout(
                            egui::vec2(text_width, 0.0),
                            egui::Layout::top_down(egui::Align::Min),
                            |ui| {
                                ui.set_max_width(text_width);
                                ui.add(
                                    egui::Label::new(
                                        egui::RichText::new(errors::banner_text(e)).color(theme::TEXT),
                                    )
                                    .wrap(),
                                );
                            },
                        );
                        ui.with_layout(egui::Layout::right_to_left(egui::Align::Min), |ui| {
                            if ui.button("Close").on_hover_text("Close (Esc closes all)").clicked() {
                                msgs.push(Message::DismissError(i));
                            }
                        });
                    });
                });
        }
        if !errors.is_empty() {
            ui.horizontal(|ui| {
                if errors.len() > shown {
                    ui.weak(format!("{} more", errors.len() - shown));
                }
                if ui.small_button("Show log").clicked() {
                    msgs.push(Message::TogglePanel(super::message::PanelId::Log));
                }
            });
        }
        msgs
    }

    /// The log panel: every error and warning so far, oldest first.
    fn log_ui(errors: &Errors, ui: &mut egui::Ui) {
        ui.strong("Log");
        egui::ScrollArea::vertical().id_salt("log").stick_to_bottom(true).auto_shrink([false, false]).show(
            ui,
            |ui| {
                if errors.log().is_empty() {
                    ui.weak("No errors or warnings.");
                }
                for e in errors.log() {
                    ui.add(egui::Label::new(egui::RichText::new(e).monospace()).wrap());
                }
            },
        );
    }

    /// One frame: drain workers, handle input, draw, apply what the views returned.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.jobs.outbox().set_context(&ctx);
        if self.applied_theme.is_none() {
            theme::apply_kind(&ctx, self.theme);
            self.applied_theme = Some(self.theme);
        }
        self.poll();
        self.startup_step();
        self.fleet_jump_step();
        let mut msgs = self.keyboard(&ctx);

        egui::Panel::top("menu").show(ui, |ui| msgs.extend(self.menu(ui)));
        egui::Panel::bottom("status").show(ui, |ui| msgs.extend(self.status_bar(ui)));
        let view = &self.view;
        // Waveform-only captures have no events to list: the timeline gets the room.
        let has_events = view.sources.iter().any(|s| !s.source().events.is_empty());
        if view.panels.table && has_events {
            egui::Panel::bottom("table").resizable(true).default_size(230.0).show(ui, |ui| {
                ui.columns(2, |cols| {
                    let (sources, selected) = (&view.sources, view.overlay.selected);
                    msgs.extend(table::show(
                        &mut cols[0],
                        &self.table,
                        self.table_pending(),
                        sources,
                        selected,
                    ));
                    table::inspector(&mut cols[1], sources, selected);
                });
            });
        }
        // Results arriving open the panel (`update`); the user may close it again.
        let show_analysis = view.panels.analysis;
        if view.panels.simulator || show_analysis {
            let running = self.analysis_running();
            egui::Panel::right("side").resizable(true).default_size(SIDE_WIDTH).show(ui, |ui| {
                let sim_ui = |ui: &mut egui::Ui, msgs: &mut Vec<Message>| {
                    let scroll = egui::ScrollArea::both().id_salt("sim-scroll").auto_shrink([false, false]);
                    scroll.show(ui, |ui| msgs.extend(sim_panel::panel(ui, &self.sim)));
                };
                if view.panels.simulator && show_analysis {
                    // The simulator gets its own resizable part at the top, at most half
                    // the height: the analysis below always keeps the other half.
                    let half = ui.available_height() * 0.5;
                    egui::Panel::top("simulator")
                        .resizable(true)
                        .default_size(half.min(330.0))
                        .max_size(half)
                        .show(ui, |ui| sim_ui(ui, &mut msgs));
                } else if view.panels.simulator {
                    sim_ui(ui, &mut msgs);
                }
                if show_analysis {
                    ui.heading("Analysis");
                    let names = view.labels();
                    let a = &mut self.analysis;
                    let state = analysis::PanelState {
                        registry: &self.registry,
                        editor: &a.rules,
                        view: &a.panel,
                        results: &a.results,
                        missing: &a.missing,
                    };
                    msgs.extend(analysis::panel(ui, state, &mut a.drawn, running, &names));
                }
            });
        }
        if view.panels.log {
            egui::Panel::bottom("log").resizable(true).default_size(120.0).show(ui, |ui| {
                Self::log_ui(&self.errors, ui);
            });
        }
        if view.panels.tracks {
            egui::Panel::left("tracks")
                .resizable(true)
                .default_size(TRACKS_WIDTH)
                .size_range(120.0..=640.0)
                .show(ui, |ui| {
                    ui.strong("Tracks");
                    msgs.extend(self.tracks_panel(ui));
                });
        }
        egui::CentralPanel::no_frame().show(ui, |ui| {
            if !self.errors.is_empty() {
                msgs.extend(Self::errors_ui(&self.errors, ui));
            }
            if self.view.sources.is_empty() && !self.jobs.busy(JobKind::Load) {
                ui.centered_and_justified(|ui| {
                    ui.weak("Open a capture (Ctrl+O), drop files here, or start the simulator (View > Simulator).");
                });
            } else {
                let v = &mut self.view;
                let (sources, viewport, overlay) = (&v.sources, &v.viewport, &v.overlay);
                msgs.extend(timeline::show(ui, sources, viewport, overlay, v.scroll, &mut v.cache, &mut v.layout));
            }
        });
        if self.fleet.open {
            let running = self.jobs.of_kind(JobKind::Fleet).next().map(|j| j.ticket);
            msgs.extend(super::fleet_view::show(&ctx, &self.fleet, running));
        }
        if self.dialogs.palette_open {
            msgs.extend(palette::show(&ctx, &self.dialogs.palette_query));
        }
        if self.dialogs.derive.open {
            msgs.extend(derive_dialog::show(&ctx, &self.dialogs.derive));
        }
        if self.dialogs.decoder.open {
            let names: Vec<String> = self.view.sources.iter().map(|s| s.source().name.clone()).collect();
            msgs.extend(decoder_dialog::show(&ctx, &self.registry, &self.dialogs.decoder, &names));
        }
        if self.dialogs.align.open {
            let names = self.view.labels();
            msgs.extend(align_dialog::show(&ctx, &self.dialogs.align, &names, self.aligning()));
        }
        for m in msgs {
            self.update(m);
        }
        if !self.view.keep_shown() && self.view.refit && self.view.layout.data_width > 1.0 {
            self.view.refit = false;
            self.view.fit_all();
        }
        self.frame_extras(&ctx);
        self.screenshot_step(&ctx);
        if self.jobs.busy(JobKind::Load)
            || self.jobs.busy(JobKind::Fleet)
            || (self.sim.handle.is_some() && !self.sim.finished)
            || self.analysis_running()
            || !self.view.pending_derived.is_empty()
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
        !self.jobs.busy(JobKind::Load)
            && !self.jobs.busy(JobKind::Derive)
            && sim_done
            && !self.table_pending()
            && !self.session_busy()
            && self.startup.is_none()
            && !self.analysis.presets_due
            && !self.aligning()
            && !self.analysis_running()
            && !self.jobs.busy(JobKind::Fleet)
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
            let out = self.jobs.outbox();
            ctx.request_screenshot(move |image| out.send(Message::ScreenshotTaken(image)));
        }
        ctx.request_repaint();
    }

    /// `Message::ScreenshotTaken`: encoding a big window takes a while, so the PNG is written
    /// by a job; the window closes when `ScreenshotSaved` arrives.
    pub(super) fn save_screenshot(&mut self, image: Arc<egui::ColorImage>) {
        let Some(st) = &self.screenshot else { return };
        let (path, inputs) = (st.path.clone(), self.input_paths());
        self.jobs.spawn(JobKind::Screenshot, None, move |cx| {
            let result = save_png(&path, &image, &inputs).map(|()| path).map_err(|e| format!("{e:#}"));
            cx.send(Message::ScreenshotSaved { ticket: cx.ticket, result });
        });
    }

    /// Seeds the view with a source prepared elsewhere (tests, benchmarks).
    pub fn add_prepared(&mut self, prepared: Prepared) -> usize {
        let i = self.view.add_source(Arc::new(prepared));
        self.view.fit_all();
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
    fn the_window_icon_is_the_256_pixel_asset() {
        let icon = decode_icon(ICON_PNG).expect("the embedded icon decodes");
        assert_eq!((icon.width, icon.height), (256, 256));
        assert_eq!(icon.rgba.len(), 256 * 256 * 4);
        // Transparent corners (the rounded square), an opaque middle.
        assert_eq!(icon.rgba[3], 0);
        let middle = (128 * 256 + 128) * 4;
        assert_eq!(icon.rgba[middle + 3], 255);
    }

    #[test]
    fn the_status_counts_events_and_signals_that_are_there() {
        let mut wave = Source::new("fsm.ghw", "ghw", SourceKind::File);
        wave.digital.push(DigitalTrack::new("clk", 0));
        wave.digital.push(DigitalTrack::new("busy", 0));
        assert_eq!(sources_summary([&wave].into_iter()), "1 source · 2 signals");
        let empty = Source::new("none", "ftrace-text", SourceKind::File);
        assert_eq!(sources_summary([&empty].into_iter()), "1 source · 0 events");
        let trace = latscope_engine::open(
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
