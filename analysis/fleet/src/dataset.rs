//! Appending captures to a dataset and reading its catalogue back.
//!
//! An append writes each table's file for the capture (`pairs`, then `windows`, then
//! `captures` last: the summary row is the commit) through a temporary file, fsync and a
//! rename, so readers see a whole file or none. A capture is named by the BLAKE3 hash of
//! its input files' bytes; an exclusive claim file (`_claims/HASH`, created with
//! `O_EXCL`) makes two appends of the same capture at once end with one copy, and a capture
//! whose summary already exists is skipped. Readers trust only committed captures: a
//! `pairs` file without its summary (an append killed half way), a leftover temporary file
//! or a file that is not whole Parquet is reported and left on disk, never deleted.

use crate::FleetError;
use crate::schema::{self, Labels};
use latscope_analysis::report::Report;
use polars::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One capture to append: the input files as the report read them, its labels, and the
/// report built with its samples.
#[derive(Debug, Clone, Copy)]
pub struct CaptureToAppend<'a> {
    pub inputs: &'a [PathBuf],
    pub labels: &'a Labels,
    pub report: &'a Report,
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendOutcome {
    Appended {
        capture: String,
        pairs: u64,
    },
    /// The capture is already in the dataset; `labels` are those it was appended with.
    AlreadyPresent {
        capture: String,
        labels: Labels,
    },
    /// Another process is appending this capture right now.
    InProgress {
        capture: String,
        pid: u32,
    },
}

/// The content hash of the inputs, in order: 32 hex digits of BLAKE3.
pub fn capture_id(inputs: &[PathBuf]) -> Result<String, FleetError> {
    let mut all = blake3::Hasher::new();
    for path in inputs {
        let mut h = blake3::Hasher::new();
        let file = std::fs::File::open(path).map_err(FleetError::io(path))?;
        h.update_reader(file).map_err(FleetError::io(path))?;
        all.update(h.finalize().as_bytes());
    }
    Ok(all.finalize().to_hex()[..32].to_owned())
}

/// Nanoseconds since 1970 (UTC): appends within one second keep their order.
fn now_unix_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Creates the dataset directory and its manifest, or checks the manifest's version.
pub fn ensure_dataset(dir: &Path) -> Result<(), FleetError> {
    std::fs::create_dir_all(dir).map_err(FleetError::io(dir))?;
    let manifest = dir.join(schema::MANIFEST);
    match schema::manifest_version(dir)? {
        Some(v) => schema::check_version(&manifest, v),
        None => {
            let text = format!("{{\"latscope_dataset\": {}}}\n", schema::DATASET_VERSION);
            // Two first appends at once write the same bytes; either rename wins.
            publish(&manifest, text.as_bytes())
        }
    }
}

/// The committed summary file of `capture`, in any day partition.
fn committed_file(dir: &Path, capture: &str) -> Result<Option<PathBuf>, FleetError> {
    file_in(dir, schema::CAPTURES, capture)
}

