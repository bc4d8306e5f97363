//! The simulator's messages: commands, settings, the run's snapshots (its live source in the
//! document grows with each), the run's metrics, and the live statistics job.

use crate::gui::analysis::{self, AnalysisResult};
use crate::gui::app::Workbench;
use crate::gui::jobs::JobKind;
use crate::gui::message::{AnalysisMsg, SimMsg};
use crate::gui::prepare::Prepared;
use crate::gui::sim::{SimCommand, SimEdit, SimState};
use crate::gui::view::default_lanes;
use crate::gui::workers;
use latscope_analysis::live::Glance;
use latscope_model::Ps;
use std::sync::{Arc, Mutex};

impl Workbench {
    pub(super) fn update_sim(&mut self, msg: SimMsg) {
        match msg {
            SimMsg::Command(cmd) => self.sim_command(cmd),
            SimMsg::Edit(edit) => {
                if let Some(cmd) = update_sim_settings(&mut self.sim, edit)
                    && let Some(h) = &self.sim.handle
                {
                    h.send(cmd);
                }
            }
            SimMsg::Snapshot { ticket, prepared, now, events, finished, reorders } => {
                if self.jobs.is_current(ticket) {
                    self.sim_snapshot(prepared, now, events, finished, reorders);
                }
            }
            SimMsg::Failed(e) => self.sim.error = Some(crate::errors::error_text(&e)),
            SimMsg::Metrics { ticket, metrics } => {
                if self.jobs.accept(ticket, |_| true) {
                    match metrics {
                        Ok(m) => self.sim.metrics = m,
                        Err(e) => self.sim.error = Some(crate::errors::error_text(&e)),
                    }
                }
            }
        }
    }

    fn sim_command(&mut self, cmd: SimCommand) {
        match cmd {
            SimCommand::Start { scenario, sets, duration } => self.start_sim(&scenario, &sets, duration),
            SimCommand::Stop => {
                // The last snapshot stays as a source like any capture.
                self.stop_sim();
                if let Some(s) = self.sim.source.take().and_then(|id| self.doc.get_mut(id)) {
                    s.growing = false;
                }
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
                self.sim.live.restart(&sc);
                self.sim.ran_with = Some((scenario.to_owned(), sc.settings()));
                self.sim.handle = workers::simulate(&mut self.jobs, sc, self.sim.speed_arg());
                self.sim.playing = true;
                self.sim.finished = false;
                self.sim.error = None;
                self.sim.snapshots = 0;
                self.sim.metrics.clear();
            }
            Err(e) => self.sim.error = Some(crate::errors::error_text(&anyhow::Error::from(e))),
        }
    }

    /// A snapshot of the run: its source in the document grows (the first one adds it).
    fn sim_snapshot(
        &mut self,
        prepared: Arc<Prepared>,
        now: Ps,
        events: usize,
        finished: bool,
        reorders: usize,
    ) {
        self.sim.now = now;
        self.sim.events = events;
        self.sim.finished = finished;
        self.sim.snapshots += 1;
        let snapshot = prepared.clone();
        let id = match self.sim.source.filter(|&id| self.doc.get(id).is_some()) {
            Some(id) => {
                self.replace_source(id, prepared);
                id
            }
            None => {
                let id = self.doc.reserve_id();
                self.view.lanes.insert(id, default_lanes(&prepared, self.theme));
                self.doc.add(id, prepared, true);
                self.sim.source = Some(id);
                // Start with about 20 ms on screen.
                self.view.viewport.ps_per_px = 20e9 / self.view.data_width();
                id
            }
        };
        if let Some(s) = self.doc.get_mut(id) {
            s.growing = !finished;
        }
        if self.sim.follow
            && let Some(s) = self.doc.get(id)
        {
            let view = &mut self.view;
            let head = s.to_common(now);
            view.viewport.start = head - view.viewport.ps_per_px * view.data_width() * 0.92;
        }
        if finished && self.screenshot.is_some() {
            self.fit_to_data();
        }
        if self.table_sources().contains(&id) {
            self.refresh_table();
        }
        if self.sim.live.due(finished, self.jobs.busy(JobKind::LiveStats)) {
            self.start_live_stats(snapshot, now, reorders, finished);
        }
    }

