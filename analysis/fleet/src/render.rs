//! The fleet report as JSON (the contract `{"latscope_fleet": 1, "groups": [...]}`),
//! Markdown, and one self-contained HTML file (inline CSS and SVG, nothing fetched) with a
//! CDF per analysis across groups and a p99 trend plot. Strings from captures and labels
//! are escaped by the writer that prints them.

use crate::aggregate::{FleetComparison, FleetReport, Group, Trend, labels_text};
use latscope_analysis::inference::Stat;
use latscope_analysis::report::threshold::p_text;
use latscope_analysis::report::{html_escape, human_ns, human_opt, md_escape, pct, signed_ns};
use std::fmt::Write;

/// Pretty JSON with a final newline.
pub fn to_json(r: &FleetReport) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

fn stats_cells(g: &Group) -> String {
    let s = &g.stats_ns;
    [s.min, s.mean, s.p50, s.p90, s.p99, s.p999, s.max].map(human_opt).join(" | ")
}

/// One row per statistic of a comparison: group, analysis, statistic, baseline, compare,
/// change, 95 % interval (relative and in time), p, verdict.
fn change_rows(c: &FleetComparison) -> Vec<[String; 9]> {
    Stat::ALL
        .into_iter()
        .map(|stat| {
            let (a, b) = (
                c.baseline.stats_ns.get(stat.name()).flatten(),
                c.compare.stats_ns.get(stat.name()).flatten(),
            );
            let inf = &c.inference;
            let interval = match (inf.ci95_change.get(stat), inf.ci95_ns.get(stat)) {
                (Some([lo, hi]), Some([lo_ns, hi_ns])) => {
                    format!("[{}, {}] ({} .. {})", pct(*lo), pct(*hi), signed_ns(*lo_ns), signed_ns(*hi_ns))
                }
                _ => "-".to_owned(),
            };
            [
                labels_text(&c.labels),
                c.analysis.clone(),
                stat.name().to_owned(),
                human_opt(a),
                human_opt(b),
                a.zip(b).filter(|(x, _)| *x != 0.0).map_or_else(|| "-".to_owned(), |(x, y)| pct(y / x - 1.0)),
                interval,
                inf.p_value.get(stat).map_or_else(|| "-".to_owned(), p_text),
                inf.verdict.get(stat).name().to_owned(),
            ]
        })
        .collect()
}

/// One row per step of a trend: from, to, change, 95 % interval, p, adjusted p, change point.
fn step_rows(t: &Trend) -> Vec<[String; 7]> {
    t.steps
        .iter()
        .map(|s| {
            [
                s.from.clone(),
                s.value.clone(),
                s.change.map_or_else(|| "-".to_owned(), pct),
                s.ci95_change
                    .map_or_else(|| "-".to_owned(), |[lo, hi]| format!("[{}, {}]", pct(lo), pct(hi))),
                s.p_value.map_or_else(|| "-".to_owned(), p_text),
                s.p_adjusted.map_or_else(|| "-".to_owned(), p_text),
                if s.change_point { "change".to_owned() } else { s.verdict.name().to_owned() },
            ]
        })
        .collect()
}

