//! The event table's messages: filter, sort, the source it lists, the rows of a query,
//! one-shot requests of the view, and stepping through the filter's matches.

use super::view::step_origin;
use crate::gui::app::Workbench;
use crate::gui::document::SourceId;
use crate::gui::jobs::JobKind;
use crate::gui::message::TableMsg;
use crate::gui::table::{Row, TableRows};
use crate::gui::workers;
use latscope_model::Filter;
use std::sync::Arc;

impl Workbench {
    pub(super) fn update_table(&mut self, msg: TableMsg) {
        match msg {
            TableMsg::SetFilter(f) => {
                self.table.filter = f;
                self.refresh_table();
            }
            TableMsg::Sort(s) => {
                self.table.sort = s;
                self.refresh_table();
            }
            TableMsg::SetSource(s) => {
                self.table.source = s.filter(|&id| self.doc.get(id).is_some());
                self.refresh_table();
            }
            TableMsg::Ready { ticket, rows } => {
                if self.jobs.accept(ticket, |_| true) {
                    // Another question (not the same one asked again as a source grew) opens
                    // the list at its first row, wherever the last answer was scrolled to.
                    let asked = |r: &TableRows| (r.filter.clone(), r.sort, r.sources.clone());
                    if asked(&self.table.rows) != asked(&rows) {
                        self.table.scroll_to_top = true;
                    }
                    self.table.rows = rows;
                }
            }
            TableMsg::FocusFilter => {
                self.view.panels.table = true;
                self.table.focus_filter = true;
            }
            TableMsg::RequestsDone => {
                self.table.scroll_to_selection = false;
                self.table.focus_filter = false;
                self.table.scroll_to_top = false;
            }
            TableMsg::SearchStep(forward) => self.search_step(forward),
        }
    }

    /// The sources the table lists: the one its source filter picks, else all.
    pub(super) fn table_sources(&self) -> Vec<SourceId> {
        match self.table.source.filter(|&id| self.doc.get(id).is_some()) {
            Some(id) => vec![id],
            None => self.doc.ids(),
        }
    }

    /// Reruns the table query (filter and sort) over the table's sources; a newer query
    /// makes the running one stale.
    pub(super) fn refresh_table(&mut self) {
        let shown = self.table_sources();
        let Some(&first) = shown.first() else {
            self.table.rows = TableRows::default();
            return;
        };
        let sources: Vec<workers::TableSource> = shown
            .iter()
            .filter_map(|&id| self.doc.get(id).map(|s| (id, s.prepared.clone(), s.placement)))
            .collect();
        let (text, sort) = (self.table.filter.clone(), self.table.sort);
        let filter = match Filter::parse(&text) {
            Ok(f) => {
                self.table.error = None;
                f
            }
            Err(e) => {
                // Said beside the filter; the rows stay until it parses.
                self.table.error = Some(e.to_string());
                self.jobs.cancel_kind(JobKind::Table);
                return;
            }
        };
        // Stamped by the first source: the query is latest-wins whichever source it reads.
        self.jobs.spawn(JobKind::Table, self.doc.stamp(first), move |cx| {
            let rows = workers::table_rows(&sources, &filter, sort, &cx.control);
            // Let go of the sources before answering: the workbench may then change one in
            // place (a derived lane) without a copy.
            drop(sources);
            if let Some(rows) = rows {
                let rows = TableRows { sources: shown, filter: text, sort, rows: Arc::new(rows) };
                cx.send(TableMsg::Ready { ticket: cx.ticket, rows });
            }
        });
    }

    /// The next (`forward`) or previous match of the table's filter after the step origin,
    /// in every source the table lists, on the common timeline.
    fn search_step(&mut self, forward: bool) {
        let t = step_origin(&self.view, &self.doc);
        let doc = &self.doc;
        let time = |r: &Row| {
            let s = doc.get(r.source)?;
            s.source().events.ts.get(r.index as usize).map(|&ts| s.to_common(ts))
        };
        let rows = self.table.rows.rows.clone();
        let order = |a: &(f64, &Row), b: &(f64, &Row)| {
            a.0.total_cmp(&b.0).then((a.1.source, a.1.index).cmp(&(b.1.source, b.1.index)))
        };
        let timed = rows.iter().filter_map(|r| Some((time(r)?, r)));
        let found = if forward {
            timed.filter(|(tr, _)| *tr > t).min_by(order)
        } else {
            timed.filter(|(tr, _)| *tr < t).max_by(order)
        };
        if let Some((tc, row)) = found {
            self.select(row.sel());
            self.view.overlay.cursor_a = Some(tc);
            self.view.ensure_visible(tc);
        }
    }
}
