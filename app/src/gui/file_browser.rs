//! The in-window file browser: when the desktop cannot show a file dialog (no XDG portal,
//! no zenity — rfd then answers `None` at once) the pickers send
//! a message that opens this browser instead. It answers what a dialog would (files to open,
//! where to save); its window is [`super::views::browser`]. Listing a directory reads only
//! its entries' names and kinds, once per directory entered.

use super::export::SaveWhat;
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

    /// Opens or saves the chosen path: enters it if it is a directory, else returns what a
    /// dialog would have answered.
    pub fn confirm(&mut self) -> Option<BrowserAnswer> {
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
            BrowsePurpose::Open => Some(BrowserAnswer::Open(path)),
            BrowsePurpose::Save(what) => Some(BrowserAnswer::SaveTo(what, path)),
        }
    }

    /// Applies what the user did in the window; returns the answer a dialog would have sent
    /// (and `false` once the window should close).
    pub fn apply(&mut self, action: BrowserAction) -> (Option<BrowserAnswer>, bool) {
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
}

/// What the browser answers, as a file dialog would.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserAnswer {
    Open(PathBuf),
    SaveTo(SaveWhat, PathBuf),
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
