//! The fleet window: a dataset of many labelled captures (`latscope report --dataset`)
//! aggregated as `latscope fleet` does, shown as a table of groups, a p99 trend plot and a
//! CDF of the selected group, with each group's worst pairs. A click on a worst pair opens
//! its capture and shows that pair on the timeline.
//!
//! This module owns the window's state ([`FleetState`]), its messages ([`FleetMsg`]), their
//! handling ([`Workbench::update_fleet`]) and the view ([`show`]). The aggregation scans
//! every pair of the dataset, so it runs as a job ([`JobKind::Fleet`]).

use super::app::Workbench;
use super::jobs::{JobKind, Ticket};
use super::message::Message;
use super::theme;
use super::timeline::{Arrow, ArrowEnd};
use egui_plot::{GridMark, Legend, Line, Plot};
use latscope_fleet::{FleetReport, Group, WorstPair};
use latscope_model::{PS_PER_S, Ps};
use std::path::PathBuf;
use std::sync::Arc;

/// What the fleet window shows and what it was asked.
#[derive(Debug, Default)]
pub struct FleetState {
    pub open: bool,
    /// The dataset directory, as typed.
    pub dir: String,
    /// `--group-by`, comma-separated, as typed.
    pub group_by: String,
    /// `--trend`, as typed (empty: no trend).
    pub trend: String,
    /// The last aggregation, and the dataset it was of.
    pub report: Option<Arc<FleetReport>>,
    pub error: Option<String>,
    /// The analysis whose groups the table and plots show.
    pub analysis: Option<String>,
    /// The selected group (an index into the report's groups).
    pub selected: Option<usize>,
    /// A worst pair to show once its capture has loaded.
    pub jump: Option<PendingJump>,
}

/// A pair to show when the source named `name` (the file's name, as the workbench names
/// sources) has loaded: seconds on that file's own clock.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingJump {
    pub path: PathBuf,
    pub start_s: f64,
    pub end_s: f64,
}

/// Everything the fleet window asks of `update`.
#[derive(Debug)]
pub enum FleetMsg {
    /// Show the window (File > Open fleet dataset…).
    Show,
    Close,
    /// The form as edited: directory, group-by labels, trend label.
    Edit {
        dir: String,
        group_by: String,
        trend: String,
    },
    /// Aggregate the dataset the form names.
    Load,
    /// The aggregation job's answer.
    Loaded {
        ticket: Ticket,
        result: Result<Arc<FleetReport>, String>,
    },
    SelectAnalysis(String),
    SelectGroup(usize),
    /// Open the worst pair's capture and show the pair.
    OpenWorst(WorstPair),
}

fn split_names(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

impl FleetState {
    /// The groups of the chosen analysis, with their index in the report.
    pub fn shown_groups(&self) -> Vec<(usize, &Group)> {
        let Some(r) = &self.report else { return Vec::new() };
        r.groups.iter().enumerate().filter(|(_, g)| Some(&g.analysis) == self.analysis.as_ref()).collect()
    }
}

impl Workbench {
    /// Applies a [`FleetMsg`].
    pub(super) fn update_fleet(&mut self, msg: FleetMsg) {
        match msg {
            FleetMsg::Show => self.fleet.open = true,
            FleetMsg::Close => self.fleet.open = false,
            FleetMsg::Edit { dir, group_by, trend } => {
                self.fleet.dir = dir;
                self.fleet.group_by = group_by;
                self.fleet.trend = trend;
            }
            FleetMsg::Load => {
                self.fleet.open = true;
                self.fleet.error = None;
                let dir = PathBuf::from(self.fleet.dir.trim());
                let group_by = split_names(&self.fleet.group_by);
                let trend = Some(self.fleet.trend.trim().to_owned()).filter(|t| !t.is_empty());
                self.jobs.spawn(JobKind::Fleet, None, move |cx| {
                    let stop = || cx.cancelled();
                    let result = latscope_fleet::summarize(&dir, &group_by, trend.as_deref(), &stop)
                        .map(Arc::new)
                        .map_err(|e| e.to_string());
                    if !cx.cancelled() {
                        cx.send(Message::Fleet(FleetMsg::Loaded { ticket: cx.ticket, result }));
                    }
                });
            }
            FleetMsg::Loaded { ticket, result } => {
                if !self.jobs.accept(ticket, |_| true) {
                    return;
                }
                match result {
                    Ok(report) => {
                        let keep = self
                            .fleet
                            .analysis
                            .as_ref()
                            .filter(|a| report.groups.iter().any(|g| &g.analysis == *a));
                        self.fleet.analysis =
                            keep.cloned().or_else(|| report.groups.first().map(|g| g.analysis.clone()));
                        self.fleet.selected = None;
                        self.fleet.report = Some(report);
                        let first = self.fleet.shown_groups().first().map(|(i, _)| *i);
                        self.fleet.selected = first;
                    }
                    Err(e) => self.fleet.error = Some(e),
                }
            }
            FleetMsg::SelectAnalysis(a) => {
                self.fleet.analysis = Some(a);
                let first = self.fleet.shown_groups().first().map(|(i, _)| *i);
                self.fleet.selected = first;
            }
            FleetMsg::SelectGroup(i) => self.fleet.selected = Some(i),
            FleetMsg::OpenWorst(w) => {
                let path = PathBuf::from(&w.path);
                self.fleet.jump =
                    Some(PendingJump { path: path.clone(), start_s: w.start_s, end_s: w.end_s });
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                let loaded = self.view.sources.iter().any(|s| Some(&s.source().name) == name.as_ref());
                if !loaded {
                    self.update(Message::OpenFiles(vec![path]));
                }
                self.fleet_jump_step();
            }
        }
    }

    /// Shows the pending worst pair once its capture is loaded (called every frame; a load
    /// that failed leaves its error in the window and drops the jump).
    pub(super) fn fleet_jump_step(&mut self) {
        let Some(jump) = &self.fleet.jump else { return };
        // A new source is fitted to the window once laid out; the pair is shown after that.
        if self.jobs.busy(JobKind::Load) || self.view.refit {
            return;
        }
        let name = jump.path.file_name().map(|n| n.to_string_lossy().into_owned());
        let found = self.view.sources.iter().position(|s| Some(&s.source().name) == name.as_ref()).map(|i| {
            let sv = &self.view.sources[i];
            let origin = sv.source().origin;
            let to_ps =
                |s: f64| -> Ps { ((s - origin.secs as f64) * PS_PER_S as f64).round() as Ps - origin.ps };
            let (start, end) = (to_ps(jump.start_s), to_ps(jump.end_s));
            // The pair's ends by time: the dataset keeps no event index.
            Arrow {
                source: i,
                a: sv.to_common(start),
                b: sv.to_common(end),
                start: ArrowEnd { t: start, event: None },
                end: ArrowEnd { t: end, event: None },
            }
        });
        self.fleet.jump = None;
        if let Some(arrow) = found {
            self.view.show_pair(arrow);
        }
    }
}

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
                msgs.push(Message::CancelJob(ticket));
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

/// Opens the fleet window on `dir` and starts its aggregation (`latscope --dataset`).
pub fn start(wb: &mut Workbench, dir: &std::path::Path, group_by: &[String], trend: Option<&str>) {
    wb.update(Message::Fleet(FleetMsg::Edit {
        dir: dir.display().to_string(),
        group_by: group_by.join(","),
        trend: trend.unwrap_or_default().to_owned(),
    }));
    wb.update(Message::Fleet(FleetMsg::Load));
}
