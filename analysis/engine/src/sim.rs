//! The simulator as a capture: a scenario's simulated trace written as ftrace text or VCD,
//! and its report (the scenario's own analyses, presets, and the scenario's figures).

use crate::analyse::run_spec;
use crate::error::{EngineError, Result};
use crate::registry::Registry;
use latscope_analysis::report::{self, Report, ReportInput, ReportOptions};
use latscope_analysis::runner::Scope;
use latscope_analysis::spec::Spec;
use latscope_model::{Placed, Source};
use std::path::{Path, PathBuf};

/// Writes a simulated trace by its extension: `.txt`/`.trace` as ftrace text, `.vcd` as VCD
/// of the digital lines (atomically, never over one of `inputs`).
pub fn write_trace(source: &Source, path: &Path, inputs: &[PathBuf]) -> Result<()> {
    let mut bytes = Vec::new();
    let written = match path.extension().and_then(|e| e.to_str()) {
        Some("vcd") => latscope_sim::output::write_vcd(source, &mut bytes),
        Some("txt" | "trace") => latscope_sim::output::write_ftrace(source, &mut bytes),
        _ => {
            return Err(EngineError::Usage(format!(
                "{}: a simulated trace is TRACE.txt (ftrace text) or TRACE.vcd",
                path.display()
            )));
        }
    };
    written.map_err(|source| EngineError::Output { what: format!("writing {}", path.display()), source })?;
    Ok(crate::atomic::write_atomic(path, &bytes, inputs)?)
}

/// The report of a simulator run: the scenario's own analyses and `presets` over the
/// simulated trace, the scenario figures as `metrics`.
pub fn report_of(
    registry: &Registry,
    out: &latscope_sim::Output,
    presets: &[Spec],
    title: &str,
) -> Result<Report> {
    let mut outcomes = out.report.outcomes.clone();
    let sources = [Placed::unaligned(&out.source)];
    for spec in presets {
        let ran = run_spec(registry, spec, &sources, Scope::Each)?;
        outcomes.extend(ran.outcomes);
    }
    let path = out.report.path.clone();
    let inputs = [ReportInput { path: &path, source: &out.source }];
    let opts = ReportOptions {
        metrics: out.report.metrics.clone(),
        title: Some(title.to_owned()),
        ..ReportOptions::default()
    };
    Ok(report::build(&inputs, &outcomes, &opts)?)
}

/// What a scenario is for and what each of its settings changes, as `latscope sim SCENARIO
/// --list` prints it: its description and question, then per top-level setting its value,
/// its choices or unit, and its help.
pub fn describe(scenario: &latscope_sim::Scenario) -> String {
    use std::fmt::Write as _;
    let mut out = format!("{} ({})\n", scenario.name, scenario.file);
    if let Some(d) = scenario.description() {
        let _ = writeln!(out, "  {d}");
    }
    if let Some(q) = scenario.question() {
        let _ = writeln!(out, "\nQuestion: {q}");
    }
    out.push_str("\nSettings (--set KEY=VALUE):\n");
    for s in scenario.settings() {
        let mut what = s.value.to_arg();
        if let Some(unit) = s.unit {
            let _ = write!(what, " {unit}");
        }
        if !s.choices.is_empty() {
            let _ = write!(what, "  [{}]", s.choices.join(" | "));
        }
        let _ = writeln!(out, "  {} = {what}", s.key);
        let _ = writeln!(out, "      {}", s.help.as_deref().unwrap_or("(no help in the scenario file)"));
    }
    out
}
