//! The command palette (Ctrl+Shift+P): it lists the keymap's actions with their shortcuts
//! ([`crate::gui::keymap::ACTIONS`], the same table the menus and the keyboard use) and filters
//! them by what is typed.

pub use crate::gui::keymap::{ACTIONS, Action, matching};
use crate::gui::message::{Message, ShellMsg};

/// The palette window; returns the chosen action's message (and closes) or nothing.
pub fn show(ctx: &egui::Context, query: &str) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut close = false;
    let mut typed = query.to_owned();
    egui::Window::new("Command palette")
        .collapsible(false)
        .resizable(false)
        .title_bar(false)
        .anchor(egui::Align2::CENTER_TOP, egui::vec2(0.0, 60.0))
        .fixed_size(egui::vec2(460.0, 0.0))
        .show(ctx, |ui| {
            let edit = ui.add(
                egui::TextEdit::singleline(&mut typed)
                    .hint_text("Type a command…")
                    .desired_width(f32::INFINITY),
            );
            edit.request_focus();
            let found = matching(&typed);
            let enter = ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                close = true;
            }
            ui.separator();
            for (i, a) in found.iter().enumerate() {
                let row = ui.horizontal(|ui| {
                    let r = ui.selectable_label(i == 0, a.name);
                    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                        ui.weak(a.shortcut_text())
                    });
                    r
                });
                if row.inner.clicked() || (enter && i == 0) {
                    msgs.push(a.message());
                    close = true;
                }
            }
        });
    if close {
        msgs.push(Message::Shell(ShellMsg::ClosePalette));
    } else if typed != query {
        msgs.push(Message::Shell(ShellMsg::PaletteQuery(typed)));
    }
    msgs
}
