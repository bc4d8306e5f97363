//! Opening, loading and closing files. A source's id is taken when its load starts, so what
//! the command line or a session says of "file N" names it before it has loaded; loads that
//! finish early wait for the earlier ones (sources join in the order their files were given).

use crate::gui::app::Workbench;
use crate::gui::document::SourceId;
use crate::gui::jobs::{JobKind, Ticket};
use crate::gui::message::{FileMsg, SaveMsg};
use crate::gui::prepare::Prepared;
use crate::gui::session;
use crate::gui::table::TableRows;
use crate::gui::view::default_lanes;
use crate::gui::workers;
use latscope_importers::LoadControl;
use std::path::{Path, PathBuf};
use std::sync::Arc;

impl Workbench {
    pub(super) fn update_files(&mut self, msg: FileMsg) {
        match msg {
            FileMsg::Open(paths) => {
                self.open_files(paths);
            }
            FileMsg::Pick => self.picker().pick(self.outbox()),
            FileMsg::CancelJob(ticket) => {
                self.jobs.cancel(ticket);
                self.add_finished_loads();
            }
            FileMsg::Loaded { ticket, id, path, result } => {
                if !self.jobs.accept(ticket, |_| true) {
                    self.drop_preview(ticket.id);
                    return; // cancelled
                }
                match result {
                    Ok(prepared) => {
                        self.pending.loads.insert(ticket.id, (id, path, prepared));
                    }
                    Err(e) => {
                        self.drop_preview(ticket.id);
                        self.errors.push(e);
                    }
                }
                self.add_finished_loads();
            }
            FileMsg::Preview { ticket, id, prepared } => self.show_preview(ticket, id, prepared),
            FileMsg::Added { id, path, prepared } => self.add_source(id, &path, prepared),
            FileMsg::CloseAll => self.close_all(),
        }
    }

    /// Starts reading `paths`: sessions, and captures each under a new source id. Returns the
    /// ids in the order given (`None` for a session).
    pub(super) fn open_files(&mut self, paths: Vec<PathBuf>) -> Vec<Option<SourceId>> {
        // Errors shown so far are about earlier opens: a good load of these closes them.
        self.errors.new_generation();
        let mut ids = Vec::with_capacity(paths.len());
        for path in paths {
            if session::is_session_path(&path) {
                self.jobs.spawn(JobKind::SessionRead, None, move |cx| {
                    let result = session::Session::read(&path);
                    cx.send(SaveMsg::SessionRead { ticket: cx.ticket, path, result });
                });
                ids.push(None);
                continue;
            }
            self.remember_recent(&path);
            let id = self.doc.reserve_id();
            let p = path.clone();
            self.jobs.spawn_load(path, LoadControl::new(), move |cx| {
                let ctl = cx.control.clone().with_preview(workers::preview_sink(&cx, id, &p));
                let result = workers::load(&p, &ctl);
                cx.send(FileMsg::Loaded { ticket: cx.ticket, id, path: p, result });
            });
            ids.push(Some(id));
        }
        ids
    }

    fn close_all(&mut self) {
        // Jobs that read the sources are stopped; their late answers are dropped, so a late
        // alignment or derivation cannot land on whatever is opened next.
        self.jobs.forget_sources();
        self.doc.clear();
        self.view.lanes.clear();
        self.view.overlay = Default::default();
        self.view.fitted = false;
        self.pending.loads.clear();
        self.pending.derived.clear();
        self.pending.previews.clear();
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
        while let Some(entry) = self.pending.loads.first_entry() {
            if *entry.key() > first_running {
                break;
            }
            let (id, path, prepared) = entry.remove();
            self.add_source(id, &path, prepared);
        }
    }

    /// Shows the preview of the capture that load `ticket` reads as source `id`, in the
    /// place the source will take. Only for the one load running, whose source joins last:
    /// sources join in the order their files were given.
    fn show_preview(&mut self, ticket: Ticket, id: SourceId, prepared: Arc<Prepared>) {
        let alone = self.jobs.of_kind(JobKind::Load).count() == 1 && self.pending.loads.is_empty();
        if !self.jobs.is_current(ticket) || !alone {
            return;
        }
        if self.pending.previews.contains_key(&ticket.id) {
            self.replace_source(id, prepared);
            return;
        }
        self.pending.previews.insert(ticket.id, id);
        self.view.lanes.insert(id, default_lanes(&prepared, self.theme));
        self.doc.add(id, prepared, false);
        if !self.view.fitted {
            self.fit_to_data();
            self.view.fitted = true;
        }
    }

    /// Takes away the preview of load `ticket_id`, if one is shown (its load failed or was
    /// cancelled).
    fn drop_preview(&mut self, ticket_id: u64) {
        if let Some(id) = self.pending.previews.remove(&ticket_id) {
            self.doc.remove(id);
            self.view.lanes.remove(&id);
            self.view.fitted &= !self.doc.sources.is_empty();
        }
    }

    /// Source `id` (read from `path`) joins the document and the view: where its clock puts
    /// it, all its lanes shown; the first one fits the view. A preview of it, if shown, is
    /// replaced in place.
    fn add_source(&mut self, id: SourceId, path: &Path, prepared: Arc<Prepared>) {
        self.errors.loaded_ok();
        for w in prepared.source.diagnostics.summary().into_iter().take(3) {
            self.errors.push_warning(format!("{}: {w}", path.display()));
        }
        self.pending.previews.retain(|_, shown| *shown != id);
        if let Some(index) = self.doc.index_of(id) {
            self.replace_source(id, prepared);
            let placement = self.doc.clock_placement(index);
            self.doc.place(id, placement);
        } else {
            self.view.lanes.insert(id, default_lanes(&prepared, self.theme));
            self.doc.add(id, prepared, false);
        }
        self.analysis.presets_due = self.analysis.chosen_by_files;
        if !self.view.fitted || !self.jobs.busy(JobKind::Load) {
            self.fit_to_data();
            self.view.fitted = true;
        }
        self.refresh_table();
    }

    /// Fits the view to everything loaded; again once the timeline's width is known, if it
    /// is not yet.
    pub(super) fn fit_to_data(&mut self) {
        self.view.fit_all(&self.doc);
        self.view.refit = self.view.width <= 1.0;
    }

    /// The files that can be neither overwritten nor analysed stale: the files open, being
    /// loaded, and analysed.
    pub fn input_paths(&self) -> Vec<PathBuf> {
        let open = self.doc.sources.iter().map(|s| &s.prepared);
        let mut out: Vec<PathBuf> =
            open.chain(&self.analysis.inputs).filter_map(|p| p.source.path.clone()).collect();
        out.extend(self.jobs.of_kind(JobKind::Load).filter_map(|j| j.path.clone()));
        out.sort();
        out.dedup();
        out
    }
}
