//! The record window's messages: the form as edited, Start (the recording job) and Stop
//! (its stop flag), the live lines and crossings, the snapshots that grow the recording's
//! source on the timeline, and the end.

use crate::gui::app::Workbench;
use crate::gui::document::SourceId;
use crate::gui::message::{AnalysisMsg, RecordMsg, ViewMsg};
use crate::gui::prepare::Prepared;
use crate::gui::record::{LiveLine, MAX_CROSSINGS_SHOWN, RecordRun};
use crate::gui::view::default_lanes;
use crate::gui::workers;
use latscope_model::Placement;
use latscope_record::Live;
use latscope_record::stats::human_ns;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

impl Workbench {
    /// Applies a [`RecordMsg`].
    pub(super) fn update_record(&mut self, msg: RecordMsg) {
        match msg {
            RecordMsg::Show => self.record.open = true,
            RecordMsg::RecordPresets(presets) => {
                self.record.open = true;
                if !self.record.running() {
                    for p in presets {
                        if !self.record.form.presets.contains(&p) {
                            self.record.form.presets.push(p);
                        }
                    }
                }
            }
            RecordMsg::Close => self.record.open = false,
            RecordMsg::Edit(form) => {
                // The form of a recording going on is what it records: it stays.
                if !self.record.running() {
                    self.record.form = form;
                    // What was wrong with the last form may be fixed now.
                    self.record.error = None;
                }
            }
            RecordMsg::Start => self.start_recording(),
            RecordMsg::Stop => {
                if let Some(run) = &mut self.record.run {
                    run.stop();
                }
            }
            RecordMsg::Live { ticket, live } => {
                if self.record.run.as_ref().is_some_and(|r| r.ticket == ticket) {
                    self.record_live(live);
                }
            }
            RecordMsg::Snapshot { ticket, prepared } => {
                if self.record.run.as_ref().is_some_and(|r| r.ticket == ticket) {
                    self.record_snapshot(prepared);
                }
            }
            RecordMsg::LogicSnapshot { ticket, prepared, offset_ps, placed_by } => {
                if self.record.run.as_ref().is_some_and(|r| r.ticket == ticket) {
                    self.record_logic_snapshot(prepared, offset_ps, placed_by);
                }
            }
            RecordMsg::Logic { ticket, prepared, offset_ps, placed_by } => {
                if self.record.run.as_ref().is_some_and(|r| r.ticket == ticket) {
                    self.record_logic(prepared, offset_ps, placed_by);
                }
            }
            RecordMsg::Temporary(path) => self.record.temporary.add(path),
            RecordMsg::Ended { ticket, result } => {
                if self.record.run.as_ref().is_none_or(|r| r.ticket != ticket) {
                    return;
                }
                self.record.run = None;
                for id in [self.record.source, self.record.logic_source].into_iter().flatten() {
                    if let Some(s) = self.doc.get_mut(id) {
                        s.growing = false;
                    }
                }
                match result {
                    Ok(end) => {
                        for w in &end.warnings {
                            self.errors.push_warning(w.clone());
                        }
                        if let Some(why) = &end.unrestored {
                            self.record.error = Some(why.clone());
                        }
                        self.record.ended = Some(end);
                        // The recording is a capture like any other now: the analyses it
                        // was asked for run in the panel, beside the user's, as a session's
                        // do; without any, the presets its events hold, as on a file opened.
                        if self.record.source.is_some() {
                            let asked = self.record.form.analysis_texts();
                            if asked.is_empty() && self.analysis.chosen_by_files {
                                self.update(AnalysisMsg::RunPresets.into());
                            } else {
                                let specs = &mut self.analysis.rules.specs;
                                if self.analysis.chosen_by_files {
                                    specs.clear();
                                }
                                for text in asked {
                                    if !specs.contains(&text) {
                                        specs.push(text);
                                    }
                                }
                                self.analysis.chosen_by_files = false;
                                self.update(AnalysisMsg::Run.into());
                            }
                        }
                    }
                    Err(e) => self.record.error = Some(crate::errors::error_text(&e)),
                }
            }
        }
    }

    fn start_recording(&mut self) {
        if self.record.running() {
            return;
        }
        self.record.open = true;
        let asked = match self.record.form.request(&self.registry) {
            Ok(a) => a,
            Err(e) => {
                self.record.error = Some(crate::errors::error_text(&e));
                return;
            }
        };
        self.record.error = None;
        self.record.ended = None;
        self.record.line = None;
        self.record.crossings.clear();
        self.record.crossings_total = 0;
        self.record.snapshots = 0;
        // A new recording is a new source; the last one stays open beside it.
        self.record.source = None;
        self.record.logic_source = None;
        self.record.logic_placed = None;
        let stop = Arc::new(AtomicBool::new(false));
        let (ticket, finished) = workers::record(&mut self.jobs, asked, stop.clone());
        self.record.run = Some(RecordRun { ticket, stop, stopping: false, finished });
    }

