//! The desktop workbench: all egui code. Its state is split into rooms ([`rooms`]); views
//! read them and return [`message::Message`]s, and [`app::Workbench::update`] ([`update`])
//! applies them, dispatching to one handler per room. Every background job (loading, table
//! queries, analyses, alignment, derived lanes, the live simulator, saves) is started by the
//! one job runner ([`jobs`]), which also drops stale answers. Every action and its shortcut
//! is one row of the keymap ([`keymap`]): palette, menus and keyboard read it. The timeline
//! draws per pixel column ([`lod`]) from lanes built once per load ([`prepare`]).

pub mod align_dialog;
pub mod analysis;
pub mod app;
pub mod decoder_dialog;
pub mod derive_dialog;
pub mod errors;
pub mod export;
pub mod extras;
pub mod file_browser;
pub mod fleet_view;
pub mod frame_stats;
pub mod jobs;
pub mod keymap;
pub mod lod;
pub mod message;
pub mod palette;
pub mod picker;
pub mod prepare;
pub mod rooms;
pub mod session;
pub mod sim_panel;
pub mod table;
pub mod theme;
pub mod timeline;
mod update;
pub mod workers;

pub use app::{Options, Workbench, run_native};

/// A dialog's window (add decoder, derive digital): fixed size, not collapsible, centred
/// below the top of the workbench.
pub(crate) fn dialog_window<'a>(
    ctx: &egui::Context,
    title: impl Into<egui::WidgetText>,
    id: egui::Id,
    open: &'a mut bool,
) -> egui::Window<'a> {
    egui::Window::new(title)
        .id(id)
        .open(open)
        .resizable(false)
        .collapsible(false)
        .pivot(egui::Align2::CENTER_TOP)
        .default_pos(ctx.content_rect().center_top() + egui::vec2(0.0, 80.0))
}
