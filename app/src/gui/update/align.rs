//! Alignment's messages: the dialog, the fit (a job that reads both sources where they
//! are) and its answer, which moves the aligned source; and the reset, every source back on
//! its own clock.

use crate::gui::align_dialog;
use crate::gui::app::Workbench;
use crate::gui::document::SourceId;
use crate::gui::jobs::{JobKind, Verdict};
use crate::gui::message::{AlignMsg, AnalysisMsg};
use latscope_analysis::align::{AlignSpec, Alignment};

impl Workbench {
    pub(super) fn update_align(&mut self, msg: AlignMsg) {
        match msg {
            AlignMsg::Open => {
                let d = &mut self.dialogs.align;
                d.open = true;
                // Sources closed since the dialog was last open are not offered.
                let ids = self.doc.ids();
                if d.reference.is_none_or(|r| !ids.contains(&r)) {
                    d.reference = ids.first().copied();
                }
                if d.other.is_none_or(|o| !ids.contains(&o) || Some(o) == d.reference) {
                    d.other = ids.iter().copied().find(|&i| Some(i) != d.reference);
                }
            }
            AlignMsg::Edit(d) => self.dialogs.align = d,
            AlignMsg::Align { reference, other, spec } => self.align(reference, other, spec, false),
            AlignMsg::Aligned { ticket, source, reset, result } => {
                match self.jobs.judge(ticket, |s| self.doc.is_current(s)) {
                    Verdict::Current => self.aligned(source, reset, result),
                    Verdict::Changed => self.errors.push(anyhow::anyhow!(
                        "align: the source changed while the alignment was fitted; align again"
                    )),
                    Verdict::Gone => {}
                }
            }
            AlignMsg::Reset => self.reset_alignment(),
        }
    }

    /// Fits an alignment of `other` onto `reference` (or, with `reset`, puts `other` back
    /// on its own clock) on a worker.
    fn align(&mut self, reference: SourceId, other: SourceId, spec: AlignSpec, reset: bool) {
        let (Some(r), Some(o)) = (self.doc.get(reference), self.doc.get(other)) else { return };
        // The worker reads both sources where they are (shared, not copied).
        let (r, r_at, o) = (r.prepared.clone(), r.placement, o.prepared.clone());
        let index = self.doc.index_of(other).unwrap_or_default();
        self.jobs.spawn(JobKind::Align, self.doc.stamp(other), move |cx| {
            let result = align_dialog::align_pair(&r, r_at, &o, &spec).map(|mut alignment| {
                // What the report's `align` line and the panel number: its place on the
                // timeline.
                alignment.source = index;
                alignment
            });
            cx.send(AlignMsg::Aligned { ticket: cx.ticket, source: other, reset, result });
        });
    }

    fn aligned(&mut self, source: SourceId, reset: bool, result: anyhow::Result<Alignment>) {
        match result {
            Ok(alignment) => {
                // Only the placement changes: the source's data and lanes stay.
                self.doc.place(source, alignment.placement);
                if reset {
                    self.analysis.panel.aligned = None;
                    self.doc.alignment = None;
                } else {
                    let labels = self.doc.labels();
                    let label = self.doc.index_of(source).and_then(|i| labels.get(i));
                    let label = label.map_or("?", String::as_str);
                    self.analysis.panel.aligned = Some(align_dialog::describe(&alignment, label));
                    self.doc.alignment = Some(alignment);
                }
                self.dialogs.align.open = false;
                // Results of the per-source run no longer describe what a run gives: run
                // the same rules again on the new placement, as the user would.
                self.drop_results();
                if !self.analysis.rules.specs.is_empty() {
                    self.update(AnalysisMsg::Run.into());
                }
            }
            Err(e) => self.errors.push(e.context("align")),
        }
    }

    /// Every source back on its own clock (offset 0, no drift).
    fn reset_alignment(&mut self) {
        let Some(a) = self.doc.alignment.take() else { return };
        self.analysis.panel.aligned = None;
        let reference = self.doc.sources.first().map(|s| s.id);
        let moved = self.doc.sources.get(a.source).map(|s| s.id);
        if let (Some(reference), Some(moved)) = (reference, moved) {
            // Aligning by hand with a zero offset (from where its clock puts it) is the
            // reset, through the same worker.
            let zero = AlignSpec::Manual { source: 1, offset: 0, drift_ppm: 0.0 };
            self.align(reference, moved, zero, true);
        }
        self.drop_results();
    }
}
