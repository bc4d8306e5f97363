//! The overview strip in the ruler (the whole capture, the part in view framed, and the
//! search's matches as ticks, as Perfetto marks them) and the matches marked in their
//! lanes.

use super::layout::Frame;
use super::paint::arrow_end_y;
use crate::gui::prepare::LaneKind;
use crate::gui::table::Row;
use crate::gui::theme;
use crate::gui::view::{ArrowEnd, SourceView, Viewport, find};
use egui::{Rect, Stroke, pos2, vec2};

/// Most matches marked in the lanes in one frame: beyond it the overview still shows all.
const MAX_LANE_MARKS: usize = 2_000;
/// Most unsorted rows walked for the lane marks; rows in time order are searched instead.
const MAX_UNSORTED_WALK: usize = 200_000;

/// The search's matches to mark: the table's rows while its filter is set.
#[derive(Debug, Clone, Copy)]
pub struct Matches<'a> {
    pub rows: &'a [Row],
    /// The rows are in common-timeline order (the table sorted by time).
    pub by_time: bool,
}

/// Which pixel columns of the strip hold a match, kept while the rows, the range and the
/// width stay the same. Rows in time order are found by a search per column; others are
/// walked, which for millions of rows would stall the window each frame.
#[derive(Debug, Default)]
pub struct OverviewCache {
    key: Option<(usize, usize, u64, u64, u32)>,
    columns: Vec<bool>,
}

/// The strip's rectangle inside the ruler: below the labels, above the ticks.
pub(super) fn strip(frame: &Frame) -> Rect {
    let r = frame.ruler;
    Rect::from_min_max(pos2(r.left(), r.top() + 18.0), pos2(r.right(), r.top() + 25.0))
}

/// The common time at `x` in the strip, which spans `range`.
pub(super) fn strip_time(strip: Rect, range: (f64, f64), x: f32) -> f64 {
    let f = f64::from(((x - strip.left()) / strip.width().max(1.0)).clamp(0.0, 1.0));
    range.0 + f * (range.1 - range.0)
}

fn time_of(sources: &[SourceView<'_>], row: &Row) -> Option<f64> {
    let sv = find(sources, row.source)?;
    sv.source().events.ts.get(row.index as usize).map(|&t| sv.to_common(t))
}

pub(super) fn paint_strip(
    painter: &egui::Painter,
    frame: &Frame,
    vp: &Viewport,
    range: Option<(f64, f64)>,
    sources: &[SourceView<'_>],
    matches: Option<Matches<'_>>,
    cache: &mut OverviewCache,
) {
    let Some(range) = range.filter(|r| r.1 > r.0) else { return };
    let s = strip(frame);
    painter.rect_filled(s, 1.0, theme::GRID.gamma_multiply(0.5));
    let x_of = |t: f64| s.left() + ((t - range.0) / (range.1 - range.0)) as f32 * s.width();
    if let Some(m) = matches {
        let width = s.width().max(1.0) as u32;
        // Rows appended in place keep their address: their count tells them apart.
        let key = (m.rows.as_ptr() as usize, m.rows.len(), range.0.to_bits(), range.1.to_bits(), width);
        if cache.key != Some(key) && m.by_time {
            // A live recording's range moves at every snapshot: a search per column costs
            // the strip's width, not the rows.
            let at = |c: u32| range.0 + (range.1 - range.0) * f64::from(c) / f64::from(width);
            let first_from = |t: f64| m.rows.partition_point(|r| time_of(sources, r).is_some_and(|x| x < t));
            cache.columns = (0..=width)
                .map(|c| {
                    let (from, to) = (at(c), if c == width { f64::INFINITY } else { at(c + 1) });
                    let i = first_from(from);
                    m.rows.get(i).and_then(|r| time_of(sources, r)).is_some_and(|t| t < to)
                })
                .collect();
            cache.key = Some(key);
        } else if cache.key != Some(key) {
            cache.columns = vec![false; width as usize + 1];
            for row in m.rows.iter() {
                if let Some(t) = time_of(sources, row) {
                    let c =
                        ((t - range.0) / (range.1 - range.0) * f64::from(width)).clamp(0.0, f64::from(width));
                    cache.columns[c as usize] = true;
                }
            }
            cache.key = Some(key);
        }
        for (c, _) in cache.columns.iter().enumerate().filter(|(_, on)| **on) {
            let x = s.left() + c as f32;
            painter.line_segment([pos2(x, s.top()), pos2(x, s.bottom())], Stroke::new(1.0, theme::MATCH));
        }
    }
    // The part in view.
    let (l, r) =
        (x_of(vp.start), x_of(vp.start + vp.ps_per_px * f64::from(frame.full.right() - frame.data_left)));
    let (l, r) =
        (l.clamp(s.left(), s.right()), r.clamp(s.left(), s.right()).max(l.clamp(s.left(), s.right()) + 2.0));
    painter.rect_stroke(
        Rect::from_min_max(pos2(l, s.top() - 1.0), pos2(r, s.bottom() + 1.0)),
        1.0,
        Stroke::new(1.0, theme::TEXT_DIM),
        egui::StrokeKind::Middle,
    );
}

/// Marks each match in view at its event, in its lane (a small triangle above it).
pub(super) fn paint_lane_marks(
    painter: &egui::Painter,
    frame: &Frame,
    vp: &Viewport,
    sources: &[SourceView<'_>],
    matches: Matches<'_>,
) {
    let data = frame.data();
    let end = vp.start + vp.ps_per_px * f64::from(data.width());
    let rows: &[Row] = matches.rows;
    let window: &[Row] = if matches.by_time {
        let lo = rows.partition_point(|r| time_of(sources, r).is_some_and(|t| t < vp.start));
        let hi = rows.partition_point(|r| time_of(sources, r).is_some_and(|t| t <= end));
        &rows[lo..hi.max(lo)]
    } else {
        &rows[..rows.len().min(MAX_UNSORTED_WALK)]
    };
    let painter = painter.with_clip_rect(data);
    let mut marked = 0;
    for row in window {
        let Some(t) = time_of(sources, row) else { continue };
        if t < vp.start || t > end {
            continue;
        }
        let Some(sv) = find(sources, row.source) else { continue };
        let Some(&ts) = sv.source().events.ts.get(row.index as usize) else { continue };
        // On the lane of the event's name where it is shown, else on its CPU's.
        let src = sv.source();
        let name = src.events.get(row.index as usize).map(|e| src.strings.resolve(e.name()));
        let own_lane = frame.rows.iter().find(|(id, _)| {
            id.source == row.source
                && sv.data_lane(id.lane).is_some_and(|l| {
                    matches!(l.kind, LaneKind::Events(_)) && Some(l.name.as_str()) == name.as_deref()
                })
        });
        let y = match own_lane {
            Some((_, r)) => Some(r.center().y),
            None => arrow_end_y(frame, sources, row.source, ArrowEnd { t: ts, event: Some(row.sel()) }),
        };
        let Some(y) = y else { continue };
        let x = vp.x_of(frame.data_left, t);
        let tip = pos2(x, y - 6.0);
        painter.add(egui::Shape::convex_polygon(
            vec![tip, tip + vec2(-4.0, -6.0), tip + vec2(4.0, -6.0)],
            theme::MATCH.get(),
            Stroke::NONE,
        ));
        marked += 1;
        if marked >= MAX_LANE_MARKS {
            break;
        }
    }
}
