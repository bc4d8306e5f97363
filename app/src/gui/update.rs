//! [`Workbench::update`]: the one place state changes. It dispatches each [`Message`] to the
//! handler of the room it concerns: the view ([`rooms::update_view`]), the dialogs
//! ([`rooms::update_dialogs`]), the table, the analysis, the simulator, the files and the
//! jobs that bring their answers back. Every answer of a background job is first judged by
//! the job runner ([`super::jobs::JobRunner::accept`]); a stale one changes nothing.

use super::align_dialog;
use super::analysis;
use super::app::Workbench;
use super::decoder_dialog;
use super::derive_dialog;
use super::jobs::{JobKind, Verdict};
use super::message::{DerivedLane, EventSel, Message, SimCommand, SimEdit, TableRows};
use super::prepare::{self, Lane, LaneKind, Prepared};
use super::rooms::{self, AnalysisState, ViewState};
use super::session;
use super::sim_panel::SimState;
use super::table::TableState;
use super::timeline;
use super::workers;
use latscope_analysis::align::Alignment;
use latscope_importers::LoadControl;
use latscope_model::{DigitalTrack, Ps};
use std::path::PathBuf;
use std::sync::Arc;

impl Workbench {
    /// Applies one message.
    pub fn update(&mut self, msg: Message) {
        match msg {
            // --- the view alone
            Message::Zoom { .. }
            | Message::PanFraction(_)
            | Message::PanBy(_)
            | Message::FitAll
            | Message::ShowRange(..)
            | Message::CenterOn(_)
            | Message::SetCursor(..)
            | Message::ClearCursors
            | Message::FocusLane(_)
            | Message::ToggleLane(_)
            | Message::MoveLane(..)
            | Message::RenameLane(..)
            | Message::SetLaneColor(..)
            | Message::ScrollLanes(_)
            | Message::AddMarker
            | Message::RenameMarker(..)
            | Message::RemoveMarker(_)
            | Message::JumpMarker(_)
            | Message::TogglePanel(_) => rooms::update_view(&mut self.view, msg),
            // --- the dialogs alone
            Message::TogglePalette
            | Message::ClosePalette
            | Message::PaletteQuery(_)
            | Message::EditAlign(_)
            | Message::EditDerive(_)
            | Message::EditDecoder(_) => rooms::update_dialogs(&mut self.dialogs, msg),
            // --- files
            Message::OpenFiles(_)
            | Message::PickFiles
            | Message::CancelJob(_)
            | Message::Loaded { .. }
            | Message::CloseAll => self.update_files(msg),
            // --- selection and stepping (view and table)
            Message::StepEdge(forward) => self.step_edge(forward),
            Message::SelectEvent(sel) => select(&mut self.view, &mut self.table, sel),
            Message::SearchStep(forward) => search_step(&mut self.view, &mut self.table, forward),
            // --- the other rooms and the shell
            Message::SetFilter(..)
            | Message::SortTable(..)
            | Message::TableReady { .. }
            | Message::FocusFilter
            | Message::TableRequestsDone => self.update_table(msg),
            Message::RunAnalysis
            | Message::AnalysisDone { .. }
            | Message::EditRules(..)
            | Message::SetPlot { .. }
            | Message::ShowSample { .. }
            | Message::ShowLatencyRange { .. }
            | Message::LiveAnalysisDone { .. } => self.update_analysis(msg),
            Message::OpenAlign
            | Message::Align { .. }
            | Message::Aligned { .. }
            | Message::ResetAlign
            | Message::OpenDeriveDigital(..)
            | Message::DeriveDigital { .. }
            | Message::Derived { .. }
            | Message::OpenDecoder(..)
            | Message::AddDecoder { .. } => self.update_alignment_and_derived(msg),
            Message::Sim(..)
            | Message::SimEdit(..)
            | Message::SimSnapshot { .. }
            | Message::SimError(..)
            | Message::SimMetrics { .. } => self.update_sim(msg),
            Message::Error(..)
            | Message::DismissError(..)
            | Message::ScreenshotTaken(..)
            | Message::ScreenshotSaved { .. }
            | Message::Export(..)
            | Message::SaveTo(..)
            | Message::TimelineShot { .. }
            | Message::Saved { .. }
            | Message::SessionRead { .. }
            | Message::SetTheme(..)
            | Message::ToggleTheme
            | Message::BrowseFiles(..)
            | Message::Browser(..) => self.update_shell(msg),
        }
    }

