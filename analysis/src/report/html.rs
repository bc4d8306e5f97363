//! The HTML report: one self-contained file (inline CSS, inline SVG, no script, nothing
//! fetched) that opens offline. Per analysis: statistics, a histogram, a CDF and latency over
//! time, groups, the worst cases; with two inputs an A/B table and CDF overlay. Every string
//! from a trace or a file name goes through [`html_escape`].

use super::threshold::p_text;
use super::{Analysis, Comparison, Report, SampleRow, TOP_KEYS, human_ns, human_opt, pct, signed_ns};
use crate::inference::{Stat, Verdict};
use crate::stats::Bucket;
use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// The report's stylesheet, kept readable in `assets/report.css` and embedded at build
/// time. Its lines are joined without newlines ([`push_css`]), so a report is one compact
/// `<style>` as before the file existed.
const CSS: &str = include_str!("../../../assets/report.css");

/// Appends the stylesheet: its lines, without the line breaks.
fn push_css(out: &mut String) {
    for line in CSS.lines() {
        out.push_str(line);
    }
}

const W: f64 = 520.0;
const H: f64 = 200.0;
// Room for a 10-character label (`482.154 us`) left of the y axis.
const PAD_L: f64 = 70.0;
const PAD_B: f64 = 34.0;
const PAD_T: f64 = 10.0;
const PAD_R: f64 = 10.0;

fn svg_open(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\"><title>{}</title>",
        html_escape(title)
    );
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{PAD_L}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\"/><line class=\"axis\" x1=\"{PAD_L}\" y1=\"{PAD_T}\" x2=\"{PAD_L}\" y2=\"{y}\"/>",
        y = H - PAD_B,
        x2 = W - PAD_R
    );
}

/// Width of `text` at the labels' 10 px, a little generous (digits and lower case are
/// about 0.55 em in the usual sans-serif faces), for keeping labels inside the plot.
fn label_width(text: &str) -> f64 {
    text.chars().count() as f64 * 6.2
}

/// A label at `x`, moved inward so that none of it falls outside the plot's `W` (an
/// outside label is clipped by the SVG's viewport).
fn label(out: &mut String, x: f64, y: f64, anchor: &str, text: &str) {
    let w = label_width(text);
    let (left, right) = match anchor {
        "start" => (x, x + w),
        "end" => (x - w, x),
        _ => (x - w / 2.0, x + w / 2.0),
    };
    let x = if left < 2.0 {
        x + (2.0 - left)
    } else if right > W - 2.0 {
        x - (right - (W - 2.0))
    } else {
        x
    };
    let _ = write!(
        out,
        "<text class=\"lbl\" x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\">{}</text>",
        html_escape(text)
    );
}

/// Bars of equal width, one per bucket (log buckets: a log axis), height by count.
fn svg_histogram(out: &mut String, buckets: &[Bucket]) {
    svg_open(out, "histogram");
    let max = buckets.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64;
    let plot_w = W - PAD_L - PAD_R;
    let plot_h = H - PAD_B - PAD_T;
    let bw = plot_w / buckets.len().max(1) as f64;
    let every = buckets.len().div_ceil(8).max(1);
    for (i, b) in buckets.iter().enumerate() {
        let h = b.count as f64 / max * plot_h;
        let x = PAD_L + i as f64 * bw;
        let _ = write!(
            out,
            "<rect class=\"a\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\"><title>{} .. {}: {}</title></rect>",
            x + 1.0,
            H - PAD_B - h,
            (bw - 2.0).max(1.0),
            html_escape(&human_ns(b.lo_ns)),
            html_escape(&human_ns(b.hi_ns)),
            b.count
        );
        if i % every == 0 {
            label(out, x, H - PAD_B + 14.0, "start", &human_ns(b.lo_ns));
        }
    }
    label(out, PAD_L - 4.0, PAD_T + 8.0, "end", &format!("{max}"));
    label(out, PAD_L - 4.0, H - PAD_B, "end", "0");
    label(out, W - PAD_R, H - 4.0, "end", "latency (log buckets)");
    out.push_str("</svg>");
}

/// At most `n` points of `v`, evenly spaced, always keeping the first and the last.
fn thin<T: Copy>(v: &[T], n: usize) -> Vec<T> {
    if v.len() <= n || n < 2 {
        return v.to_vec();
    }
    (0..n).map(|i| v[i * (v.len() - 1) / (n - 1)]).collect()
}

