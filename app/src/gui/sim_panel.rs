//! The live simulator panel: scenario picker, its settings, play / pause / step / speed;
//! and the live statistics: the scenario's own analyses re-run on the growing trace.

use super::analysis;
use super::jobs::{JobKind, JobRunner};
use super::message::{Message, SimCommand, SimEdit};
use super::prepare::Prepared;
use super::workers::SimHandle;
use latscope_model::{Ps, format_seconds};
use latscope_sim::SettingValue;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the live statistics are recomputed at most (a snapshot comes every 200 ms).
pub const LIVE_EVERY: Duration = Duration::from_millis(500);

/// The scenario's analyses over the live trace, recomputed by a job at most every
/// [`LIVE_EVERY`]; a newer job makes an older one's answer stale (the job runner drops it).
#[derive(Debug, Default)]
pub struct LiveStats {
    /// The running scenario, whose `measure` step gives the analyses.
    pub scenario: Option<latscope_sim::Scenario>,
    last_start: Option<Instant>,
    /// The snapshot of the latest job asked for.
    pub(super) asked: Option<Arc<Prepared>>,
    /// The snapshot the shown statistics describe.
    pub shown: Option<Arc<Prepared>>,
    /// The simulated time of the latest snapshot asked for, and of the one shown: the
    /// simulator's clock when it was taken. Its records may reach past it (a command
    /// issued before completes after), so the trace's end is not this time.
    pub(super) asked_now: Ps,
    pub shown_now: Ps,
    /// Statistics updates received.
    pub updates: u64,
}

impl LiveStats {
    /// Follows a new run of `scenario` (the caller stops the previous run's jobs).
    pub fn restart(&mut self, scenario: latscope_sim::Scenario) {
        *self = Self { scenario: Some(scenario), ..Self::default() };
    }

    /// Whether a snapshot should be analysed now: the last one of a run always is.
    pub fn due(&self, finished: bool) -> bool {
        self.scenario.is_some() && (finished || self.last_start.is_none_or(|t| t.elapsed() >= LIVE_EVERY))
    }

    /// Analyses `snapshot` (the workbench's source `index`) as a job; the answer arrives as
    /// `Message::LiveAnalysisDone`.
    pub fn start(&mut self, jobs: &mut JobRunner, snapshot: Arc<Prepared>, index: usize, now: Ps) {
        let Some(scenario) = self.scenario.clone() else { return };
        self.last_start = Some(Instant::now());
        self.asked = Some(snapshot.clone());
        self.asked_now = now;
        jobs.spawn(JobKind::LiveStats, None, move |cx| {
            // A snapshot too early for an analysis (a track not there yet) shows nothing new.
            let Ok(report) = latscope_sim::scenarios::report(&scenario, &snapshot.source) else { return };
            let mut results = Vec::with_capacity(report.outcomes.len());
            for mut o in report.outcomes {
                if cx.cancelled() {
                    return;
                }
                o.source = index;
                results.push(analysis::summarize(o));
            }
            cx.send(Message::LiveAnalysisDone { ticket: cx.ticket, results });
        });
    }
}

/// The simulator's state as the workbench sees it.
#[derive(Debug)]
pub struct SimState {
    pub scenario: String,
    /// Top-level settings of the scenario, typed (words with their valid values, numbers
    /// with units and limits).
    pub settings: Vec<latscope_sim::Setting>,
    /// The scenario and settings of the run going on (as the scenario took them): a panel
    /// whose settings differ says that Restart applies them.
    pub ran_with: Option<(String, Vec<latscope_sim::Setting>)>,
    /// Simulated seconds per wall second.
    pub speed: f64,
    pub max_speed: bool,
    pub playing: bool,
    pub follow: bool,
    pub handle: Option<SimHandle>,
    /// Index of the live source in the workbench's sources.
    pub source: Option<usize>,
    pub now: Ps,
    pub events: usize,
    pub finished: bool,
    pub snapshots: u64,
    pub error: Option<String>,
    pub duration: Option<Ps>,
    /// The scenario's metrics once the run has finished.
    pub metrics: Vec<(String, f64)>,
    pub live: LiveStats,
}