    /// Opening, loading and closing files.
    fn update_files(&mut self, msg: Message) {
        match msg {
            Message::OpenFiles(paths) => self.open_files(paths),
            Message::PickFiles => self.picker().pick(self.outbox()),
            Message::CancelJob(ticket) => {
                self.jobs.cancel(ticket);
                self.add_finished_loads();
            }
            Message::Loaded { ticket, path, result } => {
                if !self.jobs.accept(ticket, |_| true) {
                    return; // cancelled
                }
                match result {
                    Ok(prepared) => {
                        self.view.finished_loads.insert(ticket.id, (path, prepared));
                    }
                    Err(e) => self.errors.push(e),
                }
                self.add_finished_loads();
            }
            Message::CloseAll => self.close_all(),
            other => debug_assert!(false, "not a files message: {other:?}"),
        }
    }

    /// The event table: filter, sort, the rows of a query, one-shot requests.
    fn update_table(&mut self, msg: Message) {
        match msg {
            Message::SetFilter(f) => {
                self.table.filter = f;
                self.refresh_table();
            }
            Message::SortTable(s) => {
                self.table.sort = s;
                self.refresh_table();
            }
            Message::TableReady { ticket, rows } => {
                if self.jobs.accept(ticket, |_| true) {
                    self.table.rows = rows;
                }
            }
            Message::FocusFilter => {
                self.view.panels.table = true;
                self.table.focus_filter = true;
            }
            Message::TableRequestsDone => {
                self.table.scroll_to_selection = false;
                self.table.focus_filter = false;
            }
            other => debug_assert!(false, "not a update_table message: {other:?}"),
        }
    }

    /// The analysis: running the rules, their results, the plots, showing samples.
    fn update_analysis(&mut self, msg: Message) {
        match msg {
            Message::RunAnalysis => self.run_analysis(),
            Message::AnalysisDone { ticket, results, errors } => {
                if self.jobs.accept(ticket, |_| true) {
                    self.analysis.results = Arc::new(results);
                    self.view.refresh_bands(&self.analysis.results);
                    self.errors.extend(errors);
                }
            }
            Message::EditRules(rules) => self.analysis.rules = rules,
            Message::SetPlot { plot, log_x } => {
                self.analysis.panel.plot = plot;
                self.analysis.panel.log_x = log_x;
            }
            Message::ShowSample { outcome, sample } => {
                show_sample(&mut self.view, &self.analysis, outcome, sample)
            }
            Message::ShowLatencyRange { outcome, lo_ns, hi_ns } => {
                show_latency_range(&mut self.view, &self.analysis, outcome, lo_ns, hi_ns)
            }
            Message::LiveAnalysisDone { ticket, results } => {
                if self.jobs.accept(ticket, |_| true) {
                    self.sim.live.shown = self.sim.live.asked.clone();
                    self.sim.live.updates += 1;
                    self.analysis.results = Arc::new(results);
                    self.view.refresh_bands(&self.analysis.results);
                }
            }
            other => debug_assert!(false, "not a update_analysis message: {other:?}"),
        }
    }