/// Empirical CDFs on a log latency axis (linear when a latency is zero), one per series.
fn svg_cdf(out: &mut String, series: &[(&str, Vec<f64>)]) {
    svg_open(out, "CDF");
    let all = series.iter().flat_map(|(_, v)| v.iter().copied());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        out.push_str("</svg>");
        return;
    }
    let log = lo > 0.0;
    let f = |v: f64| if log { v.log10() } else { v };
    let (flo, fhi) = (f(lo), f(hi));
    let span = if fhi > flo { fhi - flo } else { 1.0 };
    let plot_w = W - PAD_L - PAD_R;
    let plot_h = H - PAD_B - PAD_T;
    for (i, (name, sorted)) in series.iter().enumerate() {
        let n = sorted.len();
        let pts: Vec<(usize, f64)> = thin(&sorted.iter().copied().enumerate().collect::<Vec<_>>(), 600);
        let class = if i == 0 { "a" } else { "b" };
        let _ = write!(out, "<polyline class=\"{class}\" style=\"fill:none\" points=\"");
        for (k, v) in pts {
            let x = PAD_L + (f(v) - flo) / span * plot_w;
            let y = H - PAD_B - (k + 1) as f64 / n as f64 * plot_h;
            let _ = write!(out, "{x:.1},{y:.1} ");
        }
        out.push_str("\"/>");
        if series.len() > 1 {
            label(
                out,
                W - PAD_R - 4.0,
                PAD_T + 12.0 + 12.0 * i as f64,
                "end",
                &format!("{} {}", if i == 0 { "A" } else { "B" }, name),
            );
        }
    }
    label(out, PAD_L, H - PAD_B + 14.0, "start", &human_ns(lo));
    label(out, W - PAD_R, H - PAD_B + 14.0, "end", &human_ns(hi));
    label(out, PAD_L - 4.0, PAD_T + 8.0, "end", "1");
    label(out, PAD_L - 4.0, H - PAD_B, "end", "0");
    label(
        out,
        (PAD_L + W) / 2.0,
        H - 4.0,
        "middle",
        if log { "latency (log), cumulative fraction" } else { "latency, cumulative fraction" },
    );
    out.push_str("</svg>");
}

/// Latency over time (source clock seconds).
fn svg_scatter(out: &mut String, rows: &[&SampleRow]) {
    svg_open(out, "latency over time");
    let pts = thin(rows, 2000);
    let (t0, t1) =
        pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| (a.min(r.start_s), b.max(r.start_s)));
    let lmax = rows.iter().map(|r| r.latency_ns).fold(0.0f64, f64::max);
    if !t0.is_finite() {
        out.push_str("</svg>");
        return;
    }
    let tspan = if t1 > t0 { t1 - t0 } else { 1.0 };
    let lspan = if lmax > 0.0 { lmax } else { 1.0 };
    let plot_w = W - PAD_L - PAD_R;
    let plot_h = H - PAD_B - PAD_T;
    for r in pts {
        let x = PAD_L + (r.start_s - t0) / tspan * plot_w;
        let y = H - PAD_B - r.latency_ns / lspan * plot_h;
        let _ = write!(out, "<circle class=\"a\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"1.5\"/>");
    }
    label(out, PAD_L, H - PAD_B + 14.0, "start", &format!("{t0:.6} s"));
    label(out, W - PAD_R, H - PAD_B + 14.0, "end", &format!("{t1:.6} s"));
    label(out, PAD_L - 4.0, PAD_T + 8.0, "end", &human_ns(lmax));
    label(out, PAD_L - 4.0, H - PAD_B, "end", "0");
    label(out, (PAD_L + W) / 2.0, H - 4.0, "middle", "start time (source clock) vs latency");
    out.push_str("</svg>");
}

fn cell(out: &mut String, s: &str) {
    let _ = write!(out, "<td>{}</td>", html_escape(s));
}

fn text_cell(out: &mut String, s: &str) {
    let _ = write!(out, "<td class=\"t\">{}</td>", html_escape(s));
}

const STATS_HEAD: &str = "<tr><th class=\"t\">analysis</th><th class=\"t\">input</th><th>count</th><th>unmatched start</th><th>unmatched end</th><th>min</th><th>mean</th><th>stddev</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>";

