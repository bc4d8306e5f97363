//! What `latscope info` says of a capture: its format, records, time range, tracks with their
//! counts, and its warnings.

use latscope_model::{Source, TrackSummary};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// `info --json`.
#[derive(Debug, Serialize)]
pub struct InfoJson {
    pub path: String,
    pub format: String,
    pub events: u64,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub sources: Vec<SourceJson>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct SourceJson {
    pub name: String,
    pub tracks: Vec<TrackSummary>,
}

pub fn info(path: &Path, source: &Source) -> InfoJson {
    let range = source.time_range_seconds();
    InfoJson {
        path: path.display().to_string(),
        format: source.format.clone(),
        events: source.records(),
        start_s: range.map(|r| r.0),
        end_s: range.map(|r| r.1),
        sources: vec![SourceJson { name: source.name.clone(), tracks: source.tracks() }],
        warnings: source.diagnostics.summary(),
    }
}

/// Writes `report` as JSON or as text for people.
pub fn write_info(out: &mut dyn Write, report: &InfoJson, json: bool) -> std::io::Result<()> {
    if json {
        return writeln!(out, "{}", serde_json::to_string_pretty(report)?);
    }
    writeln!(out, "{}: {}", report.path, report.format)?;
    writeln!(out, "  records: {}", report.events)?;
    if let (Some(a), Some(b)) = (report.start_s, report.end_s) {
        writeln!(out, "  time:    {a:.6} s .. {b:.6} s ({:.6} s)", b - a)?;
    }
    for s in &report.sources {
        writeln!(out, "  source {}", s.name)?;
        for t in &s.tracks {
            writeln!(out, "    {:<32} {:<8} {}", t.name, format!("{:?}", t.kind).to_lowercase(), t.count)?;
        }
    }
    for w in &report.warnings {
        writeln!(out, "  warning: {w}")?;
    }
    Ok(())
}
