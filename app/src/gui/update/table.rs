//! The event table's messages: filter, sort, the source it lists, the rows of a query,
//! one-shot requests of the view, and stepping through the filter's matches.

use super::view::step_origin;
use crate::gui::app::Workbench;
use crate::gui::document::SourceId;
use crate::gui::jobs::JobKind;
use crate::gui::message::TableMsg;
use crate::gui::table::{Row, SearchState, TableRows};
use crate::gui::view::EventSel;
use crate::gui::workers;
use latscope_model::Filter;

impl Workbench {
    pub(super) fn update_table(&mut self, msg: TableMsg) {
        match msg {
            TableMsg::SetFilter(f) => {
                self.table.filter = f;
                self.table.search = None;
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
                    self.table.asking = None;
                    // Another question (not the same one asked again as a source grew) opens
                    // the list at its first row, wherever the last answer was scrolled to.
                    let asked = |r: &TableRows| (r.filter.clone(), r.sort, r.sources.clone());
                    if asked(&self.table.rows) != asked(&rows) {
                        self.table.scroll_to_top = true;
                    }
                    self.table.rows = rows;
                    if std::mem::take(&mut self.table.ask_again) {
                        self.refresh_table();
                    }
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
            TableMsg::Select(sel) => {
                // "match N of M" no longer describes where the selection is.
                self.table.search = None;
                self.select(sel);
                if let Some(t) = self.event_time(sel) {
                    self.view.center_on(t);
                }
            }
            TableMsg::Step(by) => {
                self.table.search = None;
                self.step_row(by);
            }
            TableMsg::AddTerm(term) => {
                let mut filter = self.table.filter.trim().to_owned();
                if !filter.split_whitespace().any(|t| t == term) {
                    if !filter.is_empty() {
                        filter.push(' ');
                    }
                    filter.push_str(&term);
                }
                self.update(TableMsg::SetFilter(filter).into());
            }
            TableMsg::SetFollow(follow) => self.table.follow = follow,
            TableMsg::SetOwnClock(own) => self.table.own_clock = own,
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
        // A filter naming an annotation's end event lists those too.
        let ends = text.contains("_end");
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
        // A source grew while the same question is being answered: ask again once it is.
        // Cancelling would starve the table while snapshots come faster than a whole
        // query (a fast simulation): no answer would ever arrive.
        let question = (shown.clone(), text.clone(), sort);
        if self.table.asking.as_ref() == Some(&question) && self.jobs.busy(JobKind::Table) {
            self.table.ask_again = true;
            return;
        }
        self.table.asking = Some(question);
        self.table.ask_again = false;
        // The same question asked again as a source grew: the query reads what is new and
        // appends, in place, to the rows the window keeps showing meanwhile (it holds a
        // clone, which sees only the rows there now).
        let asked = &self.table.rows;
        let earlier = (asked.sources == shown && asked.filter == text && asked.sort == sort).then(|| {
            let rows = std::mem::take(&mut self.table.rows.rows);
            self.table.rows.rows = rows.clone();
            workers::Earlier { rows, read: self.table.rows.read.clone() }
        });
        // Stamped by the first source: the query is latest-wins whichever source it reads.
        self.jobs.spawn(JobKind::Table, self.doc.stamp(first), move |cx| {
            let listed = workers::table_rows(&sources, &filter, sort, ends, &cx.control, earlier);
            // Let go of the sources before answering: the workbench may then change one in
            // place (a derived lane) without a copy.
            drop(sources);
            if let Some(l) = listed {
                let rows = TableRows { sources: shown, filter: text, sort, rows: l.rows, read: l.read };
                cx.send(TableMsg::Ready { ticket: cx.ticket, rows });
            }
        });
    }

    /// The common time of event `sel`.
    pub(super) fn event_time(&self, sel: EventSel) -> Option<f64> {
        let s = self.doc.get(sel.source)?;
        s.source().events.ts.get(sel.index).map(|&t| s.to_common(t))
    }

    /// Moves the selection `by` rows in the table's order (from the first row when nothing
    /// listed is selected), keeping it in view.
    fn step_row(&mut self, by: isize) {
        let rows = self.table.rows.rows.clone();
        if rows.is_empty() {
            return;
        }
        let at = self.view.overlay.selected.and_then(|sel| rows.iter().position(|r| r.sel() == sel));
        let next = match at {
            Some(i) => i.saturating_add_signed(by).min(rows.len() - 1),
            None if by < 0 => rows.len() - 1,
            None => 0,
        };
        let sel = rows[next].sel();
        self.select(sel);
        if let Some(t) = self.event_time(sel) {
            self.view.ensure_visible(t);
        }
    }

    /// The next (`forward`) or previous match of the table's filter after the selection
    /// (else cursor A, else the view's left edge), in every source the table lists, on the
    /// common timeline. It moves the selection, not a cursor; past the last match it wraps
    /// around and says so, and it says when nothing matches.
    fn search_step(&mut self, forward: bool) {
        let doc = &self.doc;
        let time = |r: &Row| {
            let s = doc.get(r.source)?;
            s.source().events.ts.get(r.index as usize).map(|&ts| s.to_common(ts))
        };
        let rows = self.table.rows.rows.clone();
        let order = |a: &(f64, usize, &Row), b: &(f64, usize, &Row)| {
            a.0.total_cmp(&b.0).then((a.2.source, a.2.index).cmp(&(b.2.source, b.2.index)))
        };
        let timed = || rows.iter().enumerate().filter_map(|(i, r)| Some((time(r)?, i, r)));
        // From the selected event (events at its time are ordered by source and index),
        // else from cursor A, else from the view's left edge.
        let selected = self.view.overlay.selected.and_then(|sel| Some((self.event_time(sel)?, sel)));
        let origin = selected.map_or_else(|| step_origin(&self.view, &self.doc), |(t, _)| t);
        let key = |x: &(f64, usize, &Row)| (x.2.source, x.2.index as usize);
        let past = |x: &(f64, usize, &Row), forward: bool| match selected {
            Some((t, sel)) => {
                let c = x.0.total_cmp(&t).then(key(x).cmp(&(sel.source, sel.index)));
                if forward { c.is_gt() } else { c.is_lt() }
            }
            None if forward => x.0 > origin,
            None => x.0 < origin,
        };
        let after = |x: &(f64, usize, &Row)| past(x, true);
        let before = |x: &(f64, usize, &Row)| past(x, false);
        let (found, wrapped) = if forward {
            match timed().filter(after).min_by(order) {
                Some(x) => (Some(x), false),
                None => (timed().min_by(order), true),
            }
        } else {
            match timed().filter(before).max_by(order) {
                Some(x) => (Some(x), false),
                None => (timed().max_by(order), true),
            }
        };
        match found {
            Some((tc, _, row)) => {
                // Its place among the matches in time order.
                let at = timed().filter(|x| order(x, &(tc, 0, row)).is_lt()).count() + 1;
                self.select(row.sel());
                self.view.ensure_visible(tc);
                self.table.search = Some(SearchState::At { at, wrapped });
            }
            None => self.table.search = Some(SearchState::None),
        }
    }
}
