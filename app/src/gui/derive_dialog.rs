//! Analog → digital as a user action: the "Derive digital…" dialog of an analog lane (a
//! threshold and hysteresis, by default the automatic one the rule specs use — midway
//! between the 5th and 95th percentile, see `latscope_model::threshold`), and the
//! worker that adds the derived digital track to the source and rebuilds its lanes.

use super::message::Message;
use super::prepare::{Prepared, prepare};
use super::workers::Outbox;
use latscope_model::{Source, Threshold};
use std::sync::Arc;

/// The dialog's state: which analog track, and the threshold being edited.
#[derive(Debug, Clone, Default)]
pub struct DeriveDialog {
    pub open: bool,
    pub source: usize,
    pub track: usize,
    pub name: String,
    pub unit: String,
    /// Use the automatic threshold (recomputed from the samples by the worker).
    pub auto: bool,
    pub level: f64,
    pub hysteresis: f64,
}

impl DeriveDialog {
    /// Opens the dialog on analog track `track` of `src`, filled with its automatic threshold.
    pub fn open_on(&mut self, src: &Source, source: usize, track: usize) {
        let Some(t) = src.analog.get(track) else { return };
        let (level, hysteresis) = Threshold::Auto.resolve(t).unwrap_or((0.0, 0.0));
        *self = Self {
            open: true,
            source,
            track,
            name: t.name.clone(),
            unit: t.unit.clone(),
            auto: true,
            level,
            hysteresis,
        };
    }

    fn threshold(&self) -> Option<(f64, f64)> {
        (!self.auto).then_some((self.level, self.hysteresis))
    }
}

/// The name of the digital track derived from analog track `name`.
pub fn derived_name(name: &str) -> String {
    format!("{name}_digital")
}

/// A copy of `src` with analog track `track` also as a digital track (replacing an earlier
/// derivation of the same track).
pub fn derive(src: &Source, track: usize, threshold: Option<(f64, f64)>) -> Result<Source, String> {
    let analog = src.analog.get(track).ok_or_else(|| format!("{}: no analog track {track}", src.name))?;
    let threshold = match threshold {
        None => Threshold::Auto,
        Some((level, hysteresis)) if level.is_finite() && hysteresis.is_finite() => {
            Threshold::Fixed { level, hysteresis }
        }
        Some(_) => return Err("the threshold and hysteresis must be numbers".into()),
    };
    let mut digital = analog.to_digital(threshold);
    digital.name = derived_name(&analog.name);
    let mut out = src.clone();
    out.digital.retain(|d| d.name != digital.name);
    out.digital.push(digital);
    Ok(out)
}

/// Derives on a named worker thread; the answer arrives as `Message::Derived`.
pub fn spawn_derive(
    source: usize,
    prepared: Arc<Prepared>,
    track: usize,
    threshold: Option<(f64, f64)>,
    outbox: Outbox,
) {
    let out = outbox.clone();
    let work = move || {
        let result = derive(&prepared.source, track, threshold).map(|s| Arc::new(prepare(s)));
        out.send(Message::Derived { source, result });
    };
    if let Err(e) = std::thread::Builder::new().name("latscope-derive".into()).spawn(work) {
        outbox.send(Message::Error(format!("cannot start the derive thread: {e}")));
    }
}

/// The dialog window.
pub fn show(ctx: &egui::Context, d: &mut DeriveDialog) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut open = d.open;
    let mut close = false;
    egui::Window::new(format!("Derive digital from {}", d.name))
        .id(egui::Id::unique("derive-digital"))
        .open(&mut open)
        .resizable(false)
        .collapsible(false)
        .pivot(egui::Align2::CENTER_TOP)
        .default_pos(ctx.content_rect().center_top() + egui::vec2(0.0, 80.0))
        .show(ctx, |ui| {
            ui.checkbox(&mut d.auto, "automatic (midway between the 5th and 95th percentile)");
            ui.add_enabled_ui(!d.auto, |ui| {
                egui::Grid::new("derive-threshold").num_columns(2).show(ui, |ui| {
                    ui.label("threshold");
                    ui.add(egui::DragValue::new(&mut d.level).speed(0.01).suffix(format!(" {}", d.unit)));
                    ui.end_row();
                    ui.label("hysteresis");
                    ui.add(
                        egui::DragValue::new(&mut d.hysteresis)
                            .speed(0.01)
                            .range(0.0..=f64::MAX)
                            .suffix(format!(" {}", d.unit)),
                    );
                    ui.end_row();
                });
            });
            ui.weak(format!(
                "High from {:.4}, low below {:.4}; adds the lane {}",
                d.level + d.hysteresis / 2.0,
                d.level - d.hysteresis / 2.0,
                derived_name(&d.name)
            ));
            if ui.button("Add digital lane").clicked() {
                msgs.push(Message::DeriveDigital {
                    source: d.source,
                    track: d.track,
                    threshold: d.threshold(),
                });
                close = true;
            }
        });
    d.open = open && !close;
    msgs
}
