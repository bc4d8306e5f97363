//! Fleets of captures: a report's pairs appended to a dataset (`report --dataset`), and a
//! dataset aggregated (`latscope fleet`; `latscope_fleet` does the work).

use crate::error::{EngineError, Result};
use latscope_analysis::report::Report;
use latscope_fleet::{AppendOutcome, CaptureToAppend, Labels};
use std::path::{Path, PathBuf};

/// The `--label`s of a capture, checked before any file is read: labels need a dataset.
pub fn labels_for(labels: &[String], dataset: Option<&Path>) -> Result<Labels> {
    if !labels.is_empty() && dataset.is_none() {
        return Err(EngineError::Usage(
            "--label names a capture in a fleet dataset: give --dataset DIR too".to_owned(),
        ));
    }
    Ok(latscope_fleet::schema::parse_labels(labels)?)
}

/// Appends the capture `report` measured to the dataset at `dir`; the sentence returned says
/// what happened, and whether it is a warning.
pub fn append(dir: &Path, inputs: &[PathBuf], labels: &Labels, report: &Report) -> Result<(bool, String)> {
    let capture = CaptureToAppend { inputs, labels, report };
    Ok(match latscope_fleet::append(dir, &capture)? {
        AppendOutcome::Appended { capture, pairs } => {
            (false, format!("appended capture {capture} ({pairs} pairs) to {}", dir.display()))
        }
        AppendOutcome::AlreadyPresent { capture, labels: old } => {
            let differ = if old == *labels {
                String::new()
            } else {
                format!(" with other labels ({}); its labels stay as they were", labels_text(&old))
            };
            (true, format!("capture {capture} is already in {}{differ}; skipped", dir.display()))
        }
        AppendOutcome::InProgress { capture, pid } => (
            true,
            format!("capture {capture} is being appended to {} by process {pid}; skipped", dir.display()),
        ),
    })
}

fn labels_text(labels: &Labels) -> String {
    labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}