/// The Markdown report.
pub fn to_markdown(r: &FleetReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# latscope fleet: {}\n", md_escape(&r.dataset));
    let by = if r.group_by.is_empty() { "(none)".to_owned() } else { r.group_by.join(", ") };
    let _ = writeln!(out, "{} captures, grouped by {}.\n", r.captures, md_escape(&by));
    out.push_str("| group | analysis | captures | count | min | mean | p50 | p90 | p99 | p99.9 | max |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for g in &r.groups {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            md_escape(&labels_text(&g.labels)),
            md_escape(&g.analysis),
            g.captures,
            g.count,
            stats_cells(g)
        );
    }
    out.push_str("\n## Worst pairs\n\n| group | analysis | latency | capture | source | start (s) | key |\n|---|---|---:|---|---|---:|---|\n");
    for g in &r.groups {
        for w in &g.worst {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.9} | {} |",
                md_escape(&labels_text(&g.labels)),
                md_escape(&g.analysis),
                human_ns(w.latency_ns),
                &w.capture[..w.capture.len().min(12)],
                md_escape(&w.source),
                w.start_s,
                md_escape(&w.key)
            );
        }
    }
    if !r.comparison.is_empty() {
        out.push_str("\n## A/B\n\n| group | analysis | base count | cmp count | base p50 | cmp p50 | base p99 | cmp p99 | Δp99 | p99 ratio |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for c in &r.comparison {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                md_escape(&labels_text(&c.labels)),
                md_escape(&c.analysis),
                c.baseline.count,
                c.compare.count,
                human_opt(c.baseline.stats_ns.p50),
                human_opt(c.compare.stats_ns.p50),
                human_opt(c.baseline.stats_ns.p99),
                human_opt(c.compare.stats_ns.p99),
                human_opt(c.delta_ns.p99),
                c.ratio.p99.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"))
            );
        }
        out.push_str("\n### Change of compare against baseline (95 % intervals)\n\n| group | analysis | statistic | base | cmp | change | 95 % interval | p | verdict |\n|---|---|---|---:|---:|---:|---:|---:|---|\n");
        for c in &r.comparison {
            for row in change_rows(c) {
                let row: Vec<String> = row.iter().map(|x| md_escape(x)).collect();
                let _ = writeln!(out, "| {} |", row.join(" | "));
            }
        }
        out.push('\n');
        for c in &r.comparison {
            let _ = writeln!(
                out,
                "- {} {}: shift p = {}",
                md_escape(&labels_text(&c.labels)),
                md_escape(&c.analysis),
                c.inference.shift_p_value.map_or_else(|| "-".to_owned(), p_text)
            );
        }
        if let Some(c) = r.comparison.first() {
            let m = &c.inference.method;
            let _ = writeln!(out, "\nMethod: {}. Shift test: {}. Why: {}.", m.interval, m.shift_test, m.why);
        }
    }
    for t in &r.trend {
        let _ = writeln!(
            out,
            "\n## Trend of {} by {} in {}\n",
            md_escape(&t.analysis),
            md_escape(&t.label),
            md_escape(&labels_text(&t.labels))
        );
        out.push_str("| value | captures | count | p50 | p99 | max |\n|---|---:|---:|---:|---:|---:|\n");
        for p in &t.points {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                md_escape(&p.value),
                p.captures,
                p.count,
                human_opt(p.stats_ns.p50),
                human_opt(p.stats_ns.p99),
                human_opt(p.stats_ns.max)
            );
        }
        if !t.steps.is_empty() {
            out.push_str("\n| from | to | p99 change | 95 % interval | p | Holm p | step |\n|---|---|---:|---:|---:|---:|---|\n");
            for row in step_rows(t) {
                let row: Vec<String> = row.iter().map(|x| md_escape(x)).collect();
                let _ = writeln!(out, "| {} |", row.join(" | "));
            }
        }
        if t.change_points.is_empty() {
            let _ = writeln!(out, "\nNo change point at significance {} (Holm over the steps).", t.alpha);
        }
        for c in &t.change_points {
            let _ = writeln!(
                out,
                "\nChange point: **{}** ({} → {}).",
                md_escape(&c.summary(&t.label)),
                human_ns(c.from_p99_ns),
                human_ns(c.p99_ns)
            );
        }
    }
    for c in &r.crossings {
        let _ = writeln!(out, "\n**{}**", md_escape(&c.to_string()));
    }
    if !r.warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in &r.warnings {
            let _ = writeln!(out, "- {}", md_escape(w));
        }
    }
    out
}

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}\
h1,h2{font-weight:600}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:.2em .6em;text-align:right}\
th{background:#f4f4f4}td.t,th.t{text-align:left}svg{background:#fcfcfc;border:1px solid #eee;margin:.4em 0}\
.axis{stroke:#999;stroke-width:1}.lbl{font-size:10px;fill:#555}polyline{fill:none;stroke-width:1.5}.warn{color:#a33}";

const COLOURS: [&str; 8] =
    ["#3465a4", "#cc6600", "#4e9a06", "#a40000", "#75507b", "#c4a000", "#06989a", "#555753"];
const W: f64 = 720.0;
const H: f64 = 260.0;
const PAD_L: f64 = 60.0;
const PAD_R: f64 = 200.0;
const PAD_T: f64 = 10.0;
const PAD_B: f64 = 34.0;

fn text(out: &mut String, x: f64, y: f64, anchor: &str, s: &str, colour: &str) {
    let _ = write!(
        out,
        "<text class=\"lbl\" x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" style=\"fill:{colour}\">{}</text>",
        html_escape(s)
    );
}

fn svg_open(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\"><title>{}</title>\
         <line class=\"axis\" x1=\"{PAD_L}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\"/><line class=\"axis\" x1=\"{PAD_L}\" y1=\"{PAD_T}\" x2=\"{PAD_L}\" y2=\"{y}\"/>",
        html_escape(title),
        y = H - PAD_B,
        x2 = W - PAD_R
    );
}

/// The CDFs of one analysis, one line per group, on a log latency axis (linear with zeros).
fn svg_cdf(out: &mut String, analysis: &str, groups: &[&Group]) {
    svg_open(out, &format!("CDF of {analysis} per group"));
    let all = groups.iter().flat_map(|g| g.cdf.iter().map(|p| p.0));
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if lo.is_finite() {
        let log = lo > 0.0;
        let f = |v: f64| if log { v.log10() } else { v };
        let span = if f(hi) > f(lo) { f(hi) - f(lo) } else { 1.0 };
        let (pw, ph) = (W - PAD_L - PAD_R, H - PAD_B - PAD_T);
        for (i, g) in groups.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let _ = write!(out, "<polyline style=\"stroke:{colour}\" points=\"");
            for &(v, frac) in &g.cdf {
                let _ =
                    write!(out, "{:.1},{:.1} ", PAD_L + (f(v) - f(lo)) / span * pw, H - PAD_B - frac * ph);
            }
            out.push_str("\"/>");
            text(
                out,
                W - PAD_R + 6.0,
                PAD_T + 10.0 + 12.0 * i as f64,
                "start",
                &labels_text(&g.labels),
                colour,
            );
        }
        text(out, PAD_L, H - PAD_B + 14.0, "start", &human_ns(lo), "#555");
        text(out, W - PAD_R, H - PAD_B + 14.0, "end", &human_ns(hi), "#555");
        let axis = if log { "latency (log), cumulative fraction" } else { "latency, cumulative fraction" };
        text(out, (PAD_L + W - PAD_R) / 2.0, H - 4.0, "middle", axis, "#555");
    }
    text(out, PAD_L - 4.0, PAD_T + 8.0, "end", "1", "#555");
    text(out, PAD_L - 4.0, H - PAD_B, "end", "0", "#555");
    out.push_str("</svg>");
}

