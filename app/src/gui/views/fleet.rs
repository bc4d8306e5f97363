//! The fleet window: the dataset form, a table of groups, a p99 trend plot and a CDF of the
//! selected group, with each group's worst pairs (a click opens the capture at the pair).

use crate::gui::fleet::FleetState;
use crate::gui::jobs::Ticket;
use crate::gui::message::{FileMsg, FleetMsg, Message};
use crate::gui::theme;
use egui_plot::{GridMark, Legend, Line, Plot};
use latscope_fleet::{FleetReport, Group};

/// `soc=imx93 kernel=6.6`.
fn group_name(g: &Group) -> String {
    latscope_fleet::aggregate::labels_text(&g.labels)
}

fn ns(v: Option<f64>) -> String {
    latscope_analysis::report::human_opt(v)
}

/// The fleet window; `running` is the aggregation job, if one runs. Returns what the user did.
pub fn show(ctx: &egui::Context, st: &FleetState, running: Option<Ticket>) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut open = true;
    egui::Window::new("Fleet dataset")
        .id(egui::Id::unique("fleet-window"))
        .open(&mut open)
        .default_size([900.0, 640.0])
        .vscroll(true)
        .show(ctx, |ui| {
            form(ui, st, running, &mut msgs);
            if let Some(e) = &st.error {
                ui.colored_label(theme::IRQ, e);
            }
            let Some(report) = &st.report else {
                if running.is_none() {
                    ui.weak("Type a dataset directory (written by `latscope report --label … --dataset DIR`) and press Aggregate.");
                }
                return;
            };
            ui.weak(format!("{}: {} captures", report.dataset, report.captures));
            for w in report.warnings.iter().take(3) {
                ui.colored_label(theme::ANALOG, w);
            }
            analysis_picker(ui, st, report, &mut msgs);
            groups_table(ui, st, &mut msgs);
            ui.separator();
            ui.columns(2, |cols| {
                trend_plot(&mut cols[0], st, report);
                cdf_plot(&mut cols[1], st, report);
            });
            ui.separator();
            worst_list(ui, st, report, &mut msgs);
        });
    if !open {
        msgs.push(Message::Fleet(FleetMsg::Close));
    }
    msgs
}

fn form(ui: &mut egui::Ui, st: &FleetState, running: Option<Ticket>, msgs: &mut Vec<Message>) {
    let (mut dir, mut group_by, mut trend) = (st.dir.clone(), st.group_by.clone(), st.trend.clone());
    let mut changed = false;
    let mut enter = false;
    egui::Grid::new("fleet-form").num_columns(2).show(ui, |ui| {
        for (label, text, hint) in [
            ("Dataset", &mut dir, "/srv/fleet"),
            ("Group by", &mut group_by, "board,kernel"),
            ("Trend", &mut trend, "commit (optional)"),
        ] {
            ui.label(label);
            let r = ui.add(egui::TextEdit::singleline(text).hint_text(hint).desired_width(420.0));
            changed |= r.changed();
            enter |= r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            ui.end_row();
        }
    });
    if changed {
        msgs.push(Message::Fleet(FleetMsg::Edit { dir, group_by, trend }));
    }
    ui.horizontal(|ui| {
        let go = ui.add_enabled(running.is_none(), egui::Button::new("Aggregate")).clicked();
        if go || (enter && running.is_none()) {
            msgs.push(Message::Fleet(FleetMsg::Load));
        }
        if let Some(ticket) = running {
            ui.spinner();
            ui.weak("scanning the pairs…");
            if ui.small_button("Cancel").clicked() {
                msgs.push(Message::Files(FileMsg::CancelJob(ticket)));
            }
        }
    });
}

