//! The dialogs' room: what the palette, the Align, Derive digital and Add decoder dialogs and
//! the in-window file browser show while they are open. Their windows are in `views`; their
//! edits come back as whole dialog values (`AlignMsg::Edit`, …) and are kept here.

use super::align_dialog::AlignDialog;
use super::decoder_dialog::DecoderDialog;
use super::derive_dialog::DeriveDialog;
use super::file_browser::FileBrowser;

#[derive(Debug, Default)]
pub struct Dialogs {
    pub palette_open: bool,
    pub palette_query: String,
    pub align: AlignDialog,
    pub derive: DeriveDialog,
    pub decoder: DecoderDialog,
    /// Whether sigrok-cli's decoders were asked for (once, when the Add decoder dialog first
    /// opens: they join the registry when the job answers).
    pub sigrok_asked: bool,
    /// The in-window file browser, when the desktop has no dialog.
    pub browser: Option<FileBrowser>,
}
