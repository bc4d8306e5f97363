//! The shell's messages: errors, the palette, Esc, and the look (the theme, which the lanes'
//! default colours follow).

use crate::gui::app::Workbench;
use crate::gui::message::{ShellMsg, ViewMsg};
use crate::gui::theme::{self, ThemeKind};

impl Workbench {
    pub(super) fn update_shell(&mut self, msg: ShellMsg) {
        match msg {
            ShellMsg::Error(e) => self.errors.push(e),
            ShellMsg::DismissError(i) => self.errors.dismiss(i),
            ShellMsg::DismissErrors => self.errors.clear(),
            ShellMsg::Escape => {
                // Esc closes the error banner first; with none shown it clears the cursors.
                if self.errors.is_empty() {
                    self.update_view(ViewMsg::ClearCursors);
                } else {
                    self.errors.clear();
                }
            }
            ShellMsg::SetTheme(kind) => self.set_theme(kind),
            ShellMsg::ToggleTheme => self.set_theme(self.theme.other()),
            ShellMsg::TogglePalette => {
                self.dialogs.palette_open = !self.dialogs.palette_open;
                self.dialogs.palette_query.clear();
            }
            ShellMsg::ClosePalette => {
                self.dialogs.palette_open = false;
                self.dialogs.palette_query.clear();
            }
            ShellMsg::PaletteQuery(q) => self.dialogs.palette_query = q,
        }
    }

    /// The look: lanes whose colour is the old theme's default take the new theme's
    /// default; colours the user chose stay.
    pub(super) fn set_theme(&mut self, kind: ThemeKind) {
        let was = self.theme;
        self.theme = kind;
        if was == kind {
            return;
        }
        for s in &self.doc.sources {
            let Some(lanes) = self.view.lanes.get_mut(&s.id) else { continue };
            for v in lanes {
                let Some(lane) = s.prepared.lanes.get(v.lane) else { continue };
                if v.color == theme::lane_default(lane.color, was) {
                    v.color = theme::lane_default(lane.color, kind);
                }
            }
        }
    }
}