/// The file of `capture` in `table`, in any day partition.
fn file_in(dir: &Path, table: &str, capture: &str) -> Result<Option<PathBuf>, FleetError> {
    let name = format!("{capture}.parquet");
    for day in day_dirs(&dir.join(table))? {
        let p = day.join(&name);
        if p.is_file() {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// The `day=...` directories of a table (none when the table does not exist yet).
fn day_dirs(table: &Path) -> Result<Vec<PathBuf>, FleetError> {
    let entries = match std::fs::read_dir(table) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(FleetError::io(table)(e)),
    };
    let mut dirs = Vec::new();
    for e in entries {
        let e = e.map_err(FleetError::io(table))?;
        let p = e.path();
        if p.is_dir() && e.file_name().to_string_lossy().starts_with(&format!("{}=", schema::DAY)) {
            dirs.push(p);
        }
    }
    dirs.sort();
    Ok(dirs)
}

fn labels_of_summary(path: &Path) -> Result<Labels, FleetError> {
    let row = read_summary(path)?;
    Ok(row.labels)
}

/// The claim on a capture: `_claims/<capture>`, held under an exclusive file lock that the
/// system releases when the process ends, also when it is killed, so a claim never outlives
/// its append. The file holds the claimer's pid for a second appender's message, and is
/// removed on release while still locked.
#[derive(Debug)]
struct Claim {
    path: PathBuf,
    _file: std::fs::File,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

enum Claimed {
    Mine(Claim),
    /// Another process holds the claim (its pid, 0 when it has not written it yet).
    Busy(u32),
}

/// Whether `file` is still the file at `path` (a releasing claimer removes its file, and a
/// lock taken on the removed file claims nothing).
#[cfg(unix)]
fn still_at(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_at(_: &std::fs::File, path: &Path) -> bool {
    path.exists()
}

fn claim(dir: &Path, capture: &str) -> Result<Claimed, FleetError> {
    use std::io::Write;
    let claims = dir.join(schema::CLAIMS);
    std::fs::create_dir_all(&claims).map_err(FleetError::io(&claims))?;
    let path = claims.join(capture);
    let io = |e| FleetError::io(&path)(e);
    for _ in 0..16 {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) if still_at(&file, &path) => {
                file.set_len(0).map_err(io)?;
                file.write_all(std::process::id().to_string().as_bytes()).map_err(io)?;
                return Ok(Claimed::Mine(Claim { path, _file: file }));
            }
            // Locked a file its holder had just removed: open the new one.
            Ok(()) => continue,
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = std::io::Read::read_to_string(&mut file, &mut text);
                return Ok(Claimed::Busy(text.trim().parse().unwrap_or(0)));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
    }
    Ok(Claimed::Busy(0))
}

/// Appends one capture to the dataset at `dir` (created when missing).
pub fn append(dir: &Path, capture: &CaptureToAppend<'_>) -> Result<AppendOutcome, FleetError> {
    ensure_dataset(dir)?;
    let id = capture_id(capture.inputs)?;
    if let Some(existing) = committed_file(dir, &id)? {
        return Ok(AppendOutcome::AlreadyPresent { labels: labels_of_summary(&existing)?, capture: id });
    }
    let _claim = match claim(dir, &id)? {
        Claimed::Mine(c) => c,
        Claimed::Busy(pid) => return Ok(AppendOutcome::InProgress { capture: id, pid }),
    };
    // Another append may have committed between the first look and the claim.
    if let Some(existing) = committed_file(dir, &id)? {
        return Ok(AppendOutcome::AlreadyPresent { labels: labels_of_summary(&existing)?, capture: id });
    }
    let now = now_unix_ns();
    // A killed append of this capture may have left its pairs in another day's partition:
    // writing to the same day replaces them, so no engine ever sees two copies.
    let day = match file_in(dir, schema::PAIRS, &id)? {
        Some(p) => p
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|d| d.to_str())
            .and_then(|d| d.strip_prefix(&format!("{}=", schema::DAY)))
            .map_or_else(|| schema::utc_day(now.div_euclid(1_000_000_000)), str::to_owned),
        None => schema::utc_day(now.div_euclid(1_000_000_000)),
    };
    let report = capture.report;
    let pairs = pairs_frame(&id, capture.labels, report).map_err(FleetError::parquet(dir))?;
    let count = pairs.height() as u64;
    write_table(&schema::table_file(dir, schema::PAIRS, &day, &id), pairs)?;
    if !report.windows.is_empty() {
        let windows = windows_frame(&id, capture.labels, report).map_err(FleetError::parquet(dir))?;
        write_table(&schema::table_file(dir, schema::WINDOWS, &day, &id), windows)?;
    }
    let summary = summary_frame(&id, capture.labels, report, capture.inputs, now, count)
        .map_err(FleetError::parquet(dir))?;
    write_table(&schema::table_file(dir, schema::CAPTURES, &day, &id), summary)?;
    Ok(AppendOutcome::Appended { capture: id, pairs: count })
}

fn write_table(path: &Path, mut df: DataFrame) -> Result<(), FleetError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(FleetError::io(parent))?;
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes).finish(&mut df).map_err(FleetError::parquet(path))?;
    publish(path, &bytes)
}

