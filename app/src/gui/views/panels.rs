//! The frame: the menu bar, the status bar, the track list, the event table, the side panel
//! (simulator, analysis), the log, the error banner, the timeline and the windows over them.
//! [`frame`] draws them all from the workbench's state, read only, and returns the messages
//! of this frame; the frame cache is the one thing it writes.

use super::{
    FrameCache, Scene, align_dialog, analysis_panel, browser, decoder_dialog, derive_dialog, fleet, query,
    record,
};
use super::{palette, sim_panel, table, timeline};
use crate::gui::errors::{self, Errors};
use crate::gui::jobs::JobKind;
use crate::gui::keymap;
use crate::gui::message::{DeriveMsg, FileMsg, Message, ShellMsg, ViewMsg};
use crate::gui::prepare::LaneClass;
use crate::gui::theme;
use crate::gui::view::{LaneId, PanelId, SourceView, find};
use latscope_model::{Ps, Source, format_seconds};
use std::path::PathBuf;

/// The room the focused track-list row keeps for its up/down buttons.
const MOVE_BUTTONS_WIDTH: f32 = 64.0;
/// The side panel's width at start (the analysis summary's six columns fit).
const SIDE_WIDTH: f32 = 400.0;
/// The event inspector's width, beside the event table.
const INSPECTOR_WIDTH: f32 = 300.0;
/// The track list's width at start; the user drags its edge to change it.
const TRACKS_WIDTH: f32 = 220.0;

