//! The in-window file browser's window: a directory listing, a file name field, Open or
//! Save. What the user does comes back as [`BrowserAction`]s.

use crate::gui::file_browser::{BrowsePurpose, BrowserAction, FileBrowser};
use crate::gui::message::{Message, SaveMsg};

/// The window; returns what the user did.
pub fn show(browser: &FileBrowser, ctx: &egui::Context) -> Vec<Message> {
    let mut actions = Vec::new();
    let title = match browser.purpose {
        BrowsePurpose::Open => "Open file",
        BrowsePurpose::Save(what) => what.title(),
    };
    egui::Window::new(title)
        .id(egui::Id::unique("latscope-file-browser"))
        .collapsible(false)
        .default_size(egui::vec2(520.0, 420.0))
        .anchor(egui::Align2::CENTER_CENTER, egui::vec2(0.0, 0.0))
        .show(ctx, |ui| {
            ui.horizontal(|ui| {
                if ui.button("Up").clicked()
                    && let Some(parent) = browser.dir.parent()
                {
                    actions.push(BrowserAction::Enter(parent.to_path_buf()));
                }
                ui.monospace(browser.dir.display().to_string());
            });
            ui.separator();
            egui::ScrollArea::vertical().max_height(280.0).auto_shrink([false, true]).show(ui, |ui| {
                for e in &browser.entries {
                    if e.is_dir {
                        if ui.selectable_label(false, format!("{}/", e.name)).clicked() {
                            actions.push(BrowserAction::Enter(browser.dir.join(&e.name)));
                        }
                    } else {
                        let r = ui.selectable_label(browser.file == e.name, &e.name);
                        if r.clicked() || r.double_clicked() {
                            actions.push(BrowserAction::Choose(e.name.clone()));
                        }
                        if r.double_clicked() {
                            actions.push(BrowserAction::Confirm);
                        }
                    }
                }
                if browser.entries.is_empty() {
                    ui.weak("(empty)");
                }
            });
            ui.separator();
            let mut typed = browser.file.clone();
            let edit = ui.add(
                egui::TextEdit::singleline(&mut typed)
                    .hint_text("file name or path")
                    .desired_width(f32::INFINITY),
            );
            if typed != browser.file {
                actions.push(BrowserAction::Choose(typed));
            }
            let typed_enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if let Some(e) = &browser.error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            ui.horizontal(|ui| {
                let verb = if matches!(browser.purpose, BrowsePurpose::Open) { "Open" } else { "Save" };
                if ui.button(verb).clicked() || typed_enter {
                    actions.push(BrowserAction::Confirm);
                }
                if ui.button("Cancel").clicked() {
                    actions.push(BrowserAction::Close);
                }
            });
        });
    actions.into_iter().map(|a| SaveMsg::Browser(a).into()).collect()
}
