//! The timeline: a time ruler in the first source's clock, and one lane per visible track,
//! drawn per pixel column from [`super::lod`] queries into one cached mesh per lane.
//!
//! Time is `i64` picoseconds in the model; on screen it is mapped in `f64` (an `f32` would
//! lose whole microseconds a few seconds into a trace). The common timeline is
//! source-relative time plus the source's alignment offset.

use super::lod::{self, Grid, SliceRow};
use super::message::{CursorId, EventSel, LaneId, Message};
use super::prepare::{Lane, LaneClass, LaneKind, Prepared};
use super::theme;
use egui::epaint::{Vertex, WHITE_UV};
use egui::{Align2, Color32, FontId, Mesh, Pos2, Rect, Sense, Shape, Stroke, StrokeKind, pos2, vec2};
use latscope_model::{Placed, Placement, Ps, Source, format_seconds, render_event, value_text};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Width of the lane-name gutter left of the data.
pub const GUTTER: f32 = 170.0;
pub const RULER_HEIGHT: f32 = 26.0;
/// How close (points) the pointer must be to an event to pick it.
const PICK_PX: f64 = 6.0;

/// What part of the common timeline is on screen: `start` ps at the left edge of the data
/// area, `ps_per_px` ps per point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    pub start: f64,
    pub ps_per_px: f64,
}

impl Default for Viewport {
    fn default() -> Self {
        Self { start: 0.0, ps_per_px: 1e6 }
    }
}

impl Viewport {
    pub fn x_of(&self, left: f32, t: f64) -> f32 {
        left + ((t - self.start) / self.ps_per_px) as f32
    }
    pub fn t_of(&self, left: f32, x: f32) -> f64 {
        self.start + f64::from(x - left) * self.ps_per_px
    }
    /// Zoom by `factor` (< 1 zooms in) keeping time `at` where it is.
    pub fn zoom(&mut self, factor: f64, at: f64) {
        let ppp = (self.ps_per_px * factor).clamp(1e-3, 1e16);
        self.start = at - (at - self.start) * (ppp / self.ps_per_px);
        self.ps_per_px = ppp;
    }
}

/// The user's view of one lane: which data lane, shown or not, its colour.
#[derive(Debug, Clone)]
pub struct LaneView {
    pub lane: usize,
    pub visible: bool,
    pub color: Color32,
    pub name: String,
}

/// A loaded source and the user's arrangement of its lanes.
#[derive(Debug, Clone)]
pub struct SourceView {
    pub prepared: Arc<Prepared>,
    /// Lanes in display order.
    pub lanes: Vec<LaneView>,
    /// Changes whenever `prepared` is replaced (live simulator) or the source is moved on the
    /// common timeline (alignment), invalidating cached meshes.
    pub generation: u64,
    /// Changes only when `prepared` is replaced: what a job's stamp records, so moving a
    /// source does not make a job that read its data look stale.
    pub data_generation: u64,
    /// Where the source sits on the common timeline (its alignment), beside its data.
    pub placement: Placement,
}

impl SourceView {
    pub fn new(prepared: Arc<Prepared>, generation: u64) -> Self {
        let lanes = prepared
            .lanes
            .iter()
            .enumerate()
            .map(|(i, l)| LaneView { lane: i, visible: true, color: l.color, name: l.name.clone() })
            .collect();
        Self { prepared, lanes, generation, data_generation: generation, placement: Placement::IDENTITY }
    }

    /// Replaces the data, keeping the user's choices for lanes whose names still exist and
    /// the source's placement.
    pub fn replace(&mut self, prepared: Arc<Prepared>, generation: u64) {
        let mut fresh = Self::new(prepared, generation);
        fresh.placement = self.placement;
        for v in &mut fresh.lanes {
            if let Some(old) = self.lanes.iter().find(|o| o.name == v.name) {
                v.visible = old.visible;
                v.color = old.color;
            }
        }
        *self = fresh;
    }

    pub fn source(&self) -> &Source {
        &self.prepared.source
    }
    /// Source-relative ps to the common timeline.
    pub fn to_common(&self, t: Ps) -> f64 {
        self.placement.to_common_f64(t)
    }
    /// Common timeline to source-relative ps (the inverse of `to_common`).
    pub fn to_source(&self, t: f64) -> f64 {
        self.placement.from_common_f64(t)
    }
    pub fn data_lane(&self, view: usize) -> Option<&Lane> {
        self.prepared.lanes.get(self.lanes.get(view)?.lane)
    }
}

