//! The file dialog behind a trait, so tests (and machines without a portal) never block on a
//! modal dialog: the picker answers later, from its own thread, with `Message::Files(FileMsg::Open)`
//! (open) or `Message::Save(SaveMsg::SaveTo)` (save). When the desktop cannot show a dialog, the answer is
//! `Message::Save(SaveMsg::BrowseFiles)`: the workbench's own browser ([`super::file_browser`]) takes over.

use super::export::SaveWhat;
use super::file_browser::BrowsePurpose;
use super::jobs::Outbox;
use super::message::{FileMsg, Message, SaveMsg, ShellMsg};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Something that can ask the user for files to open or a file to save.
pub trait FilePicker: Send + std::fmt::Debug {
    /// Starts asking; the answer (if any) arrives as `Message::Files(FileMsg::Open)` through `outbox`.
    fn pick(&self, outbox: Outbox<Message>);
    /// Starts asking where to save `what`; the answer arrives as `Message::Save(SaveMsg::SaveTo)`.
    fn save(&self, what: SaveWhat, outbox: Outbox<Message>);
}

/// rfd cannot tell "cancelled" from "no dialog could be shown":
/// both are `None`. A `None` faster than a person can cancel means no dialog appeared.
const TOO_FAST_FOR_A_PERSON: Duration = Duration::from_millis(400);

/// Whether rfd's XDG portal backend or its zenity fallback can possibly show a dialog: a
/// session bus to reach the portal, or zenity on the `PATH`.
fn desktop_dialog_possible() -> bool {
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some()
        || std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| PathBuf::from(d).join("bus").exists());
    let zenity = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("zenity").is_file()));
    bus || zenity
}

/// Runs `ask` (a blocking rfd call) on its own thread; `answer` turns a choice into a
/// message. No dialog at all, or a `None` too quick to be a person's, opens the in-window
/// browser for `purpose` instead.
fn ask_on_thread<T: Send + 'static>(
    outbox: Outbox<Message>,
    purpose: BrowsePurpose,
    ask: impl FnOnce() -> Option<T> + Send + 'static,
    answer: impl FnOnce(T) -> Message + Send + 'static,
) {
    ask_if_possible(desktop_dialog_possible(), outbox, purpose, ask, answer);
}

/// [`ask_on_thread`] with whether a dialog is possible given (tests take both answers on
/// any machine).
fn ask_if_possible<T: Send + 'static>(
    possible: bool,
    outbox: Outbox<Message>,
    purpose: BrowsePurpose,
    ask: impl FnOnce() -> Option<T> + Send + 'static,
    answer: impl FnOnce(T) -> Message + Send + 'static,
) {
    if !possible {
        outbox.send(Message::Save(SaveMsg::BrowseFiles(purpose)));
        return;
    }
    let out = outbox.clone();
    let spawned = std::thread::Builder::new().name("latscope-file-dialog".into()).spawn(move || {
        let asked = Instant::now();
        match ask() {
            Some(choice) => out.send(answer(choice)),
            None if asked.elapsed() < TOO_FAST_FOR_A_PERSON => {
                out.send(Message::Save(SaveMsg::BrowseFiles(purpose)))
            }
            // Cancelled.
            None => {}
        }
    });
    if let Err(e) = spawned {
        outbox.send(ShellMsg::Error(anyhow::Error::new(e).context("cannot open the file dialog")).into());
    }
}

/// The desktop's dialog through rfd's XDG portal backend (zenity when no portal answers).
#[derive(Debug, Default)]
pub struct RfdPicker;

impl FilePicker for RfdPicker {
    fn pick(&self, outbox: Outbox<Message>) {
        ask_on_thread(
            outbox,
            BrowsePurpose::Open,
            || {
                rfd::FileDialog::new()
                    .set_title("Open captures or a session")
                    .pick_files()
                    .filter(|f| !f.is_empty())
            },
            |paths| FileMsg::Open(paths).into(),
        );
    }

