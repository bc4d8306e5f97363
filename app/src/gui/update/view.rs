//! The view's messages: zoom, pan, cursors, lanes, markers, panels, the selection and
//! stepping from edge to edge, and the timeline's width as laid out.

use crate::gui::app::Workbench;
use crate::gui::document::Document;
use crate::gui::message::ViewMsg;
use crate::gui::prepare;
use crate::gui::view::{CursorId, EventSel, LaneId, ViewState};
use latscope_model::Ps;

impl Workbench {
    pub(super) fn update_view(&mut self, msg: ViewMsg) {
        let view = &mut self.view;
        match msg {
            ViewMsg::Zoom { factor, at } => {
                let at = if at.is_finite() { at } else { view.view_centre() };
                view.viewport.zoom(factor, at);
            }
            ViewMsg::PanFraction(f) => view.viewport.start += f * view.viewport.ps_per_px * view.data_width(),
            ViewMsg::PanBy(d) => view.viewport.start += d,
            ViewMsg::FitAll => view.fit_all(&self.doc),
            ViewMsg::ShowRange(a, b) => view.show_range(a, b),
            ViewMsg::CenterOn(t) => view.center_on(t),
            ViewMsg::SetCursor(CursorId::A, t) => view.overlay.cursor_a = Some(t),
            ViewMsg::SetCursor(CursorId::B, t) => view.overlay.cursor_b = Some(t),
            ViewMsg::ClearCursors => {
                view.overlay.cursor_a = None;
                view.overlay.cursor_b = None;
                view.overlay.arrow = None;
            }
            ViewMsg::FocusLane(id) => view.overlay.focused = Some(id),
            ViewMsg::ToggleLane(id) => {
                if let Some(v) = view.lane_mut(id) {
                    v.visible = !v.visible;
                }
            }
            ViewMsg::PinLane(id) => {
                if let Some(v) = view.lane_mut(id) {
                    v.pinned = !v.pinned;
                    // A pinned lane is meant to be seen.
                    v.visible |= v.pinned;
                }
            }
            ViewMsg::MoveLane(id, by) => {
                if let Some(lanes) = view.lanes.get_mut(&id.source)
                    && id.lane < lanes.len()
                {
                    let to = id.lane.saturating_add_signed(by).min(lanes.len() - 1);
                    let v = lanes.remove(id.lane);
                    lanes.insert(to, v);
                    if view.overlay.focused == Some(id) {
                        view.overlay.focused = Some(LaneId { source: id.source, lane: to });
                    }
                }
            }
            ViewMsg::RenameLane(id, name) => {
                if let Some(v) = view.lane_mut(id) {
                    v.name = name;
                }
            }
            ViewMsg::SetLaneColor(id, color) => {
                if let Some(v) = view.lane_mut(id) {
                    v.color = color;
                }
            }
            ViewMsg::ScrollLanes(by) => view.scroll = (view.scroll + by).clamp(0.0, view.max_scroll),
            ViewMsg::AddMarker => {
                let t = view.overlay.cursor_a.unwrap_or_else(|| view.view_centre());
                let name = format!("M{}", view.overlay.markers.len() + 1);
                view.overlay.markers.push((name, t));
            }
            ViewMsg::RenameMarker(i, name) => {
                if let Some(m) = view.overlay.markers.get_mut(i) {
                    m.0 = name;
                }
            }
            ViewMsg::RemoveMarker(i) => {
                if i < view.overlay.markers.len() {
                    view.overlay.markers.remove(i);
                }
            }
            ViewMsg::JumpMarker(i) => {
                if let Some(&(_, t)) = view.overlay.markers.get(i) {
                    view.center_on(t);
                }
            }
            ViewMsg::TogglePanel(p) => {
                let flag = view.panels.flag(p);
                *flag = !*flag;
            }
            ViewMsg::StepEdge(forward) => self.step_edge(forward),
            ViewMsg::SelectEvent(sel) => self.select(sel),
            ViewMsg::Laid { width, max_scroll } => {
                view.width = width;
                view.max_scroll = max_scroll;
                view.scroll = view.scroll.clamp(0.0, max_scroll);
                // A view fitted, or showing a pair, keeps showing it at the new width; the
                // first fit, made before the width was known, is made again.
                let kept = view.keep_shown(&self.doc);
                if view.refit && width > 1.0 {
                    view.refit = false;
                    if !kept {
                        view.fit_all(&self.doc);
                    }
                }
            }
        }
    }

    /// Selects an event (the table scrolls to it once).
    pub(super) fn select(&mut self, sel: EventSel) {
        self.view.overlay.selected = Some(sel);
        self.table.scroll_to_selection = true;
        self.view.overlay.related = self.related_pairs(sel);
    }

    fn step_edge(&mut self, forward: bool) {
        let Some(id) = self.view.overlay.focused else {
            let hint = "Click a lane first: next/previous edge works on the focused lane";
            self.errors.push(anyhow::anyhow!(hint));
            return;
        };
        let Some(s) = self.doc.get(id.source) else { return };
        let Some(lane) =
            self.view.lanes_of(id.source).get(id.lane).and_then(|v| s.prepared.lanes.get(v.lane))
        else {
            return;
        };
        let t = s.to_source(step_origin(&self.view, &self.doc)).round() as Ps;
        if let Some((at, event)) = prepare::step_edge(lane, s.source(), t, forward) {
            let tc = s.to_common(at);
            if let Some(index) = event {
                self.select(EventSel { source: id.source, index });
            }
            self.view.overlay.cursor_a = Some(tc);
            self.view.ensure_visible(tc);
        }
    }
}

/// The reference time for stepping: cursor A, else the selection, else the view's left edge.
pub(super) fn step_origin(view: &ViewState, doc: &Document) -> f64 {
    if let Some(a) = view.overlay.cursor_a {
        return a;
    }
    if let Some(sel) = view.overlay.selected
        && let Some(s) = doc.get(sel.source)
        && let Some(&ts) = s.source().events.ts.get(sel.index)
    {
        return s.to_common(ts);
    }
    view.viewport.start
}
