//! The timeline: a time ruler in the first source's clock, and one lane per visible track,
//! drawn per pixel column from [`crate::gui::lod`] queries into one cached mesh per lane.
//!
//! Time is `i64` picoseconds in the model; on screen it is mapped in `f64` (an `f32` would
//! lose whole microseconds a few seconds into a trace). The common timeline is
//! source-relative time plus the source's alignment offset. One frame is laid out first
//! ([`layout`]); painting ([`paint`], meshes from [`mesh`], the [`ruler`]), hit-testing
//! ([`hit`]) and input ([`input`]) read that layout; [`text`] is how times and events read.

mod hit;
mod input;
mod layout;
mod mesh;
mod overview;
mod paint;
mod ruler;
mod text;

pub use layout::Layout;
pub use mesh::{MeshCache, build_lane, build_lanes};
pub use overview::{Matches, OverviewCache};
pub use ruler::{RulerUnits, analog_range_label, nice_step};
pub use text::{clock_text, common_seconds, common_text, event_fields, fields_read, placement_text};

/// Width of the lane-name gutter left of the data.
pub const GUTTER: f32 = 170.0;
/// Labels on top, the overview strip, then the ticks.
pub const RULER_HEIGHT: f32 = 34.0;
/// How close (points) the pointer must be to an event to pick it.
const PICK_PX: f64 = 6.0;

use crate::gui::message::{Message, ViewMsg};
use crate::gui::theme;
use crate::gui::view::{Overlay, SourceView, Viewport, find};
use egui::{Sense, Stroke, pos2};

use hit::hit_at;
use input::input;
use layout::lay_out;
use mesh::draw_bands;
use paint::{paint_headers, paint_lane, paint_overlay};
use ruler::ruler;
use text::tooltip;

/// Draws the ruler and lanes into `ui`'s remaining space; returns messages. `cache` keeps
/// lane meshes between frames and `layout` receives where things were drawn: both belong to
/// the frame cache ([`super::FrameCache`]), the views' own bookkeeping, which no message
/// reads. `range` is everything loaded (the overview strip spans it); `matches`, the
/// search's, are marked in their lanes and on the strip.
#[allow(clippy::too_many_arguments)]
pub fn show(
    ui: &mut egui::Ui,
    sources: &[SourceView<'_>],
    vp: &Viewport,
    overlay: &Overlay,
    scroll: f32,
    range: Option<(f64, f64)>,
    matches: Option<Matches<'_>>,
    cache: &mut MeshCache,
    overview_cache: &mut OverviewCache,
    layout: &mut Layout,
) -> Vec<Message> {
    let full = ui.available_rect_before_wrap();
    let (resp, painter) = ui.allocate_painter(full.size(), Sense::click_and_drag());
    let frame = lay_out(resp.rect, sources, scroll);
    *layout = frame.as_layout();

    painter.rect_filled(frame.full, 0.0, theme::BG);
    ruler(&painter, frame.ruler, vp, sources.first());
    overview::paint_strip(&painter, &frame, vp, range, sources, matches, overview_cache);
    let lane_painter = painter.with_clip_rect(frame.lanes);
    // Lanes that scroll stay below the pinned ones.
    let scrolled_painter = painter.with_clip_rect(frame.scrolled);
    paint_headers(&scrolled_painter, &frame, sources);
    for (k, &(id, rect)) in frame.rows.iter().enumerate() {
        let (area, p) =
            if k < frame.pinned { (frame.lanes, &lane_painter) } else { (frame.scrolled, &scrolled_painter) };
        if rect.bottom() < area.top() || rect.top() > area.bottom() {
            continue;
        }
        if let Some(sv) = find(sources, id.source) {
            paint_lane(p, &frame, k, id, rect, &sv, vp, overlay, cache);
        }
    }
    if frame.pinned > 0 {
        let y = frame.scrolled.top() - 1.0;
        painter.line_segment(
            [pos2(frame.full.left(), y), pos2(frame.full.right(), y)],
            Stroke::new(2.0, theme::GRID),
        );
    }
    let pointer = resp.hover_pos();
    let hovered = pointer.and_then(|p| hit_at(&frame, sources, vp, p));
    let band_label = draw_bands(&painter, frame.data(), &frame.rows, &overlay.bands, vp, pointer);
    if let Some(m) = matches {
        overview::paint_lane_marks(&painter, &frame, vp, sources, m);
    }
    layout.arrow = paint_overlay(&painter, &frame, vp, overlay, sources);
    let mut msgs = input(ui, &resp, &frame, sources, vp, hovered.as_ref());
    // A click on the overview strip shows that part of the capture.
    if resp.clicked()
        && let (Some(p), Some(range)) = (resp.interact_pointer_pos(), range)
        && overview::strip(&frame).expand2(egui::vec2(0.0, 2.0)).contains(p)
    {
        msgs.retain(|m| !matches!(m, Message::View(ViewMsg::SetCursor(..))));
        msgs.push(ViewMsg::CenterOn(overview::strip_time(overview::strip(&frame), range, p.x)).into());
    }

    if let Some(hit) = &hovered
        && !resp.dragged()
    {
        resp.clone().on_hover_ui_at_pointer(|ui| tooltip(ui, sources, hit));
    } else if let Some(label) = band_label
        && !resp.dragged()
    {
        resp.clone().on_hover_text_at_pointer(label);
    }
    // Crosshair at the pointer.
    if let Some(p) = pointer
        && p.x >= frame.data_left
    {
        painter.line_segment(
            [pos2(p.x, frame.ruler.top()), pos2(p.x, frame.full.bottom())],
            Stroke::new(1.0, theme::TEXT_DIM.gamma_multiply(0.35)),
        );
    }
    msgs
}
