//! Every action the workbench offers, with its shortcut: the command palette (Ctrl+Shift+P)
//! lists them, the menus and keyboard handling use the same table.

use super::export::SaveWhat;
use super::message::{Message, PanelId};
use latscope_analysis::report::Format;

/// One action: its name as listed, its shortcut text, and the message it sends.
#[derive(Debug, Clone, Copy)]
pub struct Action {
    pub name: &'static str,
    pub shortcut: &'static str,
    make: fn() -> Message,
}

impl Action {
    pub fn message(&self) -> Message {
        (self.make)()
    }
}

pub const ACTIONS: &[Action] = &[
    Action { name: "Open files…", shortcut: "Ctrl+O", make: || Message::PickFiles },
    Action { name: "Close all sources", shortcut: "", make: || Message::CloseAll },
    Action { name: "Zoom in", shortcut: "W", make: || Message::Zoom { factor: 0.5, at: f64::NAN } },
    Action { name: "Zoom out", shortcut: "S", make: || Message::Zoom { factor: 2.0, at: f64::NAN } },
    Action { name: "Pan left", shortcut: "A", make: || Message::PanFraction(-0.2) },
    Action { name: "Pan right", shortcut: "D", make: || Message::PanFraction(0.2) },
    Action { name: "Fit all", shortcut: "F", make: || Message::FitAll },
    Action { name: "Next edge/event on focused lane", shortcut: "N", make: || Message::StepEdge(true) },
    Action {
        name: "Previous edge/event on focused lane",
        shortcut: "Shift+N",
        make: || Message::StepEdge(false),
    },
    Action { name: "Clear cursors", shortcut: "Esc", make: || Message::ClearCursors },
    Action { name: "Add marker at cursor A", shortcut: "M", make: || Message::AddMarker },
    Action { name: "Next search match", shortcut: "F3", make: || Message::SearchStep(true) },
    Action { name: "Previous search match", shortcut: "Shift+F3", make: || Message::SearchStep(false) },
    Action { name: "Toggle track list", shortcut: "", make: || Message::TogglePanel(PanelId::Tracks) },
    Action { name: "Toggle event table", shortcut: "", make: || Message::TogglePanel(PanelId::Table) },
    Action { name: "Toggle analysis panel", shortcut: "", make: || Message::TogglePanel(PanelId::Analysis) },
    Action {
        name: "Toggle simulator panel",
        shortcut: "",
        make: || Message::TogglePanel(PanelId::Simulator),
    },
    Action { name: "Run analysis", shortcut: "", make: || Message::RunAnalysis },
    Action { name: "Command palette", shortcut: "Ctrl+Shift+P", make: || Message::TogglePalette },
    Action { name: "Export report as HTML…", shortcut: "", make: || export(Format::Html) },
    Action { name: "Export report as Markdown…", shortcut: "", make: || export(Format::Md) },
    Action { name: "Export report as JSON…", shortcut: "", make: || export(Format::Json) },
    Action { name: "Export samples as CSV…", shortcut: "", make: || export(Format::Csv) },
    Action { name: "Export samples as Parquet…", shortcut: "", make: || export(Format::Parquet) },
    Action { name: "Save timeline as PNG…", shortcut: "", make: || Message::Export(SaveWhat::TimelinePng) },
    Action { name: "Save session…", shortcut: "", make: || Message::Export(SaveWhat::Session) },
    Action { name: "Open session…", shortcut: "", make: || Message::PickFiles },
    Action { name: "Toggle light / dark theme", shortcut: "", make: || Message::ToggleTheme },
    Action { name: "Align sources…", shortcut: "", make: || Message::OpenAlign },
];

fn export(format: Format) -> Message {
    Message::Export(SaveWhat::Report(format))
}

/// Actions whose name contains every word of `query` (case-insensitive).
pub fn matching(query: &str) -> Vec<&'static Action> {
    let q = query.to_lowercase();
    ACTIONS.iter().filter(|a| q.split_whitespace().all(|w| a.name.to_lowercase().contains(w))).collect()
}

/// The palette window; returns the chosen action's message (and closes) or nothing.
pub fn show(ctx: &egui::Context, query: &mut String, open: &mut bool) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut close = false;
    egui::Window::new("Command palette")
        .collapsible(false)
        .resizable(false)
        .title_bar(false)
        .anchor(egui::Align2::CENTER_TOP, egui::vec2(0.0, 60.0))
        .fixed_size(egui::vec2(460.0, 0.0))
        .show(ctx, |ui| {
            let edit = ui.add(
                egui::TextEdit::singleline(query).hint_text("Type a command…").desired_width(f32::INFINITY),
            );
            edit.request_focus();
            let found = matching(query);
            let enter = ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                close = true;
            }
            ui.separator();
            for (i, a) in found.iter().enumerate() {
                let row = ui.horizontal(|ui| {
                    let r = ui.selectable_label(i == 0, a.name);
                    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                        ui.weak(a.shortcut)
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
        *open = false;
        query.clear();
    }
    msgs
}
