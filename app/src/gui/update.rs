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
use super::message::{DerivedLane, EventSel, Message, Row, SimCommand, SimEdit, TableRows};
use super::prepare::{self, LaneKind, Prepared};
use super::rooms::{self, AnalysisState, ViewState};
use super::session;
use super::sim_panel::SimState;
use super::table::TableState;
use super::timeline::{self, Arrow, ArrowEnd};
use super::workers;
use latscope_analysis::align::Alignment;
use latscope_analysis::outcome::Outcome;
use latscope_importers::LoadControl;
use latscope_model::{Filter, Ps, Source};
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
            | Message::SetTableSource(..)
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
            | Message::AddDecoder { .. }
            | Message::Decoded { .. } => self.update_alignment_and_derived(msg),
            Message::Sim(..)
            | Message::SimEdit(..)
            | Message::SimSnapshot { .. }
            | Message::SimError(..)
            | Message::SimMetrics { .. } => self.update_sim(msg),
            Message::Error(..)
            | Message::DismissError(..)
            | Message::DismissErrors
            | Message::Escape
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
            Message::Fleet(m) => self.update_fleet(m),
        }
        self.view.drop_stale_arrow();
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
            Message::SetTableSource(s) => {
                self.table.source = s.filter(|&i| i < self.view.sources.len());
                self.refresh_table();
            }
            Message::TableReady { ticket, rows } => {
                if self.jobs.accept(ticket, |_| true) {
                    // Another question (not the same one asked again as a source grew) opens
                    // the list at its first row, wherever the last answer was scrolled to.
                    let asked = |r: &TableRows| (r.filter.clone(), r.sort, r.sources.clone());
                    if asked(&self.table.rows) != asked(&rows) {
                        self.table.scroll_to_top = true;
                    }
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
                self.table.scroll_to_top = false;
            }
            other => debug_assert!(false, "not a update_table message: {other:?}"),
        }
    }

    /// The analysis: running the rules, their results, the plots, showing samples.
    fn update_analysis(&mut self, msg: Message) {
        match msg {
            Message::RunAnalysis => {
                let rules = self.analysis.rules.specs.clone();
                self.run_analysis(analysis::Which::Rules(rules));
            }
            Message::AnalysisDone { ticket, results, errors, chosen, missing } => {
                if self.jobs.accept(ticket, |_| true) {
                    // The presets the files hold become the rule list (Run repeats them),
                    // unless the user (or a session) set the rules while they ran.
                    if let Some(names) = chosen
                        && self.analysis.chosen_by_files
                    {
                        self.analysis.rules.specs = names;
                    }
                    // What the presets chosen on open lack; a run of the user's rules says
                    // its own in its errors, and the list goes.
                    self.analysis.missing = missing;
                    if results.is_empty() {
                        // Nothing to export: the sources need not be kept for it.
                        self.analysis.inputs.clear();
                    }
                    self.show_results(results);
                    self.errors.extend(errors);
                }
            }
            Message::EditRules(rules) => {
                // The user's rules from now on: opening files no longer chooses them.
                self.analysis.chosen_by_files = false;
                self.analysis.rules = rules;
            }
            Message::SetPlot { plot, log_x } => {
                self.analysis.panel.plot = plot;
                self.analysis.panel.log_x = log_x;
            }
            Message::ShowSample { outcome, sample } => {
                show_sample(&mut self.view, &mut self.table, &self.analysis, outcome, sample)
            }
            Message::ShowLatencyRange { outcome, lo_ns, hi_ns } => {
                show_latency_range(&mut self.view, &self.analysis, outcome, lo_ns, hi_ns)
            }
            Message::LiveAnalysisDone { ticket, results } => {
                if self.jobs.accept(ticket, |_| true) {
                    self.sim.live.shown = self.sim.live.asked.clone();
                    self.sim.live.shown_now = self.sim.live.asked_now;
                    self.sim.live.updates += 1;
                    self.show_results(results);
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
                    (Verdict::Current, Ok(derived)) => {
                        if let Some(stamp) = self.view.stamp(source) {
                            self.view.pending_derived.push((stamp, derived));
                            self.add_pending_derived();
                        }
                    }
                    (Verdict::Current, Err(e)) => self.errors.push(format!("derive digital: {e}")),
                    (Verdict::Changed, _) => self.errors.push(
                        "derive digital: the source changed while the lane was derived; derive again".into(),
                    ),
                    (Verdict::Gone, _) => {}
                }
            }
            Message::Decoded { ticket, source, result } => {
                match (self.jobs.judge(ticket, |s| self.view.is_current(s)), result) {
                    (Verdict::Current, Ok(prepared)) => self.decoded(source, prepared),
                    (Verdict::Current, Err(e)) => self.errors.push(format!("decode: {e}")),
                    (Verdict::Changed, _) => self.errors.push(
                        "decode: the source changed while it was decoded; add the decoder again".into(),
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
            Message::DismissError(i) => self.errors.dismiss(i),
            Message::DismissErrors => self.errors.clear(),
            Message::Escape => {
                // Esc closes the error banner first; with none shown it clears the cursors.
                if self.errors.is_empty() {
                    rooms::update_view(&mut self.view, Message::ClearCursors);
                } else {
                    self.errors.clear();
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
        // Errors shown so far are about earlier opens: a good load of these closes them.
        self.errors.new_generation();
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
        self.table.source = None;
    }

    /// Adds the finished loads that no earlier, still running load must precede.
    pub(super) fn add_finished_loads(&mut self) {
        let first_running = self.jobs.of_kind(JobKind::Load).map(|j| j.ticket.id).min().unwrap_or(u64::MAX);
        while let Some(entry) = self.view.finished_loads.first_entry() {
            if *entry.key() > first_running {
                break;
            }
            let (path, prepared) = entry.remove();
            self.errors.loaded_ok();
            for w in prepared.source.diagnostics.summary().into_iter().take(3) {
                self.errors.push(format!("{}: {w}", path.display()));
            }
            self.view.add_source(prepared);
            self.analysis.presets_due = self.analysis.chosen_by_files;
            if !self.view.fitted || !self.jobs.busy(JobKind::Load) {
                self.view.fit_all();
                self.view.fitted = true;
                self.view.refit = true;
            }
            self.refresh_table();
        }
    }

    /// The sources the table lists: the one its source filter picks, else all.
    pub(super) fn table_sources(&self) -> Vec<usize> {
        match self.table.source.filter(|&i| i < self.view.sources.len()) {
            Some(i) => vec![i],
            None => (0..self.view.sources.len()).collect(),
        }
    }

    /// Reruns the table query (filter and sort) over the table's sources; a newer query
    /// makes the running one stale.
    pub(super) fn refresh_table(&mut self) {
        let shown = self.table_sources();
        if shown.is_empty() {
            self.table.rows = TableRows::default();
            return;
        }
        let sources: Vec<workers::TableSource> = shown
            .iter()
            .filter_map(|&i| self.view.sources.get(i).map(|sv| (i, sv.prepared.clone(), sv.placement)))
            .collect();
        let (text, sort) = (self.table.filter.clone(), self.table.sort);
        let filter = match Filter::parse(&text) {
            Ok(f) => {
                self.table.error = None;
                f
            }
            Err(e) => {
                // Said beside the filter; the rows stay until it parses.
                self.table.error = Some(e.to_string());
                self.jobs.cancel_kind(JobKind::Table);
                return;
            }
        };
        // Stamped by the first source: the query is latest-wins whichever source it reads.
        self.jobs.spawn(JobKind::Table, self.view.stamp(shown[0]), move |cx| {
            let rows = workers::table_rows(&sources, &filter, sort, &cx.control);
            // Let go of the sources before answering: the workbench may then change one in
            // place (a derived lane) without a copy.
            drop(sources);
            if let Some(rows) = rows {
                let rows = TableRows { sources: shown, filter: text, sort, rows: Arc::new(rows) };
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

    /// New results replace the old; the panel opens when there are results where there
    /// were none (the user may close it again).
    fn show_results(&mut self, results: Vec<analysis::AnalysisResult>) {
        if self.analysis.results.is_empty() && !results.is_empty() && !self.view.panels.analysis {
            // The timeline gets narrower; a view as fitted, or showing a pair, keeps showing it
            // (`keep_shown`).
            self.view.panels.analysis = true;
        }
        self.analysis.results = Arc::new(results);
        self.view.refresh_bands(&self.analysis.results);
    }

    fn run_analysis(&mut self, which: analysis::Which) {
        if self.view.sources.is_empty() {
            return;
        }
        if matches!(which, analysis::Which::Rules(_)) {
            self.view.panels.analysis = true;
        }
        let sources: Vec<_> = self.view.sources.iter().map(|s| s.prepared.clone()).collect();
        self.analysis.inputs = sources.clone();
        let placements: Vec<_> = self.view.sources.iter().map(|s| s.placement).collect();
        self.analysis.placements = placements.clone();
        // Sources aligned (the Align dialog) are one trace, as with `report --align`; so are
        // sources placed elsewhere than their clocks put them (a session's placements): the
        // runner's each-or-together rule decides that.
        let together = self.view.alignment.is_some();
        let registry = self.registry.clone();
        let options =
            latscope_engine::analyse::Options { include_errors: self.analysis.rules.include_errors };
        self.jobs.spawn(JobKind::Analysis, None, move |cx| {
            // The worker borrows the shared sources with their placements: no copy.
            let (results, ran) =
                analysis::analyse(&registry, &sources, &placements, &which, together, options);
            if !cx.cancelled() {
                let analysis::Ran { errors, chosen, missing, .. } = ran;
                cx.send(Message::AnalysisDone { ticket: cx.ticket, results, errors, chosen, missing });
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
                    self.analysis.panel.aligned =
                        Some(align_dialog::describe(&alignment, &self.view.labels()));
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
            // Aligning by hand with a zero offset (from where its clock puts it) is the reset,
            // through the same worker.
            self.align(0, a.source, "+0ps".into(), true);
        }
        self.analysis.results = Arc::default();
        self.view.overlay.bands.clear();
    }

    /// Derives a digital track on a worker: only the track and its lane are computed there;
    /// the source is not copied ([`Self::add_pending_derived`] adds them in place).
    fn derive(&mut self, source: usize, track: usize, threshold: Option<(f64, f64)>) {
        let Some(sv) = self.view.sources.get(source) else { return };
        let p = sv.prepared.clone();
        self.jobs.spawn(JobKind::Derive, self.view.stamp(source), move |cx| {
            let result = derive_dialog::derive_track(&p.source, track, threshold).map(|d| {
                let lane = prepare::digital_lane(0, &d);
                DerivedLane { track: d, lane }
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
            Some((i, sv)) => {
                self.dialogs.decoder = decoder_dialog::DecoderDialog::open_on(&self.registry, sv.source(), i)
            }
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
        let registry = self.registry.clone();
        self.jobs.spawn(JobKind::Derive, self.view.stamp(source), move |cx| {
            let result = decoder_dialog::decode_into(&registry, &p.source, &specs)
                .map(Arc::new)
                .map_err(|e| e.to_string());
            drop(p);
            cx.send(Message::Decoded { ticket: cx.ticket, source, result });
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

    /// Adds the derived tracks waiting in `view.pending_derived` to their sources, in place:
    /// a source is never copied to add a track. The analysis results and the simulator's
    /// statistics share a source's allocation; they let go of it for the moment of the change
    /// and share the changed source again (a track added beside the events changes no result).
    /// A job still reading the source (a table filter, an export, an analysis) keeps its
    /// share until it ends, so the track waits here and [`Workbench::poll`] tries again.
    /// A track whose source was replaced or closed meanwhile is dropped.
    pub(super) fn add_pending_derived(&mut self) {
        let mut pending = std::mem::take(&mut self.view.pending_derived);
        let mut waiting = Vec::new();
        while !pending.is_empty() {
            let (stamp, derived) = pending.remove(0);
            if !self.view.is_current(stamp) {
                continue;
            }
            match self.add_derived_in_place(stamp.index, derived) {
                None => {
                    // Adding a track replaces the source's data generation; the tracks that
                    // still wait for it were derived from the same data.
                    if let Some(now) = self.view.stamp(stamp.index) {
                        for (s, _) in pending.iter_mut().chain(waiting.iter_mut()) {
                            if *s == stamp {
                                *s = now;
                            }
                        }
                    }
                }
                Some(derived) => waiting.push((stamp, derived)),
            }
        }
        self.view.pending_derived = waiting;
    }

    /// Adds `derived` to source `index` if the workbench can hold the source alone for the
    /// moment of the change; gives it back (`Some`) when a job still reads the source.
    fn add_derived_in_place(&mut self, index: usize, derived: DerivedLane) -> Option<DerivedLane> {
        let sv = self.view.sources.get_mut(index)?;
        let inputs = &mut self.analysis.inputs;
        let held: Vec<usize> = (0..inputs.len()).filter(|&i| Arc::ptr_eq(&inputs[i], &sv.prepared)).collect();
        for &i in held.iter().rev() {
            inputs.remove(i);
        }
        let live = &mut self.sim.live;
        let shown = live.shown.take_if(|a| Arc::ptr_eq(a, &sv.prepared)).is_some();
        let asked = live.asked.take_if(|a| Arc::ptr_eq(a, &sv.prepared)).is_some();
        let given_back = match Arc::get_mut(&mut sv.prepared) {
            Some(prepared) => {
                prepared.add_digital(derived.track, derived.lane);
                None
            }
            None => Some(derived),
        };
        for &i in &held {
            inputs.insert(i, sv.prepared.clone());
        }
        if shown {
            live.shown = Some(sv.prepared.clone());
        }
        if asked {
            live.asked = Some(sv.prepared.clone());
        }
        if given_back.is_none() {
            let same = sv.prepared.clone();
            self.view.replace_source(index, same);
        }
        given_back
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
                self.sim.ran_with = Some((scenario.to_owned(), sc.settings()));
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
        if self.table_sources().contains(&index) {
            self.refresh_table();
        }
        if self.sim.live.due(finished) {
            self.sim.live.start(&mut self.jobs, snapshot, index, now);
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

    /// The command line's `--decoder`s: each on every source it applies to, by the engine's
    /// rule (`latscope report --decoder`'s); one that fits no source is an error.
    fn startup_decoders(&mut self, specs: Vec<String>) {
        let inputs: Vec<(&str, Vec<latscope_engine::channels::ChannelName>)> = self
            .view
            .sources
            .iter()
            .map(|sv| (sv.source().name.as_str(), latscope_engine::channels::channels_of(sv.source())))
            .collect();
        let mut per_source: Vec<Vec<String>> = vec![Vec::new(); inputs.len()];
        let mut errors = Vec::new();
        for spec in specs {
            match latscope_engine::decode::applies_to(&self.registry, &spec, &inputs) {
                Ok(on) => on.into_iter().for_each(|i| per_source[i].push(spec.clone())),
                Err(e) => errors.push(format!("--decoder: {e}")),
            }
        }
        drop(inputs);
        for e in errors {
            self.errors.push(e);
        }
        for (source, specs) in per_source.into_iter().enumerate() {
            if !specs.is_empty() {
                self.update(Message::AddDecoder { source, specs });
            }
        }
    }

    /// Once the files are loaded: the command line's decoders, its alignment, then its rules;
    /// or, when the rules are not the user's, every preset the files hold.
    pub(super) fn startup_step(&mut self) {
        if self.jobs.busy(JobKind::Load) || self.aligning() || self.view.sources.is_empty() {
            return;
        }
        let Some(mut startup) = self.startup.take() else {
            if self.analysis.presets_due && !self.session_busy() {
                self.analysis.presets_due = false;
                if self.analysis.chosen_by_files {
                    self.run_analysis(analysis::Which::Presets);
                }
            }
            return;
        };
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
            if let Some(setting) = sim.settings.get_mut(i) {
                setting.value = value;
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

/// The next (`forward`) or previous match of the table's filter after the step origin, in
/// every source the table lists, on the common timeline.
fn search_step(view: &mut ViewState, table: &mut TableState, forward: bool) {
    let t = step_origin(view);
    let sources = &view.sources;
    let time = |r: &Row| {
        let sv = sources.get(r.source as usize)?;
        sv.source().events.ts.get(r.index as usize).map(|&ts| sv.to_common(ts))
    };
    let rows = table.rows.rows.clone();
    let order = |a: &(f64, &Row), b: &(f64, &Row)| {
        a.0.total_cmp(&b.0).then((a.1.source, a.1.index).cmp(&(b.1.source, b.1.index)))
    };
    let timed = rows.iter().filter_map(|r| Some((time(r)?, r)));
    let found = if forward {
        timed.filter(|(tr, _)| *tr > t).min_by(order)
    } else {
        timed.filter(|(tr, _)| *tr < t).max_by(order)
    };
    if let Some((tc, row)) = found {
        select(view, table, row.sel());
        view.overlay.cursor_a = Some(tc);
        view.ensure_visible(tc);
    }
}

/// The event a pair's end at `t` (source-relative) is: the event at that time, the one
/// whose fields match the pair's key (`dev=… sector=…`) when several share the time.
pub(super) fn pair_event(src: &Source, t: Ps, key: &str) -> Option<usize> {
    let ts = &src.events.ts;
    let lo = ts.partition_point(|&x| x < t);
    let hi = ts.partition_point(|&x| x <= t);
    // The key reads `field=value …`, `-` for a field the event lacked.
    let terms: Vec<&str> = key.split_whitespace().filter(|w| !w.ends_with("=-")).collect();
    let filter = Filter::parse(&terms.join(" ")).ok().filter(|f| !f.is_empty());
    let matching = filter.and_then(|f| (lo..hi).find(|&i| f.matches(src, i)));
    matching.or((lo < hi).then_some(lo))
}

/// The arrow of sample `sample` of `outcome`: its ends on the common timeline and the
/// events they are.
fn arrow_of(view: &ViewState, outcome: &Outcome, sample: usize) -> Option<Arrow> {
    let s = outcome.samples.get(sample)?;
    let sv = view.sources.get(outcome.source)?;
    // The stored key (`pid=1234`), which filters match; the shown one names the task.
    let key = outcome.raw_key(&s.key);
    let end = |t: Ps| ArrowEnd { t, event: pair_event(sv.source(), t, key) };
    Some(Arrow {
        source: outcome.source,
        a: sv.to_common(s.start),
        b: sv.to_common(s.end),
        start: end(s.start),
        end: end(s.end),
    })
}

/// Shows a sample of an analysis (a worst case, a plot point): cursors and arrow on the
/// pair, its start event selected (the table scrolls to it).
fn show_sample(
    view: &mut ViewState,
    table: &mut TableState,
    analysis: &AnalysisState,
    outcome: usize,
    sample: usize,
) {
    let Some(r) = analysis.results.get(outcome) else { return };
    if let Some(arrow) = arrow_of(view, &r.outcome, sample) {
        view.show_pair(arrow);
        if let Some(index) = arrow.start.event {
            select(view, table, EventSel { source: arrow.source, index });
        }
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
    match (&spans[..], &found[..]) {
        ([], _) => {}
        ([_], [i]) => {
            if let Some(arrow) = arrow_of(view, &r.outcome, *i) {
                view.show_pair(arrow);
            }
        }
        _ => {
            let a = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
            let b = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
            let pad = (b - a).max(1000.0) * 0.02;
            view.show_range(a - pad, b + pad);
            view.overlay.arrow = None;
        }
    }
}