impl Default for SimState {
    fn default() -> Self {
        let mut s = Self {
            scenario: "litesdcard".into(),
            settings: Vec::new(),
            ran_with: None,
            speed: 0.02,
            max_speed: false,
            playing: true,
            follow: true,
            handle: None,
            source: None,
            now: 0,
            events: 0,
            finished: false,
            snapshots: 0,
            error: None,
            duration: None,
            metrics: Vec::new(),
            live: LiveStats::default(),
        };
        s.load_settings();
        s
    }
}

impl SimState {
    /// Reads the scenario's own top-level settings as the editable defaults.
    pub fn load_settings(&mut self) {
        match latscope_sim::Scenario::load(&self.scenario) {
            Ok(sc) => {
                self.settings = sc.settings();
                self.error = None;
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// The settings as `KEY=VALUE` overrides.
    pub fn sets(&self) -> Vec<String> {
        self.settings.iter().map(|s| format!("{}={}", s.key, s.value.to_arg())).collect()
    }

    /// Whether the panel's scenario or settings differ from the run going on: Restart
    /// applies them.
    pub fn restart_pending(&self) -> bool {
        self.handle.is_some()
            && self.ran_with.as_ref().is_some_and(|(scenario, settings)| {
                *scenario != self.scenario
                    || settings.iter().zip(&self.settings).any(|(a, b)| a.value != b.value)
            })
    }

    pub fn speed_arg(&self) -> Option<f64> {
        (!self.max_speed).then_some(self.speed)
    }

    pub fn start_command(&self) -> SimCommand {
        SimCommand::Start { scenario: self.scenario.clone(), sets: self.sets(), duration: self.duration }
    }
}

/// The editor of one setting: a word as a dropdown of its valid values, a number as a drag
/// value with its unit and limits, a flag as a checkbox. Returns the new value.
fn setting_editor(ui: &mut egui::Ui, setting: &latscope_sim::Setting) -> Option<SettingValue> {
    let (lo, hi) = setting.range;
    let unit = setting.unit.map(|u| format!(" {u}")).unwrap_or_default();
    match &setting.value {
        SettingValue::Text(text) if !setting.choices.is_empty() => {
            let mut chosen = None;
            egui::ComboBox::from_id_salt(("sim-setting", &setting.key))
                .selected_text(text.as_str())
                .height(f32::INFINITY)
                .show_ui(ui, |ui| {
                    for c in &setting.choices {
                        if ui.selectable_label(c == text, c.as_str()).clicked() && c != text {
                            chosen = Some(SettingValue::Text(c.clone()));
                        }
                    }
                })
                .response
                .on_hover_text(format!("one of: {}", setting.choices.join(", ")));
            chosen
        }
        SettingValue::Text(text) => {
            let mut t = text.clone();
            ui.add(egui::TextEdit::singleline(&mut t).desired_width(120.0))
                .changed()
                .then_some(SettingValue::Text(t))
        }
        SettingValue::Integer(i) => {
            let mut v = *i;
            let drag = egui::DragValue::new(&mut v).range(lo..=hi).suffix(unit).speed(0.2);
            ui.add(drag).changed().then_some(SettingValue::Integer(v))
        }
        SettingValue::Float(f) => {
            let mut v = *f;
            let speed = if hi.is_finite() { (hi - lo) / 200.0 } else { (v.abs() / 100.0).max(0.01) };
            let drag = egui::DragValue::new(&mut v).range(lo..=hi).suffix(unit).speed(speed).max_decimals(3);
            ui.add(drag).changed().then_some(SettingValue::Float(v))
        }
        SettingValue::Bool(b) => {
            let mut v = *b;
            ui.checkbox(&mut v, "").changed().then_some(SettingValue::Bool(v))
        }
    }
}

/// The panel: it shows `st` and returns the changes the user asked for. The controls and
/// the run's state come first, so they stay in view when the panel is short; the settings
/// and the finished run's metrics follow.
pub fn panel(ui: &mut egui::Ui, st: &SimState) -> Vec<Message> {
    let mut msgs = Vec::new();
    ui.heading("Simulator");
    egui::ComboBox::from_label("scenario").selected_text(st.scenario.as_str()).show_ui(ui, |ui| {
        for (name, _) in latscope_sim::BUILTIN {
            if ui.selectable_label(st.scenario == *name, *name).clicked() {
                msgs.push(Message::SimEdit(SimEdit::Scenario((*name).to_owned())));
            }
        }
    });
    let pending = st.restart_pending();
    ui.horizontal(|ui| {
        let restart =
            egui::Button::new(if pending { "Restart to apply" } else { "Restart" }).selected(pending);
        if ui.add(restart).on_hover_text("Run the scenario with these settings").clicked() {
            msgs.push(Message::Sim(st.start_command()));
        }
        let running = st.handle.is_some() && !st.finished;
        if st.playing {
            if ui.add_enabled(running, egui::Button::new("Pause")).clicked() {
                msgs.push(Message::Sim(SimCommand::Pause));
            }
        } else if ui.add_enabled(running, egui::Button::new("Play")).clicked() {
            msgs.push(Message::Sim(SimCommand::Play));
        }
        if ui.add_enabled(running, egui::Button::new("Step")).clicked() {
            msgs.push(Message::Sim(SimCommand::Step));
        }
        if ui.add_enabled(st.handle.is_some(), egui::Button::new("Stop")).clicked() {
            msgs.push(Message::Sim(SimCommand::Stop));
        }
    });
    if pending {
        ui.colored_label(super::theme::ACCENT, "Settings changed: Restart applies them to a new run.");
    }
    if let Some(e) = &st.error {
        ui.add(egui::Label::new(egui::RichText::new(e).color(super::theme::IRQ)).wrap());
    }
    ui.horizontal(|ui| {
        ui.label("speed");
        let mut log = st.speed.log10();
        let slider = egui::Slider::new(&mut log, -4.0..=0.0)
            .custom_formatter(|v, _| format!("{} / s", format_seconds((10f64.powf(v) * 1e12) as Ps)))
            .show_value(true);
        if ui.add_enabled(!st.max_speed, slider).changed() {
            msgs.push(Message::SimEdit(SimEdit::Speed(10f64.powf(log))));
        }
        let mut max = st.max_speed;
        if ui.checkbox(&mut max, "max").changed() {
            msgs.push(Message::SimEdit(SimEdit::MaxSpeed(max)));
        }
    });
    let mut follow = st.follow;
    if ui.checkbox(&mut follow, "timeline follows the simulation").changed() {
        msgs.push(Message::SimEdit(SimEdit::Follow(follow)));
    }
    ui.separator();
    let state = if st.handle.is_none() {
        "stopped"
    } else if st.finished {
        "finished"
    } else if st.playing {
        "running"
    } else {
        "paused"
    };
    ui.label(format!("{state} · t = {} · {} events", format_seconds(st.now), st.events));
    if st.live.shown.is_some() {
        // The simulated time the analysed snapshot was taken at, never past the clock.
        let t = st.live.shown_now.min(st.now);
        ui.weak(format!("analysis panel: the scenario's analyses up to t = {}", format_seconds(t)));
    }
    // The settings below the controls: what a Restart runs with.
    ui.separator();
    egui::Grid::new("sim-settings").num_columns(2).striped(true).show(ui, |ui| {
        for (i, setting) in st.settings.iter().enumerate() {
            ui.label(setting.key.as_str());
            if let Some(value) = setting_editor(ui, setting) {
                msgs.push(Message::SimEdit(SimEdit::Setting(i, value)));
            }
            ui.end_row();
        }
    });
    if !st.metrics.is_empty() {
        egui::Grid::new("sim-metrics").num_columns(2).striped(true).show(ui, |ui| {
            for (name, value) in &st.metrics {
                ui.monospace(name);
                ui.monospace(format!("{value:.1}"));
                ui.end_row();
            }
        });
    }
    msgs
}