/// Draws the whole window from `wb`; returns what the user asked for this frame.
pub fn frame(wb: &Scene<'_>, ui: &mut egui::Ui, cache: &mut FrameCache) -> Vec<Message> {
    let ctx = ui.ctx().clone();
    let mut msgs = Vec::new();
    let shown = wb.view.shown(wb.doc);
    egui::Panel::top("menu").show(ui, |ui| msgs.extend(menu(wb, ui, &shown)));
    egui::Panel::bottom("status").show(ui, |ui| msgs.extend(status_bar(wb, ui, &shown)));
    // The side panel takes the window's whole height, made before the table below the
    // timeline: under the simulator's settings, the analysis had only what the table left
    // (a sixth of a 900-point window).
    let (show_sim, show_analysis) = (wb.view.panels.simulator, wb.view.panels.analysis);
    if show_sim || show_analysis {
        egui::Panel::right("side").resizable(true).default_size(SIDE_WIDTH).show(ui, |ui| {
            let sim_ui = |ui: &mut egui::Ui, msgs: &mut Vec<Message>| {
                let scroll = egui::ScrollArea::both().id_salt("sim-scroll").auto_shrink([false, false]);
                let clock = |t: Ps| sim_clock(&shown, wb.sim.source, t);
                scroll.show(ui, |ui| msgs.extend(sim_panel::panel(ui, wb.sim, &clock)));
            };
            if show_sim && show_analysis {
                // The simulator gets its own resizable part at the top; the analysis below
                // always keeps a quarter of the height, and at first more than half (the
                // side panel's height is the window's, whichever other panels are shown).
                let height = ui.available_height();
                egui::Panel::top("simulator")
                    .resizable(true)
                    .default_size((height * 0.45).min(400.0))
                    .max_size(height * 0.75)
                    .show(ui, |ui| sim_ui(ui, &mut msgs));
            } else if show_sim {
                sim_ui(ui, &mut msgs);
            }
            if show_analysis {
                ui.heading("Analysis");
                let a = wb.analysis;
                let state = analysis_panel::PanelState {
                    registry: wb.registry,
                    editor: &a.rules,
                    view: &a.panel,
                    results: &a.results,
                    missing: &a.missing,
                    placement: &a.placement_used,
                };
                let names = wb.doc.labels();
                msgs.extend(analysis_panel::panel(
                    ui,
                    state,
                    &mut cache.plots,
                    wb.busy(JobKind::Analysis),
                    &names,
                ));
            }
        });
    }
    // Waveform-only captures have no events to list: the timeline gets the room.
    let has_events = shown.iter().any(|s| !s.source().events.is_empty());
    if wb.view.panels.table && has_events {
        egui::Panel::bottom("table").resizable(true).default_size(230.0).show(ui, |ui| {
            let selected = wb.view.overlay.selected;
            let busy = wb.busy(JobKind::Table);
            // The inspector keeps a fixed width; the table, whose columns need the room, the
            // rest. The strip's cells are laid edge to edge (no spacing between them, which
            // it would count past the panel's edge), each with the usual spacing inside.
            use egui_extras::{Size, StripBuilder};
            let spacing = ui.spacing().item_spacing;
            ui.spacing_mut().item_spacing.x = 0.0;
            StripBuilder::new(ui).size(Size::remainder()).size(Size::exact(INSPECTOR_WIDTH)).horizontal(
                |mut strip| {
                    strip.cell(|ui| {
                        ui.spacing_mut().item_spacing = spacing;
                        msgs.extend(table::show(ui, wb.table, busy, &shown, selected, &wb.view.viewport));
                    });
                    strip.cell(|ui| {
                        ui.spacing_mut().item_spacing = spacing;
                        // A strip's cells do not wrap text; the inspector's values must.
                        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Wrap);
                        msgs.extend(table::inspector(ui, &shown, selected, &wb.view.overlay.related));
                    });
                },
            );
        });
    }
    if wb.view.panels.log {
        egui::Panel::bottom("log").resizable(true).default_size(120.0).show(ui, |ui| log_ui(wb.errors, ui));
    }
    if wb.view.panels.tracks {
        egui::Panel::left("tracks")
            .resizable(true)
            .default_size(TRACKS_WIDTH)
            .size_range(120.0..=640.0)
            .show(ui, |ui| {
                ui.strong("Tracks");
                msgs.extend(tracks_panel(wb, ui, &shown));
            });
    }
    egui::CentralPanel::no_frame().show(ui, |ui| {
        if !wb.errors.is_empty() {
            msgs.extend(errors_ui(wb.errors, ui));
        }
        if shown.is_empty() && !wb.busy(JobKind::Load) {
            ui.centered_and_justified(|ui| {
                ui.weak(
                    "Open a capture (Ctrl+O), drop files here, or start the simulator (View > Simulator).",
                );
            });
        } else {
            let v = wb.view;
            let (meshes, layout, overview) = (&mut cache.meshes, &mut cache.layout, &mut cache.overview);
            // The search's matches while the table's filter is set.
            let t = wb.table;
            let matches =
                (!t.rows.filter.trim().is_empty() && !t.rows.rows.is_empty()).then(|| timeline::Matches {
                    rows: &t.rows.rows,
                    by_time: t.rows.sort == crate::gui::table::TableSort::Time,
                });
            let range = wb.doc.time_range();
            msgs.extend(timeline::show(
                ui,
                &shown,
                &v.viewport,
                &v.overlay,
                v.scroll,
                range,
                matches,
                meshes,
                overview,
                layout,
            ));
        }
    });
    // The timeline's width and how far its lanes scroll are the view's to know (zooming
    // keeps a point under the pointer; a fitted view stays fitted).
    let layout = &cache.layout;
    if (layout.data_width - wb.view.width).abs() > 0.5 || (layout.max_scroll - wb.view.max_scroll).abs() > 0.5
    {
        msgs.push(ViewMsg::Laid { width: layout.data_width, max_scroll: layout.max_scroll }.into());
    }
    msgs.extend(windows(wb, &ctx));
    msgs
}

/// The windows over the panels: fleet, query, record, palette, dialogs and the file browser.
fn windows(wb: &Scene<'_>, ctx: &egui::Context) -> Vec<Message> {
    let mut msgs = Vec::new();
    let d = wb.dialogs;
    if wb.fleet.open {
        let running = wb.jobs.of_kind(JobKind::Fleet).next().map(|j| j.ticket);
        msgs.extend(fleet::show(ctx, wb.fleet, running));
    }
    if wb.query.open {
        let running = wb.jobs.of_kind(JobKind::Query).next().map(|j| j.ticket);
        msgs.extend(query::show(ctx, wb.query, running));
    }
    if wb.record.open {
        msgs.extend(record::show(ctx, wb.registry, wb.record));
    }
    if d.palette_open {
        msgs.extend(palette::show(ctx, &d.palette_query));
    }
    if d.derive.open {
        msgs.extend(derive_dialog::show(ctx, &d.derive));
    }
    let names = || -> Vec<_> { wb.doc.sources.iter().map(|s| (s.id, s.source().name.clone())).collect() };
    if d.decoder.open {
        msgs.extend(decoder_dialog::show(ctx, wb.registry, &d.decoder, &names()));
    }
    if d.align.open {
        let labelled: Vec<_> = wb.doc.ids().into_iter().zip(wb.doc.labels()).collect();
        msgs.extend(align_dialog::show(
            ctx,
            &d.align,
            &labelled,
            wb.busy(JobKind::Align),
            &wb.analysis.rules.specs,
            wb.registry,
        ));
    }
    if let Some(b) = &d.browser {
        msgs.extend(browser::show(b, ctx));
    }
    msgs
}

