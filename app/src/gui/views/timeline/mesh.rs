//! Lane meshes: each visible lane drawn per pixel column into one mesh, cached until the
//! viewport or the data changes; and the detector windows shaded over a source's rows.

use crate::gui::document::SourceId;
use crate::gui::lod::{self, Grid, Slices};
use crate::gui::prepare::{Lane, LaneKind};
use crate::gui::theme;
use crate::gui::view::{Band, LaneId, SourceView, Viewport};
use egui::epaint::{Vertex, WHITE_UV};
use egui::{Color32, Mesh, Pos2, Rect, Stroke, pos2, vec2};
use latscope_model::{Placement, Ps, Source};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Shades `bands` over the data area of their sources' rows; returns the label under `pointer`.
pub(super) fn draw_bands(
    painter: &egui::Painter,
    data_rect: Rect,
    rows: &[(LaneId, Rect)],
    bands: &[Band],
    vp: &Viewport,
    pointer: Option<Pos2>,
) -> Option<String> {
    if bands.is_empty() {
        return None;
    }
    // The vertical extent of each source's visible rows.
    let mut extent: FxHashMap<SourceId, (f32, f32)> = FxHashMap::default();
    for &(id, r) in rows {
        let e = extent.entry(id.source).or_insert((r.top(), r.bottom()));
        *e = (e.0.min(r.top()), e.1.max(r.bottom()));
    }
    let painter = painter.with_clip_rect(data_rect);
    let mut under = None;
    // Bands closer than a pixel merge into one rectangle (one outcome's windows come in time
    // order), so a zoomed-out view shows where they are instead of stacking translucency.
    let mut pending: Option<(SourceId, Color32, Rect)> = None;
    let flush = |p: Option<(SourceId, Color32, Rect)>| {
        if let Some((_, color, rect)) = p {
            painter.rect_filled(rect, 0.0, color.gamma_multiply(0.16));
            painter.line_segment(
                [rect.left_top(), rect.right_top()],
                Stroke::new(2.0, color.gamma_multiply(0.8)),
            );
        }
    };
    for b in bands {
        let Some(&(top, bottom)) = extent.get(&b.source) else { continue };
        let (xa, xb) = (vp.x_of(data_rect.left(), b.start), vp.x_of(data_rect.left(), b.end));
        if xb < data_rect.left() || xa > data_rect.right() {
            continue;
        }
        // At least 2 points wide, so a window shorter than a pixel still shows.
        let (l, r) = (xa.max(data_rect.left() - 1.0), xb.max(xa + 2.0).min(data_rect.right() + 1.0));
        let rect = Rect::from_x_y_ranges(l..=r, top..=bottom);
        if pointer.is_some_and(|p| rect.contains(p)) {
            under = Some(b.label.clone());
        }
        match &mut pending {
            Some((s, c, m)) if *s == b.source && *c == b.color && l <= m.right() + 1.0 => {
                m.max.x = m.max.x.max(r);
            }
            _ => flush(pending.replace((b.source, b.color, rect))),
        }
    }
    flush(pending);
    under
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct CacheKey {
    pub(super) rect: [f32; 4],
    pub(super) start: f64,
    pub(super) ps_per_px: f64,
    /// The data and where it sits: a new decode or an alignment redraws the lane.
    pub(super) data_generation: u64,
    pub(super) placement: Placement,
    pub(super) color: Color32,
}

/// A lane's mesh and the label boxes drawn over it, for the viewport in its key.
pub(super) type CachedLane = (CacheKey, Arc<Mesh>, Vec<(Rect, String)>);

/// Meshes of the lanes as last drawn, rebuilt only when the viewport or the data changes.
#[derive(Debug, Default)]
pub struct MeshCache {
    pub(super) lanes: FxHashMap<(SourceId, usize), CachedLane>,
    /// Lane meshes built (not reused) since creation, for tests and the status bar.
    pub builds: u64,
}

/// Column grid of a lane for the current viewport, in the lane's source time.
pub(super) fn grid_for(src: &SourceView<'_>, vp: &Viewport, width: f32) -> Grid {
    let t0 = src.to_source(vp.start);
    let t1 = src.to_source(vp.start + vp.ps_per_px * f64::from(width));
    let columns = width.max(0.0).ceil() as usize;
    Grid { t0, ps_per_px: (t1 - t0) / columns.max(1) as f64, columns }
}

/// Appends a filled rectangle (what `Mesh::add_colored_rect` does, with one extend per
/// buffer instead of six index and four vertex pushes).
pub(super) fn quad(mesh: &mut Mesh, r: Rect, color: Color32) {
    if r.width() > 0.0 && r.height() > 0.0 {
        let i = mesh.vertices.len() as u32;
        mesh.indices.extend_from_slice(&[i, i + 1, i + 2, i + 2, i + 1, i + 3]);
        let v = |pos| Vertex { pos, uv: WHITE_UV, color };
        mesh.vertices.extend_from_slice(&[
            v(r.left_top()),
            v(r.right_top()),
            v(r.left_bottom()),
            v(r.right_bottom()),
        ]);
    }
}

pub(super) fn segment(mesh: &mut Mesh, a: Pos2, b: Pos2, width: f32, color: Color32) {
    let d = b - a;
    let len = d.length();
    if len < 1e-3 {
        quad(mesh, Rect::from_center_size(a, vec2(width, width)), color);
        return;
    }
    let n = vec2(-d.y, d.x) / len * (width / 2.0);
    let i = mesh.vertices.len() as u32;
    for p in [a + n, a - n, b - n, b + n] {
        mesh.colored_vertex(p, color);
    }
    mesh.add_triangle(i, i + 1, i + 2);
    mesh.add_triangle(i, i + 2, i + 3);
}

/// Draws the slices of one row into `mesh`; returns the label boxes wide enough for text.
#[allow(clippy::too_many_arguments)]
pub(super) fn draw_slices(
    mesh: &mut Mesh,
    row: Slices<'_>,
    grid: &Grid,
    left: f32,
    y: (f32, f32),
    color: impl Fn(u32) -> Color32,
    labels: &[String],
    texts: &mut Vec<(Rect, String)>,
) {
    let x_of = |t: Ps| left + ((t as f64 - grid.t0) / grid.ps_per_px) as f32;
    for run in lod::slice_runs(row, grid) {
        let (Some(s), Some(e), Some(label)) =
            (row.start(run.slice), row.end(run.slice), row.label(run.slice))
        else {
            continue;
        };
        let col_l = left + run.first as f32;
        let col_r = left + run.last as f32 + 1.0;
        let x0 = x_of(s).max(col_l);
        let x1 = x_of(e).min(col_r).max(x0 + 1.0);
        let c = color(label);
        let c = if run.crowded { c.gamma_multiply(1.3) } else { c };
        quad(mesh, Rect::from_x_y_ranges(x0..=x1, y.0..=y.1), c);
        if x1 - x0 > 36.0
            && !run.crowded
            && let Some(text) = labels.get(label as usize)
        {
            texts.push((Rect::from_x_y_ranges(x0..=x1, y.0..=y.1), text.clone()));
        }
    }
}

/// Ticks for events: one column each, taller where there are more.
pub(super) fn draw_ticks(
    mesh: &mut Mesh,
    (events, index): (&[u32], &lod::TimeIndex),
    src: &Source,
    grid: &Grid,
    left: f32,
    y: (f32, f32),
    color: Color32,
) {
    let ts = &src.events.ts;
    let counts = lod::count_columns_indexed(events.len(), |i| ts[events[i] as usize], index, grid);
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let h = y.1 - y.0;
    let sparse = grid.ps_per_px > 0.0 && max <= 1;
    let ln_max = (max as f32).ln_1p();
    let (single, several) = (color.gamma_multiply(0.85), color);
    let mut c = 0;
    while c < counts.len() {
        let n = counts[c];
        // A run of columns with the same count is one rectangle of one height and colour
        // (not when each column gets a head: those overlap the next column's tick, drawn
        // after it, as before).
        let run = if sparse { 1 } else { counts[c..].iter().take_while(|&&m| m == n).count() };
        if n > 0 {
            let x = left + c as f32;
            let frac = if max <= 1 { 1.0 } else { 0.35 + 0.65 * ((n as f32).ln_1p() / ln_max) };
            let top = y.1 - h * frac;
            let fill = if n == 1 { single } else { several };
            quad(mesh, Rect::from_x_y_ranges(x..=left + (c + run) as f32, top..=y.1), fill);
            if sparse {
                // Zoomed in far enough to see single events: mark each with a small head.
                quad(mesh, Rect::from_center_size(pos2(x + 0.5, top + 2.0), vec2(5.0, 4.0)), color);
            }
        }
        c += run;
    }
}

/// Every shown lane of `view`, stacked from the top, `width` pixels wide: a whole frame's
/// lane geometry, headless, as the geometry bench and the live snapshot bench time it.
/// Returns the vertices and label boxes built, so nothing is optimised away.
pub fn build_lanes(view: &SourceView<'_>, vp: &Viewport, width: f32) -> usize {
    let mut top = 0.0;
    let mut total = 0;
    for v in view.lanes {
        let Some(lane) = view.prepared.lanes.get(v.lane) else { continue };
        let h = lane.height();
        let rect = Rect::from_min_max(pos2(0.0, top), pos2(width, top + h));
        let (mesh, texts) = build_lane(lane, v.color, view, vp, rect);
        total += mesh.vertices.len() + texts.len();
        top += h;
    }
    total
}

/// Builds the mesh of one lane (and its label boxes) for the viewport: the per-frame
/// geometry cost, public for `app/benches/geometry.rs`.
pub fn build_lane(
    lane: &Lane,
    color: Color32,
    src: &SourceView<'_>,
    vp: &Viewport,
    rect: Rect,
) -> (Mesh, Vec<(Rect, String)>) {
    let mut mesh = Mesh::default();
    let mut texts = Vec::new();
    let grid = grid_for(src, vp, rect.width());
    let left = rect.left();
    let source = src.source();
    match &lane.kind {
        LaneKind::Cpu(cpu) => {
            let t = rect.top();
            draw_slices(
                &mut mesh,
                cpu.task_slices(),
                &grid,
                left,
                (t + 2.0, t + 19.0),
                |label| theme::task_color(cpu.labels.get(label as usize).map_or("", String::as_str)),
                &cpu.labels,
                &mut texts,
            );
            let irq_color = |label: u32| {
                let soft = cpu.labels.get(label as usize).is_some_and(|l| l.starts_with("softirq"));
                if soft { theme::SOFTIRQ } else { theme::IRQ }
            };
            draw_slices(
                &mut mesh,
                cpu.irq_slices(),
                &grid,
                left,
                (t + 21.0, t + 32.0),
                irq_color,
                &cpu.labels,
                &mut texts,
            );
            draw_ticks(
                &mut mesh,
                (&cpu.events, &cpu.index),
                source,
                &grid,
                left,
                (t + 34.0, t + 44.0),
                color,
            );
        }
        LaneKind::Events(ev) => {
            draw_ticks(
                &mut mesh,
                (&ev.events, &ev.index),
                source,
                &grid,
                left,
                (rect.top() + 3.0, rect.bottom() - 3.0),
                color,
            );
        }
        LaneKind::Digital { track, pyramid } => {
            if let Some(d) = source.digital.get(*track) {
                let (hi, lo) = (rect.top() + 4.0, rect.bottom() - 4.0);
                let y_of = |level: u8| match level {
                    0 => lo,
                    1 => hi,
                    _ => (hi + lo) / 2.0,
                };
                let fill = color.gamma_multiply(0.16);
                let cols = lod::digital_columns(d, pyramid, &grid);
                let end_x = left + ((d.end as f64 - grid.t0) / grid.ps_per_px) as f32;
                let mut c = 0;
                while c < cols.len() {
                    let x = left + c as f32;
                    if x > end_x {
                        break;
                    }
                    let col = cols[c];
                    if col.transitions == 0 {
                        // Merge a run of quiet columns at one level into one segment.
                        let mut k = c + 1;
                        while k < cols.len() && cols[k].transitions == 0 && cols[k].level_in == col.level_in {
                            k += 1;
                        }
                        let x1 = (left + k as f32).min(end_x.max(x + 1.0));
                        let y = y_of(col.level_in);
                        let lc = if col.level_in > 1 { theme::IRQ } else { color };
                        quad(&mut mesh, Rect::from_x_y_ranges(x..=x1, y - 0.75..=y + 0.75), lc);
                        if col.level_in == 1 {
                            quad(&mut mesh, Rect::from_x_y_ranges(x..=x1, hi + 0.75..=lo), fill);
                        }
                        c = k;
                    } else {
                        let (y0, y1) = (y_of(col.max).min(y_of(col.min)), y_of(col.max).max(y_of(col.min)));
                        let y0 = y0.min(hi);
                        let y1 = y1.max(lo);
                        quad(&mut mesh, Rect::from_x_y_ranges(x..=x + 1.0, y0 - 0.75..=y1 + 0.75), color);
                        if col.transitions > 2 {
                            quad(&mut mesh, Rect::from_x_y_ranges(x..=x + 1.0, y0..=y1), fill);
                        }
                        c += 1;
                    }
                }
            }
        }
        LaneKind::Analog { track, lo, hi } => {
            if let Some(a) = source.analog.get(*track) {
                let pad = 4.0;
                let span = (hi - lo).max(f32::EPSILON);
                let y_of = |v: f32| rect.bottom() - pad - (v - lo) / span * (rect.height() - 2.0 * pad);
                let (i0, i1) = lod::analog_range(a, grid.edge(0), grid.edge(grid.columns));
                let visible = i1 - i0;
                if visible < grid.columns / 2 {
                    // Few samples on screen: a line through them (step for sample-and-hold).
                    let from = i0.saturating_sub(1);
                    let to = (i1 + 1).min(a.samples.len());
                    let x_of = |i: usize| left + ((a.time_of(i) as f64 - grid.t0) / grid.ps_per_px) as f32;
                    for i in from..to.saturating_sub(1) {
                        let p = pos2(x_of(i), y_of(a.samples[i]));
                        let q = pos2(x_of(i + 1), y_of(a.samples[i + 1]));
                        if a.is_uniform() {
                            segment(&mut mesh, p, q, 1.5, color);
                        } else {
                            segment(&mut mesh, p, pos2(q.x, p.y), 1.5, color);
                            segment(&mut mesh, pos2(q.x, p.y), q, 1.5, color);
                        }
                    }
                } else {
                    for (c, mm) in lod::analog_columns(a, &grid).into_iter().enumerate() {
                        if let Some((mn, mx)) = mm {
                            let x = left + c as f32;
                            let (y0, y1) = (y_of(mx), y_of(mn));
                            let mid = (y0 + y1) / 2.0;
                            let (y0, y1) = (y0.min(mid - 0.75), y1.max(mid + 0.75));
                            quad(&mut mesh, Rect::from_x_y_ranges(x..=x + 1.0, y0..=y1), color);
                        }
                    }
                }
            }
        }
        LaneKind::Spans { rows, labels, .. } => {
            for (depth, row) in rows.iter().take(6).enumerate() {
                let y = rect.top() + 2.0 + depth as f32 * 18.0;
                let c = |label: u32| {
                    labels.get(label as usize).map_or(color, |l| theme::color_for(l)).gamma_multiply(0.7)
                };
                draw_slices(&mut mesh, Slices::of(row), &grid, left, (y, y + 16.0), c, labels, &mut texts);
            }
        }
    }
    (mesh, texts)
}
