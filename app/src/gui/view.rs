//! The view of the document: which lanes of each source are shown and how (order, name,
//! colour), the visible time range, the cursors, markers, selection and shaded windows, the
//! lanes' scroll and which panels are open. It names sources by [`SourceId`]; what a source
//! holds is the document's. [`SourceView`] joins the two for the views that draw a source.

use super::document::{DocSource, Document, SourceId};
use super::prepare::{Lane, Prepared};
use super::theme::{ThemeKind, lane_default};
use egui::Color32;
use latscope_model::{Placement, Ps, Source};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Which of the two measurement cursors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorId {
    A,
    B,
}

/// A lane: its source and its place in that source's lane list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaneId {
    pub source: SourceId,
    pub lane: usize,
}

/// A selected event: its source and index in that source's event table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventSel {
    pub source: SourceId,
    pub index: usize,
}

/// Panels that can be shown or hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelId {
    Tracks,
    Table,
    Analysis,
    Simulator,
    /// Every error and warning of the session.
    Log,
}

/// Which panels are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panels {
    pub tracks: bool,
    pub table: bool,
    pub analysis: bool,
    pub simulator: bool,
    pub log: bool,
}

impl Default for Panels {
    fn default() -> Self {
        Self { tracks: true, table: true, analysis: false, simulator: false, log: false }
    }
}

impl Panels {
    pub fn flag(&mut self, p: PanelId) -> &mut bool {
        match p {
            PanelId::Tracks => &mut self.tracks,
            PanelId::Table => &mut self.table,
            PanelId::Analysis => &mut self.analysis,
            PanelId::Simulator => &mut self.simulator,
            PanelId::Log => &mut self.log,
        }
    }
}

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
    /// Kept at the top of the timeline while the other lanes scroll (Perfetto's pin).
    pub pinned: bool,
    pub color: Color32,
    pub name: String,
}

/// The lanes of `prepared`, all shown, in their prepared order, in `theme`'s colours.
pub fn default_lanes(prepared: &Prepared, theme: ThemeKind) -> Vec<LaneView> {
    let lane = |(i, l): (usize, &Lane)| LaneView {
        lane: i,
        visible: true,
        pinned: false,
        color: lane_default(l.color, theme),
        name: l.name.clone(),
    };
    prepared.lanes.iter().enumerate().map(lane).collect()
}

/// The lanes of new data, keeping the user's choices for lanes whose names still exist.
pub fn carried_lanes(prepared: &Prepared, old: &[LaneView], theme: ThemeKind) -> Vec<LaneView> {
    let mut fresh = default_lanes(prepared, theme);
    for v in &mut fresh {
        if let Some(o) = old.iter().find(|o| o.name == v.name) {
            v.visible = o.visible;
            v.pinned = o.pinned;
            v.color = o.color;
        }
    }
    fresh
}

/// A source as the views draw it: the document's source with the view's lanes of it.
#[derive(Debug, Clone, Copy)]
pub struct SourceView<'a> {
    pub id: SourceId,
    pub prepared: &'a Arc<Prepared>,
    pub placement: Placement,
    pub data_generation: u64,
    /// How it was placed, when neither its clock nor an alignment did.
    pub placed_by: Option<&'a str>,
    /// Lanes in display order.
    pub lanes: &'a [LaneView],
}

impl<'a> SourceView<'a> {
    pub fn of(doc: &'a DocSource, lanes: &'a [LaneView]) -> Self {
        Self {
            id: doc.id,
            prepared: &doc.prepared,
            placement: doc.placement,
            data_generation: doc.data_generation,
            placed_by: doc.placed_by.as_deref(),
            lanes,
        }
    }
    pub fn source(&self) -> &'a Source {
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
    pub fn data_lane(&self, view: usize) -> Option<&'a Lane> {
        self.prepared.lanes.get(self.lanes.get(view)?.lane)
    }
}

/// Source `id` among `sources`.
pub fn find<'a>(sources: &[SourceView<'a>], id: SourceId) -> Option<SourceView<'a>> {
    sources.iter().find(|s| s.id == id).copied()
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
    /// The pairs the selected event is an end of, as flows (Perfetto's arrows): the other
    /// end of each pair, and the chains it starts or ends.
    pub related: Vec<Related>,
}

/// A pair the selected event belongs to: the analysis, its latency, and the arrow.
#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    pub analysis: String,
    pub latency_ps: Ps,
    pub arrow: Arrow,
}

/// A pair of an analysis drawn as an arrow from its start to its end, on the lanes of the
/// events (or edges) it pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrow {
    pub source: SourceId,
    /// Common times of the start and the end (where the cursors are put).
    pub a: f64,
    pub b: f64,
    pub start: ArrowEnd,
    pub end: ArrowEnd,
}

/// One end of an [`Arrow`]: its time (relative to the arrow's source), and the event there
/// when it is one, in whichever source holds it (a pair across sources ends in the other);
/// an edge of a digital track is found by its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrowEnd {
    pub t: Ps,
    pub event: Option<EventSel>,
}