fn stats_row(out: &mut String, a: &Analysis, labels: &[String]) {
    out.push_str("<tr>");
    text_cell(out, &a.name);
    text_cell(out, labels.get(a.input).map_or(&a.input.to_string(), |l| l));
    for v in [a.count, a.unmatched_start, a.unmatched_end] {
        cell(out, &v.to_string());
    }
    let s = &a.stats_ns;
    for v in [s.min, s.mean, s.stddev, s.p50, s.p90, s.p99, s.p999, s.max] {
        cell(out, &human_opt(v));
    }
    out.push_str("</tr>");
}

fn sorted_latencies(r: &Report, name: &str, input: usize) -> Vec<f64> {
    let mut v: Vec<f64> =
        r.samples.iter().filter(|s| s.analysis == name && s.input == input).map(|s| s.latency_ns).collect();
    v.sort_by(f64::total_cmp);
    v
}

fn analysis_section(out: &mut String, r: &Report, a: &Analysis) {
    let labels = r.input_labels();
    match labels.get(a.input).filter(|_| labels.len() > 1) {
        Some(l) => {
            let _ = write!(out, "<h2>{} <small>({})</small></h2>", html_escape(&a.name), html_escape(l));
        }
        None => {
            let _ = write!(out, "<h2>{}</h2>", html_escape(&a.name));
        }
    }
    out.push_str("<table>");
    out.push_str(STATS_HEAD);
    stats_row(out, a, &labels);
    out.push_str("</table>");
    for n in &a.notes {
        let _ = write!(out, "<p class=\"note\">{}: {}</p>", html_escape(n.label()), n.value_text());
    }
    if a.count > 0 {
        out.push_str("<div class=\"plots\">");
        svg_histogram(out, &a.histogram);
        svg_cdf(out, &[(a.name.as_str(), sorted_latencies(r, &a.name, a.input))]);
        let rows: Vec<&SampleRow> =
            r.samples.iter().filter(|s| s.analysis == a.name && s.input == a.input).collect();
        svg_scatter(out, &rows);
        out.push_str("</div>");
    }
    if !a.groups.is_empty() {
        let shown = a.groups.len().min(TOP_KEYS);
        let _ = write!(
            out,
            "<h3>By key (the {shown} largest of {} keys)</h3><table><tr><th class=\"t\">key</th><th>count</th><th>p50</th><th>p99</th><th>max</th></tr>",
            a.groups_total
        );
        for g in &a.groups[..shown] {
            out.push_str("<tr>");
            text_cell(out, &g.key);
            cell(out, &g.count.to_string());
            for v in [g.stats_ns.p50, g.stats_ns.p99, g.stats_ns.max] {
                cell(out, &human_opt(v));
            }
            out.push_str("</tr>");
        }
        let more = a.groups_total.saturating_sub(shown as u64);
        if more > 0 {
            let _ = write!(
                out,
                "<tr><td class=\"t more\" colspan=\"5\">{more} more {}</td></tr>",
                if more == 1 { "key" } else { "keys" }
            );
        }
        out.push_str("</table>");
    }
    if !a.worst.is_empty() {
        out.push_str("<h3>Worst cases</h3><table><tr><th>start (s)</th><th>end (s)</th><th>latency</th><th class=\"t\">key</th></tr>");
        for w in &a.worst {
            out.push_str("<tr>");
            cell(out, &format!("{:.6}", w.start_s));
            cell(out, &format!("{:.6}", w.end_s));
            cell(out, &human_ns(w.latency_ns));
            text_cell(out, &w.key);
            out.push_str("</tr>");
        }
        out.push_str("</table>");
    }
    for st in &a.stages {
        analysis_section(out, r, st);
    }
}

