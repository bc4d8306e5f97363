//! What went wrong, twice over: the banner above the timeline (the errors not yet closed)
//! and the log (every error and warning of the session, in order, kept after the banner is
//! closed; View > Log). Errors arrive as values ([`anyhow::Error`], with their causes);
//! they are turned into text (with their causes, `a: b: c`) only here, to be shown.

/// The banner's errors and the log. Reads as the banner's list (`wb.errors.is_empty()`,
/// `wb.errors[0]`); every error pushed also goes to the log.
#[derive(Debug, Default)]
pub struct Errors {
    /// The banner's texts (what the list reads as).
    texts: Vec<String>,
    /// For each banner text, the generation of opens it was raised in.
    raised: Vec<u64>,
    /// For each banner text, whether it is a warning (the file loaded; something in it was
    /// skipped or recovered) rather than an error: the banner draws them unlike errors.
    warning: Vec<bool>,
    log: Vec<String>,
    /// Counts the times files were opened; a good load closes older errors.
    generation: u64,
}

/// The most of one message the banner shows; the log keeps all of it.
pub const BANNER_CHARS: usize = 400;

impl std::ops::Deref for Errors {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.texts
    }
}

impl Errors {
    pub fn push(&mut self, error: anyhow::Error) {
        self.push_text(format!("{error:#}"), false);
    }

    /// A warning: what was recovered from (malformed records skipped, events lost) while
    /// the rest loaded.
    pub fn push_warning(&mut self, text: String) {
        self.push_text(text, true);
    }

    fn push_text(&mut self, text: String, warning: bool) {
        self.log.push(if warning { format!("warning: {text}") } else { text.clone() });
        self.raised.push(self.generation);
        self.warning.push(warning);
        self.texts.push(text);
    }

    /// Whether banner entry `i` is a warning.
    pub fn is_warning(&self, i: usize) -> bool {
        self.warning.get(i).copied().unwrap_or(false)
    }

    pub fn extend(&mut self, errors: impl IntoIterator<Item = anyhow::Error>) {
        for e in errors {
            self.push(e);
        }
    }

    /// Closes banner entry `i` (it stays in the log).
    pub fn dismiss(&mut self, i: usize) {
        if i < self.texts.len() {
            self.raised.remove(i);
            self.warning.remove(i);
            self.texts.remove(i);
        }
    }

    /// Closes the banner (Esc); the log keeps everything.
    pub fn clear(&mut self) {
        self.raised.clear();
        self.warning.clear();
        self.texts.clear();
    }

    /// Files are being opened: errors raised before now are about earlier opens.
    pub fn new_generation(&mut self) {
        self.generation += 1;
    }

    /// A file loaded: errors of earlier opens no longer describe what is on screen and
    /// leave the banner (they stay in the log). Errors of the same open (another file
    /// given with it) stay.
    pub fn loaded_ok(&mut self) {
        let current = self.generation;
        let mut keep = self.raised.iter().map(|&g| g >= current);
        self.texts.retain(|_| keep.next().unwrap_or(true));
        let mut keep = self.raised.iter().map(|&g| g >= current);
        self.warning.retain(|_| keep.next().unwrap_or(true));
        self.raised.retain(|&g| g >= current);
    }

    /// Every error and warning so far, oldest first.
    pub fn log(&self) -> &[String] {
        &self.log
    }
}

/// The banner's text of `e`: the first [`BANNER_CHARS`] characters; the rest is in the log.
pub fn banner_text(e: &str) -> String {
    match e.char_indices().nth(BANNER_CHARS) {
        Some((cut, _)) => format!("{}… (the whole message is in View > Log)", &e[..cut]),
        None => e.to_owned(),
    }
}