    /// Alignment and derived lanes: the jobs that change where a source sits or what it holds.
    fn update_alignment_and_derived(&mut self, msg: Message) {
        match msg {
            Message::OpenAlign => {
                self.dialogs.align.open = true;
                if self.dialogs.align.other >= self.view.sources.len() {
                    self.dialogs.align.other = 1;
                }
            }
            Message::Align { reference, other, spec } => self.align(reference, other, spec, false),
            Message::Aligned { ticket, source, reset, result } => {
                match self.jobs.judge(ticket, |s| self.view.is_current(s)) {
                    Verdict::Current => self.aligned(source, reset, result),
                    Verdict::Changed => self
                        .errors
                        .push("align: the source changed while the alignment was fitted; align again".into()),
                    Verdict::Gone => {}
                }
            }
            Message::ResetAlign => self.reset_alignment(),
            Message::OpenDeriveDigital(id) => {
                let analog =
                    self.view.sources.get(id.source).and_then(|sv| match sv.data_lane(id.lane)?.kind {
                        LaneKind::Analog { track, .. } => Some((sv, track)),
                        _ => None,
                    });
                if let Some((sv, track)) = analog {
                    self.dialogs.derive.open_on(sv.source(), id.source, track);
                }
            }
            Message::DeriveDigital { source, track, threshold } => self.derive(source, track, threshold),
            Message::OpenDecoder(source) => self.open_decoder(source),
            Message::AddDecoder { source, specs } => self.add_decoder(source, specs),
            Message::Derived { ticket, source, result } => {
                // Closed meanwhile: nothing to say. Changed (aligned, derived again): say so.
                match (self.jobs.judge(ticket, |s| self.view.is_current(s)), result) {
                    (Verdict::Current, Ok(DerivedLane::Track(track, lane))) => {
                        self.add_derived(source, track, lane)
                    }
                    (Verdict::Current, Ok(DerivedLane::Rebuilt(prepared))) => {
                        self.view.replace_source(source, prepared)
                    }
                    (Verdict::Current, Ok(DerivedLane::Decoded(prepared))) => self.decoded(source, prepared),
                    (Verdict::Current, Err(e)) => self.errors.push(format!("derive: {e}")),
                    (Verdict::Changed, _) => self.errors.push(
                        "the source changed while a lane was derived from it; derive or decode again".into(),
                    ),
                    (Verdict::Gone, _) => {}
                }
            }
            other => debug_assert!(false, "not a update_alignment_and_derived message: {other:?}"),
        }
    }

    /// The simulator: commands, settings, snapshots and metrics of the run.
    fn update_sim(&mut self, msg: Message) {
        match msg {
            Message::Sim(cmd) => self.sim_command(cmd),
            Message::SimEdit(edit) => {
                if let Some(cmd) = update_sim_settings(&mut self.sim, edit)
                    && let Some(h) = &self.sim.handle
                {
                    h.send(cmd);
                }
            }
            Message::SimSnapshot { ticket, prepared, now, events, finished } => {
                if self.jobs.is_current(ticket) {
                    self.sim_snapshot(prepared, now, events, finished);
                }
            }
            Message::SimError(e) => self.sim.error = Some(e),
            Message::SimMetrics { ticket, metrics } => {
                if self.jobs.accept(ticket, |_| true) {
                    match metrics {
                        Ok(m) => self.sim.metrics = m,
                        Err(e) => self.sim.error = Some(e),
                    }
                }
            }
            other => debug_assert!(false, "not a update_sim message: {other:?}"),
        }
    }

    /// Errors, screenshots, saves, sessions, the look and the file browser.
    fn update_shell(&mut self, msg: Message) {
        match msg {
            Message::Error(e) => self.errors.push(e),
            Message::DismissError(i) => {
                if i < self.errors.len() {
                    self.errors.remove(i);
                }
            }
            Message::ScreenshotTaken(image) => self.save_screenshot(image),
            Message::ScreenshotSaved { ticket, result } => {
                self.jobs.accept(ticket, |_| true);
                match result {
                    Ok(path) => self.screenshot_saved = Some(path),
                    Err(e) => self.errors.push(e),
                }
                self.quit = true;
            }
            Message::Export(what) => self.ask_save(what),
            Message::SaveTo(what, path) => self.save_to(what, path),
            Message::TimelineShot { path, rect_px, image } => self.save_timeline_shot(path, rect_px, image),
            Message::Saved { ticket, result } => {
                self.jobs.accept(ticket, |_| true);
                self.saved(result);
            }
            Message::SessionRead { ticket, path, result } => {
                if self.jobs.accept(ticket, |_| true) {
                    self.session_read(&path, result);
                }
            }
            Message::SetTheme(kind) => self.theme = kind,
            Message::ToggleTheme => self.theme = self.theme.other(),
            Message::BrowseFiles(purpose) => self.browse(purpose),
            Message::Browser(action) => {
                let Some(b) = &mut self.dialogs.browser else { return };
                let (answer, keep) = b.apply(action);
                if !keep {
                    self.dialogs.browser = None;
                }
                if let Some(m) = answer {
                    self.update(m);
                }
            }
            other => debug_assert!(false, "not a update_shell message: {other:?}"),
        }
    }

