//! The fleet window's messages: the form, the aggregation job, and opening a worst pair's
//! capture to show the pair.

use crate::gui::app::Workbench;
use crate::gui::fleet::{PendingJump, split_names};
use crate::gui::jobs::JobKind;
use crate::gui::message::FleetMsg;
use crate::gui::view::{Arrow, ArrowEnd};
use latscope_model::{PS_PER_S, Ps};
use std::path::{Path, PathBuf};
use std::sync::Arc;

impl Workbench {
    /// Applies a [`FleetMsg`].
    pub(super) fn update_fleet(&mut self, msg: FleetMsg) {
        match msg {
            FleetMsg::Show => self.fleet.open = true,
            FleetMsg::Close => self.fleet.open = false,
            FleetMsg::Edit { dir, group_by, trend } => {
                self.fleet.dir = dir;
                self.fleet.group_by = group_by;
                self.fleet.trend = trend;
            }
            FleetMsg::Load => {
                self.fleet.open = true;
                self.fleet.error = None;
                let dir = PathBuf::from(self.fleet.dir.trim());
                let group_by = split_names(&self.fleet.group_by);
                let trend = Some(self.fleet.trend.trim().to_owned()).filter(|t| !t.is_empty());
                self.jobs.spawn(JobKind::Fleet, None, move |cx| {
                    let stop = || cx.cancelled();
                    let result = latscope_fleet::summarize(&dir, &group_by, trend.as_deref(), &stop)
                        .map(Arc::new)
                        .map_err(anyhow::Error::from);
                    if !cx.cancelled() {
                        cx.send(FleetMsg::Loaded { ticket: cx.ticket, result });
                    }
                });
            }
            FleetMsg::Loaded { ticket, result } => {
                if !self.jobs.accept(ticket, |_| true) {
                    return;
                }
                match result {
                    Ok(report) => {
                        let keep = self
                            .fleet
                            .analysis
                            .as_ref()
                            .filter(|a| report.groups.iter().any(|g| &g.analysis == *a));
                        self.fleet.analysis =
                            keep.cloned().or_else(|| report.groups.first().map(|g| g.analysis.clone()));
                        self.fleet.selected = None;
                        self.fleet.report = Some(report);
                        let first = self.fleet.shown_groups().first().map(|(i, _)| *i);
                        self.fleet.selected = first;
                    }
                    Err(e) => self.fleet.error = Some(crate::errors::error_text(&e)),
                }
            }
            FleetMsg::SelectAnalysis(a) => {
                self.fleet.analysis = Some(a);
                let first = self.fleet.shown_groups().first().map(|(i, _)| *i);
                self.fleet.selected = first;
            }
            FleetMsg::SelectGroup(i) => self.fleet.selected = Some(i),
            FleetMsg::OpenWorst(w) => {
                let path = PathBuf::from(&w.path);
                // The capture open already (the same file), else opened now.
                let same = |p: &Path| match (p.canonicalize(), path.canonicalize()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => p == path,
                };
                let open = self.doc.sources.iter().find(|s| s.source().path.as_deref().is_some_and(same));
                let source = match open {
                    Some(s) => Some(s.id),
                    None => self.open_files(vec![path]).into_iter().flatten().next(),
                };
                if let Some(source) = source {
                    self.pending.jump = Some(PendingJump { source, start_s: w.start_s, end_s: w.end_s });
                }
            }
        }
    }

    /// Shows the pending worst pair once its capture is loaded and the view fitted to it; a
    /// load that failed leaves its error in the window and drops the jump. Whether it acted.
    pub(super) fn fleet_jump_step(&mut self) -> bool {
        let Some(jump) = &self.pending.jump else { return false };
        let Some(s) = self.doc.get(jump.source) else {
            let waiting = self.jobs.busy(JobKind::Load) || !self.pending.loads.is_empty();
            if !waiting {
                self.pending.jump = None;
            }
            return !waiting;
        };
        // A new source is fitted to the window once laid out; the pair is shown after that.
        if self.view.refit {
            return false;
        }
        let origin = s.source().origin;
        let to_ps =
            |secs: f64| -> Ps { ((secs - origin.secs as f64) * PS_PER_S as f64).round() as Ps - origin.ps };
        let (start, end) = (to_ps(jump.start_s), to_ps(jump.end_s));
        // The pair's ends by time: the dataset keeps no event index.
        let arrow = Arrow {
            source: s.id,
            a: s.to_common(start),
            b: s.to_common(end),
            start: ArrowEnd { t: start, event: None },
            end: ArrowEnd { t: end, event: None },
        };
        self.pending.jump = None;
        self.view.show_pair(arrow);
        true
    }
}

/// Opens the fleet window on `dir` and starts its aggregation (`latscope --dataset`).
pub(super) fn start(wb: &mut Workbench, dir: &Path, group_by: &[String], trend: Option<&str>) {
    wb.update(
        FleetMsg::Edit {
            dir: dir.display().to_string(),
            group_by: group_by.join(","),
            trend: trend.unwrap_or_default().to_owned(),
        }
        .into(),
    );
    wb.update(FleetMsg::Load.into());
}
