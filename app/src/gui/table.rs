//! The event table (virtualised: only visible rows are laid out; filtering and sorting run on
//! a worker) and the inspector of the selected event.

use super::message::{EventSel, Message, TableRows, TableSort};
use super::theme;
use super::timeline::{SourceView, clock_text, event_fields};
use egui_extras::{Column, TableBuilder};

/// Table state kept by the workbench.
#[derive(Debug, Default)]
pub struct TableState {
    pub filter: String,
    pub sort: TableSort,
    /// The latest rows from the worker (may lag the filter while it runs).
    pub rows: TableRows,
    /// Set when the selection changed from elsewhere, so the table scrolls to it once.
    pub scroll_to_selection: bool,
    /// Set by Ctrl+F, so the filter takes the keyboard once.
    pub focus_filter: bool,
}

const ROW_HEIGHT: f32 = 18.0;

/// The table; `pending`: a newer query than the rows shown is running.
pub fn show(
    ui: &mut egui::Ui,
    st: &TableState,
    pending: bool,
    sources: &[SourceView],
    selected: Option<EventSel>,
) -> Vec<Message> {
    let mut msgs = Vec::new();
    if st.scroll_to_selection || st.focus_filter {
        // Both are asked for once; they are done as this frame draws.
        msgs.push(Message::TableRequestsDone);
    }
    ui.horizontal(|ui| {
        ui.label("Filter");
        let mut filter = st.filter.clone();
        let edit = ui.add(
            egui::TextEdit::singleline(&mut filter)
                .id(egui::Id::unique("event-filter"))
                .hint_text("event, task, field=value… (Ctrl+F)")
                .desired_width(260.0),
        );
        if st.focus_filter {
            edit.request_focus();
        }
        if edit.changed() {
            msgs.push(Message::SetFilter(filter));
        }
        if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
            msgs.push(Message::SearchStep(true));
        }
        if ui.small_button("<").on_hover_text("Previous match (Shift+F3)").clicked() {
            msgs.push(Message::SearchStep(false));
        }
        if ui.small_button(">").on_hover_text("Next match (F3)").clicked() {
            msgs.push(Message::SearchStep(true));
        }
        if pending {
            ui.spinner();
        }
        let total = sources.get(st.rows.source).map_or(0, |s| s.source().events.len());
        ui.weak(format!("{} of {} events", st.rows.rows.len(), total));
    });
    let Some(sv) = sources.get(st.rows.source) else {
        ui.weak("No events.");
        return msgs;
    };
    let src = sv.source();
    let rows = st.rows.rows.clone();
    let selected_row = selected
        .filter(|s| s.source == st.rows.source)
        .and_then(|s| rows.iter().position(|&r| r as usize == s.index));
    let mut builder = TableBuilder::new(ui)
        .striped(true)
        .resizable(true)
        .sense(egui::Sense::click())
        .column(Column::exact(150.0))
        .column(Column::exact(36.0))
        .column(Column::initial(150.0).at_least(60.0))
        .column(Column::initial(160.0).at_least(60.0))
        .column(Column::remainder().at_least(100.0))
        .auto_shrink(false);
    if st.scroll_to_selection
        && let Some(r) = selected_row
    {
        builder = builder.scroll_to_row(r, Some(egui::Align::Center));
    }
    let mut sort_header = |row: &mut egui_extras::TableRow<'_, '_>, label: &str, sort: Option<TableSort>| {
        row.col(|ui| {
            let active = sort.is_some_and(|s| s == st.sort);
            let text = if active { format!("{label} v") } else { label.to_owned() };
            match sort {
                Some(s) => {
                    if ui.selectable_label(active, egui::RichText::new(text).strong()).clicked() {
                        msgs.push(Message::SortTable(s));
                    }
                }
                None => {
                    ui.strong(text);
                }
            }
        });
    };
    builder
        .header(20.0, |mut row| {
            sort_header(&mut row, "Time (s)", Some(TableSort::Time));
            sort_header(&mut row, "CPU", Some(TableSort::Cpu));
            sort_header(&mut row, "Task", Some(TableSort::Task));
            sort_header(&mut row, "Event", Some(TableSort::Name));
            sort_header(&mut row, "Fields", None);
        })
        .body(|body| {
            body.rows(ROW_HEIGHT, rows.len(), |mut row| {
                let Some(&index) = rows.get(row.index()) else { return };
                let index = index as usize;
                let Some(e) = src.events.get(index) else { return };
                row.set_selected(selected.is_some_and(|s| s.source == st.rows.source && s.index == index));
                let s = &src.strings;
                row.col(|ui| {
                    ui.monospace(format!("{:.6}", src.origin.to_source_seconds(e.ts())));
                });
                row.col(|ui| {
                    ui.monospace(e.cpu().to_string());
                });
                row.col(|ui| {
                    ui.label(format!("{}-{}", s.resolve(e.comm()), e.pid()));
                });
                row.col(|ui| {
                    ui.label(
                        egui::RichText::new(s.resolve(e.name()))
                            .color(theme::readable(theme::color_for(&s.resolve(e.name())))),
                    );
                });
                row.col(|ui| {
                    let fields: Vec<String> = event_fields(src, index)
                        .into_iter()
                        .skip(4)
                        .filter(|(k, _)| k != "flags")
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    ui.add(egui::Label::new(fields.join(" ")).truncate());
                });
                if row.response().clicked() {
                    msgs.push(Message::SelectEvent(EventSel { source: st.rows.source, index }));
                    msgs.push(Message::CenterOn(sv.to_common(e.ts())));
                }
            });
        });
    msgs
}

/// The inspector: every column and field of the selected event, and its stack.
pub fn inspector(ui: &mut egui::Ui, sources: &[SourceView], selected: Option<EventSel>) {
    let Some(sel) = selected else {
        ui.weak("Click an event on the timeline or in the table.");
        return;
    };
    let Some(sv) = sources.get(sel.source) else { return };
    let src = sv.source();
    ui.strong(format!("{} · event #{}", src.name, sel.index));
    egui::ScrollArea::vertical().id_salt("inspector").show(ui, |ui| {
        egui::Grid::new("inspector-grid").num_columns(2).striped(true).show(ui, |ui| {
            for (k, v) in event_fields(src, sel.index) {
                ui.label(egui::RichText::new(k).color(theme::TEXT_DIM));
                ui.add(egui::Label::new(egui::RichText::new(v).monospace()).selectable(true));
                ui.end_row();
            }
        });
        if let Some(stack) = src.events.get(sel.index).and_then(|e| e.stack()) {
            ui.separator();
            ui.strong("Stack");
            for frame in src.strings.resolve(stack).lines() {
                ui.monospace(frame);
            }
        }
        if let Some(&ts) = src.events.ts.get(sel.index) {
            ui.separator();
            ui.weak(format!("relative {}", latscope_model::format_seconds(ts)));
            ui.weak(clock_text(src, ts));
        }
    });
}
