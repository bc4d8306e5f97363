//! The analysis panel: the rules to run (presets and rule specs typed by the user, checked
//! as they type), and per analysis a statistics table, a latency histogram (egui_plot), the
//! CDF or latency over time, the worst cases and the chain's stages; clicking a bar, a point
//! or a worst case shows it on the timeline. It reads the analysis room and returns messages.

use crate::gui::analysis::{AnalysisResult, PanelView, PlotKind, RuleEditor, scatter_point, validate};
use crate::gui::message::{AnalysisMsg, Message, RecordMsg};
use egui_plot::{
    Bar, BarChart, GridInput, GridMark, HoverPosition, Legend, Line, MarkerShape, Plot, PlotPoint,
    PlotTransform, Points, Text, VLine,
};
use latscope_analysis::inference::{Stat, Verdict};
use latscope_analysis::report::Comparison;
use latscope_engine::registry::Registry;
use latscope_model::{Ps, format_seconds};

/// A plot as drawn in the last frame: which result, what kind, and where (tests click on
/// points through `transform`).
#[derive(Debug, Clone, Copy)]
pub struct DrawnPlot {
    pub result: usize,
    pub kind: PlotKind,
    pub transform: PlotTransform,
}

/// The point of `points` nearest `pos` on screen, if within `max_px` points.
pub fn nearest_on_screen(
    points: &[[f64; 2]],
    transform: &PlotTransform,
    pos: egui::Pos2,
    max_px: f32,
) -> Option<usize> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| (i, transform.position_from_point(&PlotPoint::new(p[0], p[1])).distance(pos)))
        .filter(|&(_, d)| d <= max_px)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

fn dur(ps: f64) -> String {
    format_seconds(ps.round() as Ps)
}

fn dur_ns(ns: f64) -> String {
    dur(ns * 1e3)
}

/// The rule list and the rule editor (validated as the user types), and, where the results
/// left failed decodes out (or the user keeps them), the choice to keep them.
fn rules_ui(
    ui: &mut egui::Ui,
    registry: &Registry,
    editor: &mut RuleEditor,
    excluded: usize,
    results: usize,
) {
    let mut remove = None;
    // The rules side by side, wrapped: the answers below keep the height.
    ui.horizontal_wrapped(|ui| {
        if editor.specs.is_empty() {
            // Live results (the simulator's scenario) come without a rule of the user's.
            ui.weak(if results > 0 {
                "The results below are the scenario's own analyses; add a preset or a rule to run yours."
            } else {
                "No rule yet."
            });
        }
        for (i, spec) in editor.specs.iter().enumerate() {
            let button = egui::Button::new(egui::RichText::new(format!("x {spec}")).monospace()).small();
            if ui.add(button).on_hover_text("Remove this rule").clicked() {
                remove = Some(i);
            }
        }
    });
    if let Some(i) = remove {
        editor.specs.remove(i);
    }
    // Tall enough for every preset: a scrolling list hid the last ones (`chain`, `pulse:CH`).
    egui::ComboBox::from_id_salt("add-preset").selected_text("Add a preset").height(f32::INFINITY).show_ui(
        ui,
        |ui| {
            for preset in registry.presets() {
                let (name, description) = (preset.name.as_str(), preset.description.as_str());
                if ui.selectable_label(false, name).on_hover_text(description).clicked() {
                    // Presets with a parameter go to the editor for the user to complete.
                    if name.contains("CH") {
                        editor.draft = name.replace("CH", "");
                    } else if !editor.specs.iter().any(|s| s == name) {
                        editor.specs.push(name.to_owned());
                    }
                }
            }
        },
    );
    let edit = ui.add(
        egui::TextEdit::singleline(&mut editor.draft)
            .hint_text("NAME=START -> END by KEY ...")
            .desired_width(f32::INFINITY)
            .font(egui::TextStyle::Monospace),
    );
    let verdict = validate(registry, &editor.draft);
    let mut add = false;
    match &verdict {
        Some(Ok(name)) => {
            ui.horizontal(|ui| {
                ui.colored_label(crate::gui::theme::ACCENT, format!("ok: {name}"));
                add = ui.small_button("Add").clicked()
                    || (edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)));
            });
        }
        Some(Err(problem)) => {
            ui.colored_label(ui.visuals().error_fg_color, problem.to_string());
        }
        None => {}
    }
    if add {
        editor.specs.push(editor.draft.trim().to_owned());
        editor.draft.clear();
    }
    if excluded > 0 || editor.include_errors {
        let label = if editor.include_errors {
            "include failed decodes".to_owned()
        } else {
            format!("include {excluded} pair(s) with a failed decode")
        };
        ui.checkbox(&mut editor.include_errors, label).on_hover_text(
            "Pairs that end at a decode error (a CRC error, a clock that stopped mid-frame) are left \
             out of the statistics; keep them (Run again)",
        );
    }
}

