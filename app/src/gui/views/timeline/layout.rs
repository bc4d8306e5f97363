//! The geometry of one frame: where the ruler, the gutter, each visible lane and each
//! source header are. Computed first; painting, hit-testing and input all read it.

use super::{GUTTER, RULER_HEIGHT};
use crate::gui::document::SourceId;
use crate::gui::view::{LaneId, SourceView};
use egui::{Pos2, Rect, pos2, vec2};

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
pub(super) const HEADER_HEIGHT: f32 = 18.0;

/// The geometry of one frame: where the ruler, the gutter, each visible lane and each
/// source header are. Computed first; painting, hit-testing and input all read it.
pub(super) struct Frame {
    pub(super) full: Rect,
    pub(super) data_left: f32,
    pub(super) ruler: Rect,
    pub(super) lanes: Rect,
    /// Where the lanes that scroll are drawn: below the pinned ones.
    pub(super) scrolled: Rect,
    /// Visible lanes top to bottom: the pinned ones first (fixed below the ruler), then
    /// the others as scrolled.
    pub(super) rows: Vec<(LaneId, Rect)>,
    /// How many of `rows` are pinned.
    pub(super) pinned: usize,
    /// Source headers (only with several sources): source and row.
    pub(super) headers: Vec<(SourceId, Rect)>,
    pub(super) max_scroll: f32,
}

impl Frame {
    /// The data area (right of the gutter) below the ruler.
    pub(super) fn data(&self) -> Rect {
        Rect::from_min_max(pos2(self.data_left, self.lanes.top()), self.lanes.max)
    }

    /// The lane under `p`.
    pub(super) fn row_at(&self, p: Pos2) -> Option<LaneId> {
        self.rows.iter().find(|(_, r)| r.contains(p)).map(|&(id, _)| id)
    }

    pub(super) fn as_layout(&self) -> Layout {
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
pub(super) fn lay_out(full: Rect, sources: &[SourceView<'_>], scroll: f32) -> Frame {
    let data_left = full.left() + GUTTER;
    let ruler =
        Rect::from_min_max(pos2(data_left, full.top()), pos2(full.right(), full.top() + RULER_HEIGHT));
    let lanes = Rect::from_min_max(pos2(full.left(), ruler.bottom()), full.max);
    let with_headers = sources.len() > 1;
    let shown = |sv: &SourceView<'_>, pinned: bool| {
        let lanes = sv.lanes.iter().enumerate().filter(move |(_, v)| v.visible && v.pinned == pinned);
        lanes.filter_map(|(vi, _)| Some((vi, sv.data_lane(vi)?.height()))).collect::<Vec<_>>()
    };
    // Pinned lanes first, fixed below the ruler.
    let mut rows = Vec::new();
    let mut y = lanes.top();
    for sv in sources {
        for (vi, h) in shown(sv, true) {
            rows.push((
                LaneId { source: sv.id, lane: vi },
                Rect::from_min_size(pos2(full.left(), y), vec2(full.width(), h)),
            ));
            y += h + 1.0;
        }
    }
    let pinned = rows.len();
    let scrolled = Rect::from_min_max(pos2(full.left(), if pinned > 0 { y + 2.0 } else { y }), full.max);
    // Heights first, to know how far one can scroll.
    let total: f32 = sources
        .iter()
        .map(|sv| {
            let header = if with_headers { HEADER_HEIGHT } else { 0.0 };
            header + shown(sv, false).iter().map(|(_, h)| h + 1.0).sum::<f32>()
        })
        .sum();
    let max_scroll = (total - scrolled.height() + 20.0).max(0.0);
    let mut y = scrolled.top() - scroll.clamp(0.0, max_scroll);
    let mut headers = Vec::new();
    for sv in sources {
        if with_headers {
            headers
                .push((sv.id, Rect::from_min_size(pos2(full.left(), y), vec2(full.width(), HEADER_HEIGHT))));
            y += HEADER_HEIGHT;
        }
        for (vi, h) in shown(sv, false) {
            rows.push((
                LaneId { source: sv.id, lane: vi },
                Rect::from_min_size(pos2(full.left(), y), vec2(full.width(), h)),
            ));
            y += h + 1.0;
        }
    }
    Frame { full, data_left, ruler, lanes, scrolled, rows, pinned, headers, max_scroll }
}