    fn record_live(&mut self, live: Live) {
        match live {
            Live::Stats { elapsed_s, events, lost, kept_bytes, analyses, logic, last } => {
                self.record.line =
                    Some(LiveLine { elapsed_s, events, lost, kept_bytes, analyses, logic, last });
            }
            Live::Crossing { analysis, latency_ns, start_s, saved } => {
                self.record.crossings_total += 1;
                if self.record.crossings.len() < MAX_CROSSINGS_SHOWN {
                    let at =
                        saved.map_or_else(|| "not saved (max saves)".to_owned(), |p| p.display().to_string());
                    self.record
                        .crossings
                        .push(format!("{analysis} {} at {start_s:.3} s: {at}", human_ns(Some(latency_ns))));
                }
            }
        }
    }

    /// The logic analyzer beside the kernel joins the document where the host's clock puts
    /// it: `offset_ps` after the kernel source's time zero, on the kernel's placement.
    /// It replaces what the timeline showed of it while it recorded.
    fn record_logic(&mut self, prepared: Arc<Prepared>, offset_ps: i64, placed_by: String) {
        let id = self.place_recorded_logic(prepared, offset_ps, placed_by, false);
        if let Some(s) = self.doc.get_mut(id) {
            s.growing = false;
        }
        self.fit_to_data();
    }

    /// The logic analyzer beside the kernel as recorded so far: its source in the document
    /// grows (the first adds it), placed as the recording's source was last.
    fn record_logic_snapshot(&mut self, prepared: Arc<Prepared>, offset_ps: i64, placed_by: String) {
        let id = self.place_recorded_logic(prepared, offset_ps, placed_by, true);
        if let Some(s) = self.doc.get_mut(id) {
            s.growing = self.record.running();
        }
    }

    /// Puts the recording's logic source in the document (replacing the last one) `offset_ps`
    /// after the kernel source's time zero, on the kernel's placement; `carry` keeps the
    /// lanes as the user left them, else they start as a capture's opened.
    fn place_recorded_logic(
        &mut self,
        prepared: Arc<Prepared>,
        offset_ps: i64,
        placed_by: String,
        carry: bool,
    ) -> SourceId {
        let kernel = self.record.source.and_then(|id| self.doc.get(id)).map_or(0, |s| s.placement.offset);
        let id = match self.record.logic_source.filter(|&id| self.doc.get(id).is_some()) {
            Some(id) if carry => {
                self.replace_source(id, prepared);
                id
            }
            Some(id) => {
                self.view.lanes.insert(id, recorded_lanes(&prepared, self.theme));
                self.doc.replace(id, prepared);
                id
            }
            None => {
                let id = self.doc.reserve_id();
                self.view.lanes.insert(id, recorded_lanes(&prepared, self.theme));
                self.doc.add(id, prepared, false);
                id
            }
        };
        self.doc.place_by(id, Placement::new(kernel.saturating_add(offset_ps), 0.0), placed_by.clone());
        self.record.logic_source = Some(id);
        self.record.logic_placed = Some(placed_by);
        id
    }

    /// What has been recorded so far: the recording's source in the document grows (the
    /// first snapshot adds it), and the view follows its end while it grows.
    fn record_snapshot(&mut self, prepared: Arc<Prepared>) {
        self.record.snapshots += 1;
        let id = match self.record.source.filter(|&id| self.doc.get(id).is_some()) {
            Some(id) => {
                self.replace_source(id, prepared);
                id
            }
            None => {
                let id = self.doc.reserve_id();
                self.view.lanes.insert(id, recorded_lanes(&prepared, self.theme));
                self.doc.add(id, prepared, true);
                self.record.source = Some(id);
                id
            }
        };
        if let Some(s) = self.doc.get_mut(id) {
            s.growing = self.record.running();
        }
        // The view follows the recording: all of it, whatever else is open (an older
        // capture of this machine sits where its clock puts it, maybe hours away).
        let range = self.doc.get(id).and_then(|s| {
            let (a, b) = s.source().time_range()?;
            Some((s.to_common(a), s.to_common(b)))
        });
        if let Some((a, b)) = range.filter(|(a, b)| b > a) {
            self.update(ViewMsg::ShowRange(a, b).into());
        }
        if self.table_sources().contains(&id) {
            self.refresh_table();
        }
    }
}

/// A recorded source's lanes: as any source's, with the event lanes of a decode made on the
/// stream hidden at first, as a decode in the workbench leaves them (the annotation rows
/// show them; the table and search list the events).
fn recorded_lanes(
    prepared: &Prepared,
    theme: crate::gui::theme::ThemeKind,
) -> Vec<crate::gui::view::LaneView> {
    let hidden = crate::gui::decoder_dialog::decoded_event_lanes(prepared);
    let mut lanes = default_lanes(prepared, theme);
    for v in lanes.iter_mut().filter(|v| hidden.contains(&v.name)) {
        v.visible = false;
    }
    lanes
}
