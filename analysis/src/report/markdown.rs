//! The Markdown report: readable tables, trace strings escaped so a task name or marker
//! text can neither break a table nor inject HTML into a rendered page.

use super::threshold::p_text;
use super::{Analysis, Report, TOP_KEYS, human_ns, human_opt, pct, signed_ns};
use crate::inference::Stat;
use std::fmt::Write;

/// Escapes text for a Markdown table cell.
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '\\' | '`' | '*' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn stats_header(out: &mut String) {
    // "input" is the input's name (numbers only where names repeat).
    out.push_str("| analysis | input | count | unmatched start | unmatched end | min | mean | stddev | p50 | p90 | p99 | p99.9 | max |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

fn stats_line(out: &mut String, a: &Analysis, labels: &[String]) {
    let s = &a.stats_ns;
    let input = labels.get(a.input).map_or_else(|| a.input.to_string(), |l| md_escape(l));
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        md_escape(&a.name),
        input,
        a.count,
        a.unmatched_start,
        a.unmatched_end,
        human_opt(s.min),
        human_opt(s.mean),
        human_opt(s.stddev),
        human_opt(s.p50),
        human_opt(s.p90),
        human_opt(s.p99),
        human_opt(s.p999),
        human_opt(s.max)
    );
}

/// The intervals, p-values and verdicts of every comparison, the shift tests, and how
/// they were computed.
fn changes(out: &mut String, r: &Report, labels: &[String]) {
    let label = |i: usize| labels.get(i).map_or_else(|| i.to_string(), |l| md_escape(l));
    let _ = write!(
        out,
        "\n## Change of B against A (95 % intervals)\n\nA is {}.\n\n| analysis | B | statistic | A | B | change | 95 % interval | p | verdict |\n|---|---|---|---:|---:|---:|---:|---:|---|\n",
        r.comparison.first().map_or_else(|| "-".to_owned(), |c| label(c.a.input))
    );
    for c in &r.comparison {
        for stat in Stat::ALL {
            let (a, b) = (c.a.stats_ns.get(stat.name()).flatten(), c.b.stats_ns.get(stat.name()).flatten());
            let change = c.ratio_of(stat).map_or_else(|| "-".to_owned(), |x| pct(x - 1.0));
            let interval = match (c.inference.ci95_change.get(stat), c.inference.ci95_ns.get(stat)) {
                (Some([lo, hi]), Some([lo_ns, hi_ns])) => {
                    format!("[{}, {}] ({} .. {})", pct(*lo), pct(*hi), signed_ns(*lo_ns), signed_ns(*hi_ns))
                }
                (None, Some([lo_ns, hi_ns])) => format!("{} .. {}", signed_ns(*lo_ns), signed_ns(*hi_ns)),
                _ => "-".to_owned(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                md_escape(&c.analysis),
                label(c.b.input),
                stat.name(),
                human_opt(a),
                human_opt(b),
                change,
                interval,
                c.inference.p_value.get(stat).map_or_else(|| "-".to_owned(), p_text),
                c.inference.verdict.get(stat).name()
            );
        }
    }
    out.push_str("\nDistribution shift (Anderson-Darling, whole blocks of time permuted):\n\n");
    for c in &r.comparison {
        let _ = writeln!(
            out,
            "- {} ({} against {}): p = {}",
            md_escape(&c.analysis),
            label(c.b.input),
            label(c.a.input),
            c.inference.shift_p_value.map_or_else(|| "-".to_owned(), p_text)
        );
    }
    if let Some(c) = r.comparison.first() {
        let m = &c.inference.method;
        let _ = writeln!(
            out,
            "\nMethod: {}; {} resamples, {} permutations. Shift test: {}. Why: {}.",
            m.interval, m.resamples, m.permutations, m.shift_test, m.why
        );
    }
    for c in &r.comparison {
        let m = &c.inference.method;
        let side = |s: &crate::inference::SideMethod| {
            format!("{} pairs in {} blocks of {}", s.samples, s.blocks, human_ns(s.block_s * 1e9))
        };
        let _ = write!(
            out,
            "\n- {} ({}): A {}; B {}",
            md_escape(&c.analysis),
            label(c.b.input),
            side(&m.baseline),
            side(&m.candidate)
        );
        if let Some(note) = &m.note {
            let _ = write!(out, "; {}", md_escape(note));
        }
    }
    out.push('\n');
}

fn flatten<'a>(analyses: &'a [Analysis], out: &mut Vec<&'a Analysis>) {
    for a in analyses {
        out.push(a);
        flatten(&a.stages, out);
    }
}

/// What made the report, one line each: version, date, host, and the command line in a
/// code span (its backticks made quotes, so it cannot close the span).
fn header(out: &mut String, r: &Report) {
    let _ = writeln!(out, "- latscope: {}", md_escape(&r.latscope_version));
    if let Some(date) = &r.date {
        let _ = writeln!(out, "- date: {}", md_escape(date));
    }
    if let Some(host) = &r.host {
        let _ = writeln!(out, "- host: {}", md_escape(host));
    }
    if let Some(command) = &r.command {
        let _ = writeln!(out, "- command: `{}`", code_span_text(command));
    }
}

/// Text for inside a Markdown code span: no backtick to close it, no line break, no control
/// characters; `<` and `&` are literal inside a span, so they need nothing.
fn code_span_text(s: &str) -> String {
    s.chars()
        .filter_map(|c| match c {
            '`' => Some('\''),
            '\n' | '\r' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// The whole report as Markdown.
pub fn to_markdown(r: &Report) -> String {
    let title = r.title.as_deref().unwrap_or("latscope report");
    let mut out = format!("# {}\n\n", md_escape(title));
    header(&mut out, r);
    out.push_str("\n## Inputs\n\n| input | path | format | events | start (s) | end (s) | size | SHA-256 |\n|---|---|---|---:|---:|---:|---:|---|\n");
    let labels = r.input_labels();
    for (input, label) in r.inputs.iter().zip(&labels) {
        let secs = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.6}"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            md_escape(label),
            md_escape(&input.path),
            md_escape(&input.format),
            input.events,
            secs(input.start_s),
            secs(input.end_s),
            input.bytes.map_or_else(|| "-".to_owned(), |b| format!("{b} B")),
            md_escape(input.sha256.as_deref().unwrap_or("-"))
        );
    }
    if let Some(align) = &r.align {
        let _ = writeln!(out, "\nAlignment: `{}`", code_span_text(align));
    }
    if !r.metrics.0.is_empty() {
        out.push_str("\n## Metrics\n\n| metric | value |\n|---|---:|\n");
        for (k, v) in &r.metrics.0 {
            let _ = writeln!(
                out,
                "| {} | {} |",
                md_escape(k),
                if v.abs() >= 100.0 { format!("{v:.1}") } else { format!("{v:.3}") }
            );
        }
    }
    let mut all = Vec::new();
    flatten(&r.analyses, &mut all);
    out.push_str("\n## Summary\n\n");
    if all.is_empty() {
        out.push_str("No analysis ran.\n");
    } else {
        stats_header(&mut out);
        for a in &all {
            stats_line(&mut out, a, &labels);
        }
    }
    if !r.comparison.is_empty() {
        out.push_str("\n## A/B comparison\n\n| analysis | A | B | count A | count B | p50 A | p50 B | p99 A | p99 B | max A | max B | mean A | mean B | p99 B/A |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for c in &r.comparison {
            let (a, b) = (&c.a.stats_ns, &c.b.stats_ns);
            let name = |i: usize| labels.get(i).map_or_else(|| i.to_string(), |l| md_escape(l));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                md_escape(&c.analysis),
                name(c.a.input),
                name(c.b.input),
                c.a.count,
                c.b.count,
                human_opt(a.p50),
                human_opt(b.p50),
                human_opt(a.p99),
                human_opt(b.p99),
                human_opt(a.max),
                human_opt(b.max),
                human_opt(a.mean),
                human_opt(b.mean),
                c.ratio.p99.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"))
            );
        }
        changes(&mut out, r, &labels);
    }
    for a in &all {
        match labels.get(a.input).filter(|_| labels.len() > 1) {
            Some(l) => {
                let _ = writeln!(out, "\n## {} ({})\n", md_escape(&a.name), md_escape(l));
            }
            None => {
                let _ = writeln!(out, "\n## {}\n", md_escape(&a.name));
            }
        }
        for n in &a.notes {
            let _ = writeln!(out, "- {}: {}", md_escape(n.label()), n.value_text());
        }
        if !a.histogram.is_empty() {
            out.push_str("\n| latency | count |\n|---|---:|\n");
            for b in &a.histogram {
                let _ = writeln!(out, "| {} .. {} | {} |", human_ns(b.lo_ns), human_ns(b.hi_ns), b.count);
            }
        }
        if !a.groups.is_empty() {
            out.push_str("\n| key | count | p50 | p99 | max |\n|---|---:|---:|---:|---:|\n");
            for g in a.groups.iter().take(TOP_KEYS) {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    md_escape(&g.key),
                    g.count,
                    human_opt(g.stats_ns.p50),
                    human_opt(g.stats_ns.p99),
                    human_opt(g.stats_ns.max)
                );
            }
            let more = a.groups_total.saturating_sub(a.groups.len().min(TOP_KEYS) as u64);
            if more > 0 {
                let _ = writeln!(out, "| *{more} more {}* | | | | |", if more == 1 { "key" } else { "keys" });
            }
        }
        if !a.worst.is_empty() {
            out.push_str("\nWorst:\n\n| start (s) | end (s) | latency | key |\n|---:|---:|---:|---|\n");
            for w in &a.worst {
                let _ = writeln!(
                    out,
                    "| {:.6} | {:.6} | {} | {} |",
                    w.start_s,
                    w.end_s,
                    human_ns(w.latency_ns),
                    md_escape(&w.key)
                );
            }
        }
    }
    if !r.windows.is_empty() {
        out.push_str("\n## Windows\n\n| analysis | start (s) | end (s) | duration | excess |\n|---|---:|---:|---:|---:|\n");
        for w in &r.windows {
            let _ = writeln!(
                out,
                "| {} | {:.6} | {:.6} | {} | {} |",
                md_escape(&w.analysis),
                w.start_s,
                w.end_s,
                human_ns(w.duration_ns),
                human_ns(w.excess_ns)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_report;

    #[test]
    fn tables_and_escaping() {
        let md = to_markdown(&sample_report());
        assert!(md.contains("| irq-handler | a.txt | 3 | 0 | 1 |"), "{md}");
        assert!(md.contains("## irq-handler (b.txt)"), "{md}");
        assert!(md.contains("## A/B comparison"));
        assert!(md.contains("name=&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!md.contains("<script>"));
        // A pipe from the trace cannot open a new cell.
        assert!(md.contains("=cmd\\|' /C calc'!A0"), "{md}");
        assert!(md.contains("- double completion: 2"));
        // A duration note reads as a duration, not as picoseconds.
        assert!(md.contains("- median period: 4.000 ms"), "{md}");
        assert!(!md.contains("(ps)"), "{md}");
    }
}
