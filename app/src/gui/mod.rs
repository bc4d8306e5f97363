//! The desktop workbench (DESIGN §6): all egui code. Views return [`message::Message`]s,
//! [`app::Workbench::update`] applies them, and loading, table queries, analyses and the live
//! simulator run on named worker threads ([`workers`]). The timeline draws per pixel column
//! ([`lod`]) from lanes built once per load ([`prepare`]).

pub mod align_dialog;
pub mod analysis;
pub mod app;
pub mod derive_dialog;
pub mod export;
pub mod extras;
pub mod file_browser;
pub mod frame_stats;
pub mod lod;
pub mod message;
pub mod palette;
pub mod picker;
pub mod prepare;
pub mod session;
pub mod sim_panel;
pub mod table;
pub mod theme;
pub mod timeline;
pub mod workers;

pub use app::{Options, Workbench, run_native};
