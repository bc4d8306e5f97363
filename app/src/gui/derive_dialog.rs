//! Analog → digital as a user action: the "Derive digital…" dialog of an analog lane (a
//! threshold and hysteresis, by default the automatic one the rule specs use — midway
//! between the 5th and 95th percentile, see `latscope_model::threshold`), and the
//! derivation itself: the worker computes the digital track and its lane only; the
//! workbench adds both to the source in place (see `Prepared::add_digital`).

use super::message::Message;
use latscope_model::{DigitalTrack, Source, Threshold};

/// The dialog's state: which analog track, and the threshold being edited.
#[derive(Debug, Clone, Default, PartialEq)]
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

/// Analog track `track` of `src` as a digital track named [`derived_name`] (the source is
/// only read).
pub fn derive_track(
    src: &Source,
    track: usize,
    threshold: Option<(f64, f64)>,
) -> Result<DigitalTrack, String> {
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
    Ok(digital)
}

/// The dialog window; returns the derivation asked for and the dialog as edited.
pub fn show(ctx: &egui::Context, dialog: &DeriveDialog) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut edited = dialog.clone();
    let d = &mut edited;
    let mut open = d.open;
    let mut close = false;
    let title = format!("Derive digital from {}", d.name);
    super::dialog_window(ctx, title, egui::Id::unique("derive-digital"), &mut open).show(ctx, |ui| {
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
            msgs.push(Message::DeriveDigital { source: d.source, track: d.track, threshold: d.threshold() });
            close = true;
        }
    });
    d.open = open && !close;
    if edited != *dialog {
        msgs.push(Message::EditDerive(edited));
    }
    msgs
}