fn menu(wb: &Scene<'_>, ui: &mut egui::Ui, shown: &[SourceView<'_>]) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut recent = |ui: &mut egui::Ui| {
        let mut msgs = Vec::new();
        if wb.recent.is_empty() {
            ui.weak("nothing yet");
        }
        for p in wb.recent {
            if ui.button(p.display().to_string()).clicked() {
                msgs.push(FileMsg::Open(vec![p.clone()]).into());
            }
        }
        msgs
    };
    egui::MenuBar::new().ui(ui, |ui| {
        for (title, items) in keymap::MENUS {
            ui.menu_button(*title, |ui| msgs.extend(keymap::menu_items(ui, items, &mut recent)));
        }
        ui.add_space(16.0);
        for s in shown {
            ui.weak(format!("{} · {}", s.source().name, s.source().format));
        }
    });
    msgs
}

fn status_bar(wb: &Scene<'_>, ui: &mut egui::Ui, shown: &[SourceView<'_>]) -> Vec<Message> {
    let mut msgs = Vec::new();
    let view = wb.view;
    ui.horizontal(|ui| {
        let clock = shown.first();
        let fmt = |t: f64| match clock {
            Some(sv) => timeline::clock_text(sv.source(), sv.to_source(t).round() as Ps),
            None => format_seconds(t.round() as Ps),
        };
        if let Some(a) = view.overlay.cursor_a {
            ui.colored_label(theme::CURSOR_A, format!("A {}", fmt(a)));
        }
        if let Some(b) = view.overlay.cursor_b {
            ui.colored_label(theme::CURSOR_B, format!("B {}", fmt(b)));
        }
        if let (Some(a), Some(b)) = (view.overlay.cursor_a, view.overlay.cursor_b) {
            let d = (b - a).abs();
            let hz = if d > 0.0 { 1e12 / d } else { 0.0 };
            ui.strong(format!("Δ {}  1/Δ {}", format_seconds(d.round() as Ps), format_hz(hz)));
            // PulseView's count: samples of the focused lane's capture (else the first
            // sampled one) between the cursors.
            let focused = view.overlay.focused.and_then(|f| find(shown, f.source));
            let sampled = focused.into_iter().chain(shown.iter().copied()).find_map(|sv| {
                let (_, rate) = sv.source().metadata.iter().find(|(k, _)| k == "samplerate")?;
                let hz = latscope_importers::sigrok::parse_samplerate(rate).ok()?;
                Some((sv, hz))
            });
            if let Some((sv, rate)) = sampled {
                let n = samples_between(sv.to_source(a), sv.to_source(b), rate);
                ui.strong(format!("{n} samples")).on_hover_text(format!(
                    "at {} ({})",
                    format_hz(rate as f64),
                    sv.source().name
                ));
            }
        }
        ui.separator();
        ui.weak(format!(
            "{} / px · view {}",
            format_seconds(view.viewport.ps_per_px.round() as Ps),
            format_seconds((view.viewport.ps_per_px * view.data_width()).round() as Ps)
        ));
        ui.weak(sources_summary(shown.iter().map(|s| s.source())));
        for j in wb.jobs.of_kind(JobKind::Load) {
            ui.separator();
            let name = j.path.as_deref().map_or_else(String::new, |p| {
                p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
            });
            ui.add(egui::ProgressBar::new(j.progress()).desired_width(140.0).text(format!("loading {name}")));
            if ui.small_button("Cancel").clicked() {
                msgs.push(FileMsg::CancelJob(j.ticket).into());
            }
        }
        if wb.busy(JobKind::Analysis) {
            ui.spinner();
            ui.weak("analysing");
        }
        if let Some(n) = wb.notice {
            ui.separator();
            ui.weak(n);
        }
    });
    msgs
}

