//! The workbench's state, one room per concern: the sources and the view of them
//! ([`ViewState`]), the analysis ([`AnalysisState`]), the dialogs ([`Dialogs`]). The
//! simulator's and the table's rooms live beside their views ([`super::sim_panel::SimState`],
//! [`super::table::TableState`]). Each room's handler applies the messages that concern only
//! that room; `super::update` dispatches to them.

use super::align_dialog::AlignDialog;
use super::analysis::{self, AnalysisResult, DrawnPlot, PanelView, RuleEditor};
use super::derive_dialog::DeriveDialog;
use super::file_browser::FileBrowser;
use super::jobs::SourceStamp;
use super::message::{CursorId, DerivedLane, LaneId, Message, PanelId};
use super::prepare::Prepared;
use super::timeline::{Arrow, Layout, MeshCache, Overlay, SourceView, Viewport};
use latscope_analysis::align::Alignment;
use latscope_model::{Placed, Placement};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

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

/// The sources and how they are viewed: lanes, viewport, cursors, markers, panels.
#[derive(Debug)]
pub struct ViewState {
    pub sources: Vec<SourceView>,
    pub viewport: Viewport,
    pub overlay: Overlay,
    /// Where the timeline was drawn last frame (written by the timeline as it lays out).
    pub layout: Layout,
    /// Lane meshes kept between frames (written by the timeline as it draws).
    pub cache: MeshCache,
    /// How far the lanes are scrolled down, points.
    pub scroll: f32,
    pub panels: Panels,
    /// The alignment in force (rules then run across the sources together), if any.
    pub alignment: Option<Alignment>,
    /// Counts data replacements; a source's generation is taken from it.
    generation: u64,
    /// The view has been fitted to data once (first load); later loads keep the view.
    pub(super) fitted: bool,
    /// Fit again once the timeline's width is known (the first fit may precede layout).
    pub(super) refit: bool,
    /// What the view was last set to show (everything, or a range such as a pair), the
    /// viewport that set, and the timeline's width it was set for.
    pub(super) last_shown: Option<(Shown, Viewport, f32)>,
    /// Loads that finished before one started earlier: sources join the timeline in the
    /// order their files were given (A/B and source numbers follow the command line).
    pub(super) finished_loads: BTreeMap<u64, (PathBuf, Arc<Prepared>)>,
    /// Derived tracks waiting to be added to their source in place: a job still reads it.
    pub(super) pending_derived: Vec<(SourceStamp, DerivedLane)>,
    /// The source showing a load's preview, by the load's ticket id: the loaded source
    /// replaces it.
    pub(super) previews: BTreeMap<u64, usize>,
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            sources: Vec::new(),
            viewport: Viewport::default(),
            overlay: Overlay::default(),
            layout: Layout::default(),
            cache: MeshCache::default(),
            scroll: 0.0,
            panels: Panels::default(),
            alignment: None,
            generation: 1,
            fitted: false,
            refit: false,
            last_shown: None,
            finished_loads: BTreeMap::new(),
            pending_derived: Vec::new(),
            previews: BTreeMap::new(),
        }
    }
}

