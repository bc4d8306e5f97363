//! The "Add decoder…" dialog: a decoder of the engine's registry, its channels (guessed by
//! the one resolver) and options, the spec checked as it is edited, with what the command
//! line would say of its channels.

use crate::gui::decoder_dialog::{DecoderDialog, stages};
use crate::gui::document::SourceId;
use crate::gui::message::{DecoderMsg, Message};
use latscope_decoders::spec::Stack;
use latscope_engine::registry::Registry;

/// The dialog window over the open sources (`sources`: each one's id and name); returns
/// the decode asked for and the dialog as edited.
pub fn show(
    ctx: &egui::Context,
    registry: &Registry,
    dialog: &DecoderDialog,
    sources: &[(SourceId, String)],
) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut d = dialog.clone();
    let mut open = d.open;
    let mut close = false;
    super::dialog_window(ctx, "Add decoder", egui::Id::unique("add-decoder"), &mut open).show(ctx, |ui| {
        egui::Grid::new("decoder-grid").num_columns(2).spacing([12.0, 6.0]).show(ui, |ui| {
            if sources.len() > 1 {
                ui.label("source");
                let name = sources.iter().find(|(id, _)| Some(*id) == d.source).map(|(_, n)| n.clone());
                egui::ComboBox::from_id_salt("decoder-source")
                    .selected_text(name.unwrap_or_default())
                    .show_ui(ui, |ui| {
                        for (id, s) in sources {
                            let here = Some(*id) == d.source;
                            if ui.selectable_label(here, s).clicked() && !here {
                                msgs.push(DecoderMsg::Open(Some(*id)).into());
                            }
                        }
                    });
                ui.end_row();
            }
            ui.label("decoder");
            let mut chosen = d.decoder.clone();
            let label = registry.decoder(&d.decoder).map_or_else(|| d.decoder.clone(), |x| x.label.clone());
            egui::ComboBox::from_id_salt("decoder-kind").selected_text(label).show_ui(ui, |ui| {
                // `sigrok` alone is the runner of typed `sigrok:ID` stacks; the dialog lists
                // each sigrok decoder by its id instead.
                for info in registry.decoders().iter().filter(|d| d.name != latscope_decoders::spec::SIGROK) {
                    ui.selectable_value(&mut chosen, info.name.clone(), &info.label);
                }
            });
            ui.end_row();
            if chosen != d.decoder {
                d.set_decoder(registry, &chosen);
            }
            let stack = stages(registry, &d.decoder);
            let roles = stack.first().map(|b| b.channels.as_slice()).unwrap_or_default();
            for (k, (role, channel)) in d.channels.iter_mut().enumerate() {
                let must = roles.get(k).is_some_and(|r| r.required);
                ui.label(if must { format!("{role} *") } else { role.clone() });
                let shown = if channel.is_empty() { "(none)".to_owned() } else { channel.clone() };
                egui::ComboBox::from_id_salt(("decoder-channel", k)).selected_text(shown).show_ui(ui, |ui| {
                    ui.selectable_value(channel, String::new(), "(none)");
                    for c in &dialog.names {
                        let label = match (c.analog, c.changes) {
                            (true, _) => format!("{} (analog, thresholded)", c.name),
                            (false, 0) => format!("{} (never toggles)", c.name),
                            (false, _) => c.name.clone(),
                        };
                        ui.selectable_value(channel, c.name.clone(), label);
                    }
                });
                ui.end_row();
            }
            for (k, (decoder, options)) in d.options.iter_mut().enumerate() {
                let hint = stack.get(k).map(|x| x.options_hint()).unwrap_or_default();
                if hint.is_empty() && options.is_empty() {
                    continue;
                }
                ui.label(if stack.len() > 1 { format!("{decoder} options") } else { "options".to_owned() });
                ui.add(egui::TextEdit::singleline(options).hint_text(hint).desired_width(280.0));
                ui.end_row();
            }
        });
        d.check(registry);
        ui.add_space(4.0);
        ui.monospace(&d.spec);
        for note in d.unguessed.iter().chain(&d.notes) {
            ui.colored_label(ui.visuals().warn_fg_color, note);
        }
        match &d.problem {
            Some(p) => {
                ui.colored_label(ui.visuals().error_fg_color, p);
            }
            None => {
                ui.weak("adds its annotation rows under the channels, and its events to the table");
            }
        }
        ui.add_enabled_ui(d.problem.is_none(), |ui| {
            // The check passed, so the spec parses; a stack that does not is not offered.
            if ui.button("Decode").clicked()
                && let (Some(source), Ok(stack)) = (d.source, Stack::parse(&d.spec))
            {
                msgs.push(DecoderMsg::Add { source, stacks: vec![stack] }.into());
                close = true;
            }
        });
    });
    d.open = open && !close;
    if d != *dialog {
        msgs.push(Message::Decoder(DecoderMsg::Edit(d)));
    }
    msgs
}
