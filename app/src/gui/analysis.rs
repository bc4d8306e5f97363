//! The analysis panel: the rules to run (presets and rule specs typed by the user, checked
//! as they type), and per analysis a statistics table, a latency histogram (egui_plot) and
//! the worst cases, from [`Outcome`]s computed on a worker by the analysis crate's
//! rule-spec API ([`run_analyses`]).

use super::message::Message;
use egui_plot::{Bar, BarChart, Plot};
use latscope_analysis::model::{Ps, format_seconds};
use latscope_analysis::outcome::Outcome;
use latscope_analysis::spec::{PRESETS, parse_spec, run_spec_each};
use latscope_analysis::stats::{self, StatsNs, StatsOptions, Summary};
use std::sync::Arc;

use super::prepare::Prepared;

/// The rules the panel runs, and the one being typed.
#[derive(Debug, Clone)]
pub struct RuleEditor {
    /// Rule specs or preset names (DESIGN §7), run in this order.
    pub specs: Vec<String>,
    /// The rule being typed; added when it parses.
    pub draft: String,
}

impl Default for RuleEditor {
    fn default() -> Self {
        Self { specs: vec!["irq-handler".to_owned()], draft: String::new() }
    }
}

/// What the draft means as the user types: `None` when empty, else the analysis name or
/// the parser's message (`column N: expected ...`).
pub fn validate(text: &str) -> Option<Result<String, String>> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(parse_spec(text).map(|s| s.name().to_owned()).map_err(|e| e.to_string()))
}

/// Runs every spec on every source it applies to. A spec that applies to no source, or
/// does not parse, becomes a message; the others still run.
pub fn run_analyses(sources: &[Arc<Prepared>], specs: &[String]) -> (Vec<Outcome>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for text in specs {
        let spec = match parse_spec(text) {
            Ok(s) => s,
            Err(e) => {
                errors.push(format!("rule `{text}`: {e}"));
                continue;
            }
        };
        let mut reasons = Vec::new();
        let before = out.len();
        // One source at a time: the sources live behind `Arc`s, and most analyses are
        // per source anyway (cross-source rules run on the command line).
        let results = run_spec_each(&spec, sources.iter().map(|p| &p.source));
        for (p, result) in sources.iter().zip(results) {
            match result {
                Ok(outcomes) => out.extend(outcomes),
                Err(e) => reasons.push(format!("{}: {e}", p.source.name)),
            }
        }
        if out.len() == before {
            errors.push(format!("rule `{text}` applies to no open source ({})", reasons.join("; ")));
        }
    }
    (out, errors)
}

/// An outcome with what the panel draws, computed on the worker by the analysis crate's
/// statistics (the same numbers a report prints).
#[derive(Debug, Clone)]
pub struct AnalysisResult {
    pub outcome: Outcome,
    /// `None` when the statistics failed (the message is in `error`).
    pub summary: Option<Summary>,
    pub error: Option<String>,
    /// Sample indices, worst first (the panel links them to the timeline).
    pub worst: Vec<usize>,
    /// A chain's stages: name, count and their statistics, where the time goes.
    pub stages: Vec<(String, u64, StatsNs)>,
}

const WORST_LINKS: usize = 10;

pub fn summarize(outcome: Outcome) -> AnalysisResult {
    let opts = StatsOptions { linear_buckets: 40, ..StatsOptions::default() };
    let (summary, error) = match stats::summarize(&outcome, &opts) {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let mut worst: Vec<usize> = (0..outcome.samples.len()).collect();
    worst.sort_by_key(|&i| (std::cmp::Reverse(outcome.samples[i].latency()), outcome.samples[i].start));
    worst.truncate(WORST_LINKS);
    let stages = outcome
        .stages
        .iter()
        .map(|st| {
            let stats = stats::stats_of(&st.latencies()).unwrap_or_default();
            (st.name.clone(), st.samples.len() as u64, stats)
        })
        .collect();
    AnalysisResult { outcome, summary, error, worst, stages }
}

fn dur(ps: f64) -> String {
    format_seconds(ps.round() as Ps)
}

fn dur_ns(ns: f64) -> String {
    dur(ns * 1e3)
}

/// The rule list and the rule editor, validated as the user types.
fn rules_ui(ui: &mut egui::Ui, editor: &mut RuleEditor) {
    let mut remove = None;
    for (i, spec) in editor.specs.iter().enumerate() {
        ui.horizontal(|ui| {
            if ui.small_button("x").on_hover_text("Remove this rule").clicked() {
                remove = Some(i);
            }
            ui.monospace(spec);
        });
    }
    if let Some(i) = remove {
        editor.specs.remove(i);
    }
    egui::ComboBox::from_id_salt("add-preset").selected_text("Add a preset").show_ui(ui, |ui| {
        for &(name, description) in PRESETS {
            if ui.selectable_label(false, name).on_hover_text(description).clicked() {
                // Presets with a parameter go to the editor for the user to complete.
                if name.contains("CH") {
                    editor.draft = name.replace("CH", "");
                } else if !editor.specs.iter().any(|s| s == name) {
                    editor.specs.push(name.to_owned());
                }
            }
        }
    });
    let edit = ui.add(
        egui::TextEdit::singleline(&mut editor.draft)
            .hint_text("NAME=START -> END by KEY ...")
            .desired_width(f32::INFINITY)
            .font(egui::TextStyle::Monospace),
    );
    let verdict = validate(&editor.draft);
    let mut add = false;
    match &verdict {
        Some(Ok(name)) => {
            ui.horizontal(|ui| {
                ui.colored_label(super::theme::ACCENT, format!("ok: {name}"));
                add = ui.small_button("Add").clicked()
                    || (edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)));
            });
        }
        Some(Err(message)) => {
            ui.colored_label(ui.visuals().error_fg_color, message);
        }
        None => {}
    }
    if add {
        editor.specs.push(editor.draft.trim().to_owned());
        editor.draft.clear();
    }
}