/// The mark in the name of a file being written; readers skip such files.
pub(crate) const TMP_MARK: &str = ".latscope-tmp-";

/// Writes `bytes` to `path` atomically: a temporary file in the same directory (named with
/// [`TMP_MARK`], so a reader knows a leftover of a killed append), flushed to disk, renamed
/// over `path`, and the directory flushed so the new name survives a crash too.
fn publish(path: &Path, bytes: &[u8]) -> Result<(), FleetError> {
    use std::io::Write;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}{TMP_MARK}{}-{n}", std::process::id()));
    let written = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(FleetError::io(path)(e));
    }
    // Best effort: not every filesystem lets a directory be opened and synced.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The label columns, each a constant of `n` rows, in name order.
fn label_columns(labels: &Labels, n: usize) -> Vec<Column> {
    labels.iter().map(|(k, v)| Column::new(k.as_str().into(), vec![v.as_str(); n])).collect()
}

/// The columns `pairs` and `windows` start with: version, capture, analysis.
fn leading_columns(id: &str, analyses: Vec<&str>) -> Vec<Column> {
    let n = analyses.len();
    vec![
        Column::new(schema::COL_VERSION.into(), vec![schema::DATASET_VERSION; n]),
        Column::new(schema::COL_CAPTURE.into(), vec![id; n]),
        Column::new(schema::COL_ANALYSIS.into(), analyses),
    ]
}

fn input_path(report: &Report, input: usize) -> &str {
    report.inputs.get(input).map_or("", |i| i.path.as_str())
}

/// The `pairs` table of capture `id` as the dataset stores it (one row per measured pair,
/// pulse, chain total or stage pair; the schema of docs/FLEET.md), also what `latscope
/// query` calls `pairs`.
pub fn pairs_frame(id: &str, labels: &Labels, report: &Report) -> PolarsResult<DataFrame> {
    // Chain stages are named `CHAIN/STAGE` by the report; their kind is their own.
    let mut stage_of: BTreeMap<&str, &str> = BTreeMap::new();
    let mut kind_of: BTreeMap<&str, String> = BTreeMap::new();
    for a in &report.analyses {
        kind_of.insert(a.name.as_str(), kind_name(a.kind));
        for s in &a.stages {
            let stage = s.name.strip_prefix(&format!("{}/", a.name)).unwrap_or(&s.name);
            stage_of.insert(s.name.as_str(), stage);
            kind_of.insert(s.name.as_str(), kind_name(s.kind));
        }
    }
    let rows = &report.samples;
    let n = rows.len();
    let mut cols = leading_columns(id, rows.iter().map(|r| r.analysis.as_str()).collect());
    cols.extend([
        Column::new(
            schema::COL_STAGE.into(),
            rows.iter().map(|r| stage_of.get(r.analysis.as_str()).copied()).collect::<Vec<_>>(),
        ),
        Column::new(
            schema::COL_KIND.into(),
            rows.iter()
                .map(|r| kind_of.get(r.analysis.as_str()).map_or("", |s| s.as_str()))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            schema::COL_SOURCE.into(),
            rows.iter().map(|r| input_path(report, r.input)).collect::<Vec<_>>(),
        ),
        Column::new(schema::COL_INPUT.into(), rows.iter().map(|r| r.input as u32).collect::<Vec<_>>()),
        Column::new(schema::COL_KEY.into(), rows.iter().map(|r| r.key.as_str()).collect::<Vec<_>>()),
        Column::new(schema::COL_START.into(), rows.iter().map(|r| r.start_s).collect::<Vec<_>>()),
        Column::new(schema::COL_END.into(), rows.iter().map(|r| r.end_s).collect::<Vec<_>>()),
        Column::new(schema::COL_LATENCY.into(), rows.iter().map(|r| r.latency_ns).collect::<Vec<_>>()),
    ]);
    cols.extend(label_columns(labels, n));
    DataFrame::new(n, cols)
}

