//! The in-window file browser: when the desktop cannot show a file dialog (no XDG portal,
//! no zenity — rfd then answers `None` at once) the pickers send
//! `Message::BrowseFiles` and this window lists directories and files instead. It answers
//! with the same messages a dialog would (`OpenFiles`, `SaveTo`). Listing a directory reads
//! only its entries' names and kinds, once per directory entered.

use super::export::SaveWhat;
use super::message::Message;
use std::path::{Path, PathBuf};

/// What the browser was opened for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowsePurpose {
    /// Captures or a session to open.
    Open,
    /// Where to save.
    Save(SaveWhat),
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
}

#[derive(Debug, Clone)]
pub struct FileBrowser {
    pub purpose: BrowsePurpose,
    pub dir: PathBuf,
    /// Directories first, then files, each by name.
    pub entries: Vec<Entry>,
    /// The file chosen or typed: a name in `dir`, or a path.
    pub file: String,
    pub error: Option<String>,
}

impl FileBrowser {
    pub fn new(purpose: BrowsePurpose, dir: PathBuf) -> Self {
        let file = match purpose {
            BrowsePurpose::Open => String::new(),
            BrowsePurpose::Save(what) => what.default_name().to_owned(),
        };
        let mut b = Self { purpose, dir: PathBuf::new(), entries: Vec::new(), file, error: None };
        b.enter(dir);
        b
    }

    /// Lists `dir` (hidden entries left out); on failure stays where it was, with the error.
    pub fn enter(&mut self, dir: PathBuf) {
        match list(&dir) {
            Ok(entries) => {
                self.dir = dir;
                self.entries = entries;
                self.error = None;
            }
            Err(e) => self.error = Some(format!("{}: {e}", dir.display())),
        }
    }

    /// The chosen path: the typed text, relative to the listed directory.
    pub fn chosen(&self) -> PathBuf {
        let typed = Path::new(self.file.trim());
        if typed.is_absolute() { typed.to_path_buf() } else { self.dir.join(typed) }
    }

    /// Opens or saves the chosen path: enters it if it is a directory, else returns the
    /// message a dialog would have sent.
    pub fn confirm(&mut self) -> Option<Message> {
        if self.file.trim().is_empty() {
            self.error = Some("choose a file first".into());
            return None;
        }
        let path = self.chosen();
        if path.is_dir() {
            self.file.clear();
            self.enter(path);
            return None;
        }
        match self.purpose {
            BrowsePurpose::Open if !path.is_file() => {
                self.error = Some(format!("{}: no such file", path.display()));
                None
            }
            BrowsePurpose::Open => Some(Message::OpenFiles(vec![path])),
            BrowsePurpose::Save(what) => Some(Message::SaveTo(what, path)),
        }
    }

    /// Applies what the user did in the window; returns the answer a dialog would have sent
    /// (and `false` once the window should close).
    pub fn apply(&mut self, action: BrowserAction) -> (Option<Message>, bool) {
        match action {
            BrowserAction::Enter(dir) => self.enter(dir),
            BrowserAction::Choose(name) => self.file = name,
            BrowserAction::Confirm => {
                let answer = self.confirm();
                let keep = answer.is_none();
                return (answer, keep);
            }
            BrowserAction::Close => return (None, false),
        }
        (None, true)
    }

    /// The window; returns what the user did.
    pub fn show(&self, ctx: &egui::Context) -> Vec<Message> {
        let mut actions = Vec::new();
        let title = match self.purpose {
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
                        && let Some(parent) = self.dir.parent()
                    {
                        actions.push(BrowserAction::Enter(parent.to_path_buf()));
                    }
                    ui.monospace(self.dir.display().to_string());
                });
                ui.separator();
                egui::ScrollArea::vertical().max_height(280.0).auto_shrink([false, true]).show(ui, |ui| {
                    for e in &self.entries {
                        if e.is_dir {
                            if ui.selectable_label(false, format!("{}/", e.name)).clicked() {
                                actions.push(BrowserAction::Enter(self.dir.join(&e.name)));
                            }
                        } else {
                            let r = ui.selectable_label(self.file == e.name, &e.name);
                            if r.clicked() || r.double_clicked() {
                                actions.push(BrowserAction::Choose(e.name.clone()));
                            }
                            if r.double_clicked() {
                                actions.push(BrowserAction::Confirm);
                            }
                        }
                    }
                    if self.entries.is_empty() {
                        ui.weak("(empty)");
                    }
                });
                ui.separator();
                let mut typed = self.file.clone();
                let edit = ui.add(
                    egui::TextEdit::singleline(&mut typed)
                        .hint_text("file name or path")
                        .desired_width(f32::INFINITY),
                );
                if typed != self.file {
                    actions.push(BrowserAction::Choose(typed));
                }
                let typed_enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if let Some(e) = &self.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                ui.horizontal(|ui| {
                    let verb = if matches!(self.purpose, BrowsePurpose::Open) { "Open" } else { "Save" };
                    if ui.button(verb).clicked() || typed_enter {
                        actions.push(BrowserAction::Confirm);
                    }
                    if ui.button("Cancel").clicked() {
                        actions.push(BrowserAction::Close);
                    }
                });
            });
        actions.into_iter().map(Message::Browser).collect()
    }
}

/// What the user did in the browser window.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserAction {
    /// List this directory.
    Enter(PathBuf),
    /// This file name (clicked or typed).
    Choose(String),
    /// Open or save the chosen path (or enter it, if it is a directory).
    Confirm,
    Close,
}

fn list(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        // Follows symlinks: a link to a directory is browsed like one.
        let is_dir = e.path().is_dir();
        entries.push(Entry { name, is_dir });
    }
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    Ok(entries)
}