/// How close (points) a click must be to a scatter point to jump to it.
const CLICK_PX: f32 = 10.0;

fn hover_point(h: &HoverPosition<'_>) -> PlotPoint {
    match h {
        HoverPosition::NearDataPoint { position, .. } | HoverPosition::Elsewhere { position } => *position,
    }
}

/// The plot's x of a latency: itself, or on a log axis its log10, with latencies below
/// `floor` (zero) drawn at `floor` rather than 1 ps, so the axis does not stretch over
/// empty decades that squeeze its labels away.
fn x_of(ns: f64, log: bool, floor: f64) -> f64 {
    if log { ns.max(floor).log10() } else { ns }
}

/// Where a log axis starts for `r`: its smallest bucket edge, or for a histogram whose first
/// bucket holds zero latencies, a step of the 1-2-5 ladder below that bucket's upper edge.
fn log_floor(r: &AnalysisResult) -> f64 {
    let first = r.summary.as_ref().and_then(|s| s.histogram_log.first());
    first.map_or(1e-3, |b| if b.lo_ns > 0.0 { b.lo_ns } else { (b.hi_ns / 2.5).max(1e-3) })
}

fn ns_of(x: f64, log: bool) -> f64 {
    if log { 10f64.powf(x) } else { x }
}

/// A duration for an axis tick: short, trailing zeros dropped (`400 us`, `1.25 ms`).
fn axis_ns(ns: f64) -> String {
    let (v, unit) = match ns.abs() {
        a if a >= 1e9 => (ns / 1e9, "s"),
        a if a >= 1e6 => (ns / 1e6, "ms"),
        a if a >= 1e3 => (ns / 1e3, "us"),
        _ => (ns, "ns"),
    };
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

/// Grid marks of a log10 axis: each decade, and 2..9 times it (1, 2 and 5 labelled first).
/// Over many decades only every `stride`-th decade is a labelled step, so the labels that
/// fit are kept instead of all being dropped as too close.
pub fn decade_marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 40.0 {
        return Vec::new();
    }
    let stride = ((hi - lo) / 5.0).ceil().max(1.0) as i64;
    let mut out = Vec::new();
    for k in (lo.floor() as i64)..=(hi.ceil() as i64) {
        for m in 1..=9u32 {
            let value = k as f64 + f64::from(m).log10();
            let step_size = match m {
                1 if k.rem_euclid(stride) == 0 => stride as f64,
                1 | 2 | 5 if stride == 1 => 0.3,
                _ => 0.1,
            };
            if value >= lo && value <= hi {
                out.push(GridMark { value, step_size });
            }
        }
    }
    out
}

fn latency_plot(id: impl std::hash::Hash + std::fmt::Debug, log: bool) -> Plot<'static> {
    let plot = if log { Plot::new(id).x_grid_spacer(decade_marks) } else { Plot::new(id) };
    plot.height(150.0)
        .allow_scroll(false)
        .x_axis_label(if log { "latency (log scale)" } else { "latency" })
        .x_axis_formatter(
            move |m, _| if log || m.value >= 0.0 { axis_ns(ns_of(m.value, log)) } else { String::new() },
        )
        .label_formatter(move |h| {
            let p = hover_point(h);
            Some(format!("{}\n{:.3}", dur_ns(ns_of(p.x, log)), p.y))
        })
}

/// Whether `r`'s latencies have a long tail: its maximum is more than 20 times its median,
/// so linear bins would put nearly every pair into the first bar.
pub fn long_tail(r: &AnalysisResult) -> bool {
    let st = r.summary.as_ref().map(|s| s.stats_ns);
    match st.and_then(|st| Some((st.p50?, st.max?))) {
        Some((p50, max)) => p50 > 0.0 && max > 20.0 * p50,
        None => false,
    }
}