/// Error bars of one comparison: per statistic, the relative change (dot) and its 95 %
/// interval (bar), on one axis of percent around a zero line; the colour is the verdict.
fn svg_intervals(out: &mut String, c: &Comparison) {
    const ROW: f64 = 34.0;
    let h = PAD_T + ROW * Stat::ALL.len() as f64 + PAD_B;
    let left = 70.0;
    let right = 235.0;
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" role=\"img\"><title>intervals</title>"
    );
    let rows: Vec<(Stat, Option<f64>, Option<[f64; 2]>)> = Stat::ALL
        .into_iter()
        .map(|s| (s, c.ratio_of(s).map(|x| x - 1.0), *c.inference.ci95_change.get(s)))
        .collect();
    // The axis spans every interval and point, symmetric around zero, at least ±1 %.
    let reach = rows
        .iter()
        .flat_map(|(_, p, ci)| p.iter().copied().chain(ci.iter().flatten().copied()))
        .filter(|v| v.is_finite())
        .fold(0.01f64, |m, v| m.max(v.abs()))
        * 1.1;
    let x0 = left;
    let x1 = W - right;
    let x = |v: f64| x0 + (v.clamp(-reach, reach) + reach) / (2.0 * reach) * (x1 - x0);
    let bottom = h - PAD_B;
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{x0}\" y1=\"{bottom}\" x2=\"{x1}\" y2=\"{bottom}\"/><line stroke=\"#333\" stroke-dasharray=\"3 2\" x1=\"{z:.1}\" y1=\"{PAD_T}\" x2=\"{z:.1}\" y2=\"{bottom}\"/>",
        z = x(0.0)
    );
    for (i, (stat, point, ci)) in rows.iter().enumerate() {
        let y = PAD_T + ROW * (i as f64 + 0.5);
        label(out, left - 8.0, y + 4.0, "end", stat.name());
        let verdict = *c.inference.verdict.get(*stat);
        // The verdict's class names the bar; its colour is given in place, so the report's
        // stylesheet stays as it was.
        let (class, colour) = match verdict {
            Verdict::Regressed => ("reg", "#c00"),
            Verdict::Improved => ("imp", "#080"),
            _ => ("inc", "#777"),
        };
        if let Some([lo, hi]) = ci {
            let (a, b) = (x(*lo), x(*hi));
            let _ = write!(
                out,
                "<g class=\"{class}\" stroke=\"{colour}\" stroke-width=\"2\"><line x1=\"{a:.1}\" y1=\"{y:.1}\" x2=\"{b:.1}\" y2=\"{y:.1}\"/><line x1=\"{a:.1}\" y1=\"{:.1}\" x2=\"{a:.1}\" y2=\"{:.1}\"/><line x1=\"{b:.1}\" y1=\"{:.1}\" x2=\"{b:.1}\" y2=\"{:.1}\"/></g>",
                y - 6.0,
                y + 6.0,
                y - 6.0,
                y + 6.0
            );
        }
        if let Some(p) = point.filter(|p| p.is_finite()) {
            let _ = write!(out, "<circle fill=\"{colour}\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"3.5\"/>", x(p));
        }
        let text = match (point, ci) {
            (Some(p), Some([lo, hi])) => {
                format!("{} [{}, {}] {}", pct(*p), pct(*lo), pct(*hi), verdict.name())
            }
            (Some(p), None) => format!("{} {}", pct(*p), verdict.name()),
            _ => verdict.name().to_owned(),
        };
        label(out, x1 + 8.0, y + 4.0, "start", &text);
    }
    label(out, x0, bottom + 14.0, "start", &pct(-reach));
    label(out, x(0.0), bottom + 14.0, "middle", "0");
    label(out, x1, bottom + 14.0, "end", &pct(reach));
    label(out, (x0 + x1) / 2.0, h - 4.0, "middle", "change of B against A, 95 % interval");
    out.push_str("</svg>");
}

