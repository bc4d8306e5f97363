//! Painting a laid-out frame: source headers, lanes (through the mesh cache), cursors,
//! markers, the selection and the analysis arrow.

use crate::gui::document::SourceId;
use crate::gui::prepare::LaneKind;
use crate::gui::theme;
use crate::gui::view::find;
use crate::gui::view::{ArrowEnd, LaneId, Overlay, SourceView, Viewport};
use egui::{Align2, FontId, Pos2, Rect, Shape, Stroke, StrokeKind, pos2, vec2};
use std::sync::Arc;

use super::layout::Frame;
use super::mesh::{CacheKey, MeshCache, build_lane};
use super::ruler::analog_range_label;
use super::text::placement_text;

/// Paints the source headers: name, format and alignment.
pub(super) fn paint_headers(painter: &egui::Painter, frame: &Frame, sources: &[SourceView<'_>]) {
    for &(si, r) in &frame.headers {
        let Some(sv) = find(sources, si) else { continue };
        painter.rect_filled(r, 0.0, theme::PANEL);
        painter.text(
            r.left_center() + vec2(6.0, 0.0),
            Align2::LEFT_CENTER,
            format!("{}  ({})   {}", sv.source().name, sv.source().format, placement_text(sources, si)),
            FontId::proportional(12.0),
            theme::ACCENT.get(),
        );
    }
}

/// Paints one lane: its data (from the mesh cache, rebuilt when the view changed), its
/// gutter and the selected event on it.
#[allow(clippy::too_many_arguments)]
pub(super) fn paint_lane(
    painter: &egui::Painter,
    frame: &Frame,
    k: usize,
    id: LaneId,
    rect: Rect,
    sv: &SourceView<'_>,
    vp: &Viewport,
    overlay: &Overlay,
    cache: &mut MeshCache,
) {
    let (Some(view), Some(lane)) = (sv.lanes.get(id.lane), sv.data_lane(id.lane)) else { return };
    let (data_left, lanes_rect) = (frame.data_left, frame.lanes);
    if k % 2 == 1 {
        painter.rect_filled(rect, 0.0, theme::LANE_ALT);
    }
    if overlay.focused == Some(id) {
        painter.rect_filled(rect, 0.0, theme::ACCENT.gamma_multiply(0.08));
    }
    let data = Rect::from_min_max(pos2(data_left, rect.top()), rect.max);
    let key = CacheKey {
        rect: [data.left(), data.top(), data.right(), data.bottom()],
        start: vp.start,
        ps_per_px: vp.ps_per_px,
        data_generation: sv.data_generation,
        placement: sv.placement,
        color: view.color,
    };
    let entry = cache.lanes.get(&(id.source, view.lane)).filter(|e| e.0 == key);
    let (mesh, texts) = match entry {
        Some((_, m, t)) => (m.clone(), t.clone()),
        None => {
            let (m, t) = build_lane(lane, view.color, sv, vp, data);
            let m = Arc::new(m);
            cache.builds += 1;
            cache.lanes.insert((id.source, view.lane), (key, m.clone(), t.clone()));
            (m, t)
        }
    };
    painter.with_clip_rect(data.intersect(lanes_rect)).add(Shape::Mesh(mesh));
    for (r, text) in texts {
        let clip = r.intersect(data).shrink2(vec2(3.0, 0.0));
        if clip.width() > 20.0 {
            painter.with_clip_rect(clip.intersect(lanes_rect)).text(
                clip.left_center(),
                Align2::LEFT_CENTER,
                text,
                FontId::proportional(11.0),
                theme::SLICE_TEXT.get(),
            );
        }
    }
    // Gutter: the lane's name and colour.
    let gutter = Rect::from_min_max(rect.min, pos2(data_left, rect.bottom()));
    painter.rect_filled(gutter, 0.0, theme::PANEL);
    painter.rect_filled(Rect::from_min_size(gutter.min, vec2(3.0, gutter.height())), 0.0, view.color);
    let name_color = if overlay.focused == Some(id) { theme::ACCENT } else { theme::TEXT };
    painter.with_clip_rect(gutter.intersect(lanes_rect)).text(
        pos2(gutter.left() + 9.0, gutter.top() + 5.0),
        Align2::LEFT_TOP,
        &view.name,
        FontId::proportional(12.5),
        name_color.get(),
    );
    if let LaneKind::Analog { lo, hi, .. } = lane.kind {
        painter.text(
            pos2(gutter.right() - 4.0, gutter.bottom() - 3.0),
            Align2::RIGHT_BOTTOM,
            analog_range_label(f64::from(lo), f64::from(hi)),
            FontId::monospace(10.0),
            theme::TEXT_DIM.get(),
        );
    }
    painter.line_segment(
        [rect.left_bottom(), rect.right_bottom()],
        Stroke::new(1.0, theme::GRID.gamma_multiply(0.6)),
    );
    // Selected event.
    if let Some(sel) = overlay.selected
        && sel.source == id.source
        && let Some(&ts) = sv.source().events.ts.get(sel.index)
    {
        let on_lane = match &lane.kind {
            LaneKind::Cpu(c) => sv.source().events.cpu.get(sel.index) == Some(&c.cpu),
            LaneKind::Events(_) => {
                let src = sv.source();
                src.events.get(sel.index).is_some_and(|e| src.strings.resolve(e.name()) == lane.name)
            }
            _ => false,
        };
        if on_lane {
            let x = vp.x_of(data_left, sv.to_common(ts));
            if x >= data_left {
                painter.rect_stroke(
                    Rect::from_center_size(pos2(x, rect.center().y), vec2(9.0, rect.height() - 4.0)),
                    2.0,
                    Stroke::new(1.5, theme::SELECTED),
                    StrokeKind::Middle,
                );
            }
        }
    }
}

/// The height at which an arrow's end is drawn: on the CPU lane of its event (the event
/// ticks' row), else on its event's own lane, else on the digital lane with a transition at
/// its time; `None` when none of them is shown.
pub(super) fn arrow_end_y(
    frame: &Frame,
    sources: &[SourceView<'_>],
    source: SourceId,
    end: ArrowEnd,
) -> Option<f32> {
    // An end at an event is drawn on that event's source.
    let source = end.event.map_or(source, |e| e.source);
    let sv = find(sources, source)?;
    let src = sv.source();
    let rows = || frame.rows.iter().filter(|(id, _)| id.source == source);
    let lane_of = |id: &LaneId| sv.data_lane(id.lane);
    if let Some(i) = end.event.map(|e| e.index) {
        let cpu = src.events.cpu.get(i).copied();
        let name = src.events.get(i).map(|e| src.strings.resolve(e.name()).into_owned());
        let on_cpu = rows().find(
            |(id, _)| matches!(lane_of(id).map(|l| &l.kind), Some(LaneKind::Cpu(c)) if Some(c.cpu) == cpu),
        );
        if let Some((_, r)) = on_cpu {
            return Some(r.top() + 39.0);
        }
        let on_events = rows().find(|(id, _)| {
            lane_of(id)
                .is_some_and(|l| matches!(l.kind, LaneKind::Events(_)) && Some(&l.name) == name.as_ref())
        });
        return on_events.map(|(_, r)| r.center().y);
    }
    let edge = rows().find(|(id, _)| match lane_of(id).map(|l| &l.kind) {
        Some(LaneKind::Digital { track, .. }) => {
            src.digital.get(*track).is_some_and(|d| d.changes_until(end.t) > d.changes_before(end.t))
        }
        _ => false,
    });
    edge.map(|(_, r)| r.center().y)
}

/// Paints markers, the two cursors, the span between them and the analysis arrow; returns
/// where the arrow was drawn.
pub(super) fn paint_overlay(
    painter: &egui::Painter,
    frame: &Frame,
    vp: &Viewport,
    overlay: &Overlay,
    sources: &[SourceView<'_>],
) -> Option<(Pos2, Pos2)> {
    let (full, ruler_rect, data_left) = (frame.full, frame.ruler, frame.data_left);
    let x_in = |t: f64| {
        let x = vp.x_of(data_left, t);
        (x >= data_left && x <= full.right()).then_some(x)
    };
    for (name, t) in &overlay.markers {
        if let Some(x) = x_in(*t) {
            painter.line_segment(
                [pos2(x, ruler_rect.top()), pos2(x, full.bottom())],
                Stroke::new(1.0, theme::MARKER),
            );
            painter.text(
                pos2(x + 3.0, ruler_rect.bottom() - 2.0),
                Align2::LEFT_BOTTOM,
                name,
                FontId::proportional(11.0),
                theme::MARKER.get(),
            );
        }
    }
    for (t, c, label) in [(overlay.cursor_a, theme::CURSOR_A, "A"), (overlay.cursor_b, theme::CURSOR_B, "B")]
    {
        if let Some(x) = t.and_then(x_in) {
            painter.line_segment([pos2(x, ruler_rect.top()), pos2(x, full.bottom())], Stroke::new(1.5, c));
            let r = Rect::from_min_size(pos2(x - 6.0, ruler_rect.top()), vec2(12.0, 13.0));
            painter.rect_filled(r, 2.0, c);
            painter.text(
                r.center(),
                Align2::CENTER_CENTER,
                label,
                FontId::proportional(10.0),
                theme::BG.get(),
            );
        }
    }
    if let (Some(a), Some(b)) = (overlay.cursor_a, overlay.cursor_b) {
        let (xa, xb) = (vp.x_of(data_left, a), vp.x_of(data_left, b));
        let (l, r) = (xa.min(xb).max(data_left), xa.max(xb).min(full.right()));
        if r > l {
            painter.rect_filled(
                Rect::from_x_y_ranges(l..=r, frame.lanes.top()..=full.bottom()),
                0.0,
                theme::CURSOR_B.gamma_multiply(0.05),
            );
        }
    }
    // The selected event's pairs, as flows from start to end, each with its analysis and
    // latency at its middle.
    let data = painter.with_clip_rect(frame.data());
    for (k, r) in overlay.related.iter().enumerate() {
        let Some((pa, pb)) = arrow_points(frame, sources, vp, &r.arrow) else { continue };
        data.arrow(pa, pb - pa, Stroke::new(1.5, theme::CURSOR_A.gamma_multiply(0.8)));
        // Labelled where the arrow is long enough to hold its label; flows that share a
        // start stack their labels rather than overprint them.
        let label = format!("{} {}", r.analysis, latscope_model::format_seconds(r.latency_ps));
        if (pb.x - pa.x).abs() < label.len() as f32 * 6.5 {
            continue;
        }
        data.text(
            pa + (pb - pa) / 2.0 + vec2(0.0, -4.0 - 12.0 * k as f32),
            Align2::CENTER_BOTTOM,
            label,
            FontId::proportional(11.0),
            theme::CURSOR_A.get(),
        );
    }
    let arrow = overlay.arrow?;
    let (pa, pb) = arrow_points(frame, sources, vp, &arrow)?;
    painter.with_clip_rect(frame.data()).arrow(pa, pb - pa, Stroke::new(2.0, theme::CURSOR_A));
    Some((pa, pb))
}

/// Where an arrow is drawn: from its start to its end, on the lanes of the pair's events.
fn arrow_points(
    frame: &Frame,
    sources: &[SourceView<'_>],
    vp: &Viewport,
    arrow: &crate::gui::view::Arrow,
) -> Option<(Pos2, Pos2)> {
    let data_left = frame.data_left;
    // On the lanes of the pair's events; an end whose lane is hidden takes the other end's,
    // and with neither the arrow goes on the source's first lane.
    let ya = arrow_end_y(frame, sources, arrow.source, arrow.start);
    let yb = arrow_end_y(frame, sources, arrow.source, arrow.end);
    let first = frame.rows.iter().find(|(id, _)| id.source == arrow.source).map(|(_, r)| r.top() + 12.0);
    let fallback = ya.or(yb).or(first).unwrap_or(frame.lanes.top() + 12.0);
    let (ya, yb) = (ya.unwrap_or(fallback), yb.unwrap_or(fallback));
    Some((pos2(vp.x_of(data_left, arrow.a), ya), pos2(vp.x_of(data_left, arrow.b), yb)))
}