/// The histogram, in log bins when the user asks or the tail is long; the p50, p99 and
/// maximum marked. A click on a bar asks for its samples on the timeline.
fn histogram(
    ui: &mut egui::Ui,
    ri: usize,
    r: &AnalysisResult,
    view: &PanelView,
    drawn: &mut Vec<DrawnPlot>,
    msgs: &mut Vec<Message>,
) {
    let tail = long_tail(r);
    let log = view.log_x || tail;
    let buckets = r
        .summary
        .as_ref()
        .map_or(&[][..], |s| if log { &s.histogram_log[..] } else { &s.histogram_linear[..] });
    if !buckets.iter().any(|b| b.count > 0) {
        return;
    }
    if tail && !view.log_x {
        ui.weak("log bins: the tail is long (max > 20 x p50)");
    }
    let floor = log_floor(r);
    // Every sample the same latency (a fixed frame interval): a bar of no width on an axis
    // of no range drew nothing readable, so the bar gets a width and the axis room.
    let lone = match buckets {
        [b] if b.hi_ns <= b.lo_ns => Some(x_of(b.lo_ns, log, floor)),
        _ => None,
    };
    let lone_width = lone.map_or(0.0, |x| (x.abs() * 0.02).max(1e-3));
    let bars: Vec<Bar> = buckets
        .iter()
        .map(|b| {
            let (lo, hi) = (x_of(b.lo_ns, log, floor), x_of(b.hi_ns, log, floor));
            Bar::new((lo + hi) / 2.0, b.count as f64).width((hi - lo).max(lone_width))
        })
        .collect();
    let top = buckets.iter().map(|b| b.count).max().unwrap_or(0) as f64;
    let st = r.summary.as_ref().map(|s| s.stats_ns);
    let marks: Vec<(&str, f64)> =
        [("p50", st.and_then(|s| s.p50)), ("p99", st.and_then(|s| s.p99)), ("max", st.and_then(|s| s.max))]
            .into_iter()
            .filter_map(|(name, v)| Some((name, v?)))
            .collect();
    let mut plot = latency_plot(("hist", ri, log), log).y_axis_label("count").include_y(top * 1.15);
    if let Some(x) = lone {
        plot = plot.include_x(x - 10.0 * lone_width).include_x(x + 10.0 * lone_width);
    }
    let resp = plot.show(ui, |p| {
        p.bar_chart(BarChart::new("count", bars).color(crate::gui::theme::ACCENT.get()));
        for (k, &(name, ns)) in marks.iter().enumerate() {
            let x = x_of(ns, log, floor);
            let color = crate::gui::theme::TEXT_DIM.get();
            p.vline(VLine::new(name, x).color(color).style(egui_plot::LineStyle::dashed_loose()));
            // Staggered, so marks close together stay readable.
            let y = top * (1.12 - 0.09 * k as f64);
            // The maximum is at the right edge: its label reads leftwards, inside the plot.
            let anchor = if name == "max" { egui::Align2::RIGHT_CENTER } else { egui::Align2::LEFT_CENTER };
            let label = format!(" {name} {} ", axis_ns(ns));
            p.text(Text::new(name, PlotPoint::new(x, y), label).color(color).anchor(anchor));
        }
    });
    drawn.push(DrawnPlot { result: ri, kind: PlotKind::Histogram, transform: resp.transform });
    if resp.response.clicked()
        && let Some(pos) = resp.response.interact_pointer_pos()
    {
        let x = resp.transform.value_from_position(pos).x;
        if let Some(b) = buckets.iter().find(|b| {
            let (lo, hi) = (x_of(b.lo_ns, log, floor), x_of(b.hi_ns, log, floor));
            b.count > 0 && x >= lo - lone_width / 2.0 && x <= hi + lone_width / 2.0
        }) {
            msgs.push(Message::Analysis(AnalysisMsg::ShowLatencyRange {
                outcome: ri,
                lo_ns: b.lo_ns,
                hi_ns: b.hi_ns,
            }));
        }
    }
}

/// The CDF as a staircase: it holds its value until the next distinct latency.
fn cdf_line(name: String, r: &AnalysisResult, log: bool, floor: f64, color: egui::Color32) -> Line<'static> {
    let mut pts: Vec<[f64; 2]> = Vec::with_capacity(r.cdf.len() * 2 + 1);
    let mut below = 0.0;
    for &[x, y] in &r.cdf {
        let x = x_of(x, log, floor);
        pts.push([x, below]);
        pts.push([x, y]);
        below = y;
    }
    // The staircase repeats x values, which egui_plot would otherwise draw as a filled band.
    Line::new(name, pts).color(color).allow_band(false)
}

