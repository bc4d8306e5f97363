//! The dataset's on-disk contract (version 1; docs/FLEET.md is its reference): the
//! directory layout, the columns of each table, and what a label may be. Fields are added,
//! never renamed; a reader refuses a dataset whose version is newer than its own.

use crate::FleetError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The schema version this crate writes and the newest it reads.
pub const DATASET_VERSION: u32 = 1;

/// The manifest at the dataset's root: `{"latscope_dataset": 1}`.
pub const MANIFEST: &str = "latscope-dataset.json";

/// One row per measured pair (and per pulse, chain total or stage pair).
pub const PAIRS: &str = "pairs";
/// One row per detector window (stalls, long spans).
pub const WINDOWS: &str = "windows";
/// One row per capture: its identity, labels and the whole JSON report.
pub const CAPTURES: &str = "captures";
/// Claims of appends in progress (not Parquet; engines never read it).
pub const CLAIMS: &str = "_claims";

/// The Hive partition key of every table: the UTC day of the append.
pub const DAY: &str = "day";

/// Columns every table has.
pub const COL_VERSION: &str = "dataset_version";
pub const COL_CAPTURE: &str = "capture";
pub const COL_SOURCE: &str = "source";
pub const COL_ANALYSIS: &str = "analysis";
/// Columns of `pairs`.
pub const COL_STAGE: &str = "stage";
pub const COL_KIND: &str = "kind";
pub const COL_INPUT: &str = "input";
pub const COL_KEY: &str = "key";
pub const COL_START: &str = "start_s";
pub const COL_END: &str = "end_s";
pub const COL_LATENCY: &str = "latency_ns";
/// Columns of `windows`.
pub const COL_DURATION: &str = "duration_ns";
pub const COL_EXCESS: &str = "excess_ns";
/// Columns of `captures`.
pub const COL_SOURCES: &str = "sources_json";
pub const COL_PATHS: &str = "paths_json";
pub const COL_LABELS: &str = "labels_json";
pub const COL_APPENDED: &str = "appended_unix_ns";
pub const COL_PAIRS: &str = "pairs";
pub const COL_ANALYSES: &str = "analyses_json";
pub const COL_REPORT: &str = "report_json";
pub const COL_WRITER: &str = "writer";

/// Names a label may not take: the columns above and the partition key, since each label
/// is also a column of the same name.
pub const RESERVED: [&str; 24] = [
    COL_VERSION,
    COL_CAPTURE,
    COL_SOURCE,
    COL_ANALYSIS,
    COL_STAGE,
    COL_KIND,
    COL_INPUT,
    COL_KEY,
    COL_START,
    COL_END,
    COL_LATENCY,
    COL_DURATION,
    COL_EXCESS,
    COL_SOURCES,
    COL_PATHS,
    COL_LABELS,
    COL_APPENDED,
    COL_PAIRS,
    COL_ANALYSES,
    COL_REPORT,
    COL_WRITER,
    DAY,
    "count",
    "captures",
];

/// A capture's labels, by name (sorted, so columns and JSON come out in one order).
pub type Labels = BTreeMap<String, String>;

/// Parses `--label NAME=VALUE`. The name becomes a column in every engine, so it is an
/// identifier (`[A-Za-z_][A-Za-z0-9_]*`, at most 64 bytes) and not a reserved column; the
/// value is any non-empty text: it is stored in a column, never in a path, so `/` and `=`
/// are kept exactly.
pub fn parse_label(text: &str) -> Result<(String, String), FleetError> {
    let bad = |why: String| FleetError::Usage(format!("--label {text:?}: {why}"));
    let (name, value) = text.split_once('=').ok_or_else(|| bad("expected NAME=VALUE".into()))?;
    let name = name.trim();
    let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64;
    if !ident {
        return Err(bad(format!(
            "the name {name:?} must be letters, digits and _ (not starting with a digit), at most 64"
        )));
    }
    if RESERVED.contains(&name) {
        return Err(bad(format!("{name:?} is a column of the dataset; choose another label name")));
    }
    if value.is_empty() {
        return Err(bad("the value is empty".into()));
    }
    Ok((name.to_owned(), value.to_owned()))
}

/// Parses every `--label`, refusing a name given twice.
pub fn parse_labels(texts: &[String]) -> Result<Labels, FleetError> {
    let mut labels = Labels::new();
    for t in texts {
        let (k, v) = parse_label(t)?;
        if let Some(old) = labels.get(&k)
            && *old != v
        {
            return Err(FleetError::Usage(format!("--label {k} is given twice ({old:?} and {v:?})")));
        }
        labels.insert(k, v);
    }
    Ok(labels)
}

/// The version the manifest of `dir` declares; `None` when there is no manifest.
pub fn manifest_version(dir: &Path) -> Result<Option<u32>, FleetError> {
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(FleetError::io(&path)(e)),
    };
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| FleetError::BadDataset { path: path.clone(), message: format!("not JSON: {e}") })?;
    let version = v.get("latscope_dataset").and_then(serde_json::Value::as_u64).ok_or_else(|| {
        FleetError::BadDataset {
            path: path.clone(),
            message: "no \"latscope_dataset\" version number".into(),
        }
    })?;
    Ok(Some(u32::try_from(version).unwrap_or(u32::MAX)))
}

/// Fails when `found` is newer than this crate reads.
pub fn check_version(path: &Path, found: u32) -> Result<(), FleetError> {
    if found > DATASET_VERSION {
        return Err(FleetError::NewerVersion { path: path.to_path_buf(), found, supported: DATASET_VERSION });
    }
    Ok(())
}

/// `TABLE/day=YYYY-MM-DD/CAPTURE.parquet` under `dir`.
pub fn table_file(dir: &Path, table: &str, day: &str, capture: &str) -> PathBuf {
    dir.join(table).join(format!("{DAY}={day}")).join(format!("{capture}.parquet"))
}

/// The UTC calendar day of a Unix time, `YYYY-MM-DD` (civil-from-days, proleptic Gregorian).
pub fn utc_day(unix_s: i64) -> String {
    let z = unix_s.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_keep_slashes_and_equals_in_values_and_refuse_bad_names() {
        assert_eq!(parse_label("branch=feat/x=1").unwrap(), ("branch".into(), "feat/x=1".into()));
        for bad in ["board", "=x", "bo/ard=x", "1x=y", "latency_ns=3", "day=1", "k="] {
            assert!(parse_label(bad).is_err(), "{bad}");
        }
        let twice = parse_labels(&["k=1".into(), "k=2".into()]).unwrap_err();
        assert!(twice.to_string().contains("given twice"), "{twice}");
    }

    #[test]
    fn utc_days() {
        assert_eq!(utc_day(0), "1970-01-01");
        assert_eq!(utc_day(951_782_400), "2000-02-29");
        assert_eq!(utc_day(1_796_083_200), "2026-12-01");
    }
}