/// Cursors, markers and selection drawn over the lanes.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    pub cursor_a: Option<f64>,
    pub cursor_b: Option<f64>,
    pub markers: Vec<(String, f64)>,
    pub selected: Option<EventSel>,
    pub focused: Option<LaneId>,
    /// A pair to draw as an arrow (an analysis worst case or plot point), while the
    /// cursors are on it.
    pub arrow: Option<Arrow>,
    /// Detector windows (stalls, polling loops) shaded over their source's lanes.
    pub bands: Vec<Band>,
}

/// A pair of an analysis drawn as an arrow from its start to its end, on the lanes of the
/// events (or edges) it pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrow {
    pub source: usize,
    /// Common times of the start and the end (where the cursors are put).
    pub a: f64,
    pub b: f64,
    pub start: ArrowEnd,
    pub end: ArrowEnd,
}

/// One end of an [`Arrow`]: its source-relative time, and the event there when it is one
/// (an edge of a digital track is found by its time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrowEnd {
    pub t: Ps,
    pub event: Option<usize>,
}

/// A time window shaded over the lanes of one source, with what it is on hover.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub source: usize,
    /// Common time, ps.
    pub start: f64,
    pub end: f64,
    pub color: Color32,
    pub label: String,
}

/// Shades `bands` over the data area of their sources' rows; returns the label under `pointer`.
fn draw_bands(
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
    let mut extent: FxHashMap<usize, (f32, f32)> = FxHashMap::default();
    for &(id, r) in rows {
        let e = extent.entry(id.source).or_insert((r.top(), r.bottom()));
        *e = (e.0.min(r.top()), e.1.max(r.bottom()));
    }
    let painter = painter.with_clip_rect(data_rect);
    let mut under = None;
    // Bands closer than a pixel merge into one rectangle (one outcome's windows come in time
    // order), so a zoomed-out view shows where they are instead of stacking translucency.
    let mut pending: Option<(usize, Color32, Rect)> = None;
    let flush = |p: Option<(usize, Color32, Rect)>| {
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
struct CacheKey {
    rect: [f32; 4],
    start: f64,
    ps_per_px: f64,
    generation: u64,
    color: Color32,
}

/// A lane's mesh and the label boxes drawn over it, for the viewport in its key.
type CachedLane = (CacheKey, Arc<Mesh>, Vec<(Rect, String)>);

/// Meshes of the lanes as last drawn, rebuilt only when the viewport or the data changes.
#[derive(Debug, Default)]
pub struct MeshCache {
    lanes: FxHashMap<(usize, usize), CachedLane>,
    /// Lane meshes built (not reused) since creation, for tests and the status bar.
    pub builds: u64,
}

/// Column grid of a lane for the current viewport, in the lane's source time.
fn grid_for(src: &SourceView, vp: &Viewport, width: f32) -> Grid {
    let t0 = src.to_source(vp.start);
    let t1 = src.to_source(vp.start + vp.ps_per_px * f64::from(width));
    let columns = width.max(0.0).ceil() as usize;
    Grid { t0, ps_per_px: (t1 - t0) / columns.max(1) as f64, columns }
}

/// Appends a filled rectangle (what `Mesh::add_colored_rect` does, with one extend per
/// buffer instead of six index and four vertex pushes).
fn quad(mesh: &mut Mesh, r: Rect, color: Color32) {
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

fn segment(mesh: &mut Mesh, a: Pos2, b: Pos2, width: f32, color: Color32) {
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
fn draw_slices(
    mesh: &mut Mesh,
    row: &SliceRow,
    grid: &Grid,
    left: f32,
    y: (f32, f32),
    color: impl Fn(u32) -> Color32,
    labels: &[String],
    texts: &mut Vec<(Rect, String)>,
) {
    let x_of = |t: Ps| left + ((t as f64 - grid.t0) / grid.ps_per_px) as f32;
    for run in lod::slice_runs(row, grid) {
        let (Some(&s), Some(&e), Some(&label)) =
            (row.start.get(run.slice), row.end.get(run.slice), row.label.get(run.slice))
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
fn draw_ticks(
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

/// Builds the mesh of one lane (and its label boxes) for the viewport: the per-frame
/// geometry cost, public for `app/benches/geometry.rs`.
pub fn build_lane(
    lane: &Lane,
    color: Color32,
    src: &SourceView,
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
                &cpu.tasks,
                &grid,
                left,
                (t + 2.0, t + 19.0),
                theme::task_color,
                &cpu.labels,
                &mut texts,
            );
            let irq_color = |label: u32| {
                let soft = cpu.labels.get(label as usize).is_some_and(|l| l.starts_with("softirq"));
                if soft { theme::SOFTIRQ } else { theme::IRQ }
            };
            draw_slices(
                &mut mesh,
                &cpu.irqs,
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
                draw_slices(&mut mesh, row, &grid, left, (y, y + 16.0), c, labels, &mut texts);
            }
        }
    }
    (mesh, texts)
}

/// A "nice" ruler step (1, 2 or 5 x 10^k ps) at least `min` ps.
pub fn nice_step(min: f64) -> f64 {
    let min = min.max(1e-3);
    let p = 10f64.powf(min.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if p * m >= min {
            return p * m;
        }
    }
    p * 10.0
}

fn ruler(painter: &egui::Painter, rect: Rect, vp: &Viewport, clock: Option<&SourceView>) {
    painter.rect_filled(rect, 0.0, theme::BG);
    let step = nice_step(vp.ps_per_px * 110.0);
    let first = (vp.start / step).floor() * step;
    let mut t = first;
    let end = vp.start + vp.ps_per_px * f64::from(rect.width());
    let font = FontId::monospace(11.0);
    let seconds_at = |t: f64| match clock {
        Some(src) => src.source().origin.to_source_seconds(src.to_source(t).round() as Ps),
        None => t / 1e12,
    };
    let units = RulerUnits::for_view(step, seconds_at(first).abs().max(seconds_at(end).abs()));
    while t <= end {
        let x = vp.x_of(rect.left(), t);
        if x >= rect.left() {
            painter.line_segment(
                [pos2(x, rect.bottom() - 7.0), pos2(x, rect.bottom())],
                Stroke::new(1.0, theme::TEXT_DIM),
            );
            let label = units.label(seconds_at(t));
            painter.text(
                pos2(x + 3.0, rect.top() + 4.0),
                Align2::LEFT_TOP,
                label,
                font.clone(),
                theme::TEXT_DIM.get(),
            );
        }
        for k in 1..5 {
            let xm = vp.x_of(rect.left(), t + step * f64::from(k) / 5.0);
            if xm >= rect.left() && xm <= rect.right() {
                painter.line_segment(
                    [pos2(xm, rect.bottom() - 3.0), pos2(xm, rect.bottom())],
                    Stroke::new(1.0, theme::GRID),
                );
            }
        }
        t += step;
    }
    painter.line_segment([rect.left_bottom(), rect.right_bottom()], Stroke::new(1.0, theme::GRID));
}

/// An analog lane's value range: whole numbers as such (an enum state `0..3`, a counter),
/// measured values with three decimals (`-2.734..1.953`).
pub fn analog_range_label(lo: f64, hi: f64) -> String {
    let whole = |v: f64| v.fract() == 0.0 && v.abs() < 1e15;
    if whole(lo) && whole(hi) { format!("{lo:.0}..{hi:.0}") } else { format!("{lo:.3}..{hi:.3}") }
}

/// How the ruler writes its tick times. Times past one second (ftrace's uptime clocks) read
/// as seconds with the decimals the tick step needs (`533.891480`); a view within the first
/// second (waveforms, simulations) reads in the largest unit the step fills (`50 ns`,
/// `1500 ns`), so its labels are whole numbers, where seconds would need nine leading zeros.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RulerUnits {
    /// Picoseconds per unit (1e12 for seconds).
    unit_ps: f64,
    suffix: &'static str,
    decimals: usize,
}

impl RulerUnits {
    /// Units for ticks `step_ps` apart in a view whose times reach `max_abs_s` seconds.
    pub fn for_view(step_ps: f64, max_abs_s: f64) -> RulerUnits {
        let decimals_for = |unit_ps: f64| (-(step_ps / unit_ps).log10().floor()).clamp(0.0, 12.0) as usize;
        if max_abs_s >= 1.0 {
            return RulerUnits { unit_ps: 1e12, suffix: "", decimals: decimals_for(1e12) };
        }
        let (unit_ps, suffix) = [(1e9, " ms"), (1e6, " us"), (1e3, " ns")]
            .into_iter()
            .find(|&(u, _)| step_ps >= u)
            .unwrap_or((1.0, " ps"));
        RulerUnits { unit_ps, suffix, decimals: decimals_for(unit_ps) }
    }

    pub fn label(self, seconds: f64) -> String {
        let v = seconds * 1e12 / self.unit_ps;
        // `-0` reads oddly on a ruler.
        let v = if v.abs() < 0.5 * 10f64.powi(-(self.decimals as i32)) { 0.0 } else { v };
        format!("{v:.*}{}", self.decimals, self.suffix)
    }
}

/// What the pointer is over, for tooltips and clicks.
#[derive(Debug, Clone)]
enum Hit {
    Event(EventSel),
    Slice { text: String, start: Ps, end: Ps, source: usize, event: Option<usize> },
    Level { name: String, level: u8, t: Ps, source: usize },
    Value { name: String, value: f32, unit: String, t: Ps, source: usize },
}

fn nearest_event(events: &[u32], src: &Source, t: f64, tol: f64) -> Option<usize> {
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

fn slice_at(row: &SliceRow, t: Ps, tol: Ps) -> Option<usize> {
    row.first_overlapping(t - tol, t + tol + 1)
}

fn hit_test(
    sv: &SourceView,
    source: usize,
    lane: &Lane,
    rect: Rect,
    pos: Pos2,
    t_src: f64,
    tol: f64,
) -> Option<Hit> {
    let src = sv.source();
    let t = t_src.round() as Ps;
    let tol_ps = tol.round() as Ps;
    let slice_hit = |row: &SliceRow, labels: &[String]| {
        slice_at(row, t, tol_ps).map(|i| Hit::Slice {
            text: row.label.get(i).and_then(|&l| labels.get(l as usize)).cloned().unwrap_or_default(),
            start: row.start[i],
            end: row.end[i],
            source,
            event: row.event.get(i).filter(|&&e| e != u32::MAX).map(|&e| e as usize),
        })
    };
    match &lane.kind {
        LaneKind::Cpu(cpu) => {
            let y = pos.y - rect.top();
            if y < 20.0 {
                slice_hit(&cpu.tasks, &cpu.labels)
            } else if y < 33.0 {
                slice_hit(&cpu.irqs, &cpu.labels)
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
            rows.get(depth).and_then(|r| slice_hit(r, labels))
        }
    }
}

/// The source-clock time of `t` (source-relative ps) as the tracer prints it.
pub fn clock_text(src: &Source, t: Ps) -> String {
    format!("{:.9} s", src.origin.to_source_seconds(t))
}

/// An event's columns as `(name, value)` text pairs, then its payload as the tracer prints
/// it (trace.dat: the event format's print fmt, `254,0 RS …`; [`render_event`]).
pub fn event_fields(src: &Source, index: usize) -> Vec<(String, String)> {
    let Some(e) = src.events.get(index) else { return Vec::new() };
    let s = &src.strings;
    let mut out = vec![
        ("event".to_owned(), s.resolve(e.name()).into_owned()),
        ("time".to_owned(), clock_text(src, e.ts())),
        ("cpu".to_owned(), e.cpu().to_string()),
        ("task".to_owned(), format!("{}-{}", s.resolve(e.comm()), e.pid())),
    ];
    if e.flags().is_present() {
        out.push(("flags".to_owned(), e.flags().render()));
    }
    out.push(("payload".to_owned(), render_event(src, index)));
    out
}

/// An event's fields as people read them (`dev=254,0`, `arg=0x1AA`), each with its stored
/// value where that differs (`266338304`): rules and filters match either.
pub fn fields_read(src: &Source, index: usize) -> Vec<(String, String, Option<String>)> {
    let Some(e) = src.events.get(index) else { return Vec::new() };
    let s = &src.strings;
    e.fields()
        .zip(&e.layout().fields)
        .map(|((name, v), &(_, kind))| {
            let name = s.resolve(name).into_owned();
            let mut stored = String::new();
            value_text(src, v, &mut stored);
            match latscope_model::display::readable(&name, kind, v) {
                Some(shown) => (name, shown, Some(stored)),
                None => (name, stored, None),
            }
        })
        .collect()
}

fn tooltip(ui: &mut egui::Ui, sources: &[SourceView], hit: &Hit) {
    match hit {
        Hit::Event(sel) => {
            if let Some(sv) = sources.get(sel.source) {
                egui::Grid::new("tip").num_columns(2).show(ui, |ui| {
                    for (k, v) in event_fields(sv.source(), sel.index) {
                        ui.label(egui::RichText::new(k).color(theme::TEXT_DIM));
                        ui.monospace(v);
                        ui.end_row();
                    }
                });
            }
        }
        Hit::Slice { text, start, end, source, .. } => {
            ui.strong(text);
            if let Some(sv) = sources.get(*source) {
                ui.monospace(format!("start {}", clock_text(sv.source(), *start)));
            }
            ui.monospace(format!("duration {}", format_seconds(end - start)));
        }
        Hit::Level { name, level, t, source } => {
            let text = match level {
                0 | 1 => level.to_string(),
                2 => "X".to_owned(),
                _ => "Z".to_owned(),
            };
            ui.strong(format!("{name} = {text}"));
            if let Some(sv) = sources.get(*source) {
                ui.monospace(clock_text(sv.source(), *t));
            }
        }
        Hit::Value { name, value, unit, t, source } => {
            ui.strong(format!("{name} = {value:.4} {unit}"));
            if let Some(sv) = sources.get(*source) {
                ui.monospace(clock_text(sv.source(), *t));
            }
        }
    }
}

/// How source `index` is placed on the common timeline (the first source's clock):
/// `offset +4.000000 s · drift +0.000 ppm · by clock value`. The offset is where its time
/// zero lies; "by clock value" when its clock is of the same kind as an earlier source's,
/// "aligned" when the user moved it, "own origin" when nothing relates its clock to the
/// others, "reference" for the first source.
pub fn placement_text(sources: &[SourceView], index: usize) -> String {
    let Some(sv) = sources.get(index) else { return String::new() };
    let earlier: Vec<Placed<'_>> =
        sources[..index].iter().map(|s| Placed::new(s.source(), s.placement)).collect();
    let p = sv.placement;
    let how = if p != Placement::by_clock(&earlier, sv.source()) {
        "aligned".to_owned()
    } else if let Some(e) = earlier.iter().find(|e| e.source.origin.offset_to(sv.source().origin).is_some()) {
        format!("by clock value, as {}", e.source.name)
    } else if index == 0 {
        "reference".to_owned()
    } else {
        "own origin".to_owned()
    };
    let sign = if p.offset < 0 { "-" } else { "+" };
    format!("offset {sign}{} · drift {:+.3} ppm · {how}", format_seconds(p.offset.abs()), p.drift_ppm)
}

/// Where lanes are on screen this frame, for keyboard actions that need the layout.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub data_left: f32,
    pub data_width: f32,
    /// The whole timeline (ruler, gutter and lanes) this frame, for the timeline PNG.
    pub rect: Option<Rect>,
    /// Top of the first lane (below the ruler), before scrolling.
    pub lanes_top: f32,
    /// How far the lanes can scroll down (points).
    pub max_scroll: f32,
    /// Where each visible lane was drawn (tests click on them).
    pub rows: Vec<(LaneId, Rect)>,
    /// Where the analysis arrow was drawn this frame, from its start to its end.
    pub arrow: Option<(Pos2, Pos2)>,
}

/// Height of a source's header row when several sources are open.
const HEADER_HEIGHT: f32 = 18.0;

/// The geometry of one frame: where the ruler, the gutter, each visible lane and each
/// source header are. Computed first; painting, hit-testing and input all read it.
struct Frame {
    full: Rect,
    data_left: f32,
    ruler: Rect,
    lanes: Rect,
    /// Visible lanes top to bottom.
    rows: Vec<(LaneId, Rect)>,
    /// Source headers (only with several sources): source index and row.
    headers: Vec<(usize, Rect)>,
    max_scroll: f32,
}

impl Frame {
    /// The data area (right of the gutter) below the ruler.
    fn data(&self) -> Rect {
        Rect::from_min_max(pos2(self.data_left, self.lanes.top()), self.lanes.max)
    }

    /// The lane under `p`.
    fn row_at(&self, p: Pos2) -> Option<LaneId> {
        self.rows.iter().find(|(_, r)| r.contains(p)).map(|&(id, _)| id)
    }

    fn as_layout(&self) -> Layout {
        Layout {
            data_left: self.data_left,
            data_width: (self.full.right() - self.data_left).max(1.0),
            rect: Some(self.full),
            lanes_top: self.lanes.top(),
            max_scroll: self.max_scroll,
            rows: self.rows.clone(),
            arrow: None,
        }
    }
}

/// Lays out the ruler and the visible lanes of `sources` in `full`, scrolled by `scroll`
/// (clamped to what there is to scroll).
fn lay_out(full: Rect, sources: &[SourceView], scroll: f32) -> Frame {
    let data_left = full.left() + GUTTER;
    let ruler =
        Rect::from_min_max(pos2(data_left, full.top()), pos2(full.right(), full.top() + RULER_HEIGHT));
    let lanes = Rect::from_min_max(pos2(full.left(), ruler.bottom()), full.max);
    let with_headers = sources.len() > 1;
    // Heights first, to know how far one can scroll.
    let total: f32 = sources
        .iter()
        .map(|sv| {
            let header = if with_headers { HEADER_HEIGHT } else { 0.0 };
            let visible = sv.lanes.iter().enumerate().filter(|(_, v)| v.visible);
            header + visible.filter_map(|(vi, _)| sv.data_lane(vi)).map(|l| l.height() + 1.0).sum::<f32>()
        })
        .sum();
    let max_scroll = (total - lanes.height() + 20.0).max(0.0);
    let mut y = lanes.top() - scroll.clamp(0.0, max_scroll);
    let (mut rows, mut headers) = (Vec::new(), Vec::new());
    for (si, sv) in sources.iter().enumerate() {
        if with_headers {
            headers.push((si, Rect::from_min_size(pos2(full.left(), y), vec2(full.width(), HEADER_HEIGHT))));
            y += HEADER_HEIGHT;
        }
        for (vi, v) in sv.lanes.iter().enumerate() {
            if !v.visible {
                continue;
            }
            let Some(lane) = sv.data_lane(vi) else { continue };
            let h = lane.height();
            rows.push((
                LaneId { source: si, lane: vi },
                Rect::from_min_size(pos2(full.left(), y), vec2(full.width(), h)),
            ));
            y += h + 1.0;
        }
    }
    Frame { full, data_left, ruler, lanes, rows, headers, max_scroll }
}

/// Paints the source headers: name, format and alignment.
fn paint_headers(painter: &egui::Painter, frame: &Frame, sources: &[SourceView]) {
    for &(si, r) in &frame.headers {
        let Some(sv) = sources.get(si) else { continue };
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
fn paint_lane(
    painter: &egui::Painter,
    frame: &Frame,
    k: usize,
    id: LaneId,
    rect: Rect,
    sv: &SourceView,
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
        generation: sv.generation,
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
fn arrow_end_y(frame: &Frame, sources: &[SourceView], source: usize, end: ArrowEnd) -> Option<f32> {
    let sv = sources.get(source)?;
    let src = sv.source();
    let rows = || frame.rows.iter().filter(|(id, _)| id.source == source);
    let lane_of = |id: &LaneId| sv.data_lane(id.lane);
    if let Some(i) = end.event {
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
            src.digital.get(*track).is_some_and(|d| d.times.binary_search(&end.t).is_ok())
        }
        _ => false,
    });
    edge.map(|(_, r)| r.center().y)
}

/// Paints markers, the two cursors, the span between them and the analysis arrow; returns
/// where the arrow was drawn.
fn paint_overlay(
    painter: &egui::Painter,
    frame: &Frame,
    vp: &Viewport,
    overlay: &Overlay,
    sources: &[SourceView],
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
    let arrow = overlay.arrow?;
    // On the lanes of the pair's events; an end whose lane is hidden takes the other end's,
    // and with neither the arrow goes on the source's first lane.
    let ya = arrow_end_y(frame, sources, arrow.source, arrow.start);
    let yb = arrow_end_y(frame, sources, arrow.source, arrow.end);
    let first = frame.rows.iter().find(|(id, _)| id.source == arrow.source).map(|(_, r)| r.top() + 12.0);
    let fallback = ya.or(yb).or(first).unwrap_or(frame.lanes.top() + 12.0);
    let (ya, yb) = (ya.unwrap_or(fallback), yb.unwrap_or(fallback));
    let (pa, pb) = (pos2(vp.x_of(data_left, arrow.a), ya), pos2(vp.x_of(data_left, arrow.b), yb));
    painter.with_clip_rect(frame.data()).arrow(pa, pb - pa, Stroke::new(2.0, theme::CURSOR_A));
    Some((pa, pb))
}

/// What is under the pointer at `p`, if it is over a lane's data.
fn hit_at(frame: &Frame, sources: &[SourceView], vp: &Viewport, p: Pos2) -> Option<Hit> {
    if p.x < frame.data_left || !frame.lanes.contains(p) {
        return None;
    }
    let &(id, rect) = frame.rows.iter().find(|(_, r)| r.contains(p))?;
    let sv = sources.get(id.source)?;
    let lane = sv.data_lane(id.lane)?;
    let t_src = sv.to_source(vp.t_of(frame.data_left, p.x));
    hit_test(sv, id.source, lane, rect, p, t_src, PICK_PX * vp.ps_per_px)
}

/// The messages of this frame's pointer input: the wheel zooms over data and scrolls over
/// the gutter, a drag pans, a click focuses a lane, picks an event and sets a cursor.
fn input(
    ui: &egui::Ui,
    resp: &egui::Response,
    frame: &Frame,
    sources: &[SourceView],
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
                msgs.push(Message::Zoom { factor: (-f64::from(dy) * 0.004).exp(), at });
            }
            if zoom_delta != 1.0 {
                msgs.push(Message::Zoom { factor: 1.0 / f64::from(zoom_delta), at });
            }
            let dx = if shift { scroll_delta.y + scroll_delta.x } else { scroll_delta.x };
            if dx != 0.0 {
                msgs.push(Message::PanBy(-f64::from(dx) * vp.ps_per_px));
            }
        } else if scroll_delta.y != 0.0 {
            msgs.push(Message::ScrollLanes(-scroll_delta.y));
        }
    }
    if resp.dragged() {
        let d = resp.drag_delta();
        if d.x != 0.0 {
            msgs.push(Message::PanBy(-f64::from(d.x) * vp.ps_per_px));
        }
        if d.y != 0.0 {
            msgs.push(Message::ScrollLanes(-d.y));
        }
    }
    if resp.clicked()
        && let Some(p) = resp.interact_pointer_pos()
    {
        let shift = ui.input(|i| i.modifiers.shift);
        if let Some(id) = frame.row_at(p) {
            msgs.push(Message::FocusLane(id));
        }
        if p.x >= data_left {
            let mut t = vp.t_of(data_left, p.x);
            if let Some(Hit::Event(sel)) = hovered {
                msgs.push(Message::SelectEvent(*sel));
                if let Some(sv) = sources.get(sel.source)
                    && let Some(&ts) = sv.source().events.ts.get(sel.index)
                {
                    t = sv.to_common(ts);
                }
            }
            if let Some(Hit::Slice { event: Some(index), source, .. }) = hovered {
                msgs.push(Message::SelectEvent(EventSel { source: *source, index: *index }));
            }
            msgs.push(Message::SetCursor(if shift { CursorId::B } else { CursorId::A }, t));
        }
    }
    if resp.secondary_clicked()
        && let Some(p) = resp.interact_pointer_pos()
    {
        if p.x >= data_left {
            msgs.push(Message::SetCursor(CursorId::B, vp.t_of(data_left, p.x)));
        } else if let Some(id) = frame.row_at(p)
            && sources
                .get(id.source)
                .and_then(|sv| sv.data_lane(id.lane))
                .is_some_and(|l| l.kind.class() == LaneClass::Analog)
        {
            // Right click on an analog lane's name: derive a digital lane from it.
            msgs.push(Message::OpenDeriveDigital(id));
        }
    }
    msgs
}

/// Draws the ruler and lanes into `ui`'s remaining space; returns messages. `cache` keeps
/// lane meshes between frames and `layout` receives where things were drawn: both are the
/// view's own bookkeeping, not state a message changes.
#[allow(clippy::too_many_arguments)]
pub fn show(
    ui: &mut egui::Ui,
    sources: &[SourceView],
    vp: &Viewport,
    overlay: &Overlay,
    scroll: f32,
    cache: &mut MeshCache,
    layout: &mut Layout,
) -> Vec<Message> {
    let full = ui.available_rect_before_wrap();
    let (resp, painter) = ui.allocate_painter(full.size(), Sense::click_and_drag());
    let frame = lay_out(resp.rect, sources, scroll);
    *layout = frame.as_layout();

    painter.rect_filled(frame.full, 0.0, theme::BG);
    ruler(&painter, frame.ruler, vp, sources.first());
    let lane_painter = painter.with_clip_rect(frame.lanes);
    paint_headers(&lane_painter, &frame, sources);
    for (k, &(id, rect)) in frame.rows.iter().enumerate() {
        if rect.bottom() < frame.lanes.top() || rect.top() > frame.lanes.bottom() {
            continue;
        }
        if let Some(sv) = sources.get(id.source) {
            paint_lane(&lane_painter, &frame, k, id, rect, sv, vp, overlay, cache);
        }
    }
    let pointer = resp.hover_pos();
    let hovered = pointer.and_then(|p| hit_at(&frame, sources, vp, p));
    let band_label = draw_bands(&painter, frame.data(), &frame.rows, &overlay.bands, vp, pointer);
    layout.arrow = paint_overlay(&painter, &frame, vp, overlay, sources);
    let msgs = input(ui, &resp, &frame, sources, vp, hovered.as_ref());

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

/// Where the next (`forward`) or previous edge/event of a lane is, after/before `t`
/// (source-relative ps).
pub fn step_edge(lane: &Lane, src: &Source, t: Ps, forward: bool) -> Option<(Ps, Option<usize>)> {
    let pick = |times: &[Ps]| -> Option<usize> {
        if forward {
            let i = times.partition_point(|&x| x <= t);
            (i < times.len()).then_some(i)
        } else {
            times.partition_point(|&x| x < t).checked_sub(1)
        }
    };
    let events = |ev: &[u32]| -> Option<(Ps, Option<usize>)> {
        let ts = &src.events.ts;
        let i = if forward {
            lod::lower_bound(ev.len(), |i| ts[ev[i] as usize] <= t)
        } else {
            lod::lower_bound(ev.len(), |i| ts[ev[i] as usize] < t).checked_sub(1)?
        };
        let e = *ev.get(i)? as usize;
        Some((ts[e], Some(e)))
    };
    match &lane.kind {
        LaneKind::Cpu(c) => events(&c.events),
        LaneKind::Events(e) => events(&e.events),
        LaneKind::Digital { track, .. } => {
            let d = src.digital.get(*track)?;
            pick(&d.times).map(|i| (d.times[i], None))
        }
        LaneKind::Spans { rows, .. } => {
            let mut best: Option<Ps> = None;
            for r in rows {
                if let Some(i) = pick(&r.start) {
                    let s = r.start[i];
                    best = Some(match best {
                        Some(b) if forward => b.min(s),
                        Some(b) => b.max(s),
                        None => s,
                    });
                }
            }
            best.map(|b| (b, None))
        }
        LaneKind::Analog { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(step_ps: f64, max_abs_s: f64, times_s: &[f64]) -> Vec<String> {
        let u = RulerUnits::for_view(step_ps, max_abs_s);
        times_s.iter().map(|&t| u.label(t)).collect()
    }

    #[test]
    fn ruler_labels_use_the_unit_of_the_step_within_the_first_second() {
        // A GHDL waveform: 50 ns ticks over 400 ns.
        assert_eq!(labels(50e3, 400e-9, &[0.0, 50e-9, 100e-9]), ["0 ns", "50 ns", "100 ns"]);
        // The unit is the largest the step fills, so labels are whole numbers.
        assert_eq!(labels(500e3, 0.04, &[0.0, 1.5e-6]), ["0 ns", "1500 ns"]);
        assert_eq!(labels(2e6, 0.04, &[0.0, 38.856e-3]), ["0 us", "38856 us"]);
        assert_eq!(labels(5e9, 0.04, &[0.0, 0.035]), ["0 ms", "35 ms"]);
        assert_eq!(labels(200.0, 1e-9, &[0.0, 6e-10]), ["0 ps", "600 ps"]);
        assert_eq!(labels(50e3, 400e-9, &[-1e-15]), ["0 ns"], "no -0");
    }

    #[test]
    fn analog_ranges_print_whole_numbers_without_decimals() {
        assert_eq!(analog_range_label(0.0, 3.0), "0..3");
        assert_eq!(analog_range_label(-8.0, 4294967288.0), "-8..4294967288");
        assert_eq!(analog_range_label(-2.734, 1.953), "-2.734..1.953");
        assert_eq!(analog_range_label(0.0, 2.5), "0.000..2.500");
    }

    #[test]
    fn ruler_labels_stay_in_seconds_on_uptime_clocks() {
        // ftrace at 533 s: 0.2 s ticks, then 1 us ticks zoomed in.
        assert_eq!(labels(0.2e12, 534.3, &[533.0, 533.2]), ["533.0", "533.2"]);
        assert_eq!(labels(1e6, 533.9, &[533.891480]), ["533.891480"]);
    }
}