fn cdf_plot(ui: &mut egui::Ui, ri: usize, r: &AnalysisResult, view: &PanelView, drawn: &mut Vec<DrawnPlot>) {
    if r.cdf.is_empty() {
        return;
    }
    let log = view.log_x;
    let resp = latency_plot(("cdf", ri, log), log)
        .y_axis_label("fraction <=")
        .include_y(0.0)
        .include_y(1.0)
        .show(ui, |p| p.line(cdf_line("CDF".into(), r, log, log_floor(r), crate::gui::theme::ACCENT.get())));
    drawn.push(DrawnPlot { result: ri, kind: PlotKind::Cdf, transform: resp.transform });
}

/// Latency over time; a click on a point shows that pair on the timeline.
fn scatter_plot(
    ui: &mut egui::Ui,
    ri: usize,
    r: &AnalysisResult,
    drawn: &mut Vec<DrawnPlot>,
    msgs: &mut Vec<Message>,
) {
    let o = &r.outcome;
    let pts: Vec<[f64; 2]> = r.scatter.iter().filter_map(|&i| scatter_point(o, i)).collect();
    if pts.is_empty() {
        return;
    }
    let resp = Plot::new(("scatter", ri))
        .height(150.0)
        .allow_scroll(false)
        .x_axis_label("start (from trace start)")
        .x_axis_formatter(|m, _| if m.value >= 0.0 { axis_ns(m.value * 1e9) } else { String::new() })
        .y_axis_formatter(|m, _| if m.value >= 0.0 { axis_ns(m.value) } else { String::new() })
        .label_formatter(|h| {
            let p = hover_point(h);
            Some(format!("{:.6} s\n{}", p.x, dur_ns(p.y)))
        })
        .show(ui, |p| {
            p.points(
                Points::new("latency", pts.clone())
                    .radius(2.0)
                    .shape(MarkerShape::Circle)
                    .filled(true)
                    .color(crate::gui::theme::ACCENT),
            );
        });
    drawn.push(DrawnPlot { result: ri, kind: PlotKind::Scatter, transform: resp.transform });
    if resp.response.clicked()
        && let Some(pos) = resp.response.interact_pointer_pos()
        && let Some(k) = nearest_on_screen(&pts, &resp.transform, pos, CLICK_PX)
        && let Some(&sample) = r.scatter.get(k)
    {
        msgs.push(Message::Analysis(AnalysisMsg::ShowSample { outcome: ri, sample }));
    }
}