fn kind_name(kind: latscope_analysis::outcome::AnalysisKind) -> String {
    serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// The `windows` table of capture `id` as the dataset stores it (one row per detector
/// window), also what `latscope query` calls `windows`.
pub fn windows_frame(id: &str, labels: &Labels, report: &Report) -> PolarsResult<DataFrame> {
    let rows = &report.windows;
    let n = rows.len();
    let source_of = |name: &str| {
        let input = report.analyses.iter().find(|a| a.name == name).map_or(0, |a| a.input);
        input_path(report, input)
    };
    let mut cols = leading_columns(id, rows.iter().map(|r| r.analysis.as_str()).collect());
    cols.extend([
        Column::new(
            schema::COL_SOURCE.into(),
            rows.iter().map(|r| source_of(&r.analysis)).collect::<Vec<_>>(),
        ),
        Column::new(schema::COL_START.into(), rows.iter().map(|r| r.start_s).collect::<Vec<_>>()),
        Column::new(schema::COL_END.into(), rows.iter().map(|r| r.end_s).collect::<Vec<_>>()),
        Column::new(schema::COL_DURATION.into(), rows.iter().map(|r| r.duration_ns).collect::<Vec<_>>()),
        Column::new(schema::COL_EXCESS.into(), rows.iter().map(|r| r.excess_ns).collect::<Vec<_>>()),
    ]);
    cols.extend(label_columns(labels, n));
    DataFrame::new(n, cols)
}

/// Pairs per analysis name, chain stages included.
fn analyses_counts(report: &Report) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for r in &report.samples {
        *out.entry(r.analysis.clone()).or_insert(0) += 1;
    }
    // Analyses without a pair still exist in the capture (a count of 0 is a result).
    fn walk(a: &latscope_analysis::report::Analysis, out: &mut BTreeMap<String, u64>) {
        out.entry(a.name.clone()).or_insert(0);
        for s in &a.stages {
            walk(s, out);
        }
    }
    for a in &report.analyses {
        walk(a, &mut out);
    }
    out
}

/// The inputs as absolute paths (for a viewer on the same machine to open them later).
fn absolute(inputs: &[PathBuf]) -> Vec<String> {
    inputs
        .iter()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()).display().to_string())
        .collect()
}

fn summary_frame(
    id: &str,
    labels: &Labels,
    report: &Report,
    inputs: &[PathBuf],
    now: i64,
    pairs: u64,
) -> PolarsResult<DataFrame> {
    let sources: Vec<&str> = report.inputs.iter().map(|i| i.path.as_str()).collect();
    let json = |v: serde_json::Result<String>| v.unwrap_or_else(|_| "null".to_owned());
    let mut cols = vec![
        Column::new(schema::COL_VERSION.into(), [schema::DATASET_VERSION]),
        Column::new(schema::COL_CAPTURE.into(), [id]),
        Column::new(schema::COL_SOURCE.into(), [sources.first().copied().unwrap_or("")]),
        Column::new(schema::COL_SOURCES.into(), [json(serde_json::to_string(&sources))]),
        Column::new(schema::COL_PATHS.into(), [json(serde_json::to_string(&absolute(inputs)))]),
        Column::new(schema::COL_LABELS.into(), [json(serde_json::to_string(labels))]),
        Column::new(schema::COL_APPENDED.into(), [now]),
        Column::new(schema::COL_PAIRS.into(), [pairs]),
        Column::new(schema::COL_ANALYSES.into(), [json(serde_json::to_string(&analyses_counts(report)))]),
        Column::new(schema::COL_REPORT.into(), [latscope_analysis::report::to_json(report)]),
        Column::new(schema::COL_WRITER.into(), [format!("latscope {}", env!("CARGO_PKG_VERSION"))]),
    ];
    cols.extend(label_columns(labels, 1));
    DataFrame::new(1, cols)
}