impl ViewState {
    /// A fresh generation for a source whose data changed (invalidates its cached meshes and
    /// makes jobs that read the old data stale).
    pub(super) fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }

    /// Adds a source where its clock puts it: by its clock values when an earlier source
    /// reads the same kind of clock (two ftrace captures of one machine), else at its own
    /// origin.
    pub(super) fn add_source(&mut self, prepared: Arc<Prepared>) -> usize {
        let generation = self.next_generation();
        let placement = Placement::by_clock(&self.placed(), &prepared.source);
        let mut sv = SourceView::new(prepared, generation);
        sv.placement = placement;
        self.sources.push(sv);
        self.sources.len() - 1
    }

    /// What the workbench calls each source: names first, numbers only where names repeat
    /// (as reports do).
    pub fn labels(&self) -> Vec<String> {
        latscope_analysis::runner::labels(&self.placed())
    }

    /// The sources with their placements, borrowed.
    pub fn placed(&self) -> Vec<Placed<'_>> {
        self.sources.iter().map(|sv| Placed::new(sv.source(), sv.placement)).collect()
    }

    /// Where source `index` sits by its clock, after the sources before it as placed.
    pub fn clock_placement(&self, index: usize) -> Placement {
        let placed = self.placed();
        match placed.get(index) {
            Some(p) => Placement::by_clock(&placed[..index], p.source),
            None => Placement::IDENTITY,
        }
    }

    /// Takes away the preview of load `ticket_id`, if one is shown: a preview is always the
    /// last source (it is shown only for the one load running).
    pub(super) fn drop_preview(&mut self, ticket_id: u64) {
        if let Some(i) = self.previews.remove(&ticket_id)
            && i + 1 == self.sources.len()
        {
            self.sources.pop();
            self.fitted &= !self.sources.is_empty();
        }
    }

    /// Replaces the data of source `index` (keeping the user's lane choices).
    pub(super) fn replace_source(&mut self, index: usize, prepared: Arc<Prepared>) {
        let generation = self.next_generation();
        if let Some(sv) = self.sources.get_mut(index) {
            sv.replace(prepared, generation);
        }
    }

    /// Moves source `index` on the common timeline: only its placement changes (no data is
    /// touched); its cached meshes were drawn at the old place, so they are invalidated, but
    /// jobs that read its data stay current.
    pub(super) fn place_source(&mut self, index: usize, placement: Placement) {
        let generation = self.next_generation();
        if let Some(sv) = self.sources.get_mut(index)
            && sv.placement != placement
        {
            sv.placement = placement;
            sv.generation = generation;
        }
    }

    /// What a job reading source `index` now reads.
    /// Whether no derived track waits for its source (see `Workbench::add_pending_derived`).
    pub fn pending_derived_is_empty(&self) -> bool {
        self.pending_derived.is_empty()
    }

    pub(super) fn stamp(&self, index: usize) -> Option<SourceStamp> {
        self.sources.get(index).map(|sv| SourceStamp { index, generation: sv.data_generation })
    }

    /// Whether source `stamp.index` still holds the data the stamp was taken of.
    pub(super) fn is_current(&self, stamp: SourceStamp) -> bool {
        self.sources.get(stamp.index).is_some_and(|sv| sv.data_generation == stamp.generation)
    }

    pub(super) fn data_width(&self) -> f64 {
        if self.layout.data_width > 1.0 { f64::from(self.layout.data_width) } else { 1200.0 }
    }

    /// The common-timeline range of everything loaded.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        let mut out: Option<(f64, f64)> = None;
        for sv in &self.sources {
            if let Some((a, b)) = sv.source().time_range() {
                let (a, b) = (sv.to_common(a), sv.to_common(b));
                out = Some(match out {
                    Some((lo, hi)) => (lo.min(a), hi.max(b)),
                    None => (a, b),
                });
            }
        }
        out
    }

    pub(super) fn show_range(&mut self, from: f64, to: f64) {
        self.set_range(from, to);
        self.last_shown = Some((Shown::Range(from, to), self.viewport, self.layout.data_width));
    }

    fn set_range(&mut self, from: f64, to: f64) {
        let span = (to - from).max(1.0);
        self.viewport.ps_per_px = span / self.data_width();
        self.viewport.start = from;
    }

    pub(super) fn fit_all(&mut self) {
        if let Some((a, b)) = self.time_range() {
            let pad = (b - a).max(1.0) * 0.01;
            self.set_range(a - pad, b + pad);
            self.last_shown = Some((Shown::All, self.viewport, self.layout.data_width));
        }
    }

    /// A view still as "fit all" or a shown range (a pair, a worst case) left it (the user
    /// has not zoomed or panned since) keeps showing the same when the timeline's width
    /// changes (a panel opened, the window resized). Returns whether it changed the view.
    pub(super) fn keep_shown(&mut self) -> bool {
        let width = self.layout.data_width;
        match self.last_shown {
            Some((shown, vp, w)) if vp == self.viewport && width > 1.0 && (w - width).abs() > 0.5 => {
                match shown {
                    Shown::All => self.fit_all(),
                    Shown::Range(from, to) => self.show_range(from, to),
                }
                true
            }
            _ => false,
        }
    }

    pub(super) fn center_on(&mut self, t: f64) {
        self.viewport.start = t - self.viewport.ps_per_px * self.data_width() / 2.0;
    }

    pub(super) fn ensure_visible(&mut self, t: f64) {
        let end = self.viewport.start + self.viewport.ps_per_px * self.data_width();
        if t < self.viewport.start || t > end {
            self.center_on(t);
        }
    }

    /// The middle of the view (common time).
    fn view_centre(&self) -> f64 {
        self.viewport.start + self.viewport.ps_per_px * self.data_width() / 2.0
    }

    /// Shows the pair `arrow`: the view around it, cursors on its ends and the arrow
    /// between them (drawn while the cursors stay there).
    pub(super) fn show_pair(&mut self, arrow: Arrow) {
        let (a, b) = (arrow.a, arrow.b);
        let pad = (b - a).max(1000.0) * 1.5;
        self.show_range(a - pad, b + pad);
        self.overlay.cursor_a = Some(a);
        self.overlay.cursor_b = Some(b);
        self.overlay.arrow = Some(arrow);
    }

    /// The arrow marks the pair the cursors are on: once either cursor moves off it, it goes.
    pub(super) fn drop_stale_arrow(&mut self) {
        let o = &mut self.overlay;
        if o.arrow.is_some_and(|ar| o.cursor_a != Some(ar.a) || o.cursor_b != Some(ar.b)) {
            o.arrow = None;
        }
    }

    /// Shades the analyses' stall windows and polling loops on the timeline.
    pub(super) fn refresh_bands(&mut self, results: &[AnalysisResult]) {
        let sources = &self.sources;
        self.overlay.bands = analysis::bands(results, |i, t| sources.get(i).map(|sv| sv.to_common(t)));
    }
}