    fn open_files(&mut self, paths: Vec<PathBuf>) {
        let (sessions, paths): (Vec<_>, Vec<_>) =
            paths.into_iter().partition(|p| session::is_session_path(p));
        for path in sessions {
            let p = path.clone();
            self.jobs.spawn(JobKind::SessionRead, None, move |cx| {
                let result = session::Session::read(&p).map_err(|e| format!("{e:#}"));
                cx.send(Message::SessionRead { ticket: cx.ticket, path: p, result });
            });
        }
        for path in paths {
            self.remember_recent(&path);
            let p = path.clone();
            self.jobs.spawn_load(path, LoadControl::new(), move |cx| {
                let result = workers::load(&p, &cx.control);
                cx.send(Message::Loaded { ticket: cx.ticket, path: p, result });
            });
        }
    }

    fn close_all(&mut self) {
        // Jobs that read the sources are stopped; their late answers are dropped, so a late
        // alignment or derivation cannot land on whatever is opened next.
        self.jobs.forget_sources();
        self.view.sources.clear();
        self.view.finished_loads.clear();
        self.view.overlay = Default::default();
        self.view.fitted = false;
        self.view.alignment = None;
        self.sim.handle = None;
        self.sim.source = None;
        self.analysis.clear();
        self.analysis.panel.aligned = None;
        self.table.rows = TableRows::default();
    }

    /// Adds the finished loads that no earlier, still running load must precede.
    pub(super) fn add_finished_loads(&mut self) {
        let first_running = self.jobs.of_kind(JobKind::Load).map(|j| j.ticket.id).min().unwrap_or(u64::MAX);
        while let Some(entry) = self.view.finished_loads.first_entry() {
            if *entry.key() > first_running {
                break;
            }
            let (path, prepared) = entry.remove();
            for w in prepared.source.diagnostics.summary().into_iter().take(3) {
                self.errors.push(format!("{}: {w}", path.display()));
            }
            self.view.add_source(prepared);
            if !self.view.fitted || !self.jobs.busy(JobKind::Load) {
                self.view.fit_all();
                self.view.fitted = true;
                self.view.refit = true;
            }
            self.refresh_table();
        }
    }

    /// Reruns the table query (filter and sort) for the table's source; a newer query makes
    /// the running one stale.
    pub(super) fn refresh_table(&mut self) {
        let source = self.table.rows.source.min(self.view.sources.len().saturating_sub(1));
        let Some(sv) = self.view.sources.get(source) else {
            self.table.rows = TableRows::default();
            return;
        };
        let (prepared, filter, sort) = (sv.prepared.clone(), self.table.filter.clone(), self.table.sort);
        self.jobs.spawn(JobKind::Table, self.view.stamp(source), move |cx| {
            let rows = workers::table_rows(&prepared, &filter, sort, &cx.control);
            // Let go of the source before answering: the workbench may then change it in
            // place (a derived lane) without a copy.
            drop(prepared);
            if let Some(rows) = rows {
                let rows = TableRows { source, rows: Arc::new(rows) };
                cx.send(Message::TableReady { ticket: cx.ticket, rows });
            }
        });
    }

    fn step_edge(&mut self, forward: bool) {
        let Some(id) = self.view.overlay.focused else {
            self.errors.push("Click a lane first: next/previous edge works on the focused lane".into());
            return;
        };
        let view = &mut self.view;
        let Some(sv) = view.sources.get(id.source) else { return };
        let Some(lane) = sv.data_lane(id.lane) else { return };
        let t = sv.to_source(step_origin(view)).round() as Ps;
        if let Some((at, event)) = timeline::step_edge(lane, sv.source(), t, forward) {
            let tc = sv.to_common(at);
            if let Some(index) = event {
                select(view, &mut self.table, EventSel { source: id.source, index });
            }
            view.overlay.cursor_a = Some(tc);
            view.ensure_visible(tc);
        }
    }

