//! The desktop workbench: all egui code.
//!
//! - The document ([`document`]) is what is open: sources by stable id, where each sits, the
//!   alignment. The view of it ([`view`]) is how it is shown: lanes, viewport, cursors,
//!   panels. The other rooms are the analysis ([`analysis`]), the event table ([`table`]),
//!   the simulator ([`sim`]), the fleet window ([`fleet`]), the query window ([`query`]), the record window
//!   ([`record`]) and the dialogs ([`dialogs`]).
//! - Views ([`views`]) read the rooms and return [`message::Message`]s, one enum per room;
//!   [`app::Workbench::update`] (in `update/`) applies them, the one place state changes.
//! - Every background job (loading, table queries, analyses, alignment, derived lanes,
//!   decodes, the live simulator, recordings, saves, fleets, SQL queries) is started by the one job runner
//!   ([`jobs`]), which also drops stale answers.
//! - Every action and its shortcut is one row of the keymap ([`keymap`]): palette, menus and
//!   keyboard read it. The timeline draws per pixel column ([`lod`]) from lanes built once
//!   per load ([`prepare`]).

pub mod align_dialog;
pub mod analysis;
pub mod app;
pub mod decoder_dialog;
pub mod derive_dialog;
pub mod dialogs;
pub mod document;
pub mod errors;
pub mod export;
pub mod file_browser;
pub mod fleet;
pub mod frame_stats;
pub mod jobs;
pub mod keymap;
pub mod lod;
pub mod message;
pub mod picker;
pub mod prepare;
pub mod query;
pub mod record;
pub mod session;
pub mod sim;
pub mod table;
pub mod theme;
mod update;
pub mod view;
pub mod views;
pub mod workers;

pub use app::{Options, Workbench, run_native};