/// What a view was set to show, so that it can show it again at another width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Shown {
    /// Everything loaded (`fit_all`).
    All,
    /// A common-time range.
    Range(f64, f64),
}

/// Applies a message that concerns only the view: zoom, pan, cursors, lanes, markers, panels.
pub fn update_view(view: &mut ViewState, msg: Message) {
    match msg {
        Message::Zoom { factor, at } => {
            let at = if at.is_finite() { at } else { view.view_centre() };
            view.viewport.zoom(factor, at);
        }
        Message::PanFraction(f) => view.viewport.start += f * view.viewport.ps_per_px * view.data_width(),
        Message::PanBy(d) => view.viewport.start += d,
        Message::FitAll => view.fit_all(),
        Message::ShowRange(a, b) => view.show_range(a, b),
        Message::CenterOn(t) => view.center_on(t),
        Message::SetCursor(CursorId::A, t) => view.overlay.cursor_a = Some(t),
        Message::SetCursor(CursorId::B, t) => view.overlay.cursor_b = Some(t),
        Message::ClearCursors => {
            view.overlay.cursor_a = None;
            view.overlay.cursor_b = None;
            view.overlay.arrow = None;
        }
        Message::FocusLane(id) => view.overlay.focused = Some(id),
        Message::ToggleLane(id) => {
            if let Some(v) = view.sources.get_mut(id.source).and_then(|s| s.lanes.get_mut(id.lane)) {
                v.visible = !v.visible;
            }
        }
        Message::MoveLane(id, by) => {
            if let Some(sv) = view.sources.get_mut(id.source) {
                let to = id.lane.saturating_add_signed(by).min(sv.lanes.len().saturating_sub(1));
                if id.lane < sv.lanes.len() {
                    let v = sv.lanes.remove(id.lane);
                    sv.lanes.insert(to, v);
                    if view.overlay.focused == Some(id) {
                        view.overlay.focused = Some(LaneId { source: id.source, lane: to });
                    }
                }
            }
        }
        Message::RenameLane(id, name) => {
            if let Some(v) = view.sources.get_mut(id.source).and_then(|s| s.lanes.get_mut(id.lane)) {
                v.name = name;
            }
        }
        Message::SetLaneColor(id, color) => {
            if let Some(v) = view.sources.get_mut(id.source).and_then(|s| s.lanes.get_mut(id.lane)) {
                v.color = color;
            }
        }
        Message::ScrollLanes(by) => {
            view.scroll = (view.scroll + by).clamp(0.0, view.layout.max_scroll);
        }
        Message::AddMarker => {
            let t = view.overlay.cursor_a.unwrap_or_else(|| view.view_centre());
            let name = format!("M{}", view.overlay.markers.len() + 1);
            view.overlay.markers.push((name, t));
        }
        Message::RenameMarker(i, name) => {
            if let Some(m) = view.overlay.markers.get_mut(i) {
                m.0 = name;
            }
        }
        Message::RemoveMarker(i) => {
            if i < view.overlay.markers.len() {
                view.overlay.markers.remove(i);
            }
        }
        Message::JumpMarker(i) => {
            if let Some(&(_, t)) = view.overlay.markers.get(i) {
                view.center_on(t);
            }
        }
        Message::TogglePanel(p) => {
            let flag = match p {
                PanelId::Tracks => &mut view.panels.tracks,
                PanelId::Table => &mut view.panels.table,
                PanelId::Analysis => &mut view.panels.analysis,
                PanelId::Simulator => &mut view.panels.simulator,
                PanelId::Log => &mut view.panels.log,
            };
            *flag = !*flag;
        }
        other => debug_assert!(false, "not a view message: {other:?}"),
    }
}

