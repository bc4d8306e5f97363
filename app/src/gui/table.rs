//! The event table's room: its filter, sort and source filter, the rows of the latest query
//! (computed on a worker over every open source or the one picked), and the one-shot
//! requests of the view (scroll to the selection, take the keyboard). The table and the
//! inspector are drawn by `views::table`.

use super::document::SourceId;
use super::view::EventSel;
use latscope_model::EventTable;
use latscope_shared::SharedVec;

/// One row of the event table: event `index` of source `source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub source: SourceId,
    pub index: u32,
}

impl Row {
    pub fn sel(self) -> EventSel {
        EventSel { source: self.source, index: self.index as usize }
    }
}

/// Rows of the event table after filtering and sorting (computed off the UI thread), over
/// every source the table shows.
#[derive(Debug, Clone, Default)]
pub struct TableRows {
    /// The sources queried (all open sources, or the one the source filter picks).
    pub sources: Vec<SourceId>,
    /// The filter text and sort the rows answer.
    pub filter: String,
    pub sort: TableSort,
    pub rows: SharedVec<Row>,
    /// Each source's events as the query read them (clones sharing their memory), so the
    /// next query over the same sources reads only what they appended.
    pub read: Vec<EventTable>,
}

/// Sort order of the event table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableSort {
    #[default]
    Time,
    Cpu,
    Name,
    Task,
}

/// Table state kept by the workbench.
#[derive(Debug, Default)]
pub struct TableState {
    pub filter: String,
    /// The one source listed (and searched), or all of them (`None`, the default).
    pub source: Option<SourceId>,
    pub sort: TableSort,
    /// The latest rows from the worker (may lag the filter while it runs).
    pub rows: TableRows,
    /// Set when the selection changed from elsewhere, so the table scrolls to it once.
    pub scroll_to_selection: bool,
    /// Set by Ctrl+F, so the filter takes the keyboard once.
    pub focus_filter: bool,
    /// Set when rows for another filter, sort or source arrived: the list opens at its top.
    pub scroll_to_top: bool,
    /// Why the filter does not parse (its rows are not recomputed until it does).
    pub error: Option<String>,
    /// Keep the list on the timeline's view (it opens at the view's left edge).
    pub follow: bool,
    /// Show each event's time on its own source's clock beside the timeline's.
    pub own_clock: bool,
    /// What the last search step found: the match's place among the rows, or that there
    /// was none, or that it wrapped around.
    pub search: Option<SearchState>,
    /// The question the running query answers (sources, filter, sort).
    pub asking: Option<(Vec<SourceId>, String, TableSort)>,
    /// A source grew while the query ran: ask again when it answers.
    pub ask_again: bool,
}

/// What the last search step said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchState {
    /// The `at`-th match (from 1) of the rows.
    At { at: usize, wrapped: bool },
    /// No event matches the filter.
    None,
}
