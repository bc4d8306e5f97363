//! The live simulator panel: scenario picker, its settings, play / pause / step / speed, the
//! run's clock and its metrics.

use crate::gui::message::{Message, SimMsg};
use crate::gui::sim::{SimCommand, SimEdit, SimState};
use latscope_model::{Ps, format_seconds};
use latscope_sim::SettingValue;

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
/// `clock` writes a simulated time as the timeline reads it.
pub fn panel(ui: &mut egui::Ui, st: &SimState, clock: &dyn Fn(Ps) -> String) -> Vec<Message> {
    let mut msgs = Vec::new();
    ui.heading("Simulator");
    egui::ComboBox::from_label("scenario").selected_text(st.scenario.as_str()).show_ui(ui, |ui| {
        for (name, _) in latscope_sim::BUILTIN {
            if ui.selectable_label(st.scenario == *name, *name).clicked() {
                msgs.push(Message::Sim(SimMsg::Edit(SimEdit::Scenario((*name).to_owned()))));
            }
        }
    });
    // Which real question the scenario answers, and what it models.
    if let Some(q) = &st.question {
        ui.add(egui::Label::new(egui::RichText::new(q).italics()).wrap());
    }
    if let Some(d) = &st.description {
        ui.add(egui::Label::new(egui::RichText::new(d).weak().small()).wrap());
    }
    let pending = st.restart_pending();
    ui.horizontal(|ui| {
        let restart =
            egui::Button::new(if pending { "Restart to apply" } else { "Restart" }).selected(pending);
        if ui.add(restart).on_hover_text("Run the scenario with these settings").clicked() {
            msgs.push(Message::Sim(SimMsg::Command(st.start_command())));
        }
        let running = st.handle.is_some() && !st.finished;
        if st.playing {
            if ui.add_enabled(running, egui::Button::new("Pause")).clicked() {
                msgs.push(Message::Sim(SimMsg::Command(SimCommand::Pause)));
            }
        } else if ui.add_enabled(running, egui::Button::new("Play")).clicked() {
            msgs.push(Message::Sim(SimMsg::Command(SimCommand::Play)));
        }
        if ui.add_enabled(running, egui::Button::new("Step")).clicked() {
            msgs.push(Message::Sim(SimMsg::Command(SimCommand::Step)));
        }
        if ui.add_enabled(st.handle.is_some(), egui::Button::new("Stop")).clicked() {
            msgs.push(Message::Sim(SimMsg::Command(SimCommand::Stop)));
        }
    });
    if pending {
        ui.colored_label(crate::gui::theme::ACCENT, "Settings changed: Restart applies them to a new run.");
    }
    if let Some(e) = &st.error {
        ui.add(egui::Label::new(egui::RichText::new(e).color(crate::gui::theme::IRQ)).wrap());
    }
    ui.horizontal(|ui| {
        ui.label("speed");
        let mut log = st.speed.log10();
        let slider = egui::Slider::new(&mut log, -4.0..=0.0)
            .custom_formatter(|v, _| format!("{} / s", format_seconds((10f64.powf(v) * 1e12) as Ps)))
            .show_value(true);
        if ui.add_enabled(!st.max_speed, slider).changed() {
            msgs.push(Message::Sim(SimMsg::Edit(SimEdit::Speed(10f64.powf(log)))));
        }
        let mut max = st.max_speed;
        if ui.checkbox(&mut max, "max").changed() {
            msgs.push(Message::Sim(SimMsg::Edit(SimEdit::MaxSpeed(max))));
        }
    });
    let mut follow = st.follow;
    if ui.checkbox(&mut follow, "timeline follows the simulation").changed() {
        msgs.push(Message::Sim(SimMsg::Edit(SimEdit::Follow(follow))));
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
    ui.label(format!("{state} · t = {} · {} events", clock(st.now), st.events));
    if st.live.shown.is_some() {
        // The simulated time the analysed snapshot was taken at, never past the clock.
        let t = st.live.shown_now.min(st.now);
        let whose = if st.live.user.is_some() {
            "the scenario's analyses and your rules"
        } else {
            "the scenario's analyses"
        };
        ui.weak(format!("analysis panel: {whose} up to t = {}", clock(t)));
    }
    // The settings below the controls: what a Restart runs with.
    ui.separator();
    egui::Grid::new("sim-settings").num_columns(2).striped(true).show(ui, |ui| {
        for (i, setting) in st.settings.iter().enumerate() {
            // What the setting changes, on hover (a "?" marks the settings that say).
            let key = match &setting.help {
                Some(help) => ui.label(format!("{} ?", setting.key)).on_hover_text(help),
                None => ui.label(setting.key.as_str()),
            };
            let _ = key;
            // A scope of its own, so the editor's id is the same when a line appears above
            // the settings ("Settings changed", which the first key typed brings): with the
            // id it moved, the field lost the focus and the keys after the first went to the
            // shortcuts ("4096" typed gave 4).
            let editor_scope =
                egui::UiBuilder::new().scope_id(ui.scope_id().with(("sim-setting", &setting.key)));
            if let Some(value) = ui.scope_builder(editor_scope, |ui| setting_editor(ui, setting)).inner {
                msgs.push(Message::Sim(SimMsg::Edit(SimEdit::Setting(i, value))));
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
