//! The event table (virtualised: only visible rows are laid out; filtering and sorting run on
//! a worker) over every open source or the one its source filter picks, and the inspector
//! of the selected event.

use crate::gui::document::SourceId;
use crate::gui::message::{Message, TableMsg};
use crate::gui::table::{SearchState, TableSort, TableState};
use crate::gui::theme;
use crate::gui::view::Viewport;
use crate::gui::view::{EventSel, Related, SourceView, find};
use crate::gui::views::timeline::{clock_text, common_seconds, common_text, event_fields, fields_read};
use egui_extras::{Column, TableBuilder};
use latscope_model::render_event;

const ROW_HEIGHT: f32 = 18.0;

/// The table; `pending`: a newer query than the rows shown is running; `viewport` and
/// `width` are the timeline's (a table that follows the view opens at its left edge).
pub fn show(
    ui: &mut egui::Ui,
    st: &TableState,
    pending: bool,
    sources: &[SourceView<'_>],
    selected: Option<EventSel>,
    viewport: &Viewport,
) -> Vec<Message> {
    let mut msgs = Vec::new();
    if st.scroll_to_selection || st.focus_filter || st.scroll_to_top {
        // Both are asked for once; they are done as this frame draws.
        msgs.push(Message::Table(TableMsg::RequestsDone));
    }
    // Two fixed lines, the filter on the first and the toggles and counts on the second: in
    // the table's half of the panel they would run under the inspector on one, and a
    // wrapped line's height would depend on what the last frame drew.
    ui.horizontal(|ui| {
        ui.label("Filter");
        let mut filter = st.filter.clone();
        let edit = ui.add(
            egui::TextEdit::singleline(&mut filter)
                .id(egui::Id::unique("event-filter"))
                .hint_text("words, field=value, field~text, \"a phrase\", -word (Ctrl+F)")
                .desired_width(260.0),
        );
        if st.focus_filter {
            edit.request_focus();
        }
        if edit.changed() {
            msgs.push(Message::Table(TableMsg::SetFilter(filter)));
        }
        // Enter steps like F3 (Shift+Enter back, like Shift+F3); the filter keeps the
        // keyboard, so the next Enter steps again. A plain Enter ends the edit (the field
        // gives up the keyboard); Shift+Enter leaves it focused.
        let (enter, shift) = ui.input(|i| (i.key_pressed(egui::Key::Enter), i.modifiers.shift));
        if enter && (edit.lost_focus() || (shift && edit.has_focus())) {
            msgs.push(Message::Table(TableMsg::SearchStep(!shift)));
            edit.request_focus();
        }
        if ui.small_button("<").on_hover_text("Previous match (Shift+F3)").clicked() {
            msgs.push(Message::Table(TableMsg::SearchStep(false)));
        }
        if ui.small_button(">").on_hover_text("Next match (F3)").clicked() {
            msgs.push(Message::Table(TableMsg::SearchStep(true)));
        }
        if sources.len() > 1 {
            let name = |i: Option<SourceId>| match i.and_then(|i| find(sources, i)) {
                Some(sv) => sv.source().name.clone(),
                None => "all sources".to_owned(),
            };
            egui::ComboBox::from_id_salt("table-source").selected_text(name(st.source)).show_ui(ui, |ui| {
                for choice in std::iter::once(None).chain(sources.iter().map(|s| Some(s.id))) {
                    if ui.selectable_label(st.source == choice, name(choice)).clicked() {
                        msgs.push(Message::Table(TableMsg::SetSource(choice)));
                    }
                }
            });
        }
    });
    ui.horizontal(|ui| {
        let mut follow = st.follow;
        if ui.checkbox(&mut follow, "follow").on_hover_text("Keep the table on the timeline's view").changed()
        {
            msgs.push(TableMsg::SetFollow(follow).into());
        }
        let mut own = st.own_clock;
        if ui
            .checkbox(&mut own, "own clock")
            .on_hover_text("A column with each event's time on its own source's clock")
            .changed()
        {
            msgs.push(TableMsg::SetOwnClock(own).into());
        }
        if pending {
            ui.spinner();
        }
        let total: usize =
            st.rows.sources.iter().filter_map(|&i| find(sources, i)).map(|s| s.source().events.len()).sum();
        ui.add(
            egui::Label::new(
                egui::RichText::new(format!("{} of {} events", st.rows.rows.len(), total)).weak(),
            )
            .extend(),
        );
        match st.search {
            Some(SearchState::At { at, wrapped }) => {
                let text = format!("match {at} of {}", st.rows.rows.len());
                ui.label(if wrapped { format!("{text} (wrapped around)") } else { text });
            }
            Some(SearchState::None) => {
                ui.colored_label(theme::WARNING, "no event matches");
            }
            None => {}
        }
        if let Some(e) = &st.error {
            ui.colored_label(theme::IRQ, e);
        }
    });
    if st.rows.sources.iter().all(|&i| find(sources, i).is_none()) {
        ui.weak("No events.");
        return msgs;
    }
    let rows = st.rows.rows.clone();
    // A source column once there is more than one source to tell apart.
    let several = sources.len() > 1;
    let time_of = |r: &crate::gui::table::Row| {
        let sv = find(sources, r.source)?;
        sv.source().events.ts.get(r.index as usize).map(|&ts| sv.to_common(ts))
    };
    let mut builder = TableBuilder::new(ui).striped(true).resizable(true).sense(egui::Sense::click());
    if several {
        builder = builder.column(Column::initial(120.0).at_least(60.0).clip(true));
    }
    let mut builder = builder
        // Narrow enough that the columns fit their half of the panel; each clips its text,
        // so nothing is painted over the inspector beside the table.
        .column(Column::exact(112.0).clip(true));
    if st.own_clock {
        builder = builder.column(Column::exact(112.0).clip(true));
    }
    let mut builder = builder
        .column(Column::exact(36.0).clip(true))
        .column(Column::initial(130.0).at_least(60.0).clip(true))
        .column(Column::initial(140.0).at_least(60.0).clip(true))
        .column(Column::remainder().at_least(80.0).clip(true))
        .auto_shrink(false);
    if st.scroll_to_top {
        builder = builder.vertical_scroll_offset(0.0);
    }
    if st.scroll_to_selection
        && let Some(sel) = selected
        && let Some(r) = rows.iter().position(|r| r.sel() == sel)
    {
        builder = builder.scroll_to_row(r, Some(egui::Align::Center));
    } else if st.follow && st.sort == TableSort::Time && !rows.is_empty() {
        // The first row at or after the view's left edge opens the list (rows sorted by
        // time are in common-timeline order).
        let first = rows.partition_point(|r| time_of(r).is_some_and(|t| t < viewport.start));
        builder = builder.scroll_to_row(first.min(rows.len() - 1), Some(egui::Align::TOP));
    }
    let mut sort_header = |row: &mut egui_extras::TableRow<'_, '_>, label: &str, sort: Option<TableSort>| {
        row.col(|ui| {
            let active = sort.is_some_and(|s| s == st.sort);
            let text = if active { format!("{label} v") } else { label.to_owned() };
            match sort {
                Some(s) => {
                    if ui.selectable_label(active, egui::RichText::new(text).strong()).clicked() {
                        msgs.push(Message::Table(TableMsg::Sort(s)));
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
            if several {
                sort_header(&mut row, "Source", None);
            }
            sort_header(&mut row, "Time (s)", Some(TableSort::Time));
            if st.own_clock {
                sort_header(&mut row, "Own clock (s)", None);
            }
            sort_header(&mut row, "CPU", Some(TableSort::Cpu));
            sort_header(&mut row, "Task", Some(TableSort::Task));
            sort_header(&mut row, "Event", Some(TableSort::Name));
            sort_header(&mut row, "Payload", None);
        })
        .body(|mut body| {
            // A click on a row selects its event: the cells' text is not selectable, so the
            // click reaches the row.
            body.ui_mut().style_mut().interaction.selectable_labels = false;
            body.rows(ROW_HEIGHT, rows.len(), |mut row| {
                let Some(&r) = rows.get(row.index()) else { return };
                let Some(sv) = find(sources, r.source) else { return };
                let (src, index) = (sv.source(), r.index as usize);
                let Some(e) = src.events.get(index) else { return };
                row.set_selected(selected == Some(r.sel()));
                let s = &src.strings;
                if several {
                    row.col(|ui| {
                        ui.add(egui::Label::new(egui::RichText::new(&src.name).weak()).truncate());
                    });
                }
                // On the timeline's clock, as the ruler reads it; the source's own clock
                // beside it when asked for.
                row.col(|ui| {
                    ui.monospace(format!("{:.6}", common_seconds(sources, sv.to_common(e.ts()))));
                });
                if st.own_clock {
                    row.col(|ui| {
                        ui.monospace(
                            egui::RichText::new(format!("{:.6}", src.origin.to_source_seconds(e.ts())))
                                .weak(),
                        );
                    });
                }
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
                    // As `trace-cmd report` prints it (trace.dat: the print fmt).
                    ui.add(egui::Label::new(render_event(src, index)).truncate());
                });
                let response = row.response();
                if response.clicked() {
                    msgs.push(TableMsg::Select(r.sel()).into());
                }
                // Narrow to (or hide) this row's task or CPU.
                response.context_menu(|ui| {
                    let task = format!("{}-{}", s.resolve(e.comm()), e.pid());
                    for (label, term) in [
                        (format!("Only task {task}"), format!("common_pid={}", e.pid())),
                        (format!("Hide task {task}"), format!("-common_pid={}", e.pid())),
                        (format!("Only CPU {}", e.cpu()), format!("common_cpu={}", e.cpu())),
                        (format!("Hide CPU {}", e.cpu()), format!("-common_cpu={}", e.cpu())),
                    ] {
                        if ui.button(label).clicked() {
                            msgs.push(TableMsg::AddTerm(term).into());
                            ui.close();
                        }
                    }
                });
            });
        });
    msgs
}

/// The inspector: the selected event's columns, its payload as the tracer prints it, every
/// field's stored value (what rules and filters match), and its stack.
///
/// Above them, the pairs the event is an end of (`related`): each goes to its other end.
pub fn inspector(
    ui: &mut egui::Ui,
    sources: &[SourceView<'_>],
    selected: Option<EventSel>,
    related: &[Related],
) -> Vec<Message> {
    let mut msgs = Vec::new();
    let Some(sel) = selected else {
        ui.weak("Click an event on the timeline or in the table.");
        return msgs;
    };
    let Some(sv) = find(sources, sel.source) else { return msgs };
    let src = sv.source();
    ui.strong(format!("{} · event #{}", src.name, sel.index));
    egui::ScrollArea::vertical().id_salt("inspector").show(ui, |ui| {
        for r in related {
            // The other end of the pair: the end if this is its start, else the start.
            let (other, dir) = match r.arrow.start.event {
                Some(e) if e == sel => (r.arrow.end.event, "to its end"),
                _ => (r.arrow.start.event, "from its start"),
            };
            ui.horizontal(|ui| {
                ui.label(egui::RichText::new(&r.analysis).color(theme::CURSOR_A));
                let text = format!("{} {dir}", latscope_model::format_seconds(r.latency_ps));
                match other {
                    Some(o) => {
                        if ui.link(text).on_hover_text("Select the other end of this pair").clicked() {
                            msgs.push(TableMsg::Select(o).into());
                        }
                    }
                    None => {
                        ui.monospace(text);
                    }
                }
            });
        }
        if !related.is_empty() {
            ui.separator();
        }
        egui::Grid::new("inspector-grid").num_columns(2).striped(true).show(ui, |ui| {
            for (k, v) in event_fields(src, sel.index) {
                // A name never wraps; a value wraps in a narrow inspector.
                ui.add(egui::Label::new(egui::RichText::new(k).color(theme::TEXT_DIM)).extend());
                ui.add(egui::Label::new(egui::RichText::new(v).monospace()).selectable(true));
                ui.end_row();
            }
        });
        let fields = fields_read(src, sel.index);
        if !fields.is_empty() {
            ui.separator();
            ui.label(
                egui::RichText::new("fields (stored value in brackets: rules and filters match either)")
                    .weak(),
            );
            egui::Grid::new("inspector-fields").num_columns(2).striped(true).show(ui, |ui| {
                for (k, shown, stored) in fields {
                    ui.add(egui::Label::new(egui::RichText::new(k).color(theme::TEXT_DIM)).extend());
                    ui.horizontal(|ui| {
                        ui.add(egui::Label::new(egui::RichText::new(shown).monospace()).selectable(true));
                        if let Some(stored) = stored {
                            ui.weak(format!("({stored})"));
                        }
                    });
                    ui.end_row();
                }
            });
        }
        if let Some(stack) = src.events.get(sel.index).and_then(|e| e.stack()) {
            ui.separator();
            ui.strong("Stack");
            for frame in src.strings.resolve(stack).lines() {
                ui.monospace(frame);
            }
        }
        if let Some(&ts) = src.events.ts.get(sel.index) {
            ui.separator();
            ui.weak(format!("timeline {}", common_text(sources, sv.to_common(ts))));
            ui.weak(format!("own clock {} ({})", clock_text(src, ts), src.origin.domain.describe()));
            ui.weak(format!("from the source's start {}", latscope_model::format_seconds(ts)));
        }
    });
    msgs
}