/// The panel; returns what the user asked for.
pub fn panel(
    ui: &mut egui::Ui,
    editor: &mut RuleEditor,
    results: &[AnalysisResult],
    running: bool,
    sources: usize,
) -> Vec<Message> {
    let mut msgs = Vec::new();
    rules_ui(ui, editor);
    ui.horizontal(|ui| {
        let ready = sources > 0 && !running && !editor.specs.is_empty();
        if ui.add_enabled(ready, egui::Button::new("Run")).clicked() {
            msgs.push(Message::RunAnalysis);
        }
        if running {
            ui.spinner();
        }
    });
    if results.is_empty() {
        ui.weak("Run an analysis to see latency statistics.");
        return msgs;
    }
    egui::ScrollArea::vertical().show(ui, |ui| {
        for (ri, r) in results.iter().enumerate() {
            let o = &r.outcome;
            ui.separator();
            ui.strong(format!("{} (source {})", o.name, o.source + 1));
            egui::Grid::new(("stats", ri)).num_columns(2).striped(true).show(ui, |ui| {
                let mut row = |k: &str, v: String| {
                    ui.label(k);
                    ui.monospace(v);
                    ui.end_row();
                };
                row("count", o.samples.len().to_string());
                row("unmatched start / end", format!("{} / {}", o.unmatched_start, o.unmatched_end));
                if let Some(st) = r.summary.as_ref().map(|s| s.stats_ns) {
                    for (name, v) in [
                        ("min", st.min),
                        ("mean", st.mean),
                        ("stddev", st.stddev),
                        ("p50", st.p50),
                        ("p90", st.p90),
                        ("p99", st.p99),
                        ("p99.9", st.p999),
                        ("max", st.max),
                    ] {
                        if let Some(ns) = v {
                            row(name, dur_ns(ns));
                        }
                    }
                }
            });
            if let Some(e) = &r.error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            for note in &o.notes {
                ui.weak(format!("{}: {}", note.what, note.count));
            }
            if !r.stages.is_empty() {
                ui.label("Where the time goes (per stage):");
                egui::Grid::new(("stages", ri)).num_columns(4).striped(true).show(ui, |ui| {
                    for (name, count, st) in &r.stages {
                        ui.monospace(name);
                        ui.monospace(count.to_string());
                        let show = |v: Option<f64>, what: &str| {
                            v.map_or_else(String::new, |ns| format!("{what} {}", dur_ns(ns)))
                        };
                        ui.monospace(show(st.p50, "p50"));
                        ui.monospace(show(st.p99, "p99"));
                        ui.end_row();
                    }
                });
            }
            let buckets = r.summary.as_ref().map_or(&[][..], |s| &s.histogram_linear[..]);
            if buckets.iter().any(|b| b.count > 0) {
                let bars: Vec<Bar> = buckets
                    .iter()
                    .map(|b| {
                        Bar::new((b.lo_ns + b.hi_ns) / 2e3, b.count as f64).width((b.hi_ns - b.lo_ns) / 1e3)
                    })
                    .collect();
                Plot::new(("hist", ri))
                    .height(140.0)
                    .x_axis_label("latency (us)")
                    .allow_scroll(false)
                    .show(ui, |p| p.bar_chart(BarChart::new("count", bars).color(super::theme::ACCENT)));
            }
            if let Some(s) = r.summary.as_ref().filter(|s| !s.groups.is_empty()) {
                ui.collapsing(format!("groups ({} keys)", s.groups_total), |ui| {
                    egui::Grid::new(("groups", ri)).num_columns(3).striped(true).show(ui, |ui| {
                        for g in s.groups.iter().take(20) {
                            ui.monospace(&g.key);
                            ui.monospace(g.count.to_string());
                            ui.monospace(
                                g.stats_ns.p50.map_or_else(String::new, |ns| format!("p50 {}", dur_ns(ns))),
                            );
                            ui.end_row();
                        }
                    });
                });
            }
            ui.label("Worst:");
            for &i in r.worst.iter().take(5) {
                if let Some(s) = o.samples.get(i) {
                    let text = format!("{}  {}", dur(s.latency() as f64), s.key);
                    if ui.link(text).clicked() {
                        msgs.push(Message::ShowSample { outcome: ri, sample: i });
                    }
                }
            }
        }
    });
    msgs
}
