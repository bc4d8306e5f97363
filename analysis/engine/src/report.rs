//! From outcomes to what a user keeps: the report in each format (built once, the same bytes
//! from `latscope report`, `latscope sim` and the workbench's export), the Perfetto trace,
//! and the CI gate (`--fail-if`).

use crate::error::{EngineError, Result};
use crate::output::Output;
use latscope_analysis::outcome::Outcome;
use latscope_analysis::report::threshold::{Crossing, Threshold};
use latscope_analysis::report::{self, Format, Report, ReportInput, ReportOptions};
use latscope_model::{Placed, Source};
use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::provenance::Request;
pub use latscope_analysis::report::Format as ReportFormat;

/// The format an output path implies by its extension.
pub fn format_of(path: &Path) -> Option<Format> {
    Some(match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "json" => Format::Json,
        "md" | "markdown" => Format::Md,
        "html" | "htm" => Format::Html,
        "csv" => Format::Csv,
        "parquet" | "pq" => Format::Parquet,
        _ => return None,
    })
}

/// The report format: the one asked for, else the output's extension's, else Markdown.
pub fn resolve_format(asked: Option<Format>, output: Option<&Path>) -> Format {
    match (asked, output) {
        (Some(f), _) => f,
        (None, Some(path)) => format_of(path).unwrap_or(Format::Md),
        (None, None) => Format::Md,
    }
}

/// The name of `format` as `--format` spells it.
fn format_name(format: Format) -> &'static str {
    match format {
        Format::Json => "json",
        Format::Md => "md",
        Format::Html => "html",
        Format::Csv => "csv",
        Format::Parquet => "parquet",
    }
}

/// The report of `outcomes` over `sources` named by `paths` (as the user gave them): the one
/// path from analyses to a report. When the report will only be rendered as `format`,
/// JSON and Markdown print no per-sample rows, so none are built.
/// `baseline` is the input every other one is compared with (`report --baseline`);
/// `request` is what was asked, which the report prints as its command line, beside the
/// version, the date, the host and each input file's SHA-256 ([`crate::provenance`]).
pub fn build(
    paths: &[String],
    sources: &[&Source],
    outcomes: &[Outcome],
    align: Option<String>,
    format: Option<Format>,
    baseline: Option<usize>,
    request: &Request,
) -> Result<Report> {
    let inputs: Vec<ReportInput<'_>> =
        paths.iter().zip(sources).map(|(path, source)| ReportInput { path, source }).collect();
    let without_samples = matches!(format, Some(Format::Json | Format::Md));
    let provenance = crate::provenance::provenance(request, paths, sources)?;
    let opts = ReportOptions { align, without_samples, baseline, provenance, ..ReportOptions::default() };
    Ok(report::build(&inputs, outcomes, &opts)?)
}

/// Writes `report` rendered as `format` to `output`; a file is written atomically and
/// never over one of `inputs`.
pub fn write(report: &Report, format: Format, output: &Output, inputs: &[PathBuf]) -> Result<()> {
    if matches!(output, Output::Stdout) && !format.is_text() {
        return Err(EngineError::BinaryToStdout { format: format_name(format) });
    }
    // Refused before any time is spent rendering.
    output.check(inputs)?;
    let bytes = report::render(report, format)?;
    output.write("the report", inputs, |w| w.write_all(&bytes))
}

/// A source as the Perfetto export names and places it.
pub fn write_perfetto(
    paths: &[String],
    sources: &[Placed<'_>],
    outcomes: &[Outcome],
    output: &Output,
    inputs: &[PathBuf],
) -> Result<()> {
    output.check(inputs)?;
    let export: Vec<report::perfetto::ExportSource<'_>> = paths
        .iter()
        .zip(sources)
        .map(|(name, p)| report::perfetto::ExportSource { name, source: p.source, placement: p.placement })
        .collect();
    // Streamed: the JSON of a large trace is several times its size.
    output.write("the Perfetto trace", inputs, |w| report::perfetto::write_trace_events(&export, outcomes, w))
}

/// Thresholds that a report crossed: a command still writes its report, and exits 3.
#[derive(Debug)]
pub struct ThresholdsCrossed(pub Vec<Crossing>);

impl fmt::Display for ThresholdsCrossed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\nlatscope: "))
    }
}

impl std::error::Error for ThresholdsCrossed {}

/// Parses `--fail-if` expressions.
pub fn thresholds(texts: &[String]) -> Result<Vec<Threshold>> {
    Ok(texts.iter().map(|t| Threshold::parse(t)).collect::<Result<Vec<_>, _>>()?)
}

/// Refuses a `regressed` gate when nothing is compared with a baseline; `how` says what to
/// give (`--baseline BASELINE`). Checked before any file is read.
pub fn require_baseline(thresholds: &[Threshold], has_baseline: bool, how: &str) -> Result<()> {
    match thresholds.iter().find(|t| t.needs_baseline() && !has_baseline) {
        Some(t) => Err(EngineError::Usage(format!(
            "--fail-if {:?}: `regressed` compares with a baseline: give {how}",
            t.text
        ))),
        None => Ok(()),
    }
}

/// For each `regressed` gate that passed, a line saying why (the interval that holds its
/// limit, or why there is none), for a command to print.
pub fn passed(report: &Report, thresholds: &[Threshold]) -> Vec<String> {
    thresholds.iter().flat_map(|t| t.passed(report)).collect()
}

/// The thresholds `report` crosses; an expression naming an analysis the report lacks is an
/// error.
pub fn gate(report: &Report, thresholds: &[Threshold]) -> Result<Vec<Crossing>> {
    let mut crossed = Vec::new();
    for t in thresholds {
        crossed.extend(t.check(report).map_err(EngineError::Usage)?);
    }
    Ok(crossed)
}
