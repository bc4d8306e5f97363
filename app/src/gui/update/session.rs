//! Opening a session: what is open is replaced by the session's files, which load in the
//! background under the ids their loads take; once they have, their places, lanes, decoders,
//! the rules, markers, cursors and the view are restored. A file that is gone is an error in
//! the window and the rest restores.

use crate::gui::app::Workbench;
use crate::gui::document::SourceId;
use crate::gui::jobs::JobKind;
use crate::gui::message::{AnalysisMsg, DecoderMsg, FileMsg, TableMsg};
use crate::gui::session::{PendingSession, Session, restore_lanes};
use crate::gui::view::{Overlay, Viewport};
use latscope_decoders::spec::Stack;
use latscope_model::Placement;
use std::path::Path;

impl Workbench {
    /// A session was read: replace what is open by its files, then restore the rest once
    /// they are loaded ([`Self::finish_session`]).
    pub(super) fn open_session(&mut self, path: &Path, session: Session) {
        self.update(FileMsg::CloseAll.into());
        let mut files = Vec::new();
        let mut missing = Vec::new();
        for f in &session.files {
            if !f.path.exists() {
                missing.push(anyhow::anyhow!(
                    "session {}: {} is missing; restoring the rest",
                    path.display(),
                    f.path.display()
                ));
                continue;
            }
            if let Some(Some(id)) = self.open_files(vec![f.path.clone()]).first() {
                files.push((f.clone(), *id));
            }
        }
        // Said after the session's files are asked for, so that their loading (which
        // closes the errors of earlier opens) leaves these in view.
        self.errors.extend(missing);
        self.set_theme(session.theme);
        self.analysis.rules.specs = session.rules.clone();
        // A session with rules runs them; one without gets the presets its files hold.
        self.analysis.chosen_by_files = session.rules.is_empty();
        self.pending.session = Some(PendingSession { session, files });
    }

    /// Restores a pending session once its loads are done, after the first fit of the
    /// loaded data so that the session's view wins. Whether it did.
    pub(super) fn finish_session(&mut self) -> bool {
        // Its files are in, or failed (their errors said): no load runs or waits its turn.
        if self.pending.session.is_none() || self.jobs.busy(JobKind::Load) || !self.pending.loads.is_empty() {
            return false;
        }
        let Some(PendingSession { session, files }) = self.pending.session.take() else { return false };
        // Results of analyses run meanwhile describe the sources before they moved.
        self.analysis.clear();
        // The session's files first, in its order (those that loaded); anything else open
        // stays after them.
        let order: Vec<SourceId> =
            files.iter().map(|(_, id)| *id).filter(|&id| self.doc.get(id).is_some()).collect();
        self.doc.sources.sort_by_key(|s| order.iter().position(|&id| id == s.id).unwrap_or(usize::MAX));
        let mut decoders: Vec<(SourceId, Vec<Stack>)> = Vec::new();
        for (f, id) in &files {
            let Some(s) = self.doc.get(*id) else { continue };
            let prepared = s.prepared.clone();
            // The placement lives beside the source: restoring it touches no data.
            match &f.placed_by {
                Some(how) => self.doc.place_by(*id, Placement::new(f.offset_ps, f.drift_ppm), how.clone()),
                None => {
                    self.doc.place(*id, Placement::new(f.offset_ps, f.drift_ppm));
                }
            }
            let lanes = self.view.lanes.remove(id).unwrap_or_default();
            self.view.lanes.insert(*id, restore_lanes(&prepared, lanes, &f.lanes));
            // Decoders run again on the files they decoded (their rows join the lanes
            // restored); a spec this latscope cannot read is said, and the rest restores.
            let mut stacks = Vec::new();
            for text in &f.decoders {
                match Stack::parse(text) {
                    Ok(stack) => stacks.push(stack),
                    Err(e) => self.errors.push(
                        anyhow::Error::new(e)
                            .context(format!("session: decoder {text:?} of {}", f.path.display())),
                    ),
                }
            }
            if !stacks.is_empty() {
                decoders.push((*id, stacks));
            }
        }
        self.view.overlay = Overlay {
            cursor_a: session.cursor_a,
            cursor_b: session.cursor_b,
            markers: session.markers.iter().map(|m| (m.name.clone(), m.t_ps)).collect(),
            ..Overlay::default()
        };
        if let Some(v) = session.view {
            self.view.viewport = Viewport { start: v.start_ps, ps_per_px: v.ps_per_px };
            // The session's view, not a fit, whatever width the timeline gets.
            self.view.refit = false;
            self.view.last_shown = None;
        } else {
            // The placements moved the sources since the loads fitted the view to them
            // (a recording's logic capture sits seconds or hours after its time zero).
            self.fit_to_data();
        }
        self.set_theme(session.theme);
        self.update(TableMsg::SetFilter(self.table.filter.clone()).into());
        for (source, stacks) in decoders {
            self.update(DecoderMsg::Add { source, stacks }.into());
        }
        // The results are part of what the session showed: compute them again, once the
        // decoders are done (rules over decoded events read them; [`Self::session_rules_step`]).
        self.pending.session_rules = !self.analysis.rules.specs.is_empty() && !self.doc.sources.is_empty();
        true
    }

    /// Runs a restored session's rules once no decode runs. Whether it did.
    pub(super) fn session_rules_step(&mut self) -> bool {
        if !self.pending.session_rules || self.jobs.busy(JobKind::Decode) {
            return false;
        }
        self.pending.session_rules = false;
        self.update(AnalysisMsg::Run.into());
        true
    }
}