/// A/B: input 0's and input 1's statistics of one analysis side by side with the
/// difference (the report's `comparison`), and both CDFs in one plot.
fn ab_block(
    ui: &mut egui::Ui,
    ri: usize,
    results: &[AnalysisResult],
    c: &Comparison,
    names: &[String],
    log: bool,
) {
    ui.separator();
    ui.strong(format!("A/B: {}", c.analysis));
    let name = |i: usize| names.get(i).map_or("?", String::as_str);
    ui.weak(format!("A = {}, B = {}", name(0), name(1)));
    egui::Grid::new(("ab", ri)).num_columns(7).striped(true).show(ui, |ui| {
        for h in ["", "A", "B", "B − A", "B / A", "95% interval of B − A", "verdict"] {
            ui.strong(h);
        }
        ui.end_row();
        ui.label("count");
        ui.monospace(c.a.count.to_string());
        ui.monospace(c.b.count.to_string());
        ui.monospace(format!("{:+}", c.count_delta));
        ui.monospace(c.count_ratio.map_or_else(String::new, |r| format!("{r:.3}")));
        ui.end_row();
        // The report's inference (block bootstrap): the interval of the change and its
        // verdict, for the statistics it covers (not the maximum).
        let inf = &c.inference;
        let rows = [
            ("mean", c.a.stats_ns.mean, c.b.stats_ns.mean, c.delta_ns.mean, c.ratio.mean, Some(Stat::Mean)),
            ("p50", c.a.stats_ns.p50, c.b.stats_ns.p50, c.delta_ns.p50, c.ratio.p50, Some(Stat::P50)),
            ("p99", c.a.stats_ns.p99, c.b.stats_ns.p99, c.delta_ns.p99, c.ratio.p99, Some(Stat::P99)),
            ("max", c.a.stats_ns.max, c.b.stats_ns.max, c.delta_ns.max, c.ratio.max, None),
        ];
        let signed = |d: f64| {
            let sign = if d < 0.0 { "-" } else { "+" };
            format!("{sign}{}", dur_ns(d.abs()))
        };
        for (name, a, b, d, q, stat) in rows {
            let show = |v: Option<f64>| v.map_or_else(String::new, dur_ns);
            ui.label(name);
            ui.monospace(show(a));
            ui.monospace(show(b));
            ui.monospace(d.map_or_else(String::new, signed));
            ui.monospace(q.map_or_else(String::new, |r| format!("{r:.3}")));
            match stat {
                Some(stat) => {
                    let ci = inf
                        .ci95_ns
                        .get(stat)
                        .map_or_else(String::new, |[lo, hi]| format!("[{}, {}]", signed(lo), signed(hi)));
                    ui.add(egui::Label::new(egui::RichText::new(ci).monospace()).extend());
                    let verdict = *inf.verdict.get(stat);
                    let color = match verdict {
                        Verdict::Regressed => crate::gui::theme::IRQ,
                        Verdict::Improved => crate::gui::theme::ACCENT.get(),
                        _ => crate::gui::theme::TEXT_DIM.get(),
                    };
                    let p = inf.p_value.get(stat).map_or_else(String::new, |p| format!(" (p={p:.3})"));
                    ui.colored_label(color, format!("{}{p}", verdict.name()));
                }
                None => {
                    ui.label("");
                    ui.label("");
                }
            }
            ui.end_row();
        }
    });
    let inf = &c.inference;
    if let Some(p) = inf.shift_p_value {
        ui.weak(format!("distribution shift: p={p:.3} ({})", inf.method.shift_test));
    }
    ui.weak(format!("intervals: {}", inf.method.interval)).on_hover_text(inf.method.why);
    let side =
        |input: usize| results.iter().find(|r| r.outcome.source == input && r.outcome.name == c.analysis);
    if let (Some(a), Some(b)) = (side(0), side(1)) {
        latency_plot(("ab-cdf", ri, log), log)
            .y_axis_label("fraction <=")
            .include_y(0.0)
            .include_y(1.0)
            .legend(Legend::default())
            .show(ui, |p| {
                let floor = log_floor(a).min(log_floor(b));
                p.line(cdf_line(format!("A: {}", name(0)), a, log, floor, crate::gui::theme::CURSOR_A.get()));
                p.line(cdf_line(format!("B: {}", name(1)), b, log, floor, crate::gui::theme::CURSOR_B.get()));
            });
    }
}

fn plot_choice(ui: &mut egui::Ui, view: &PanelView) -> Option<Message> {
    let (mut plot, mut log_x) = (view.plot, view.log_x);
    ui.horizontal(|ui| {
        ui.selectable_value(&mut plot, PlotKind::Histogram, "Histogram");
        ui.selectable_value(&mut plot, PlotKind::Cdf, "CDF");
        ui.selectable_value(&mut plot, PlotKind::Scatter, "Over time");
        if plot != PlotKind::Scatter {
            ui.checkbox(&mut log_x, "log");
        }
    });
    ((plot, log_x) != (view.plot, view.log_x))
        .then_some(Message::Analysis(AnalysisMsg::SetPlot { plot, log_x }))
}