    /// The scenario's analyses over `snapshot` (taken at simulated time `now`), on a job;
    /// a newer one makes this one's answer stale. They read only what is new since the
    /// last snapshot analysed, unless the accumulator placed a late event since
    /// (`reorders`). While the run goes on, a rule that grows answers with statistics kept
    /// as its samples arrive and a spread of them, so an update costs what is new; once
    /// the run has `finished`, the last answer holds every sample, for the lists and links.
    /// The user's rules, if the user ran any, are answered the same way after them.
    pub(super) fn start_live_stats(
        &mut self,
        snapshot: Arc<Prepared>,
        now: Ps,
        reorders: usize,
        finished: bool,
    ) {
        let (report, user) = (self.sim.live.report.clone(), self.sim.live.user.clone());
        if report.is_none() && user.is_none() {
            return;
        }
        let reordered = std::mem::replace(&mut self.sim.live.reorders, reorders) != reorders;
        self.sim.live.asked_for(snapshot.clone(), now);
        self.jobs.spawn(JobKind::LiveStats, None, move |cx| {
            let src = &snapshot.source;
            let opts = analysis::panel_stats_options();
            let mut answers: Vec<Glance> = Vec::new();
            if let Some(report) = &report {
                let mut live = fresh_lock(report, reordered, |l| l.reset());
                // A snapshot too early for an analysis (a track not there yet) shows nothing new.
                if finished {
                    let Ok(outcomes) = live.update(src) else { return };
                    answers.push(Glance::Whole(outcomes));
                } else {
                    let Ok(glances) = live.glance(src, opts, analysis::MAX_SCATTER, analysis::MAX_CDF_POINTS)
                    else {
                        return;
                    };
                    answers.extend(glances);
                }
            }
            let mut errors = Vec::new();
            if let Some(user) = &user {
                let mut live = fresh_lock(user, reordered, |l| l.reset());
                let answered: Vec<Result<Glance, _>> = if finished {
                    live.update(src).into_iter().map(|r| r.map(Glance::Whole)).collect()
                } else {
                    live.glance(src, opts, analysis::MAX_SCATTER, analysis::MAX_CDF_POINTS)
                };
                for answer in answered {
                    match answer {
                        Ok(glance) => answers.push(glance),
                        Err(e) => errors.push(e.to_string()),
                    }
                }
            }
            let mut results = Vec::new();
            for answer in answers {
                let results_of: Vec<AnalysisResult> = match answer {
                    Glance::Whole(outcomes) => {
                        let mut out = Vec::with_capacity(outcomes.len());
                        for o in outcomes {
                            if cx.cancelled() {
                                return;
                            }
                            out.push(analysis::summarize(o));
                        }
                        out
                    }
                    Glance::Grown(g) => vec![analysis::of_glanced(*g)],
                };
                // The results' one input is the snapshot.
                results.extend(results_of.into_iter().map(|mut r| {
                    r.outcome.source = 0;
                    r
                }));
            }
            cx.send(AnalysisMsg::LiveDone { ticket: cx.ticket, results, errors });
        });
    }

    /// Runs the user's `rules` on the simulator's live trace from now on, beside the
    /// scenario's analyses: a run of them over the trace as it is would be replaced by the
    /// next snapshot's answer. They are answered at once on the last snapshot, read from the
    /// start of the run.
    pub(super) fn run_live_rules(&mut self, rules: &[String]) {
        let mut specs = Vec::new();
        for text in rules {
            match self.registry.rule(text) {
                Ok(spec) => specs.push(spec),
                Err(e) => self.errors.push(anyhow::Error::new(e)),
            }
        }
        self.view.panels.analysis = true;
        self.sim.live.set_user_rules(specs);
        let live = &self.sim.live;
        if let Some(snapshot) = live.asked.clone() {
            let (now, reorders) = (live.asked_now, live.reorders);
            self.start_live_stats(snapshot, now, reorders, self.sim.finished);
        }
    }
}

/// `mutex` locked, its analyses read anew when `reordered` (the snapshot does not extend
/// the last) or when a job panicked while holding it (it left them half-read).
fn fresh_lock<T>(mutex: &Mutex<T>, reordered: bool, reset: impl Fn(&mut T)) -> std::sync::MutexGuard<'_, T> {
    let mut guard = mutex.lock().unwrap_or_else(|poisoned| {
        let mut guard = poisoned.into_inner();
        reset(&mut guard);
        guard
    });
    if reordered {
        reset(&mut guard);
    }
    guard
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
