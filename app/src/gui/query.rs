//! The query window: SQL over the open sources' tables, as `latscope query` runs it
//! (`latscope_engine::query`), its result shown as a table. A row that holds a time (and a
//! source) goes to it on a click: the event at that time is selected, else the view is
//! centred there.
//!
//! This module owns the window's state ([`QueryState`]) and the result's rows
//! ([`QueryResult`]); its messages are `QueryMsg` (in `message.rs`), handled in
//! `update/query.rs`, and the window is `views::query`. A query runs as a job
//! ([`super::jobs::JobKind::Query`]).

use super::document::SourceId;
use latscope_engine::query::TextRows;
use latscope_model::PS_PER_S;

/// The example a new window starts with.
pub const EXAMPLE: &str = "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY n DESC";

/// At most this many rows are kept for the window (the count says how many there were).
pub const MAX_ROWS: usize = 10_000;

#[derive(Debug)]
pub struct QueryState {
    pub open: bool,
    /// The SQL, as typed.
    pub sql: String,
    pub result: Option<QueryResult>,
    pub error: Option<String>,
    /// The row last clicked.
    pub selected: Option<usize>,
}

impl Default for QueryState {
    fn default() -> Self {
        QueryState { open: false, sql: EXAMPLE.to_owned(), result: None, error: None, selected: None }
    }
}

/// A query's answer, ready to draw: the columns, each row's cells as text, and where each
/// row goes on the timeline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryResult {
    /// The SQL it answers.
    pub sql: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// How many rows the query gave (more than `rows` holds when cut at [`MAX_ROWS`]).
    pub total: usize,
    /// Per row: the source and common time (ps) it holds, if any.
    pub targets: Vec<Option<Target>>,
}

/// Where a row goes: a time on the common timeline, in a source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    pub source: SourceId,
    /// Common timeline, ps.
    pub time: f64,
}

/// What the job needs to find a row's place: each source's name in the `source` column,
/// its id, and its clock origin and placement (for `start_s`, on the source's own clock).
#[derive(Debug, Clone)]
pub struct Named {
    pub name: String,
    pub id: SourceId,
    pub origin: latscope_model::ClockOrigin,
    pub placement: latscope_model::Placement,
}

impl QueryResult {
    /// The answer to `sql` as drawn, with each row's target: its source (by the `source`
    /// column; the only source when there is one) and its time (`time_ps` or `start_ps` on
    /// the common timeline, else `start_s` or `time_s` on the source's own clock).
    pub fn of(sql: &str, text: TextRows, sources: &[Named]) -> Self {
        let TextRows { columns, rows, numbers, total } = text;
        let col = |name: &str| columns.iter().position(|c| c == name);
        let source_col = col("source");
        let ps_col = col("time_ps").or_else(|| col("start_ps"));
        let secs_col = col("start_s").or_else(|| col("time_s"));
        let targets = rows
            .iter()
            .zip(&numbers)
            .map(|(cells, nums)| {
                let named = match source_col {
                    Some(c) => sources.iter().find(|s| cells.get(c).is_some_and(|t| *t == s.name)),
                    None if sources.len() == 1 => sources.first(),
                    None => None,
                }?;
                let at = |c: Option<usize>| c.and_then(|c| nums.get(c).copied().flatten());
                let time = at(ps_col).or_else(|| {
                    let secs = at(secs_col)?;
                    let rel = ((secs - named.origin.secs as f64) * PS_PER_S as f64).round() as i64
                        - named.origin.ps;
                    Some(named.placement.to_common(rel) as f64)
                })?;
                Some(Target { source: named.id, time })
            })
            .collect();
        QueryResult { sql: sql.to_owned(), columns, rows, total, targets }
    }
}
