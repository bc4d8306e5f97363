//! The file dialog behind a trait, so tests (and machines without a portal) never block on a
//! modal dialog: the picker answers later, from its own thread, with `Message::OpenFiles`.

use super::message::Message;
use super::workers::Outbox;

/// Something that can ask the user for files to open.
pub trait FilePicker: Send + std::fmt::Debug {
    /// Starts asking; the answer (if any) arrives as `Message::OpenFiles` through `outbox`.
    fn pick(&self, outbox: Outbox);
}

/// The desktop's dialog through rfd's XDG portal backend (zenity when no portal answers).
#[derive(Debug, Default)]
pub struct RfdPicker;

impl FilePicker for RfdPicker {
    fn pick(&self, outbox: Outbox) {
        let out = outbox.clone();
        let spawned = std::thread::Builder::new().name("latscope-file-dialog".into()).spawn(move || {
            let files = rfd::FileDialog::new().set_title("Open captures").pick_files();
            match files {
                Some(files) if !files.is_empty() => out.send(Message::OpenFiles(files)),
                // Cancelled, or no dialog could be shown (rfd cannot tell which).
                _ => {}
            }
        });
        if let Err(e) = spawned {
            outbox.send(Message::Error(format!("cannot open the file dialog: {e}")));
        }
    }
}

/// A picker that never shows anything: for tests and `--screenshot`.
#[derive(Debug, Default)]
pub struct NoPicker;

impl FilePicker for NoPicker {
    fn pick(&self, outbox: Outbox) {
        outbox.send(Message::Error(
            "no file dialog available; give files on the command line or drop them".into(),
        ));
    }
}