fn analysis_picker(ui: &mut egui::Ui, st: &FleetState, report: &FleetReport, msgs: &mut Vec<Message>) {
    let mut names: Vec<&str> = report.groups.iter().map(|g| g.analysis.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    ui.horizontal(|ui| {
        ui.label("Analysis");
        let current = st.analysis.as_deref().unwrap_or("");
        egui::ComboBox::from_id_salt("fleet-analysis").selected_text(current).show_ui(ui, |ui| {
            for n in names {
                if ui.selectable_label(n == current, n).clicked() {
                    msgs.push(Message::Fleet(FleetMsg::SelectAnalysis(n.to_owned())));
                }
            }
        });
    });
}

fn groups_table(ui: &mut egui::Ui, st: &FleetState, msgs: &mut Vec<Message>) {
    egui::Grid::new("fleet-groups").striped(true).num_columns(8).show(ui, |ui| {
        for h in ["group", "captures", "pairs", "p50", "p90", "p99", "max", "worst"] {
            ui.strong(h);
        }
        ui.end_row();
        for (i, g) in st.shown_groups() {
            if ui.selectable_label(st.selected == Some(i), group_name(g)).clicked() {
                msgs.push(Message::Fleet(FleetMsg::SelectGroup(i)));
            }
            ui.label(g.captures.to_string());
            ui.label(g.count.to_string());
            let s = &g.stats_ns;
            for v in [s.p50, s.p90, s.p99, s.max] {
                ui.label(ns(v));
            }
            match g.worst.first() {
                Some(w) => {
                    let text = format!("open {} at {:.6} s", file_name(&w.path), w.start_s);
                    if ui.button(text).on_hover_text(&w.path).clicked() {
                        msgs.push(Message::Fleet(FleetMsg::OpenWorst(w.clone())));
                    }
                }
                None => {
                    ui.weak("-");
                }
            }
            ui.end_row();
        }
    });
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// p99 per value of the trend label, one line per group of the chosen analysis.
fn trend_plot(ui: &mut egui::Ui, st: &FleetState, report: &FleetReport) {
    let trends: Vec<_> = report
        .trend
        .iter()
        .filter(|t| Some(&t.analysis) == st.analysis.as_ref() && !t.points.is_empty())
        .collect();
    let Some(first) = trends.first() else {
        ui.weak("No trend: name a label in Trend (a commit, a date) and aggregate again.");
        return;
    };
    ui.strong(format!("p99 over {}", first.label));
    // Every value of the label in order of first appearance, across the groups.
    let mut values: Vec<&str> = Vec::new();
    for t in &trends {
        for p in &t.points {
            if !values.contains(&p.value.as_str()) {
                values.push(&p.value);
            }
        }
    }
    let axis: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
    // One mark every `every` values, far enough apart for their labels (egui_plot hides
    // labels closer than its label spacing, which left only the first of ten commits).
    let longest = axis.iter().map(|v| v.chars().count()).max().unwrap_or(1) as f32;
    let px_per_value = ui.available_width() / values.len().max(2).saturating_sub(1) as f32;
    let every = [1usize, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]
        .into_iter()
        .find(|k| *k as f32 * px_per_value >= (longest * 7.0 + 16.0).max(72.0))
        .unwrap_or(10_000);
    Plot::new("fleet-trend")
        .height(200.0)
        .allow_scroll(false)
        .legend(Legend::default())
        .x_grid_spacer(move |input| {
            let (lo, hi) = input.bounds;
            let (first, last) =
                ((lo.max(0.0) / every as f64).ceil() as usize, (hi.max(0.0) / every as f64) as usize);
            (first..=last).map(|i| GridMark { value: (i * every) as f64, step_size: every as f64 }).collect()
        })
        .x_axis_formatter(move |m, _| {
            let i = m.value.round();
            if (m.value - i).abs() < 1e-6 && i >= 0.0 {
                axis.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_axis_formatter(|m, _| {
            if m.value >= 0.0 { latscope_analysis::report::human_ns(m.value) } else { String::new() }
        })
        .show(ui, |p| {
            for (i, t) in trends.iter().enumerate() {
                let pts: Vec<[f64; 2]> = t
                    .points
                    .iter()
                    .filter_map(|pt| {
                        let x = values.iter().position(|v| *v == pt.value)?;
                        Some([x as f64, pt.stats_ns.p99?])
                    })
                    .collect();
                let name = latscope_fleet::aggregate::labels_text(&t.labels);
                p.line(Line::new(name, pts).color(theme::series_color(i)));
            }
        });
    for t in &trends {
        if let Some(c) = &t.first_change {
            ui.label(format!(
                "{}: p99 moved {:+.1} % at {}={} ({} -> {})",
                latscope_fleet::aggregate::labels_text(&t.labels),
                c.change * 100.0,
                t.label,
                c.value,
                latscope_analysis::report::human_ns(c.from_p99_ns),
                latscope_analysis::report::human_ns(c.p99_ns)
            ));
        }
    }
}

/// The selected group's CDF (fraction of pairs at or below a latency).
fn cdf_plot(ui: &mut egui::Ui, st: &FleetState, report: &FleetReport) {
    let Some(g) = st.selected.and_then(|i| report.groups.get(i)) else { return };
    ui.strong(format!("CDF of {} · {}", g.analysis, group_name(g)));
    let mut pts: Vec<[f64; 2]> = Vec::with_capacity(g.cdf.len());
    for &(x, y) in &g.cdf {
        pts.push([x, y]);
    }
    Plot::new("fleet-cdf")
        .height(200.0)
        .allow_scroll(false)
        .include_y(0.0)
        .include_y(1.0)
        .x_axis_formatter(|m, _| {
            if m.value >= 0.0 { latscope_analysis::report::human_ns(m.value) } else { String::new() }
        })
        .show(ui, |p| p.line(Line::new("CDF", pts).color(theme::ACCENT.get())));
}

fn worst_list(ui: &mut egui::Ui, st: &FleetState, report: &FleetReport, msgs: &mut Vec<Message>) {
    let Some(g) = st.selected.and_then(|i| report.groups.get(i)) else { return };
    ui.strong(format!("Worst pairs of {} · {}", g.analysis, group_name(g)));
    egui::Grid::new("fleet-worst").striped(true).num_columns(5).show(ui, |ui| {
        for h in ["latency", "capture", "file", "at", "key"] {
            ui.strong(h);
        }
        ui.end_row();
        for w in &g.worst {
            ui.label(latscope_analysis::report::human_ns(w.latency_ns));
            ui.monospace(w.capture.get(..8).unwrap_or(&w.capture));
            if ui.link(file_name(&w.path)).on_hover_text(&w.path).clicked() {
                msgs.push(Message::Fleet(FleetMsg::OpenWorst(w.clone())));
            }
            ui.label(format!("{:.6} s", w.start_s));
            ui.label(&w.key);
            ui.end_row();
        }
    });
}