/// A time window shaded over the lanes of one source, with what it is on hover.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub source: SourceId,
    /// Common time, ps.
    pub start: f64,
    pub end: f64,
    pub color: Color32,
    pub label: String,
}

/// What a view was set to show, so that it can show it again at another width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shown {
    /// Everything loaded.
    All,
    /// A common-time range.
    Range(f64, f64),
}

/// How the document is viewed.
#[derive(Debug)]
pub struct ViewState {
    /// The lanes of each source, in display order.
    pub lanes: FxHashMap<SourceId, Vec<LaneView>>,
    pub viewport: Viewport,
    pub overlay: Overlay,
    /// How far the lanes are scrolled down, points.
    pub scroll: f32,
    pub panels: Panels,
    /// The width of the timeline's data area, points, as last laid out.
    pub width: f32,
    /// How far the lanes could scroll, as last laid out.
    pub max_scroll: f32,
    /// The view has been fitted to data once (first load); later loads keep the view.
    pub fitted: bool,
    /// Fit again once the timeline's width is known (the first fit may precede layout).
    pub refit: bool,
    /// What the view was last set to show (everything, or a range such as a pair), the
    /// viewport that set, and the width it was set for.
    pub last_shown: Option<(Shown, Viewport, f32)>,
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            lanes: FxHashMap::default(),
            viewport: Viewport::default(),
            overlay: Overlay::default(),
            scroll: 0.0,
            panels: Panels::default(),
            width: 0.0,
            max_scroll: 0.0,
            fitted: false,
            refit: false,
            last_shown: None,
        }
    }
}

impl ViewState {
    /// The lanes of source `id` (none for an unknown source).
    pub fn lanes_of(&self, id: SourceId) -> &[LaneView] {
        self.lanes.get(&id).map_or(&[], Vec::as_slice)
    }

    /// The view of lane `id`.
    pub fn lane_mut(&mut self, id: LaneId) -> Option<&mut LaneView> {
        self.lanes.get_mut(&id.source)?.get_mut(id.lane)
    }

    /// The document's sources with their lanes, in timeline order.
    pub fn shown<'a>(&'a self, doc: &'a Document) -> Vec<SourceView<'a>> {
        doc.sources.iter().map(|s| SourceView::of(s, self.lanes_of(s.id))).collect()
    }

    pub fn data_width(&self) -> f64 {
        if self.width > 1.0 { f64::from(self.width) } else { 1200.0 }
    }

    pub fn show_range(&mut self, from: f64, to: f64) {
        self.set_range(from, to);
        self.last_shown = Some((Shown::Range(from, to), self.viewport, self.width));
    }

    fn set_range(&mut self, from: f64, to: f64) {
        let span = (to - from).max(1.0);
        self.viewport.ps_per_px = span / self.data_width();
        self.viewport.start = from;
    }

    pub fn fit_all(&mut self, doc: &Document) {
        if let Some((a, b)) = doc.time_range() {
            let pad = (b - a).max(1.0) * 0.01;
            self.set_range(a - pad, b + pad);
            self.last_shown = Some((Shown::All, self.viewport, self.width));
        }
    }

    /// A view still as "fit all" or a shown range (a pair, a worst case) left it (the user
    /// has not zoomed or panned since) keeps showing the same when the timeline's width
    /// changes (a panel opened, the window resized). Returns whether it changed the view.
    pub fn keep_shown(&mut self, doc: &Document) -> bool {
        let width = self.width;
        match self.last_shown {
            Some((shown, vp, w)) if vp == self.viewport && width > 1.0 && (w - width).abs() > 0.5 => {
                match shown {
                    Shown::All => self.fit_all(doc),
                    Shown::Range(from, to) => self.show_range(from, to),
                }
                true
            }
            _ => false,
        }
    }

    pub fn center_on(&mut self, t: f64) {
        self.viewport.start = t - self.viewport.ps_per_px * self.data_width() / 2.0;
    }

    pub fn ensure_visible(&mut self, t: f64) {
        let end = self.viewport.start + self.viewport.ps_per_px * self.data_width();
        if t < self.viewport.start || t > end {
            self.center_on(t);
        }
    }

    /// The middle of the view (common time).
    pub fn view_centre(&self) -> f64 {
        self.viewport.start + self.viewport.ps_per_px * self.data_width() / 2.0
    }

    /// Shows the pair `arrow`: the view around it, cursors on its ends and the arrow
    /// between them (drawn while the cursors stay there).
    pub fn show_pair(&mut self, arrow: Arrow) {
        let (a, b) = (arrow.a, arrow.b);
        let pad = (b - a).max(1000.0) * 1.5;
        self.show_range(a - pad, b + pad);
        self.overlay.cursor_a = Some(a);
        self.overlay.cursor_b = Some(b);
        self.overlay.arrow = Some(arrow);
    }

    /// The arrow marks the pair the cursors are on: once either cursor moves off it, it goes.
    pub fn drop_stale_arrow(&mut self) {
        let o = &mut self.overlay;
        if o.arrow.is_some_and(|ar| o.cursor_a != Some(ar.a) || o.cursor_b != Some(ar.b)) {
            o.arrow = None;
        }
    }
}
