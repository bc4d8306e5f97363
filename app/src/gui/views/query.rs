//! The query window: the SQL box, Run, and the result as a table whose rows go to their
//! time on a click.

use crate::gui::jobs::Ticket;
use crate::gui::message::{FileMsg, Message, QueryMsg};
use crate::gui::query::{MAX_ROWS, QueryState};
use crate::gui::theme;

/// The query window; `running` is the query job, if one runs. Returns what the user did.
pub fn show(ctx: &egui::Context, st: &QueryState, running: Option<Ticket>) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut open = true;
    egui::Window::new("Query")
        .id(egui::Id::unique("query-window"))
        .open(&mut open)
        .default_size([820.0, 520.0])
        .show(ctx, |ui| {
            ui.weak(format!(
                "Tables: {}, and one per event name (block_rq_issue, sched_switch, …).",
                latscope_engine::query::FIXED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ));
            // Ctrl+Enter runs while the SQL box has the keyboard; taken before the box sees it,
            // or a multi-line box would take the key itself.
            let sql_id = ui.make_persistent_id("query-sql");
            let run_keys = ui.memory(|m| m.has_focus(sql_id))
                && ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Enter));
            let mut sql = st.sql.clone();
            let r = ui.add(
                egui::TextEdit::multiline(&mut sql)
                    .code_editor()
                    .desired_rows(3)
                    .desired_width(f32::INFINITY)
                    .id(sql_id),
            );
            if r.changed() {
                msgs.push(Message::Query(QueryMsg::Edit(sql)));
            }
            ui.horizontal(|ui| {
                let run = ui.add_enabled(running.is_none(), egui::Button::new("Run (Ctrl+Enter)")).clicked();
                if (run || run_keys) && running.is_none() {
                    msgs.push(Message::Query(QueryMsg::Run));
                }
                if let Some(ticket) = running {
                    ui.spinner();
                    if ui.small_button("Cancel").clicked() {
                        msgs.push(Message::Files(FileMsg::CancelJob(ticket)));
                    }
                }
                if let Some(r) = &st.result {
                    let cut = if r.total > r.rows.len() {
                        format!(" (first {MAX_ROWS} shown)")
                    } else {
                        String::new()
                    };
                    ui.weak(format!("{} rows{cut}", r.total));
                }
            });
            if let Some(e) = &st.error {
                ui.colored_label(theme::IRQ, e);
            }
            if let Some(r) = &st.result {
                ui.separator();
                msgs.extend(result_table(ui, st, r));
            }
        });
    if !open {
        msgs.push(Message::Query(QueryMsg::Close));
    }
    msgs
}

fn result_table(ui: &mut egui::Ui, st: &QueryState, r: &crate::gui::query::QueryResult) -> Vec<Message> {
    use egui_extras::{Column, TableBuilder};
    let mut msgs = Vec::new();
    let row_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    // Each column as wide as its header and its first rows' cells, up to a limit (resizable).
    let char_w = ui.fonts_mut(|f| f.glyph_width(&egui::TextStyle::Body.resolve(ui.style()), '0'));
    let widths: Vec<f32> = (0..r.columns.len())
        .map(|c| {
            let cells = r.rows.iter().take(200).filter_map(|row| row.get(c)).map(|t| t.chars().count());
            let chars = cells.chain([r.columns[c].chars().count()]).max().unwrap_or(4);
            (chars as f32 * char_w + 16.0).clamp(40.0, 360.0)
        })
        .collect();
    let mut table = TableBuilder::new(ui)
        .id_salt("query-result")
        .striped(true)
        .resizable(true)
        .max_scroll_height(420.0)
        .sense(egui::Sense::click());
    for w in widths {
        table = table.column(Column::initial(w).at_least(40.0).clip(true));
    }
    table
        .header(row_h, |mut header| {
            for c in &r.columns {
                header.col(|ui| {
                    ui.strong(c);
                });
            }
        })
        .body(|body| {
            body.rows(row_h, r.rows.len(), |mut row| {
                let n = row.index();
                row.set_selected(st.selected == Some(n));
                for cell in &r.rows[n] {
                    row.col(|ui| {
                        ui.add(egui::Label::new(cell).truncate().selectable(false));
                    });
                }
                let resp = row.response();
                let resp = if r.targets.get(n).copied().flatten().is_some() {
                    resp.on_hover_text("Go to this row's time")
                } else {
                    resp
                };
                if resp.clicked() {
                    msgs.push(Message::Query(QueryMsg::Row(n)));
                }
            });
        });
    msgs
}
