//! The views: functions that draw the workbench's state and return [`Message`]s. None of them
//! changes state; what they keep between frames to draw fast (lane meshes, where things were
//! laid out, which look egui has) is the [`FrameCache`], which no message reads.
//!
//! To add a panel: give it a room (its state, beside the others in `gui/`), its messages (a
//! `…Msg` enum in `message.rs`, with its handler in `update/`), and a view here that takes
//! the room by reference and returns messages; then draw it from `panels::frame`.
//!
//! [`Message`]: crate::gui::message::Message

pub mod align_dialog;
pub mod analysis_panel;
pub mod browser;
pub mod decoder_dialog;
pub mod derive_dialog;
pub mod fleet;
pub mod palette;
pub mod panels;
pub mod query;
pub mod record;
pub mod sim_panel;
pub mod table;
pub mod timeline;

use super::analysis::AnalysisState;
use super::dialogs::Dialogs;
use super::document::Document;
use super::errors::Errors;
use super::fleet::FleetState;
use super::jobs::{JobKind, JobRunner};
use super::message::Message;
use super::query::QueryState;
use super::record::RecordState;
use super::sim::SimState;
use super::table::TableState;
use super::theme::ThemeKind;
use super::view::ViewState;
use latscope_engine::Registry;
use std::path::PathBuf;

/// What a frame draws: the workbench's rooms, read only.
#[derive(Debug, Clone, Copy)]
pub struct Scene<'a> {
    pub registry: &'a Registry,
    pub doc: &'a Document,
    pub view: &'a ViewState,
    pub analysis: &'a AnalysisState,
    pub sim: &'a SimState,
    pub table: &'a TableState,
    pub fleet: &'a FleetState,
    pub query: &'a QueryState,
    pub record: &'a RecordState,
    pub dialogs: &'a Dialogs,
    pub errors: &'a Errors,
    pub notice: Option<&'a str>,
    pub recent: &'a [PathBuf],
    /// The jobs running: their progress, and which kinds are busy.
    pub jobs: &'a JobRunner<Message>,
}

impl Scene<'_> {
    pub fn busy(&self, kind: JobKind) -> bool {
        self.jobs.busy(kind)
    }
}

/// What the views keep between frames: bookkeeping of drawing, not state.
#[derive(Debug, Default)]
pub struct FrameCache {
    /// Where the timeline was laid out last frame (hit-tests, the timeline PNG, tests).
    pub layout: timeline::Layout,
    /// Lane meshes, rebuilt only when the viewport or the data changes.
    pub meshes: timeline::MeshCache,
    /// The overview strip's match columns, rebuilt only when the matches or the range change.
    pub overview: timeline::OverviewCache,
    /// Where the analysis panel drew its plots last frame.
    pub plots: Vec<analysis_panel::DrawnPlot>,
    /// The look egui was last given.
    pub applied_theme: Option<ThemeKind>,
    /// Frames drawn with everything settled, counted for `--screenshot`; and whether its
    /// pixels were asked for.
    pub settled_frames: u32,
    pub screenshot_asked: bool,
}

/// A dialog's window (add decoder, derive digital, align): fixed size, not collapsible,
/// centred below the top of the workbench.
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
