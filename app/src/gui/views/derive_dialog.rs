//! The "Derive digital…" dialog of an analog lane: the automatic threshold, or a level and
//! hysteresis typed by hand.

use crate::gui::derive_dialog::{DeriveDialog, derived_name};
use crate::gui::message::{DeriveMsg, Message};

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
        if ui.button("Add digital lane").clicked()
            && let Some(source) = d.source
        {
            msgs.push(DeriveMsg::Derive { source, track: d.track, threshold: d.threshold() }.into());
            close = true;
        }
    });
    d.open = open && !close;
    if edited != *dialog {
        msgs.push(Message::Derive(DeriveMsg::Edit(edited)));
    }
    msgs
}