/// The comparisons' intervals: a table per statistic, error bars, the shift tests and the
/// method.
fn changes(out: &mut String, r: &Report) {
    let labels = r.input_labels();
    let label = |i: usize| labels.get(i).cloned().unwrap_or_else(|| i.to_string());
    out.push_str("<h2>Change of B against A (95 % intervals)</h2>");
    if let Some(c) = r.comparison.first() {
        let _ = write!(out, "<p>A is {}.</p>", html_escape(&label(c.a.input)));
    }
    out.push_str("<table><tr><th class=\"t\">analysis</th><th class=\"t\">B</th><th class=\"t\">statistic</th><th>A</th><th>B</th><th>change</th><th>95 % interval</th><th>95 % interval (time)</th><th>p</th><th class=\"t\">verdict</th></tr>");
    for c in &r.comparison {
        for stat in Stat::ALL {
            out.push_str("<tr>");
            text_cell(out, &c.analysis);
            text_cell(out, &label(c.b.input));
            text_cell(out, stat.name());
            cell(out, &human_opt(c.a.stats_ns.get(stat.name()).flatten()));
            cell(out, &human_opt(c.b.stats_ns.get(stat.name()).flatten()));
            cell(out, &c.ratio_of(stat).map_or_else(|| "-".to_owned(), |x| pct(x - 1.0)));
            let inf = &c.inference;
            cell(
                out,
                &inf.ci95_change
                    .get(stat)
                    .map_or_else(|| "-".to_owned(), |[lo, hi]| format!("[{}, {}]", pct(lo), pct(hi))),
            );
            cell(
                out,
                &inf.ci95_ns.get(stat).map_or_else(
                    || "-".to_owned(),
                    |[lo, hi]| format!("{} .. {}", signed_ns(lo), signed_ns(hi)),
                ),
            );
            cell(out, &inf.p_value.get(stat).map_or_else(|| "-".to_owned(), p_text));
            text_cell(out, inf.verdict.get(stat).name());
            out.push_str("</tr>");
        }
    }
    out.push_str("</table><div class=\"plots\">");
    for c in &r.comparison {
        let _ = write!(
            out,
            "<div><h3>{} <small>({} against {}; shift p = {})</small></h3>",
            html_escape(&c.analysis),
            html_escape(&label(c.b.input)),
            html_escape(&label(c.a.input)),
            c.inference.shift_p_value.map_or_else(|| "-".to_owned(), p_text)
        );
        svg_intervals(out, c);
        out.push_str("</div>");
    }
    out.push_str("</div>");
    if let Some(c) = r.comparison.first() {
        let m = &c.inference.method;
        let _ = write!(
            out,
            "<p>Method: {}; {} resamples, {} permutations. Shift test: {}. Why: {}.</p><ul>",
            html_escape(m.interval),
            m.resamples,
            m.permutations,
            html_escape(m.shift_test),
            html_escape(m.why)
        );
    }
    for c in &r.comparison {
        let m = &c.inference.method;
        let side = |s: &crate::inference::SideMethod| {
            format!("{} pairs in {} blocks of {}", s.samples, s.blocks, human_ns(s.block_s * 1e9))
        };
        let note = m.note.as_deref().map(|n| format!("; {n}")).unwrap_or_default();
        let _ = write!(
            out,
            "<li>{} ({}): A {}; B {}{}</li>",
            html_escape(&c.analysis),
            html_escape(&label(c.b.input)),
            side(&m.baseline),
            side(&m.candidate),
            html_escape(&note)
        );
    }
    out.push_str("</ul>");
}

/// What made the report: version, date, host and the command line, each escaped.
fn header(out: &mut String, r: &Report) {
    out.push_str("<table class=\"made\">");
    let mut row = |what: &str, value: &str, code: bool| {
        let value = html_escape(value);
        let value = if code { format!("<code>{value}</code>") } else { value };
        let _ = write!(out, "<tr><th class=\"t\">{what}</th><td class=\"t\">{value}</td></tr>");
    };
    row("latscope", &r.latscope_version, false);
    if let Some(date) = &r.date {
        row("date", date, false);
    }
    if let Some(host) = &r.host {
        row("host", host, false);
    }
    if let Some(command) = &r.command {
        row("command", command, true);
    }
    out.push_str("</table>");
}