/// Sample periods of a capture sampled at `rate_hz` between source times `a` and `b` (ps),
/// as PulseView counts them: whole periods, rounded.
pub fn samples_between(a: f64, b: f64, rate_hz: u64) -> u64 {
    ((b - a).abs() * rate_hz as f64 / 1e12).round() as u64
}

fn tracks_panel(wb: &Scene<'_>, ui: &mut egui::Ui, shown: &[SourceView<'_>]) -> Vec<Message> {
    let mut msgs = Vec::new();
    let view = wb.view;
    // The list never sizes the panel: it scrolls in the width the user gave the panel, so
    // nothing drawn in it (a long name, the up/down buttons of the focused lane) can widen
    // the panel and move the timeline's time axis.
    egui::ScrollArea::both().id_salt("tracks").auto_shrink([false, false]).show(ui, |ui| {
        for sv in shown {
            egui::CollapsingHeader::new(egui::RichText::new(&sv.source().name).strong())
                .id_salt(("source", sv.id))
                .default_open(true)
                .show(ui, |ui| {
                    // Where the source sits on the timeline: its offset and drift.
                    let placed = timeline::placement_text(shown, sv.id);
                    ui.add(egui::Label::new(egui::RichText::new(placed).small().weak()).wrap())
                        .on_hover_text(sv.source().origin.domain.describe());
                    // Decoded rows go under their decoder, and the event lanes a decode
                    // added under those, closed: a decode adds a lane per row and two per
                    // annotation kind.
                    let groups = crate::gui::decoder_dialog::decoded_lane_groups(sv.prepared);
                    let group_of = |vi: usize| groups.get(&sv.lanes[vi].name);
                    for vi in (0..sv.lanes.len()).filter(|&vi| group_of(vi).is_none()) {
                        msgs.extend(track_row(ui, view.overlay.focused, sv, vi));
                    }
                    let mut decoders: Vec<&str> = groups.values().map(|(d, _)| d.as_str()).collect();
                    decoders.sort_unstable();
                    decoders.dedup();
                    for decoder in decoders {
                        let member = |vi: usize, events: bool| {
                            group_of(vi).is_some_and(|(d, e)| d == decoder && *e == events)
                        };
                        egui::CollapsingHeader::new(format!("{decoder} (decoded)"))
                            .id_salt(("decoder", sv.id, decoder))
                            .default_open(true)
                            .show(ui, |ui| {
                                for vi in (0..sv.lanes.len()).filter(|&vi| member(vi, false)) {
                                    msgs.extend(track_row(ui, view.overlay.focused, sv, vi));
                                }
                                let events: Vec<usize> =
                                    (0..sv.lanes.len()).filter(|&vi| member(vi, true)).collect();
                                if !events.is_empty() {
                                    egui::CollapsingHeader::new(format!("its events ({})", events.len()))
                                        .id_salt(("decoder-events", sv.id, decoder))
                                        .default_open(false)
                                        .show(ui, |ui| {
                                            for &vi in &events {
                                                msgs.extend(track_row(ui, view.overlay.focused, sv, vi));
                                            }
                                        });
                                }
                            });
                    }
                });
        }
        if !view.overlay.markers.is_empty() {
            ui.separator();
            ui.strong("Markers");
            for (i, (name, _)) in view.overlay.markers.iter().enumerate() {
                ui.horizontal(|ui| {
                    let mut text = name.clone();
                    if ui.add(egui::TextEdit::singleline(&mut text).desired_width(90.0)).changed() {
                        msgs.push(ViewMsg::RenameMarker(i, text).into());
                    }
                    if ui.small_button("go").clicked() {
                        msgs.push(ViewMsg::JumpMarker(i).into());
                    }
                    if ui.small_button("x").clicked() {
                        msgs.push(ViewMsg::RemoveMarker(i).into());
                    }
                });
            }
        }
    });
    msgs
}

