//! The workbench's look and session features where they meet the frame: the lane context
//! menu (rename, colour), and the per-frame upkeep — applying the theme, following it with
//! the default lane colours, taking an asked-for timeline PNG, showing the in-window file
//! browser and finishing a session whose files have loaded.

use super::app::Workbench;
use super::file_browser::{BrowsePurpose, FileBrowser};
use super::message::{LaneId, Message};
use super::theme;
use super::timeline::LaneView;
use std::path::PathBuf;

/// The lane's context menu in the track list: its name and colour.
pub fn lane_menu(ui: &mut egui::Ui, id: LaneId, view: &LaneView) -> Vec<Message> {
    let mut msgs = Vec::new();
    ui.horizontal(|ui| {
        ui.label("Name");
        let mut name = view.name.clone();
        if ui.text_edit_singleline(&mut name).changed() {
            msgs.push(Message::RenameLane(id, name));
        }
    });
    ui.horizontal(|ui| {
        ui.label("Colour");
        let mut color = view.color;
        if egui::color_picker::color_edit_button_srgba(ui, &mut color, egui::color_picker::Alpha::Opaque)
            .changed()
        {
            msgs.push(Message::SetLaneColor(id, color));
        }
    });
    msgs
}

/// Where eframe's storage keeps the theme.
pub const THEME_KEY: &str = "latscope.theme";

impl Workbench {
    /// Takes the theme kept in eframe's storage (the last one used).
    pub fn restore_look(&mut self, storage: &dyn eframe::Storage) {
        if let Some(kind) = eframe::get_value(storage, THEME_KEY) {
            self.theme = kind;
        }
    }

    /// Keeps the theme in eframe's storage.
    pub fn save_look(&self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, THEME_KEY, &self.theme);
    }

    /// `Message::BrowseFiles`: the in-window browser, starting where the last file was.
    pub(super) fn browse(&mut self, purpose: BrowsePurpose) {
        let dir = self
            .recent
            .first()
            .and_then(|p| p.parent())
            .filter(|d| d.is_dir())
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        self.dialogs.browser = Some(FileBrowser::new(purpose, dir));
    }

    /// Lanes whose colour is the other theme's default take this theme's default; colours
    /// the user chose stay.
    fn follow_theme_with_lane_colors(&mut self) {
        let now = self.theme;
        for sv in &mut self.view.sources {
            for v in &mut sv.lanes {
                let Some(lane) = sv.prepared.lanes.get(v.lane) else { continue };
                if v.color == theme::lane_default(lane.color, now.other()) {
                    v.color = theme::lane_default(lane.color, now);
                }
            }
        }
    }

    /// Per-frame upkeep, after the views' messages were applied.
    pub(super) fn frame_extras(&mut self, ctx: &egui::Context) {
        if self.applied_theme != Some(self.theme) {
            theme::apply_kind(ctx, self.theme);
            self.applied_theme = Some(self.theme);
            ctx.request_repaint();
        }
        self.follow_theme_with_lane_colors();
        self.request_png(ctx);
        if let Some(b) = &self.dialogs.browser {
            for m in b.show(ctx) {
                self.update(m);
            }
        }
        self.finish_session();
    }
}
