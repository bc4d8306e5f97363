//! The analysis panel: per analysis a statistics table and a latency histogram (egui_plot),
//! from [`Outcome`]s computed on a worker. [`run_analyses`] is the one seam to the analysis
//! crate's rule/preset API.

use super::message::Message;
use egui_plot::{Bar, BarChart, Plot};
use latscope_analysis::model::{Ps, format_seconds};
use latscope_analysis::outcome::{AnalysisKind, Outcome, Sample};
use latscope_analysis::pairing::{Endpoint, KeyVal, PairRule, Policy, pair};
use std::sync::Arc;

use super::prepare::Prepared;

/// The analyses the panel shows, one list over all sources.
///
/// For now the DESIGN §4.3 `irq-handler` preset as a fixed pair rule; this is where the
/// rule-spec API (`spec::run_spec(preset_spec(..))`) plugs in.
pub fn run_analyses(sources: &[Arc<Prepared>]) -> Result<Vec<Outcome>, String> {
    let rule = PairRule::new(
        "irq-handler",
        Endpoint::event("irq_handler_entry"),
        Endpoint::event("irq_handler_exit"),
        Policy::Lifo,
    )
    .by("cpu")
    .by("irq");
    let mut out = Vec::new();
    for (index, p) in sources.iter().enumerate() {
        let src = &p.source;
        let res = pair(src, &rule).map_err(|e| format!("{}: {e}", src.name))?;
        let mut o = Outcome::new(rule.name.clone(), AnalysisKind::Pair, index);
        o.unmatched_start = res.unmatched_start;
        o.unmatched_end = res.unmatched_end;
        o.samples = res
            .pairs
            .iter()
            .map(|p| Sample {
                start: p.start,
                end: p.end,
                key: rule
                    .by
                    .iter()
                    .zip(&p.key)
                    .map(|((name, _), k)| match k {
                        KeyVal::Int(v) => format!("{name}={v}"),
                        KeyVal::Str(s) => format!("{name}={}", src.strings.resolve(*s)),
                        KeyVal::Missing => format!("{name}=?"),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            })
            .collect();
        o.samples.sort_by_key(|s| s.start);
        out.push(o);
    }
    Ok(out)
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

/// The panel; returns what the user asked for.
pub fn panel(ui: &mut egui::Ui, results: &[AnalysisResult], running: bool, sources: usize) -> Vec<Message> {
    let mut msgs = Vec::new();
    ui.horizontal(|ui| {
        let run = ui.add_enabled(sources > 0 && !running, egui::Button::new("Run irq-handler"));
        if run.clicked() {
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