    fn run_analysis(&mut self) {
        if self.view.sources.is_empty() {
            return;
        }
        self.view.panels.analysis = true;
        let sources: Vec<_> = self.view.sources.iter().map(|s| s.prepared.clone()).collect();
        self.analysis.inputs = sources.clone();
        let placements: Vec<_> = self.view.sources.iter().map(|s| s.placement).collect();
        self.analysis.placements = placements.clone();
        let specs = self.analysis.rules.specs.clone();
        // Sources placed on one clock (the Align dialog, or placements restored from a
        // session) are one aligned trace, as with `report --align`.
        let together = self.view.alignment.is_some() || placements.iter().any(|p| !p.is_identity());
        self.jobs.spawn(JobKind::Analysis, None, move |cx| {
            // The worker borrows the shared sources with their placements: no copy.
            let (results, errors) = analysis::analyse(&sources, &placements, &specs, together);
            if !cx.cancelled() {
                cx.send(Message::AnalysisDone { ticket: cx.ticket, results, errors });
            }
        });
    }

    /// Fits an alignment of `other` onto `reference` (or, with `reset`, puts `other` back on
    /// its own clock) on a worker.
    fn align(&mut self, reference: usize, other: usize, spec: String, reset: bool) {
        let (Some(r), Some(o)) = (self.view.sources.get(reference), self.view.sources.get(other)) else {
            return;
        };
        // The worker reads both sources where they are (shared, not copied).
        let (r, r_at, o) = (r.prepared.clone(), r.placement, o.prepared.clone());
        self.jobs.spawn(JobKind::Align, self.view.stamp(other), move |cx| {
            let result = align_dialog::align_pair(&r, r_at, &o, &spec).map(|mut alignment| {
                alignment.source = other;
                alignment
            });
            cx.send(Message::Aligned { ticket: cx.ticket, source: other, reset, result });
        });
    }

    fn aligned(&mut self, source: usize, reset: bool, result: Result<Alignment, String>) {
        match result {
            Ok(alignment) => {
                // Only the placement changes: the source's data and lanes stay.
                self.view.place_source(source, alignment.placement);
                if reset {
                    self.analysis.panel.aligned = None;
                    self.view.alignment = None;
                } else {
                    self.analysis.panel.aligned = Some(align_dialog::describe(&alignment));
                    self.view.alignment = Some(alignment);
                }
                self.dialogs.align.open = false;
                // Results of the per-source run no longer describe what a run gives.
                self.analysis.results = Arc::default();
                self.view.overlay.bands.clear();
            }
            Err(e) => self.errors.push(format!("align: {e}")),
        }
    }

    /// Every source back on its own clock (offset 0, no drift).
    fn reset_alignment(&mut self) {
        let Some(a) = self.view.alignment.take() else { return };
        self.analysis.panel.aligned = None;
        if !self.view.sources.is_empty() {
            // Aligning by hand with a zero offset is the reset, through the same worker.
            self.align(0, a.source, "+0ps".into(), true);
        }
        self.analysis.results = Arc::default();
        self.view.overlay.bands.clear();
    }

    /// Derives a digital track on a worker: only the track and its lane are computed there;
    /// the source is not copied ([`Self::add_derived`] adds them in place).
    fn derive(&mut self, source: usize, track: usize, threshold: Option<(f64, f64)>) {
        let Some(sv) = self.view.sources.get(source) else { return };
        let p = sv.prepared.clone();
        self.jobs.spawn(JobKind::Derive, self.view.stamp(source), move |cx| {
            let result = derive_dialog::derive_track(&p.source, track, threshold).map(|d| {
                let lane = prepare::digital_lane(0, &d);
                DerivedLane::Track(d, lane)
            });
            // The workbench should hold the source alone when the answer arrives.
            drop(p);
            cx.send(Message::Derived { ticket: cx.ticket, source, result });
        });
    }