/// p99 per trend value, one line per group, the first change marked.
fn svg_trend(out: &mut String, analysis: &str, trends: &[&Trend]) {
    svg_open(out, &format!("p99 of {analysis} over the trend label"));
    let values: Vec<f64> =
        trends.iter().flat_map(|t| t.points.iter().filter_map(|p| p.stats_ns.p99)).collect();
    let hi = values.iter().copied().fold(0.0f64, f64::max);
    let n = trends.iter().map(|t| t.points.len()).max().unwrap_or(0);
    if n > 0 && hi > 0.0 {
        let (pw, ph) = (W - PAD_L - PAD_R, H - PAD_B - PAD_T);
        let x = |i: usize| PAD_L + if n > 1 { i as f64 / (n - 1) as f64 * pw } else { pw / 2.0 };
        let y = |v: f64| H - PAD_B - v / hi * ph;
        for (i, t) in trends.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let _ = write!(out, "<polyline style=\"stroke:{colour}\" points=\"");
            for (k, p) in t.points.iter().enumerate() {
                if let Some(v) = p.stats_ns.p99 {
                    let _ = write!(out, "{:.1},{:.1} ", x(k), y(v));
                }
            }
            out.push_str("\"/>");
            if let Some(c) = &t.first_change
                && let Some(k) = t.points.iter().position(|p| p.value == c.value)
            {
                let _ = write!(
                    out,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" style=\"fill:none;stroke:{colour};stroke-width:2\"/>",
                    x(k),
                    y(c.p99_ns)
                );
            }
            text(
                out,
                W - PAD_R + 6.0,
                PAD_T + 10.0 + 12.0 * i as f64,
                "start",
                &labels_text(&t.labels),
                colour,
            );
        }
        if let Some(t) = trends.iter().max_by_key(|t| t.points.len()) {
            for (k, p) in t.points.iter().enumerate() {
                if n <= 12 || k % n.div_ceil(12) == 0 {
                    let short: String = p.value.chars().take(10).collect();
                    text(out, x(k), H - PAD_B + 14.0, "middle", &short, "#555");
                }
            }
        }
        text(out, PAD_L - 4.0, PAD_T + 8.0, "end", &human_ns(hi), "#555");
        text(out, PAD_L - 4.0, H - PAD_B, "end", "0", "#555");
    }
    out.push_str("</svg>");
}

fn cells(out: &mut String, cells: &[String], text_cols: usize) {
    out.push_str("<tr>");
    for (i, c) in cells.iter().enumerate() {
        let class = if i < text_cols { " class=\"t\"" } else { "" };
        let _ = write!(out, "<td{class}>{}</td>", html_escape(c));
    }
    out.push_str("</tr>\n");
}