/// The answers at a glance: per analysis its count, p50, p99, max, and the worst case as a
/// link that puts the cursors on that pair.
fn summary_ui(ui: &mut egui::Ui, results: &[AnalysisResult], sources: &[String], msgs: &mut Vec<Message>) {
    // With several sources, one table per source under its name. Durations are short
    // (`166 us`, `3.821 ms`) so that the table fits the side panel.
    let mut by_source: Vec<usize> = results.iter().map(|r| r.outcome.source).collect();
    by_source.sort_unstable();
    by_source.dedup();
    for source in by_source {
        if sources.len() > 1 {
            ui.label(egui::RichText::new(sources.get(source).map_or("", String::as_str)).weak().italics());
        }
        let grid = egui::Grid::new(("analysis-summary", source)).num_columns(6).striped(true);
        grid.spacing([8.0, 2.0]).show(ui, |ui| {
            for h in ["analysis", "count", "p50", "p99", "max", "worst"] {
                ui.strong(h);
            }
            ui.end_row();
            for (ri, r) in results.iter().enumerate().filter(|(_, r)| r.outcome.source == source) {
                let o = &r.outcome;
                ui.label(&o.name);
                ui.label(r.count().to_string());
                let st = r.summary.as_ref().map(|s| s.stats_ns);
                for v in [st.and_then(|s| s.p50), st.and_then(|s| s.p99), st.and_then(|s| s.max)] {
                    ui.label(v.map_or_else(|| "-".to_owned(), axis_ns));
                }
                match r.worst.first().and_then(|&i| o.samples.get(i).map(|s| (i, s))) {
                    Some((i, s)) => {
                        let key = if s.key.is_empty() { "no key" } else { s.key.as_str() };
                        let text = axis_ns(s.latency() as f64 / 1e3);
                        let link = ui.link(text).on_hover_text(format!(
                            "{}: put the cursors on this pair ({key})",
                            dur(s.latency() as f64)
                        ));
                        if link.clicked() {
                            msgs.push(Message::Analysis(AnalysisMsg::ShowSample { outcome: ri, sample: i }));
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
}

/// The presets that could not run: what each misses and how to record it, with *Record
/// these* on each whose kernel events a recording can enable (it opens the record window
/// with the preset chosen).
fn missing_ui(ui: &mut egui::Ui, missing: &[String], msgs: &mut Vec<Message>) {
    if missing.is_empty() {
        return;
    }
    egui::CollapsingHeader::new(format!("Not run ({})", missing.len()))
        .id_salt("analysis-missing")
        .default_open(missing.len() <= 4)
        .show(ui, |ui| {
            // Wrapped at the width the panel shows, also inside a sideways-scrolling area.
            let width = ui.clip_rect().right() - ui.cursor().left() - 4.0;
            for m in missing {
                ui.allocate_ui(egui::vec2(width.max(80.0), 0.0), |ui| {
                    ui.set_max_width(width.max(80.0));
                    ui.add(egui::Label::new(egui::RichText::new(m).weak()).wrap());
                    if let Some(preset) = crate::gui::record::recordable(m)
                        && ui
                            .small_button("Record these")
                            .on_hover_text(format!("Open the record window with {preset} chosen"))
                            .clicked()
                    {
                        msgs.push(Message::Record(RecordMsg::RecordPresets(vec![preset.to_owned()])));
                    }
                });
            }
        });
}

/// What the analysis panel shows: the rules, the plot choices, the results and the presets
/// that could not run.
#[derive(Debug, Clone, Copy)]
pub struct PanelState<'a> {
    pub registry: &'a Registry,
    pub editor: &'a RuleEditor,
    pub view: &'a PanelView,
    pub results: &'a [AnalysisResult],
    pub missing: &'a [String],
    /// Which placement the results used.
    pub placement: &'a str,
}

/// The panel; returns what the user asked for. `drawn` receives where each plot was drawn
/// this frame (clicks on plots are mapped through it).
pub fn panel(
    ui: &mut egui::Ui,
    state: PanelState<'_>,
    drawn: &mut Vec<DrawnPlot>,
    running: bool,
    sources: &[String],
) -> Vec<Message> {
    let PanelState { registry, editor, view, results, missing, placement } = state;
    let mut msgs = Vec::new();
    drawn.clear();
    let mut edited = editor.clone();
    let excluded = results.iter().map(|r| r.outcome.excluded.len()).sum();
    rules_ui(ui, registry, &mut edited, excluded, results.len());
    if edited != *editor {
        msgs.push(Message::Analysis(AnalysisMsg::EditRules(edited)));
    }
    ui.horizontal(|ui| {
        let ready = !sources.is_empty() && !running && !editor.specs.is_empty();
        if ui.add_enabled(ready, egui::Button::new("Run")).clicked() {
            msgs.push(Message::Analysis(AnalysisMsg::Run));
        }
        if running {
            ui.spinner();
        }
    });
    if let Some(a) = &view.aligned {
        ui.weak(format!("Aligned ({a}): rules run across the sources together."));
    }
    if results.is_empty() {
        if !running {
            ui.weak("No results yet: add a preset or a rule and Run.");
        }
        missing_ui(ui, missing, &mut msgs);
        return msgs;
    }
    // Scrolls both ways in the width the panel has: wide content never widens the panel
    // (and so never narrows the timeline).
    let width = ui.available_width();
    egui::ScrollArea::both().id_salt("analysis-scroll").auto_shrink([false, false]).show(ui, |ui| {
        // Text wraps at the panel's width; only a table wider than it scrolls sideways.
        ui.set_max_width(width);
        summary_ui(ui, results, sources, &mut msgs);
        missing_ui(ui, missing, &mut msgs);
        ui.separator();
        msgs.extend(plot_choice(ui, view));
        for (ri, r) in results.iter().enumerate() {
            if let Some(c) = &r.comparison {
                ab_block(ui, ri, results, c, sources, view.log_x);
            }
        }
        for (ri, r) in results.iter().enumerate() {
            let o = &r.outcome;
            ui.separator();
            match sources.get(o.source).filter(|_| sources.len() > 1) {
                Some(label) => ui.strong(format!("{} ({label})", o.name)),
                None => ui.strong(&o.name),
            };
            if !placement.is_empty() {
                ui.weak(placement);
            }
            // Two statistics per row: the panel is narrow and the plots need the height.
            let mut cells: Vec<(&str, String)> = vec![
                ("count", r.count().to_string()),
                ("unmatched", format!("{} / {}", o.unmatched_start, o.unmatched_end)),
            ];
            if let Some(st) = r.summary.as_ref().map(|s| s.stats_ns) {
                for (name, v) in [
                    ("min", st.min),
                    ("max", st.max),
                    ("mean", st.mean),
                    ("stddev", st.stddev),
                    ("p50", st.p50),
                    ("p90", st.p90),
                    ("p99", st.p99),
                    ("p99.9", st.p999),
                ] {
                    cells.push((name, v.map_or_else(|| "-".to_owned(), dur_ns)));
                }
            }
            egui::Grid::new(("stats", ri)).num_columns(4).striped(true).show(ui, |ui| {
                for pair in cells.chunks(2) {
                    for (k, v) in pair {
                        ui.label(*k).on_hover_text(if *k == "unmatched" { "starts / ends" } else { "" });
                        ui.monospace(v);
                    }
                    ui.end_row();
                }
            });
            if let Some(e) = &r.error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            for note in &o.notes {
                ui.weak(format!("{}: {}", note.label(), note.value_text()));
            }
            if let Some(all) = r.spread_of {
                ui.weak(format!(
                    "live: the statistics are of all {all} samples; the scatter and the links show {} of them, \
                     spread over the run, with the worst (all of them when the run ends)",
                    o.samples.len()
                ));
            }
            if !r.stages.is_empty() {
                ui.label("Where the time goes (per stage):");
                // Fits the panel: stage names are cut to a share of its width (the whole
                // name on hover), the numbers keep theirs.
                let name_width = (ui.available_width() * 0.45).max(80.0);
                egui::Grid::new(("stages", ri)).num_columns(4).striped(true).show(ui, |ui| {
                    for head in ["stage", "count", "p50", "p99"] {
                        ui.strong(head);
                    }
                    ui.end_row();
                    for (name, count, st) in &r.stages {
                        ui.scope(|ui| {
                            ui.set_max_width(name_width);
                            ui.add(egui::Label::new(name.as_str()).truncate()).on_hover_text(name);
                        });
                        ui.monospace(count.to_string());
                        let show = |v: Option<f64>| v.map_or_else(String::new, dur_ns);
                        ui.add(egui::Label::new(egui::RichText::new(show(st.p50)).monospace()).extend());
                        ui.add(egui::Label::new(egui::RichText::new(show(st.p99)).monospace()).extend());
                        ui.end_row();
                    }
                });
            }
            match view.plot {
                PlotKind::Histogram => histogram(ui, ri, r, view, drawn, &mut msgs),
                PlotKind::Cdf => cdf_plot(ui, ri, r, view, drawn),
                PlotKind::Scatter => scatter_plot(ui, ri, r, drawn, &mut msgs),
            }
            if let Some(s) = r.summary.as_ref().filter(|s| !s.groups.is_empty()) {
                // Its id is the result's, not the label's: two results may have as many keys.
                let header = egui::CollapsingHeader::new(format!("groups ({} keys)", s.groups_total));
                header.id_salt(("groups-of", ri)).show(ui, |ui| {
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
                        msgs.push(Message::Analysis(AnalysisMsg::ShowSample { outcome: ri, sample: i }));
                    }
                }
            }
        }
    });
    msgs
}
