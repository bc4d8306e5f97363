//! Derived digital lanes: the dialog, the job that computes the track and its lane from an
//! analog track, and adding them to their source in place once nothing else holds it.

use crate::gui::app::Workbench;
use crate::gui::derive_dialog;
use crate::gui::document::{SourceId, SourceStamp};
use crate::gui::jobs::{JobKind, Verdict};
use crate::gui::message::{DeriveMsg, DerivedLane};
use crate::gui::prepare::{self, LaneKind};
use crate::gui::view::carried_lanes;
use std::sync::Arc;

impl Workbench {
    pub(super) fn update_derive(&mut self, msg: DeriveMsg) {
        match msg {
            DeriveMsg::Open(id) => {
                let Some(s) = self.doc.get(id.source) else { return };
                let lane =
                    self.view.lanes_of(id.source).get(id.lane).and_then(|v| s.prepared.lanes.get(v.lane));
                if let Some(LaneKind::Analog { track, .. }) = lane.map(|l| &l.kind) {
                    self.dialogs.derive.open_on(s.source(), id.source, *track);
                }
            }
            DeriveMsg::Edit(d) => self.dialogs.derive = d,
            DeriveMsg::Derive { source, track, threshold } => self.derive(source, track, threshold),
            DeriveMsg::Derived { ticket, source, result } => {
                // Closed meanwhile: nothing to say. Changed (aligned, derived again): say so.
                match (self.jobs.judge(ticket, |s| self.doc.is_current(s)), result) {
                    (Verdict::Current, Ok(derived)) => {
                        if let Some(stamp) = self.doc.stamp(source) {
                            self.pending.derived.push((stamp, derived));
                        }
                    }
                    (Verdict::Current, Err(e)) => self.errors.push(e.context("derive digital")),
                    (Verdict::Changed, _) => self.errors.push(anyhow::anyhow!(
                        "derive digital: the source changed while the lane was derived; derive again"
                    )),
                    (Verdict::Gone, _) => {}
                }
            }
        }
    }

    /// Derives a digital track on a worker: only the track and its lane are computed there;
    /// the source is not copied ([`Self::add_pending_derived`] adds them in place).
    fn derive(&mut self, source: SourceId, track: usize, threshold: Option<(f64, f64)>) {
        let Some(s) = self.doc.get(source) else { return };
        let p = s.prepared.clone();
        self.jobs.spawn(JobKind::Derive, self.doc.stamp(source), move |cx| {
            let result = derive_dialog::derive_track(&p.source, track, threshold).map(|d| {
                let lane = prepare::digital_lane(0, &d);
                DerivedLane { track: d, lane }
            });
            // The workbench should hold the source alone when the answer arrives.
            drop(p);
            cx.send(DeriveMsg::Derived { ticket: cx.ticket, source, result });
        });
    }

    /// Adds the derived tracks waiting in `pending.derived` to their sources, in place: a
    /// source is never copied to add a track. The analysis results and the simulator's
    /// statistics share a source's allocation; they let go of it for the moment of the
    /// change and share the changed source again (a track added beside the events changes no
    /// result). A job still reading the source (a table filter, an export, an analysis) keeps
    /// its share until it ends, so the track waits until a job's thread ends. A track whose
    /// source was replaced or closed meanwhile is dropped. Whether it added any.
    pub(super) fn add_pending_derived(&mut self) -> bool {
        if self.pending.derived.is_empty() {
            return false;
        }
        let mut pending = std::mem::take(&mut self.pending.derived);
        let mut waiting = Vec::new();
        let mut added = false;
        while !pending.is_empty() {
            let (stamp, derived) = pending.remove(0);
            if !self.doc.is_current(stamp) {
                continue;
            }
            match self.add_derived_in_place(stamp, derived) {
                None => {
                    added = true;
                    // Adding a track replaces the source's data generation; the tracks that
                    // still wait for it were derived from the same data.
                    if let Some(now) = self.doc.stamp(stamp.id) {
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
        self.pending.derived = waiting;
        added
    }

    /// Adds `derived` to source `stamp.id` if the workbench can hold the source alone for
    /// the moment of the change; gives it back (`Some`) when a job still reads the source.
    fn add_derived_in_place(&mut self, stamp: SourceStamp, derived: DerivedLane) -> Option<DerivedLane> {
        let id = stamp.id;
        let source = self.doc.get_mut(id)?;
        let inputs = &mut self.analysis.inputs;
        let held: Vec<usize> =
            (0..inputs.len()).filter(|&i| Arc::ptr_eq(&inputs[i], &source.prepared)).collect();
        for &i in held.iter().rev() {
            inputs.remove(i);
        }
        let live = &mut self.sim.live;
        let shown = live.shown.take_if(|a| Arc::ptr_eq(a, &source.prepared)).is_some();
        let asked = live.asked.take_if(|a| Arc::ptr_eq(a, &source.prepared)).is_some();
        let given_back = match Arc::get_mut(&mut source.prepared) {
            Some(p) => {
                p.add_digital(derived.track, derived.lane);
                None
            }
            None => Some(derived),
        };
        let prepared = source.prepared.clone();
        for &i in &held {
            inputs.insert(i, prepared.clone());
        }
        if shown {
            live.shown = Some(prepared.clone());
        }
        if asked {
            live.asked = Some(prepared.clone());
        }
        if given_back.is_none() {
            // Its data changed in place: jobs that read it before are stale, its meshes too.
            self.doc.touch(id);
            let old = self.view.lanes.remove(&id).unwrap_or_default();
            self.view.lanes.insert(id, carried_lanes(&prepared, &old, self.theme));
        }
        given_back
    }
}
