//! The pointer and wheel on the timeline: zoom, pan, cursors, clicks, and what they ask.

use crate::gui::message::{DeriveMsg, Message, ViewMsg};
use crate::gui::prepare::LaneClass;
use crate::gui::view::find;
use crate::gui::view::{CursorId, EventSel, SourceView, Viewport};

use super::hit::Hit;
use super::layout::Frame;

/// The messages of this frame's pointer input: the wheel zooms over data and scrolls over
/// the gutter, a drag pans, a click focuses a lane, picks an event and sets a cursor.
pub(super) fn input(
    ui: &egui::Ui,
    resp: &egui::Response,
    frame: &Frame,
    sources: &[SourceView<'_>],
    vp: &Viewport,
    hovered: Option<&Hit>,
) -> Vec<Message> {
    let mut msgs = Vec::new();
    let data_left = frame.data_left;
    if let Some(p) = resp.hover_pos() {
        let (scroll_delta, zoom_delta, shift) =
            ui.input(|i| (i.smooth_scroll_delta(), i.zoom_delta(), i.modifiers.shift));
        if p.x >= data_left {
            let at = vp.t_of(data_left, p.x);
            let dy = if shift { 0.0 } else { scroll_delta.y };
            if dy != 0.0 {
                msgs.push(Message::View(ViewMsg::Zoom { factor: (-f64::from(dy) * 0.004).exp(), at }));
            }
            if zoom_delta != 1.0 {
                msgs.push(Message::View(ViewMsg::Zoom { factor: 1.0 / f64::from(zoom_delta), at }));
            }
            let dx = if shift { scroll_delta.y + scroll_delta.x } else { scroll_delta.x };
            if dx != 0.0 {
                msgs.push(Message::View(ViewMsg::PanBy(-f64::from(dx) * vp.ps_per_px)));
            }
        } else if scroll_delta.y != 0.0 {
            msgs.push(Message::View(ViewMsg::ScrollLanes(-scroll_delta.y)));
        }
    }
    if resp.dragged() {
        let d = resp.drag_delta();
        if d.x != 0.0 {
            msgs.push(Message::View(ViewMsg::PanBy(-f64::from(d.x) * vp.ps_per_px)));
        }
        if d.y != 0.0 {
            msgs.push(Message::View(ViewMsg::ScrollLanes(-d.y)));
        }
    }
    if resp.clicked()
        && let Some(p) = resp.interact_pointer_pos()
    {
        let shift = ui.input(|i| i.modifiers.shift);
        if let Some(id) = frame.row_at(p) {
            msgs.push(Message::View(ViewMsg::FocusLane(id)));
        }
        if p.x >= data_left {
            let mut t = vp.t_of(data_left, p.x);
            if let Some(Hit::Event(sel)) = hovered {
                msgs.push(Message::View(ViewMsg::SelectEvent(*sel)));
                if let Some(sv) = find(sources, sel.source)
                    && let Some(&ts) = sv.source().events.ts.get(sel.index)
                {
                    t = sv.to_common(ts);
                }
            }
            if let Some(Hit::Slice { event: Some(index), source, .. }) = hovered {
                msgs.push(Message::View(ViewMsg::SelectEvent(EventSel { source: *source, index: *index })));
            }
            msgs.push(Message::View(ViewMsg::SetCursor(if shift { CursorId::B } else { CursorId::A }, t)));
        }
    }
    if resp.secondary_clicked()
        && let Some(p) = resp.interact_pointer_pos()
    {
        if p.x >= data_left {
            msgs.push(Message::View(ViewMsg::SetCursor(CursorId::B, vp.t_of(data_left, p.x))));
        } else if let Some(id) = frame.row_at(p)
            && find(sources, id.source)
                .and_then(|sv| sv.data_lane(id.lane))
                .is_some_and(|l| l.kind.class() == LaneClass::Analog)
        {
            // Right click on an analog lane's name: derive a digital lane from it.
            msgs.push(Message::Derive(DeriveMsg::Open(id)));
        }
    }
    msgs
}