    /// Opens the "Add decoder…" dialog on `source`, else the focused lane's source, else the
    /// first source with channels.
    fn open_decoder(&mut self, source: Option<usize>) {
        let has_channels = |i: usize| {
            self.view
                .sources
                .get(i)
                .is_some_and(|sv| !sv.source().digital.is_empty() || !sv.source().analog.is_empty())
        };
        let focused = self.view.overlay.focused.map(|f| f.source);
        let pick = source
            .or(focused.filter(|&i| has_channels(i)))
            .or_else(|| (0..self.view.sources.len()).find(|&i| has_channels(i)));
        match pick.and_then(|i| self.view.sources.get(i).map(|sv| (i, sv))) {
            Some((i, sv)) => self.dialogs.decoder = decoder_dialog::DecoderDialog::open_on(sv.source(), i),
            None => {
                self.errors.push("Add decoder: open a capture with digital or analog channels first".into())
            }
        }
    }

    /// Decodes source `source` with `spec` on a worker: the source is copied with the
    /// annotations attached and its lanes prepared there ([`decoder_dialog::decode_into`]).
    fn add_decoder(&mut self, source: usize, specs: Vec<String>) {
        let Some(sv) = self.view.sources.get(source) else { return };
        let p = sv.prepared.clone();
        self.jobs.spawn(JobKind::Derive, self.view.stamp(source), move |cx| {
            let result =
                decoder_dialog::decode_into(&p.source, &specs).map(|d| DerivedLane::Decoded(Arc::new(d)));
            drop(p);
            cx.send(Message::Derived { ticket: cx.ticket, source, result });
        });
    }

    /// A decode job's answer: the source with its annotation rows; the event lanes it added
    /// start hidden (the rows show them; the table and search list the events).
    fn decoded(&mut self, index: usize, prepared: Arc<Prepared>) {
        let hidden = decoder_dialog::decoded_event_lanes(&prepared);
        self.view.replace_source(index, prepared);
        if let Some(sv) = self.view.sources.get_mut(index) {
            for v in &mut sv.lanes {
                if hidden.contains(&v.name) {
                    v.visible = false;
                }
            }
        }
        self.update(Message::SetFilter(self.table.filter.clone()));
    }

    /// Adds a derived track and its lane to source `index`: in place when the workbench
    /// holds the source alone (no copy); when a job or the analysis results share it, the
    /// copy with the track is made by a job, off the UI thread.
    fn add_derived(&mut self, index: usize, track: DigitalTrack, lane: Lane) {
        let Some(sv) = self.view.sources.get_mut(index) else { return };
        if let Some(prepared) = Arc::get_mut(&mut sv.prepared) {
            prepared.add_digital(track, lane);
            let same = sv.prepared.clone();
            self.view.replace_source(index, same);
            return;
        }
        let p = sv.prepared.clone();
        self.jobs.spawn(JobKind::Derive, self.view.stamp(index), move |cx| {
            let mut source = p.source.clone();
            drop(p);
            let name = track.name.clone();
            source.digital.retain(|d| d.name != name);
            source.digital.push(track);
            let prepared = Arc::new(prepare::prepare(source));
            cx.send(Message::Derived {
                ticket: cx.ticket,
                source: index,
                result: Ok(DerivedLane::Rebuilt(prepared)),
            });
        });
    }

    fn sim_command(&mut self, cmd: SimCommand) {
        match cmd {
            SimCommand::Start { scenario, sets, duration } => self.start_sim(&scenario, &sets, duration),
            SimCommand::Stop => {
                // The last snapshot stays as a source like any capture.
                self.stop_sim();
                self.sim.source = None;
            }
            other => {
                match other {
                    SimCommand::Play => self.sim.playing = true,
                    SimCommand::Pause => self.sim.playing = false,
                    _ => {}
                }
                if let Some(h) = &self.sim.handle {
                    h.send(other);
                }
            }
        }
    }

    fn stop_sim(&mut self) {
        if let Some(h) = self.sim.handle.take() {
            self.jobs.cancel(h.ticket);
        }
    }