/// The whole report as one HTML page.
pub fn to_html(r: &Report) -> String {
    let title = html_escape(r.title.as_deref().unwrap_or("latscope report"));
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>"
    );
    push_css(&mut out);
    let _ = write!(out, "</style></head><body><h1>{title}</h1>");
    header(&mut out, r);
    out.push_str("<h2>Inputs</h2><table><tr><th class=\"t\">input</th><th class=\"t\">path</th><th class=\"t\">format</th><th>events</th><th>start (s)</th><th>end (s)</th><th>size</th><th class=\"t\">SHA-256</th></tr>");
    for (input, label) in r.inputs.iter().zip(r.input_labels()) {
        out.push_str("<tr>");
        text_cell(&mut out, &label);
        text_cell(&mut out, &input.path);
        text_cell(&mut out, &input.format);
        cell(&mut out, &input.events.to_string());
        for v in [input.start_s, input.end_s] {
            cell(&mut out, &v.map_or_else(|| "-".to_owned(), |v| format!("{v:.6}")));
        }
        cell(&mut out, &input.bytes.map_or_else(|| "-".to_owned(), |b| format!("{b} B")));
        let _ = write!(
            out,
            "<td class=\"t\"><code class=\"hash\">{}</code></td>",
            html_escape(input.sha256.as_deref().unwrap_or("-"))
        );
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    if let Some(align) = &r.align {
        let _ = write!(out, "<p>Alignment: <code>{}</code></p>", html_escape(align));
    }
    if !r.metrics.0.is_empty() {
        out.push_str("<h2>Metrics</h2><table><tr><th class=\"t\">metric</th><th>value</th></tr>");
        for (k, v) in &r.metrics.0 {
            out.push_str("<tr>");
            text_cell(&mut out, k);
            cell(&mut out, &if v.abs() >= 100.0 { format!("{v:.1}") } else { format!("{v:.3}") });
            out.push_str("</tr>");
        }
        out.push_str("</table>");
    }
    out.push_str("<h2>Summary</h2>");
    if r.analyses.is_empty() {
        out.push_str("<p>No analysis ran.</p>");
    } else {
        out.push_str("<table>");
        out.push_str(STATS_HEAD);
        let labels = r.input_labels();
        for a in &r.analyses {
            stats_row(&mut out, a, &labels);
        }
        out.push_str("</table>");
    }
    if !r.comparison.is_empty() {
        let labels = r.input_labels();
        out.push_str("<h2>A/B comparison</h2><table><tr><th class=\"t\">analysis</th><th class=\"t\">A</th><th class=\"t\">B</th><th>count A</th><th>count B</th><th>p50 A</th><th>p50 B</th><th>p99 A</th><th>p99 B</th><th>max A</th><th>max B</th><th>mean A</th><th>mean B</th><th>p99 B/A</th></tr>");
        for c in &r.comparison {
            out.push_str("<tr>");
            text_cell(&mut out, &c.analysis);
            for i in [c.a.input, c.b.input] {
                text_cell(&mut out, labels.get(i).map_or(&i.to_string(), |l| l));
            }
            cell(&mut out, &c.a.count.to_string());
            cell(&mut out, &c.b.count.to_string());
            let (a, b) = (&c.a.stats_ns, &c.b.stats_ns);
            for v in [a.p50, b.p50, a.p99, b.p99, a.max, b.max, a.mean, b.mean] {
                cell(&mut out, &human_opt(v));
            }
            cell(&mut out, &c.ratio.p99.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}")));
            out.push_str("</tr>");
        }
        out.push_str("</table><div class=\"plots\">");
        for c in &r.comparison {
            let a_path = r.inputs.get(c.a.input).map_or("A", |i| i.path.as_str());
            let b_path = r.inputs.get(c.b.input).map_or("B", |i| i.path.as_str());
            let _ = write!(out, "<div><h3>{}</h3>", html_escape(&c.analysis));
            svg_cdf(
                &mut out,
                &[
                    (a_path, sorted_latencies(r, &c.analysis, c.a.input)),
                    (b_path, sorted_latencies(r, &c.analysis, c.b.input)),
                ],
            );
            out.push_str("</div>");
        }
        out.push_str("</div>");
        changes(&mut out, r);
    }
    for a in &r.analyses {
        analysis_section(&mut out, r, a);
    }
    if !r.windows.is_empty() {
        out.push_str("<h2>Windows</h2><table><tr><th class=\"t\">analysis</th><th>start (s)</th><th>end (s)</th><th>duration</th><th>excess</th></tr>");
        for w in &r.windows {
            out.push_str("<tr>");
            text_cell(&mut out, &w.analysis);
            cell(&mut out, &format!("{:.6}", w.start_s));
            cell(&mut out, &format!("{:.6}", w.end_s));
            cell(&mut out, &human_ns(w.duration_ns));
            cell(&mut out, &human_ns(w.excess_ns));
            out.push_str("</tr>");
        }
        out.push_str("</table>");
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_report;

    #[test]
    fn self_contained_escaped_and_plotted() {
        let html = to_html(&sample_report());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(!html.contains("<script"), "a trace string reached the page unescaped");
        assert!(html.contains("name=&lt;script&gt;alert(1)&lt;/script&gt;"));
        // Nothing fetched: the only URL is the SVG namespace.
        assert_eq!(
            html.matches("http").count(),
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        // Histogram, CDF and scatter per analysis with samples (2), plus the A/B overlay.
        assert_eq!(html.matches("<title>histogram</title>").count(), 2);
        assert_eq!(html.matches("<title>CDF</title>").count(), 3);
        assert_eq!(html.matches("<title>latency over time</title>").count(), 2);
        assert!(html.contains("A/B comparison"));
        assert!(html.contains("<p class=\"note\">median period: 4.000 ms</p>"), "{html}");
        assert_eq!(html, to_html(&sample_report()));
    }

    #[test]
    fn escape_covers_attributes() {
        assert_eq!(html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    }
}