/// The analysis: the rules, their results and the panel's plot choices.
#[derive(Debug)]
pub struct AnalysisState {
    /// The rules the analysis panel runs.
    pub rules: RuleEditor,
    /// Shared, so an export's worker takes them without a copy on the UI thread.
    pub results: Arc<Vec<AnalysisResult>>,
    /// The sources the results were computed from: what an export reports on.
    pub inputs: Vec<Arc<Prepared>>,
    /// The placements `inputs` were analysed at (their alignment), in order.
    pub placements: Vec<Placement>,
    /// The panel's plot choices.
    pub panel: PanelView,
    /// Where the panel drew its plots last frame (written by the panel as it draws).
    pub drawn: Vec<DrawnPlot>,
    /// Presets that could not run: what they miss and how to record it.
    pub missing: Vec<String>,
    /// The rules are the workbench's choice (the presets the sources hold), not the
    /// user's: opening files chooses them again.
    pub chosen_by_files: bool,
    /// Sources joined since the presets were last chosen: choose them again once the
    /// loads are done.
    pub(super) presets_due: bool,
}

impl Default for AnalysisState {
    fn default() -> Self {
        Self {
            rules: RuleEditor::default(),
            results: Arc::default(),
            inputs: Vec::new(),
            placements: Vec::new(),
            panel: PanelView::default(),
            drawn: Vec::new(),
            missing: Vec::new(),
            chosen_by_files: true,
            presets_due: false,
        }
    }
}

impl AnalysisState {
    /// Forgets the results (the sources they describe changed or are gone).
    pub(super) fn clear(&mut self) {
        self.results = Arc::default();
        self.inputs.clear();
        self.placements.clear();
        self.missing.clear();
        if self.chosen_by_files {
            self.rules.specs.clear();
        }
    }
}

/// The dialogs and the palette: what they show while open.
#[derive(Debug, Default)]
pub struct Dialogs {
    pub palette_open: bool,
    pub palette_query: String,
    pub align: AlignDialog,
    pub derive: DeriveDialog,
    pub decoder: super::decoder_dialog::DecoderDialog,
    /// The in-window file browser, when the desktop has no dialog.
    pub browser: Option<FileBrowser>,
}

/// Applies a message that concerns only the dialogs.
pub fn update_dialogs(dialogs: &mut Dialogs, msg: Message) {
    match msg {
        Message::TogglePalette => {
            dialogs.palette_open = !dialogs.palette_open;
            dialogs.palette_query.clear();
        }
        Message::ClosePalette => {
            dialogs.palette_open = false;
            dialogs.palette_query.clear();
        }
        Message::PaletteQuery(q) => dialogs.palette_query = q,
        Message::EditAlign(d) => dialogs.align = d,
        Message::EditDerive(d) => dialogs.derive = d,
        Message::EditDecoder(d) => dialogs.decoder = d,
        other => debug_assert!(false, "not a dialog message: {other:?}"),
    }
}