    fn start_sim(&mut self, scenario: &str, sets: &[String], duration: Option<Ps>) {
        self.stop_sim();
        let d = duration.map(|d| format!("{d}ps"));
        match latscope_sim::prepare(scenario, sets, None, d.as_deref()) {
            Ok(sc) => {
                // A late statistics answer about the previous run must not pass for this one.
                self.jobs.cancel_kind(JobKind::LiveStats);
                self.sim.live.restart(sc.clone());
                self.sim.handle = workers::simulate(&mut self.jobs, sc, self.sim.speed_arg());
                self.sim.playing = true;
                self.sim.finished = false;
                self.sim.error = None;
                self.sim.snapshots = 0;
                self.sim.metrics.clear();
            }
            Err(e) => self.sim.error = Some(e.to_string()),
        }
    }

    fn sim_snapshot(&mut self, prepared: Arc<Prepared>, now: Ps, events: usize, finished: bool) {
        self.sim.now = now;
        self.sim.events = events;
        self.sim.finished = finished;
        self.sim.snapshots += 1;
        let snapshot = prepared.clone();
        let screenshot = self.screenshot_pending();
        let view = &mut self.view;
        let index = match self.sim.source.filter(|&i| i < view.sources.len()) {
            Some(i) => {
                view.replace_source(i, prepared);
                i
            }
            None => {
                let i = view.add_source(prepared);
                self.sim.source = Some(i);
                // Start with about 20 ms on screen.
                view.viewport.ps_per_px = 20e9 / view.data_width();
                i
            }
        };
        if self.sim.follow
            && let Some(sv) = view.sources.get(index)
        {
            let head = sv.to_common(now);
            view.viewport.start = head - view.viewport.ps_per_px * view.data_width() * 0.92;
        }
        if finished && screenshot {
            view.fit_all();
            view.refit = true;
        }
        if self.table.rows.source == index {
            self.refresh_table();
        }
        if self.sim.live.due(finished) {
            self.sim.live.start(&mut self.jobs, snapshot, index);
        }
    }

    /// The sources that can be neither overwritten nor analysed stale: the files open, being
    /// loaded, and analysed.
    pub fn input_paths(&self) -> Vec<PathBuf> {
        let open = self.view.sources.iter().map(|s| &s.prepared);
        let mut out: Vec<PathBuf> =
            open.chain(&self.analysis.inputs).filter_map(|p| p.source.path.clone()).collect();
        out.extend(self.jobs.of_kind(JobKind::Load).filter_map(|j| j.path.clone()));
        out.sort();
        out.dedup();
        out
    }