/// The self-contained HTML report.
pub fn to_html(r: &FleetReport) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>latscope fleet: {}</title><style>{CSS}</style></head><body>\n",
        html_escape(&r.dataset)
    );
    let _ = writeln!(out, "<h1>latscope fleet: {}</h1>", html_escape(&r.dataset));
    let by = if r.group_by.is_empty() { "(none)".to_owned() } else { r.group_by.join(", ") };
    let _ = writeln!(out, "<p>{} captures, grouped by {}.</p>", r.captures, html_escape(&by));
    for c in &r.crossings {
        let _ = writeln!(out, "<p class=\"warn\"><b>{}</b></p>", html_escape(&c.to_string()));
    }
    out.push_str("<h2>Groups</h2><table><tr><th class=\"t\">group</th><th class=\"t\">analysis</th><th>captures</th><th>count</th><th>min</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n");
    for g in &r.groups {
        let s = &g.stats_ns;
        let mut row =
            vec![labels_text(&g.labels), g.analysis.clone(), g.captures.to_string(), g.count.to_string()];
        row.extend([s.min, s.mean, s.p50, s.p90, s.p99, s.p999, s.max].map(human_opt));
        cells(&mut out, &row, 2);
    }
    out.push_str("</table>\n");
    let mut analyses: Vec<&str> = r.groups.iter().map(|g| g.analysis.as_str()).collect();
    analyses.sort_unstable();
    analyses.dedup();
    for a in &analyses {
        let _ = writeln!(out, "<h2>{}</h2>", html_escape(a));
        let groups: Vec<&Group> = r.groups.iter().filter(|g| g.analysis == *a).collect();
        svg_cdf(&mut out, a, &groups);
        let trends: Vec<&Trend> = r.trend.iter().filter(|t| t.analysis == *a).collect();
        if !trends.is_empty() {
            svg_trend(&mut out, a, &trends);
            for t in &trends {
                for c in &t.change_points {
                    let _ = writeln!(
                        out,
                        "<p>{}: change point <b>{}</b> ({} → {}).</p>",
                        html_escape(&labels_text(&t.labels)),
                        html_escape(&c.summary(&t.label)),
                        human_ns(c.from_p99_ns),
                        human_ns(c.p99_ns)
                    );
                }
                if !t.steps.is_empty() {
                    let _ = writeln!(
                        out,
                        "<table><tr><th class=\"t\">{}: from</th><th class=\"t\">to</th><th>p99 change</th><th>95 % interval</th><th>p</th><th>Holm p</th><th class=\"t\">step</th></tr>",
                        html_escape(&labels_text(&t.labels))
                    );
                    for row in step_rows(t) {
                        cells(&mut out, &row, 2);
                    }
                    out.push_str("</table>\n");
                }
            }
        }
        out.push_str("<table><tr><th class=\"t\">group</th><th>latency</th><th class=\"t\">capture</th><th class=\"t\">source</th><th>start (s)</th><th class=\"t\">key</th></tr>\n");
        for g in &groups {
            for w in &g.worst {
                let row = [
                    labels_text(&g.labels),
                    human_ns(w.latency_ns),
                    w.capture[..w.capture.len().min(12)].to_owned(),
                    w.source.clone(),
                    format!("{:.9}", w.start_s),
                    w.key.clone(),
                ];
                cells(&mut out, &row, 1);
            }
        }
        out.push_str("</table>\n");
    }
    if !r.comparison.is_empty() {
        out.push_str("<h2>A/B</h2><table><tr><th class=\"t\">group</th><th class=\"t\">analysis</th><th>base count</th><th>cmp count</th><th>base p99</th><th>cmp p99</th><th>Δp99</th><th>p99 ratio</th></tr>\n");
        for c in &r.comparison {
            let row = [
                labels_text(&c.labels),
                c.analysis.clone(),
                c.baseline.count.to_string(),
                c.compare.count.to_string(),
                human_opt(c.baseline.stats_ns.p99),
                human_opt(c.compare.stats_ns.p99),
                human_opt(c.delta_ns.p99),
                c.ratio.p99.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}")),
            ];
            cells(&mut out, &row, 2);
        }
        out.push_str("</table>\n<h3>Change of compare against baseline (95 % intervals)</h3><table><tr><th class=\"t\">group</th><th class=\"t\">analysis</th><th class=\"t\">statistic</th><th>base</th><th>cmp</th><th>change</th><th>95 % interval</th><th>p</th><th class=\"t\">verdict</th></tr>\n");
        for c in &r.comparison {
            for row in change_rows(c) {
                cells(&mut out, &row, 3);
            }
        }
        out.push_str("</table>\n");
        if let Some(c) = r.comparison.first() {
            let m = &c.inference.method;
            let _ = writeln!(
                out,
                "<p>Method: {}. Shift test: {}. Why: {}.</p>",
                html_escape(m.interval),
                html_escape(m.shift_test),
                html_escape(m.why)
            );
        }
    }
    if !r.warnings.is_empty() {
        out.push_str("<h2>Warnings</h2><ul>");
        for w in &r.warnings {
            let _ = write!(out, "<li class=\"warn\">{}</li>", html_escape(w));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body></html>\n");
    out
}
