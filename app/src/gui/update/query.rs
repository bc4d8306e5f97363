//! The query window's messages: the SQL as edited, the query job, and a row's click, which
//! goes to the row's time with the view's own messages.

use crate::gui::app::Workbench;
use crate::gui::jobs::JobKind;
use crate::gui::message::{QueryMsg, ViewMsg};
use crate::gui::query::{MAX_ROWS, Named, QueryResult, Target};
use crate::gui::view::{CursorId, EventSel};
use latscope_analysis::runner::Scope;
use latscope_engine::analyse::{Options, Which};
use latscope_model::Placed;

impl Workbench {
    /// Applies a [`QueryMsg`].
    pub(super) fn update_query(&mut self, msg: QueryMsg) {
        match msg {
            QueryMsg::Show => self.query.open = true,
            QueryMsg::Close => self.query.open = false,
            QueryMsg::Edit(sql) => self.query.sql = sql,
            QueryMsg::Run => self.run_query(),
            QueryMsg::Done { ticket, result } => {
                if !self.jobs.accept(ticket, |_| true) {
                    return;
                }
                self.query.selected = None;
                match result {
                    Ok(r) => {
                        self.query.error = None;
                        self.query.result = Some(r);
                    }
                    Err(e) => self.query.error = Some(crate::errors::error_text(&e)),
                }
            }
            QueryMsg::Row(n) => {
                self.query.selected = Some(n);
                let target = self.query.result.as_ref().and_then(|r| r.targets.get(n).copied().flatten());
                if let Some(t) = target {
                    for m in self.go_to(t) {
                        self.update(m.into());
                    }
                }
            }
        }
    }

    /// The view's messages that go to `t`: select the event at that time (if the source has
    /// one there), centre the view on it and put cursor A there.
    fn go_to(&self, t: Target) -> Vec<ViewMsg> {
        let mut msgs = Vec::new();
        if let Some(s) = self.doc.get(t.source) {
            let rel = s.placement.from_common(t.time.round() as i64);
            let ts = &s.source().events.ts;
            let at = ts.partition_point(|&x| x < rel);
            if ts.get(at) == Some(&rel) {
                msgs.push(ViewMsg::SelectEvent(EventSel { source: t.source, index: at }));
            }
        }
        msgs.push(ViewMsg::CenterOn(t.time));
        msgs.push(ViewMsg::SetCursor(CursorId::A, t.time));
        msgs
    }

    /// Runs the window's SQL over the open sources as a job; `pairs` and `windows` run the
    /// analysis panel's rules (the presets the sources hold when it has none).
    fn run_query(&mut self) {
        self.query.open = true;
        self.query.error = None;
        let sql = self.query.sql.clone();
        let sources: Vec<_> = self.doc.sources.iter().map(|s| s.prepared.clone()).collect();
        let placements: Vec<_> = self.doc.sources.iter().map(|s| s.placement).collect();
        let names: Vec<Named> = self
            .doc
            .sources
            .iter()
            .zip(self.doc.labels())
            .map(|(s, name)| Named { name, id: s.id, origin: s.source().origin, placement: s.placement })
            .collect();
        let aligned = self.doc.alignment.is_some();
        let rules = self.analysis.rules.specs.clone();
        let options = Options { include_errors: self.analysis.rules.include_errors };
        let registry = self.registry.clone();
        self.jobs.spawn(JobKind::Query, None, move |cx| {
            let result = (|| -> anyhow::Result<QueryResult> {
                let which = if rules.is_empty() {
                    Which::Defaults
                } else {
                    let specs = rules
                        .iter()
                        .map(|r| registry.preset(r).or_else(|_| registry.rule(r)))
                        .collect::<Result<Vec<_>, _>>()?;
                    Which::Specs(specs)
                };
                let placed: Vec<Placed<'_>> =
                    sources.iter().zip(&placements).map(|(p, &pl)| Placed::new(&p.source, pl)).collect();
                let on = latscope_engine::query::On {
                    names: names.iter().map(|n| n.name.clone()).collect(),
                    scope: Scope::of(aligned, &placed),
                    placed,
                    aligned: None,
                    capture: String::new(),
                };
                let df = latscope_engine::query::run_on(&on, &registry, &which, options, &sql)?;
                Ok(QueryResult::of(&sql, latscope_engine::query::text_rows(&df, MAX_ROWS), &names))
            })();
            if !cx.cancelled() {
                cx.send(QueryMsg::Done { ticket: cx.ticket, result });
            }
        });
    }
}
