//! What the pointer is over (an event, a slice, a level, a value), and stepping from edge
//! to edge of a lane.

use super::PICK_PX;
use crate::gui::document::SourceId;
use crate::gui::lod::{self, Slices};
use crate::gui::prepare::{Lane, LaneKind};
use crate::gui::view::find;
use crate::gui::view::{EventSel, SourceView, Viewport};
use egui::{Pos2, Rect};
use latscope_model::{Ps, Source};

use super::layout::Frame;

/// What the pointer is over, for tooltips and clicks.
#[derive(Debug, Clone)]
pub(super) enum Hit {
    Event(EventSel),
    Slice { text: String, start: Ps, end: Ps, source: SourceId, event: Option<usize> },
    Level { name: String, level: u8, t: Ps, source: SourceId },
    Value { name: String, value: f32, unit: String, t: Ps, source: SourceId },
}

pub(super) fn nearest_event(events: &[u32], src: &Source, t: f64, tol: f64) -> Option<usize> {
    let ts = &src.events.ts;
    let i = lod::lower_bound(events.len(), |i| (ts[events[i] as usize] as f64) < t);
    let mut best: Option<(f64, usize)> = None;
    for j in [i.checked_sub(1), Some(i)].into_iter().flatten() {
        if let Some(&e) = events.get(j) {
            let d = (ts[e as usize] as f64 - t).abs();
            if d <= tol && best.is_none_or(|b| d < b.0) {
                best = Some((d, e as usize));
            }
        }
    }
    best.map(|b| b.1)
}

pub(super) fn slice_at(row: Slices<'_>, t: Ps, tol: Ps) -> Option<usize> {
    row.first_overlapping(t - tol, t + tol + 1)
}

pub(super) fn hit_test(
    sv: &SourceView<'_>,
    source: SourceId,
    lane: &Lane,
    rect: Rect,
    pos: Pos2,
    t_src: f64,
    tol: f64,
) -> Option<Hit> {
    let src = sv.source();
    let t = t_src.round() as Ps;
    let tol_ps = tol.round() as Ps;
    let slice_hit = |row: Slices<'_>, labels: &[String]| {
        let i = slice_at(row, t, tol_ps)?;
        Some(Hit::Slice {
            text: row.label(i).and_then(|l| labels.get(l as usize)).cloned().unwrap_or_default(),
            start: row.start(i)?,
            end: row.end(i)?,
            source,
            event: row.event(i).filter(|&e| e != u32::MAX).map(|e| e as usize),
        })
    };
    match &lane.kind {
        LaneKind::Cpu(cpu) => {
            let y = pos.y - rect.top();
            if y < 20.0 {
                slice_hit(cpu.task_slices(), &cpu.labels)
            } else if y < 33.0 {
                slice_hit(cpu.irq_slices(), &cpu.labels)
            } else {
                nearest_event(&cpu.events, src, t_src, tol)
                    .map(|index| Hit::Event(EventSel { source, index }))
            }
        }
        LaneKind::Events(ev) => {
            nearest_event(&ev.events, src, t_src, tol).map(|index| Hit::Event(EventSel { source, index }))
        }
        LaneKind::Digital { track, .. } => src.digital.get(*track).map(|d| Hit::Level {
            name: d.name.clone(),
            level: d.level_at(t),
            t,
            source,
        }),
        LaneKind::Analog { track, .. } => src.analog.get(*track).and_then(|a| {
            let (i, _) = lod::analog_range(a, t, t + 1);
            let i = if i > 0 && (i >= a.samples.len() || a.time_of(i) > t) { i - 1 } else { i };
            a.samples.get(i).map(|&value| Hit::Value {
                name: a.name.clone(),
                value,
                unit: a.unit.clone(),
                t: a.time_of(i),
                source,
            })
        }),
        LaneKind::Spans { rows, labels, .. } => {
            let depth = ((pos.y - rect.top() - 2.0) / 18.0).max(0.0) as usize;
            rows.get(depth).and_then(|r| slice_hit(Slices::of(r), labels))
        }
    }
}

/// What is under the pointer at `p`, if it is over a lane's data.
pub(super) fn hit_at(frame: &Frame, sources: &[SourceView<'_>], vp: &Viewport, p: Pos2) -> Option<Hit> {
    if p.x < frame.data_left || !frame.lanes.contains(p) {
        return None;
    }
    let &(id, rect) = frame.rows.iter().find(|(_, r)| r.contains(p))?;
    let sv = find(sources, id.source)?;
    let lane = sv.data_lane(id.lane)?;
    let t_src = sv.to_source(vp.t_of(frame.data_left, p.x));
    hit_test(&sv, id.source, lane, rect, p, t_src, PICK_PX * vp.ps_per_px)
}
