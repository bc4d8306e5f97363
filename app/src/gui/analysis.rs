//! The analysis panel: the rules to run (presets and rule specs typed by the user, checked
//! as they type), and per analysis a statistics table, a latency histogram (egui_plot) and
//! the worst cases, from [`Outcome`]s computed on a worker by the analysis crate's
//! rule-spec API ([`run_analyses`]).

use super::message::Message;
use egui_plot::{Bar, BarChart, Plot};
use latscope_analysis::model::{Ps, format_seconds};
use latscope_analysis::outcome::Outcome;
use latscope_analysis::spec::{PRESETS, parse_spec, run_spec};
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
        for (index, p) in sources.iter().enumerate() {
            match run_spec(&spec, std::slice::from_ref(&p.source)) {
                Ok(outcomes) => out.extend(outcomes.into_iter().map(|mut o| {
                    o.source = index;
                    o
                })),
                Err(e) => reasons.push(format!("{}: {e}", p.source.name)),
            }
        }
        if out.len() == before {
            errors.push(format!("rule `{text}` applies to no open source ({})", reasons.join("; ")));
        }
    }
    (out, errors)
}

/// Statistics of one analysis (DESIGN §4.5; percentiles interpolate linearly, like numpy).
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub count: usize,
    pub min: Ps,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: Ps,
}

/// An outcome with what the panel draws, computed on the worker.
#[derive(Debug, Clone)]
pub struct AnalysisResult {
    pub outcome: Outcome,
    pub stats: Option<Stats>,
    /// (low ps, high ps, count) per bucket.
    pub histogram: Vec<(f64, f64, u64)>,
    /// Sample indices, worst first.
    pub worst: Vec<usize>,
}

fn percentile(sorted: &[Ps], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let (a, b) = (sorted[lo] as f64, sorted[hi.min(sorted.len() - 1)] as f64);
    a + (b - a) * (pos - lo as f64)
}

const BUCKETS: usize = 40;

pub fn summarize(outcome: Outcome) -> AnalysisResult {
    let mut lat = outcome.latencies();
    lat.sort_unstable();
    let stats = (!lat.is_empty()).then(|| Stats {
        count: lat.len(),
        min: lat[0],
        mean: lat.iter().map(|&v| v as f64).sum::<f64>() / lat.len() as f64,
        p50: percentile(&lat, 0.5),
        p90: percentile(&lat, 0.9),
        p99: percentile(&lat, 0.99),
        max: lat[lat.len() - 1],
    });
    let mut histogram = Vec::new();
    if let Some(s) = &stats {
        let (lo, hi) = (s.min as f64, (s.max as f64).max(s.min as f64 + 1.0));
        let w = (hi - lo) / BUCKETS as f64;
        let mut counts = [0u64; BUCKETS];
        for &v in &lat {
            let b = (((v as f64 - lo) / w) as usize).min(BUCKETS - 1);
            counts[b] += 1;
        }
        histogram = counts
            .iter()
            .enumerate()
            .map(|(i, &c)| (lo + i as f64 * w, lo + (i + 1) as f64 * w, c))
            .collect();
    }
    let mut worst: Vec<usize> = (0..outcome.samples.len()).collect();
    worst.sort_by_key(|&i| std::cmp::Reverse(outcome.samples[i].latency()));
    worst.truncate(10);
    AnalysisResult { outcome, stats, histogram, worst }
}

fn dur(ps: f64) -> String {
    format_seconds(ps.round() as Ps)
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
                if let Some(s) = &r.stats {
                    row("min", dur(s.min as f64));
                    row("mean", dur(s.mean));
                    row("p50", dur(s.p50));
                    row("p90", dur(s.p90));
                    row("p99", dur(s.p99));
                    row("max", dur(s.max as f64));
                }
            });
            if !r.histogram.is_empty() {
                let bars: Vec<Bar> = r
                    .histogram
                    .iter()
                    .map(|&(lo, hi, c)| Bar::new((lo + hi) / 2e6, c as f64).width((hi - lo) / 1e6))
                    .collect();
                Plot::new(("hist", ri))
                    .height(140.0)
                    .x_axis_label("latency (us)")
                    .allow_scroll(false)
                    .show(ui, |p| p.bar_chart(BarChart::new("count", bars).color(super::theme::ACCENT)));
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
