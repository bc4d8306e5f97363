//! The Align dialog: a reference and another source, and either matched events or an offset
//! and drift typed by hand, checked as typed; Apply asks for the fit (a job).

use crate::gui::align_dialog::{AlignDialog, absorbed_latency, reference_text};
use crate::gui::document::SourceId;
use crate::gui::message::{AlignMsg, Message};
use crate::gui::theme;

/// The dialog window over the open sources (`sources`: each one's id and label, in
/// timeline order); returns the alignment to apply, or a reset, and the dialog as edited.
pub fn show(
    ctx: &egui::Context,
    dialog: &AlignDialog,
    sources: &[(SourceId, String)],
    busy: bool,
    rules: &[String],
    registry: &latscope_engine::Registry,
) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut edited = dialog.clone();
    let d = &mut edited;
    let mut open = d.open;
    let window = super::dialog_window(ctx, "Align sources", egui::Id::unique("align-dialog"), &mut open);
    window.show(ctx, |ui| {
        if sources.len() < 2 {
            ui.label("Open two sources (a scope capture and a kernel trace) to align them.");
            return;
        }
        let label_of = |id: Option<SourceId>| {
            sources.iter().find(|(s, _)| Some(*s) == id).map_or("?", |(_, label)| label.as_str())
        };
        let pick = |ui: &mut egui::Ui, label: &str, value: &mut Option<SourceId>| {
            egui::ComboBox::from_label(label).selected_text(label_of(*value)).show_ui(ui, |ui| {
                for (id, name) in sources {
                    ui.selectable_value(value, Some(*id), name);
                }
            });
        };
        pick(ui, "reference (kept)", &mut d.reference);
        pick(ui, "aligned onto it", &mut d.other);
        ui.add(
            egui::Label::new(
                egui::RichText::new(reference_text(label_of(d.reference), label_of(d.other))).weak(),
            )
            .wrap(),
        );
        ui.horizontal(|ui| {
            ui.radio_value(&mut d.by_hand, false, "Match events");
            ui.radio_value(&mut d.by_hand, true, "By hand");
        });
        if d.by_hand {
            ui.horizontal(|ui| {
                ui.label("offset");
                ui.add(egui::TextEdit::singleline(&mut d.offset).desired_width(120.0).hint_text("+12.5us"));
                ui.label("drift");
                ui.add(egui::DragValue::new(&mut d.drift_ppm).speed(0.1).suffix(" ppm"));
            });
        } else {
            ui.add(
                egui::TextEdit::singleline(&mut d.matching)
                    .desired_width(360.0)
                    .font(egui::TextStyle::Monospace)
                    .hint_text("tracing_mark_write[buf~gpio] -> D0:rise drift"),
            );
            ui.weak("REFERENCE_ENDPOINT -> ENDPOINT [drift]: the k-th match pairs with the k-th");
        }
        let verdict = d.spec();
        let typed = if d.by_hand { &d.offset } else { &d.matching };
        match &verdict {
            // Nothing typed yet: the hint says what to type, not an error.
            Err(_) if typed.trim().is_empty() => {}
            Ok(_) => {
                let at = |id: Option<SourceId>| sources.iter().position(|(s, _)| Some(*s) == id);
                if let (Some(r), Some(o)) = (at(d.reference), at(d.other))
                    && let Some(cli) = d.cli_text(r, o)
                {
                    ui.weak(format!("same as: latscope report … {cli}"));
                }
                if let Ok(spec) = &verdict
                    && let Some(warning) = absorbed_latency(spec, rules, registry)
                {
                    ui.add(egui::Label::new(egui::RichText::new(warning).color(theme::WARNING)).wrap());
                }
            }
            Err(e) => {
                ui.colored_label(ui.visuals().error_fg_color, e.to_string());
            }
        }
        ui.horizontal(|ui| {
            let ready = !busy && verdict.is_ok();
            if ui.add_enabled(ready, egui::Button::new("Align")).clicked()
                && let (Ok(spec), Some(reference), Some(other)) = (&verdict, d.reference, d.other)
            {
                msgs.push(AlignMsg::Align { reference, other, spec: spec.clone() }.into());
            }
            if busy {
                ui.spinner();
            }
            if ui.button("Remove alignment").on_hover_text("Put every source back on its own clock").clicked()
            {
                msgs.push(Message::Align(AlignMsg::Reset));
            }
        });
    });
    d.open = open;
    if edited != *dialog {
        msgs.push(Message::Align(AlignMsg::Edit(edited)));
    }
    msgs
}