    /// The command line's `--decoder`s: each on every source that has its channels; one that
    /// fits no source is an error with the first source's reason.
    fn startup_decoders(&mut self, specs: Vec<String>) {
        let mut per_source: Vec<Vec<String>> = vec![Vec::new(); self.view.sources.len()];
        for spec in specs {
            let mut first_error = None;
            for (i, sv) in self.view.sources.iter().enumerate() {
                let src = sv.source();
                let mut names: Vec<(String, bool)> =
                    src.digital.iter().map(|d| (d.name.clone(), false)).collect();
                names.extend(src.analog.iter().map(|a| (a.name.clone(), true)));
                match decoder_dialog::check_spec(&spec, &names) {
                    Ok(()) => per_source[i].push(spec.clone()),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            if !per_source.iter().any(|s| s.contains(&spec))
                && let Some(e) = first_error
            {
                self.errors.push(format!("--decoder {spec:?}: {e}"));
            }
        }
        for (source, specs) in per_source.into_iter().enumerate() {
            if !specs.is_empty() {
                self.update(Message::AddDecoder { source, specs });
            }
        }
    }

    /// Once the files are loaded: the command line's decoders, alignment, then rules.
    pub(super) fn startup_step(&mut self) {
        if self.jobs.busy(JobKind::Load) || self.aligning() || self.view.sources.is_empty() {
            return;
        }
        let Some(mut startup) = self.startup.take() else { return };
        if !startup.decoders.is_empty() {
            self.startup_decoders(std::mem::take(&mut startup.decoders));
            self.startup = Some(startup);
            return;
        }
        if self.jobs.busy(JobKind::Derive) {
            // The alignment and the rules read the decoded sources.
            self.startup = Some(startup);
            return;
        }
        if let Some(text) = startup.align.take() {
            // `N` counts the files as given; loads finish in any order.
            let loaded = |n: usize| {
                let name = startup.files.get(n)?.file_name()?.to_string_lossy().into_owned();
                self.view.sources.iter().position(|s| s.source().name == name)
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
}

/// Applies a change of the simulator panel's settings; returns the command the running
/// simulation must hear, if any.
fn update_sim_settings(sim: &mut SimState, edit: SimEdit) -> Option<SimCommand> {
    match edit {
        SimEdit::Scenario(name) => {
            if sim.scenario != name {
                sim.scenario = name;
                sim.load_settings();
            }
            None
        }
        SimEdit::Setting(i, value) => {
            if let Some((_, v)) = sim.settings.get_mut(i) {
                *v = value;
            }
            None
        }
        SimEdit::Speed(speed) => {
            sim.speed = speed;
            Some(SimCommand::Speed(sim.speed_arg()))
        }
        SimEdit::MaxSpeed(max) => {
            sim.max_speed = max;
            Some(SimCommand::Speed(sim.speed_arg()))
        }
        SimEdit::Follow(follow) => {
            sim.follow = follow;
            None
        }
    }
}

fn select(view: &mut ViewState, table: &mut TableState, sel: EventSel) {
    view.overlay.selected = Some(sel);
    table.scroll_to_selection = true;
}

/// The reference time for stepping: cursor A, else the selection, else the view's left edge.
fn step_origin(view: &ViewState) -> f64 {
    if let Some(a) = view.overlay.cursor_a {
        return a;
    }
    if let Some(sel) = view.overlay.selected
        && let Some(sv) = view.sources.get(sel.source)
        && let Some(&ts) = sv.source().events.ts.get(sel.index)
    {
        return sv.to_common(ts);
    }
    view.viewport.start
}

fn search_step(view: &mut ViewState, table: &mut TableState, forward: bool) {
    let Some(sv) = view.sources.get(table.rows.source) else { return };
    let ts = &sv.source().events.ts;
    let t = sv.to_source(step_origin(view)).round() as Ps;
    let rows = table.rows.rows.clone();
    let time = |r: &u32| ts.get(*r as usize).copied().unwrap_or(Ps::MAX);
    let found = if forward {
        rows.iter().filter(|r| time(r) > t).min_by_key(|r| (time(r), **r))
    } else {
        rows.iter().filter(|r| time(r) < t).max_by_key(|r| (time(r), **r))
    };
    if let Some(&index) = found {
        let tc = sv.to_common(time(&index));
        let source = table.rows.source;
        select(view, table, EventSel { source, index: index as usize });
        view.overlay.cursor_a = Some(tc);
        view.ensure_visible(tc);
    }
}

fn show_sample(view: &mut ViewState, analysis: &AnalysisState, outcome: usize, sample: usize) {
    let found = analysis.results.get(outcome).and_then(|r| {
        let s = r.outcome.samples.get(sample)?;
        let sv = view.sources.get(r.outcome.source)?;
        Some((sv.to_common(s.start), sv.to_common(s.end)))
    });
    if let Some((a, b)) = found {
        view.show_pair(a, b);
    }
}

/// Shows the samples of analysis `outcome` with latency in `[lo_ns, hi_ns]` (a histogram
/// bar): one is shown as a pair (cursors and arrow), several by the range they span.
fn show_latency_range(
    view: &mut ViewState,
    analysis: &AnalysisState,
    outcome: usize,
    lo_ns: f64,
    hi_ns: f64,
) {
    let Some(r) = analysis.results.get(outcome) else { return };
    let found = analysis::samples_in_latency(&r.outcome, lo_ns, hi_ns);
    let Some(sv) = view.sources.get(r.outcome.source) else { return };
    let spans: Vec<(f64, f64)> = found
        .iter()
        .filter_map(|&i| r.outcome.samples.get(i))
        .map(|s| (sv.to_common(s.start), sv.to_common(s.end)))
        .collect();
    match spans[..] {
        [] => {}
        [(a, b)] => view.show_pair(a, b),
        _ => {
            let a = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
            let b = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
            let pad = (b - a).max(1000.0) * 0.02;
            view.show_range(a - pad, b + pad);
            view.overlay.arrow = None;
        }
    }
}