/// One lane's row in the track list: shown or not, its colour, its name (click to focus,
/// right-click for its menu) and, when focused, its up/down buttons.
fn track_row(ui: &mut egui::Ui, focused: Option<LaneId>, sv: &SourceView<'_>, vi: usize) -> Vec<Message> {
    let mut msgs = Vec::new();
    let Some(v) = sv.lanes.get(vi) else { return msgs };
    let id = LaneId { source: sv.id, lane: vi };
    ui.horizontal(|ui| {
        let mut visible = v.visible;
        if ui.checkbox(&mut visible, "").on_hover_text("show / hide").changed() {
            msgs.push(ViewMsg::ToggleLane(id).into());
        }
        let (r, p) = ui.allocate_painter(egui::vec2(8.0, 14.0), egui::Sense::hover());
        p.rect_filled(r.rect, 2.0, v.color);
        let focused = focused == Some(id);
        let lane = sv.data_lane(vi);
        let kind = lane.map_or("", |l| l.kind.class().name());
        // Names are cut at the list's width; the focused row keeps room for its up/down
        // buttons, so it is no wider.
        let reserve = if focused { MOVE_BUTTONS_WIDTH } else { 0.0 };
        let name_width = (ui.available_width() - reserve).max(24.0);
        let label = ui
            .scope(|ui| {
                ui.set_max_width(name_width);
                ui.add(egui::Button::selectable(focused, v.name.as_str()).truncate())
            })
            .inner
            .on_hover_text(format!("{} ({kind})", v.name));
        if label.clicked() {
            msgs.push(ViewMsg::FocusLane(id).into());
        }
        label.context_menu(|ui| {
            msgs.extend(lane_menu(ui, id, &v.name, v.color));
            if ui.button(if v.pinned { "Unpin" } else { "Pin to the top" }).clicked() {
                msgs.push(ViewMsg::PinLane(id).into());
                ui.close();
            }
            if lane.is_some_and(|l| l.kind.class() == LaneClass::Analog) {
                ui.separator();
                if ui.button("Derive digital…").clicked() {
                    msgs.push(DeriveMsg::Open(id).into());
                    ui.close();
                }
            }
        });
        if focused {
            if ui.small_button("up").clicked() {
                msgs.push(ViewMsg::MoveLane(id, -1).into());
            }
            if ui.small_button("down").clicked() {
                msgs.push(ViewMsg::MoveLane(id, 1).into());
            }
        }
    });
    msgs
}

/// The lane's context menu in the track list: its name and colour.
fn lane_menu(ui: &mut egui::Ui, id: LaneId, name: &str, color: egui::Color32) -> Vec<Message> {
    let mut msgs = Vec::new();
    ui.horizontal(|ui| {
        ui.label("Name");
        let mut name = name.to_owned();
        if ui.text_edit_singleline(&mut name).changed() {
            msgs.push(ViewMsg::RenameLane(id, name).into());
        }
    });
    ui.horizontal(|ui| {
        ui.label("Colour");
        let mut color = color;
        if egui::color_picker::color_edit_button_srgba(ui, &mut color, egui::color_picker::Alpha::Opaque)
            .changed()
        {
            msgs.push(ViewMsg::SetLaneColor(id, color).into());
        }
    });
    msgs
}

/// The error banner: the latest errors, each wrapped to the width it is given (a long
/// message never widens the layout) and cut at [`errors::BANNER_CHARS`], with a close
/// button; Esc closes them all. Every error is also in the log.
fn errors_ui(errors: &Errors, ui: &mut egui::Ui) -> Vec<Message> {
    let mut msgs = Vec::new();
    let width = ui.available_width();
    let shown = errors.len().min(4);
    for (i, e) in errors.iter().enumerate().rev().take(shown) {
        // Warnings (the file loaded, something was recovered) in amber, errors in red.
        let (fill, kind) =
            if errors.is_warning(i) { (theme::WARNING.get(), "Warning") } else { (theme::IRQ, "Error") };
        egui::Frame::new()
            .fill(fill.gamma_multiply(0.25))
            .inner_margin(egui::Margin::symmetric(8, 4))
            .corner_radius(4)
            .show(ui, |ui| {
                ui.set_width(width - 16.0);
                ui.horizontal_top(|ui| {
                    let text_width = (ui.available_width() - 60.0).max(40.0);
                    ui.allocate_ui_with_layout(
                        egui::vec2(text_width, 0.0),
                        egui::Layout::top_down(egui::Align::Min),
                        |ui| {
                            ui.set_max_width(text_width);
                            ui.label(egui::RichText::new(kind).strong().color(fill));
                            let text = egui::RichText::new(errors::banner_text(e)).color(theme::TEXT);
                            ui.add(egui::Label::new(text).wrap());
                        },
                    );
                    ui.with_layout(egui::Layout::right_to_left(egui::Align::Min), |ui| {
                        if ui.button("Close").on_hover_text("Close (Esc closes all)").clicked() {
                            msgs.push(ShellMsg::DismissError(i).into());
                        }
                    });
                });
            });
    }
    if !errors.is_empty() {
        ui.horizontal(|ui| {
            if errors.len() > shown {
                ui.weak(format!("{} more", errors.len() - shown));
            }
            if ui.small_button("Show log").clicked() {
                msgs.push(ViewMsg::TogglePanel(PanelId::Log).into());
            }
        });
    }
    msgs
}