/// One committed capture, as the catalogue knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureInfo {
    pub capture: String,
    pub labels: Labels,
    /// The input paths as given to `report`, in input order.
    pub sources: Vec<String>,
    /// The same inputs as absolute paths on the machine that appended them.
    pub paths: Vec<String>,
    pub appended_unix_ns: i64,
    pub pairs: u64,
    /// Pairs per analysis (0 for an analysis that found none).
    pub analyses: BTreeMap<String, u64>,
    pub pairs_file: PathBuf,
}

/// A dataset's committed captures, and what its reader noticed.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub dir: PathBuf,
    pub captures: Vec<CaptureInfo>,
    pub warnings: Vec<String>,
}

/// Whether `path` has Parquet's magic at both ends (a truncated file does not).
fn whole_parquet(path: &Path) -> Result<(), String> {
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    if len < 12 {
        return Err(format!("{len} bytes, too short for Parquet"));
    }
    let mut head = [0u8; 4];
    let mut tail = [0u8; 4];
    f.read_exact(&mut head).map_err(|e| e.to_string())?;
    f.seek(SeekFrom::End(-4)).map_err(|e| e.to_string())?;
    f.read_exact(&mut tail).map_err(|e| e.to_string())?;
    if &head != b"PAR1" || &tail != b"PAR1" {
        return Err("not a whole Parquet file (no PAR1 footer: truncated?)".to_owned());
    }
    Ok(())
}

/// The `.parquet` files of a table by capture id; leftovers and broken files go to warnings.
fn table_files(
    dir: &Path,
    table: &str,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, PathBuf>, FleetError> {
    let mut out = BTreeMap::new();
    for day in day_dirs(&dir.join(table))? {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&day)
            .map_err(FleetError::io(&day))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        names.sort();
        for p in names {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.contains(TMP_MARK) {
                warnings.push(format!(
                    "{}: temporary file of an interrupted append; ignored (safe to delete)",
                    p.display()
                ));
                continue;
            }
            let Some(id) = name.strip_suffix(".parquet") else { continue };
            if let Err(why) = whole_parquet(&p) {
                warnings.push(format!("{}: {why}; ignored", p.display()));
                continue;
            }
            if let Some(first) = out.get(id) {
                let first: &PathBuf = first;
                warnings.push(format!(
                    "{}: capture {id} is also in {}; the second copy is ignored",
                    p.display(),
                    first.display()
                ));
                continue;
            }
            out.insert(id.to_owned(), p);
        }
    }
    Ok(out)
}

struct SummaryRow {
    version: u32,
    labels: Labels,
    sources: Vec<String>,
    paths: Vec<String>,
    appended: i64,
    pairs: u64,
    analyses: BTreeMap<String, u64>,
}