    fn save(&self, what: SaveWhat, outbox: Outbox<Message>) {
        ask_on_thread(
            outbox,
            BrowsePurpose::Save(what),
            move || {
                rfd::FileDialog::new()
                    .set_title(what.title())
                    .set_file_name(what.default_name())
                    .add_filter(what.title(), &[what.extension()])
                    .save_file()
            },
            move |path| Message::Save(SaveMsg::SaveTo(what, path)),
        );
    }
}

/// A picker that never shows anything: for tests and `--screenshot`.
#[derive(Debug, Default)]
pub struct NoPicker;

const NO_DIALOG: &str = "no file dialog available; give files on the command line or drop them";

impl FilePicker for NoPicker {
    fn pick(&self, outbox: Outbox<Message>) {
        outbox.send(ShellMsg::Error(anyhow::anyhow!(NO_DIALOG)).into());
    }

    fn save(&self, _what: SaveWhat, outbox: Outbox<Message>) {
        outbox.send(ShellMsg::Error(anyhow::anyhow!(NO_DIALOG)).into());
    }
}

/// A picker that answers at once, as if the user chose: saves go to `dir` under the
/// default name of what is saved, opens open `open`. For tests.
#[derive(Debug, Default, Clone)]
pub struct PresetPicker {
    pub dir: PathBuf,
    pub open: Vec<PathBuf>,
}

impl FilePicker for PresetPicker {
    fn pick(&self, outbox: Outbox<Message>) {
        outbox.send(Message::Files(FileMsg::Open(self.open.clone())));
    }

    fn save(&self, what: SaveWhat, outbox: Outbox<Message>) {
        outbox.send(Message::Save(SaveMsg::SaveTo(what, self.dir.join(what.default_name()))));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The answer when a dialog is `possible` and `ask` stands for it.
    fn answer_of(possible: bool, ask: impl FnOnce() -> Option<PathBuf> + Send + 'static) -> Option<Message> {
        let (outbox, inbox) = Outbox::new();
        ask_if_possible(possible, outbox, BrowsePurpose::Open, ask, |p| {
            Message::Files(FileMsg::Open(vec![p]))
        });
        inbox.recv_timeout(Duration::from_secs(10)).ok()
    }

    #[test]
    fn an_instant_none_opens_the_in_window_browser() {
        // Whether or not this machine has a bus or zenity: no dialog, no person.
        for possible in [desktop_dialog_possible(), true] {
            let got = answer_of(possible, || None);
            assert!(matches!(got, Some(Message::Save(SaveMsg::BrowseFiles(BrowsePurpose::Open)))), "{got:?}");
        }
    }

    #[test]
    fn without_a_bus_or_zenity_the_dialog_is_never_asked() {
        let got = answer_of(false, || panic!("asked for a dialog that cannot be shown"));
        assert!(matches!(got, Some(Message::Save(SaveMsg::BrowseFiles(BrowsePurpose::Open)))), "{got:?}");
    }

    #[test]
    fn a_choice_becomes_the_message_and_a_slow_none_is_a_cancel() {
        // As where a dialog can be shown; `ask` stands for the person.
        let got = answer_of(true, || Some(PathBuf::from("/tmp/x.dat")));
        assert!(
            matches!(&got, Some(Message::Files(FileMsg::Open(p))) if p == &[PathBuf::from("/tmp/x.dat")]),
            "{got:?}"
        );
        let (outbox, inbox) = Outbox::new();
        ask_if_possible(
            true,
            outbox,
            BrowsePurpose::Open,
            || {
                std::thread::sleep(TOO_FAST_FOR_A_PERSON * 2);
                None::<PathBuf>
            },
            |p| Message::Files(FileMsg::Open(vec![p])),
        );
        // The thread ends without a word: the sender is dropped and nothing came.
        assert!(inbox.recv().is_err());
    }
}