/// The log panel: every error and warning so far, oldest first.
fn log_ui(errors: &Errors, ui: &mut egui::Ui) {
    ui.strong("Log");
    let scroll =
        egui::ScrollArea::vertical().id_salt("log").stick_to_bottom(true).auto_shrink([false, false]);
    scroll.show(ui, |ui| {
        if errors.log().is_empty() {
            ui.weak("No errors or warnings.");
        }
        for e in errors.log() {
            let mut text = egui::RichText::new(e).monospace();
            if e.starts_with("warning: ") {
                text = text.color(theme::WARNING);
            }
            ui.add(egui::Label::new(text).wrap());
        }
    });
}

/// The keyboard's messages this frame (the keymap's shortcuts) and dropped files.
pub fn keyboard(ctx: &egui::Context, palette_open: bool) -> Vec<Message> {
    let typing = ctx.egui_wants_keyboard_input() || palette_open;
    let mut msgs = ctx.input_mut(|i| keymap::keyboard(i, typing));
    let dropped: Vec<PathBuf> =
        ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
    if !dropped.is_empty() {
        msgs.push(FileMsg::Open(dropped).into());
    }
    msgs
}

/// Simulated time `t` of the run's source as the timeline's clock reads it (the ruler's),
/// with the time since the run began.
fn sim_clock(shown: &[SourceView<'_>], sim: Option<crate::gui::document::SourceId>, t: Ps) -> String {
    let since = format_seconds(t);
    match sim.and_then(|id| crate::gui::view::find(shown, id)) {
        Some(sv) => format!("{since} ({} on the timeline)", timeline::common_text(shown, sv.to_common(t))),
        None => since,
    }
}

fn format_hz(hz: f64) -> String {
    if hz >= 1e9 {
        format!("{:.3} GHz", hz / 1e9)
    } else if hz >= 1e6 {
        format!("{:.3} MHz", hz / 1e6)
    } else if hz >= 1e3 {
        format!("{:.3} kHz", hz / 1e3)
    } else {
        format!("{hz:.3} Hz")
    }
}

/// The status bar's count of what is loaded: sources, then events and signals where there
/// are any (a waveform has signals and no events; "0 events" would read as an empty file).
pub fn sources_summary<'a>(sources: impl Iterator<Item = &'a Source>) -> String {
    let (mut n, mut events, mut signals) = (0usize, 0usize, 0usize);
    for s in sources {
        n += 1;
        events += s.events.len();
        signals += s.digital.len() + s.analog.len();
    }
    let plural = |k: usize, one: &str| format!("{k} {one}{}", if k == 1 { "" } else { "s" });
    let mut out = plural(n, "source");
    if events > 0 || signals == 0 {
        out += &format!(" · {}", plural(events, "event"));
    }
    if signals > 0 {
        out += &format!(" · {}", plural(signals, "signal"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use latscope_model::{DigitalTrack, SourceKind};

    #[test]
    fn the_status_counts_events_and_signals_that_are_there() {
        let mut wave = Source::new("fsm.ghw", "ghw", SourceKind::File);
        wave.digital.push(DigitalTrack::new("clk", 0));
        wave.digital.push(DigitalTrack::new("busy", 0));
        assert_eq!(sources_summary([&wave].into_iter()), "1 source · 2 signals");
        let empty = Source::new("none", "ftrace-text", SourceKind::File);
        assert_eq!(sources_summary([&empty].into_iter()), "1 source · 0 events");
        let trace = latscope_engine::open(
            std::path::Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../samples/ftrace/virtio_blk_direct_read.txt"
            )),
            &latscope_importers::LoadControl::new(),
        )
        .expect("sample loads");
        assert_eq!(sources_summary([&trace, &wave].into_iter()), "2 sources · 3289 events · 2 signals");
    }
}