fn read_summary(path: &Path) -> Result<SummaryRow, FleetError> {
    let perr = FleetError::parquet(path);
    let file = std::fs::File::open(path).map_err(FleetError::io(path))?;
    let cols = [
        schema::COL_VERSION,
        schema::COL_LABELS,
        schema::COL_SOURCES,
        schema::COL_PATHS,
        schema::COL_APPENDED,
        schema::COL_PAIRS,
        schema::COL_ANALYSES,
    ];
    let df = ParquetReader::new(file)
        .with_columns(Some(cols.iter().map(|c| (*c).to_owned()).collect()))
        .finish()
        .map_err(perr)?;
    let bad = |message: String| FleetError::BadDataset { path: path.to_path_buf(), message };
    if df.height() != 1 {
        return Err(bad(format!("a capture summary has {} rows, expected 1", df.height())));
    }
    let get = |name: &str| {
        df.column(name).map_err(|e| bad(e.to_string())).map(|c| c.get(0).map(|v| v.into_static()))
    };
    let version = match get(schema::COL_VERSION)? {
        Ok(AnyValue::UInt32(v)) => v,
        other => return Err(bad(format!("{}: unexpected {other:?}", schema::COL_VERSION))),
    };
    let text = |name: &str| -> Result<String, FleetError> {
        match get(name)? {
            Ok(AnyValue::StringOwned(s)) => Ok(s.to_string()),
            Ok(AnyValue::String(s)) => Ok(s.to_owned()),
            other => Err(bad(format!("{name}: unexpected {other:?}"))),
        }
    };
    let parse = |name: &str| -> Result<serde_json::Value, FleetError> {
        serde_json::from_str(&text(name)?).map_err(|e| bad(format!("{name}: {e}")))
    };
    let labels: Labels =
        serde_json::from_value(parse(schema::COL_LABELS)?).map_err(|e| bad(e.to_string()))?;
    let sources: Vec<String> =
        serde_json::from_value(parse(schema::COL_SOURCES)?).map_err(|e| bad(e.to_string()))?;
    let paths: Vec<String> =
        serde_json::from_value(parse(schema::COL_PATHS)?).map_err(|e| bad(e.to_string()))?;
    let analyses: BTreeMap<String, u64> =
        serde_json::from_value(parse(schema::COL_ANALYSES)?).map_err(|e| bad(e.to_string()))?;
    let appended = match get(schema::COL_APPENDED)? {
        Ok(AnyValue::Int64(v)) => v,
        other => return Err(bad(format!("{}: unexpected {other:?}", schema::COL_APPENDED))),
    };
    let pairs = match get(schema::COL_PAIRS)? {
        Ok(AnyValue::UInt64(v)) => v,
        other => return Err(bad(format!("{}: unexpected {other:?}", schema::COL_PAIRS))),
    };
    Ok(SummaryRow { version, labels, sources, paths, appended, pairs, analyses })
}

impl Dataset {
    /// Reads the catalogue of the dataset at `dir`: every committed capture. Refuses a
    /// newer schema version; reports (and ignores) incomplete appends and broken files.
    pub fn open(dir: &Path) -> Result<Dataset, FleetError> {
        if !dir.is_dir() {
            return Err(FleetError::BadDataset {
                path: dir.to_path_buf(),
                message: "no such dataset directory".into(),
            });
        }
        let manifest = dir.join(schema::MANIFEST);
        match schema::manifest_version(dir)? {
            Some(v) => schema::check_version(&manifest, v)?,
            None => {
                return Err(FleetError::BadDataset {
                    path: dir.to_path_buf(),
                    message: format!(
                        "not a latscope dataset (no {}); create one with `latscope report --dataset`",
                        schema::MANIFEST
                    ),
                });
            }
        }
        let mut warnings = Vec::new();
        let summaries = table_files(dir, schema::CAPTURES, &mut warnings)?;
        let pairs = table_files(dir, schema::PAIRS, &mut warnings)?;
        let mut captures = Vec::new();
        for (id, path) in &summaries {
            let row = read_summary(path)?;
            schema::check_version(path, row.version)?;
            let Some(pairs_file) = pairs.get(id) else {
                warnings.push(format!(
                    "{}: capture {id} has a summary but no whole pairs file; ignored (append it again)",
                    path.display()
                ));
                continue;
            };
            captures.push(CaptureInfo {
                capture: id.clone(),
                labels: row.labels,
                sources: row.sources,
                paths: row.paths,
                appended_unix_ns: row.appended,
                pairs: row.pairs,
                analyses: row.analyses,
                pairs_file: pairs_file.clone(),
            });
        }
        let orphans: Vec<&PathBuf> =
            pairs.iter().filter(|(id, _)| !summaries.contains_key(*id)).map(|p| p.1).collect();
        for p in orphans {
            warnings.push(format!(
                "{}: pairs of an append that did not finish (no capture summary); ignored, kept on disk; \
                 append the capture again to complete it",
                p.display()
            ));
        }
        captures.sort_by(|a, b| {
            a.appended_unix_ns.cmp(&b.appended_unix_ns).then_with(|| a.capture.cmp(&b.capture))
        });
        Ok(Dataset { dir: dir.to_path_buf(), captures, warnings })
    }

    /// Every label name any capture has.
    pub fn label_names(&self) -> BTreeSet<&str> {
        self.captures.iter().flat_map(|c| c.labels.keys().map(String::as_str)).collect()
    }
}
