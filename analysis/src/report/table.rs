//! One row per sample — `analysis,key,start_s,end_s,latency_ns,input` — as CSV and Parquet,
//! written by polars. `input` (the index into the report's inputs) comes last so the first
//! five columns stay those of the contract.
//!
//! CSV text cells that a spreadsheet would take for a formula (starting with `= + - @`, tab
//! or carriage return) get a leading `'` (OWASP "CSV injection"); numbers are left alone.
//! Parquet is typed, so strings stay exactly as traced there.
//!
//! What made the samples — the latscope version, the command line and each input's path and
//! SHA-256 — goes into the Parquet footer's key-value metadata ([`provenance_metadata`]).
//! CSV has no place for it: RFC 4180 knows no comment line, and one breaks every reader's
//! default (pandas, polars, DataFusion), so the CSV stays bare and the JSON report is the
//! record of what made it.

use super::{Report, ReportError};
use polars::prelude::*;

/// Neutralises a CSV text cell a spreadsheet would evaluate.
pub fn csv_neutralise(s: &str) -> String {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{s}"),
        _ => s.to_owned(),
    }
}

fn frame(r: &Report, neutralise: bool) -> PolarsResult<DataFrame> {
    let text = |s: &str| if neutralise { csv_neutralise(s) } else { s.to_owned() };
    let rows = &r.samples;
    DataFrame::new_infer_height(vec![
        Column::new("analysis".into(), rows.iter().map(|s| text(&s.analysis)).collect::<Vec<_>>()),
        Column::new("key".into(), rows.iter().map(|s| text(&s.key)).collect::<Vec<_>>()),
        Column::new("start_s".into(), rows.iter().map(|s| s.start_s).collect::<Vec<_>>()),
        Column::new("end_s".into(), rows.iter().map(|s| s.end_s).collect::<Vec<_>>()),
        Column::new("latency_ns".into(), rows.iter().map(|s| s.latency_ns).collect::<Vec<_>>()),
        Column::new("input".into(), rows.iter().map(|s| s.input as u32).collect::<Vec<_>>()),
    ])
}

fn writer_error(format: &'static str) -> impl Fn(PolarsError) -> ReportError {
    move |e| ReportError::Writer { format, message: e.to_string() }
}

/// The samples as CSV with a header row.
pub fn to_csv(r: &Report) -> Result<Vec<u8>, ReportError> {
    let mut df = frame(r, true).map_err(writer_error("csv"))?;
    let mut out = Vec::new();
    CsvWriter::new(&mut out).include_header(true).finish(&mut df).map_err(writer_error("csv"))?;
    Ok(out)
}

/// The Parquet footer's key-value pairs: `latscope_version`, `latscope_command` (when the
/// report has one) and `latscope_inputs`, a JSON array of `{path, sha256, bytes}`.
pub fn provenance_metadata(r: &Report) -> Vec<(String, String)> {
    let inputs: Vec<serde_json::Value> = r
        .inputs
        .iter()
        .map(|i| serde_json::json!({"path": i.path, "sha256": i.sha256, "bytes": i.bytes}))
        .collect();
    let mut kv = vec![("latscope_version".to_owned(), r.latscope_version.clone())];
    if let Some(command) = &r.command {
        kv.push(("latscope_command".to_owned(), command.clone()));
    }
    kv.push(("latscope_inputs".to_owned(), serde_json::Value::Array(inputs).to_string()));
    kv
}

/// The samples as a Parquet file, with [`provenance_metadata`] in its footer.
pub fn to_parquet(r: &Report) -> Result<Vec<u8>, ReportError> {
    let mut df = frame(r, false).map_err(writer_error("parquet"))?;
    let mut out = Vec::new();
    ParquetWriter::new(&mut out)
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(provenance_metadata(r))))
        .finish(&mut df)
        .map_err(writer_error("parquet"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_report;

    #[test]
    fn csv_rows_and_neutralised_cells() {
        let r = sample_report();
        let csv = String::from_utf8(to_csv(&r).unwrap()).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "analysis,key,start_s,end_s,latency_ns,input");
        assert_eq!(lines.len(), 1 + 4);
        // First sample of input 0: 470.284283 s, 2 us.
        assert!(lines[1].starts_with("irq-handler,irq=36,470.284283,470.284285,2000.0,0"), "{}", lines[1]);
        // The formula cell got its leading quote.
        assert!(csv.contains("'=cmd|' /C calc'!A0"), "{csv}");
        assert!(!csv.lines().any(|l| l.split(',').nth(1).is_some_and(|c| c.starts_with('='))));
        assert_eq!(csv_neutralise("-1+2"), "'-1+2");
        assert_eq!(csv_neutralise("irq=36"), "irq=36");
    }

    #[test]
    fn parquet_reads_back() {
        let r = sample_report();
        let bytes = to_parquet(&r).unwrap();
        let df = ParquetReader::new(std::io::Cursor::new(bytes)).finish().unwrap();
        assert_eq!(df.height(), 4);
        let lat_col = df.column("latency_ns").unwrap().f64().unwrap();
        let lat: Vec<Option<f64>> = (0..lat_col.len()).map(|i| lat_col.get(i)).collect();
        assert_eq!(lat, vec![Some(2000.0), Some(3000.0), Some(6000.0), Some(4000.0)]);
        let key = df.column("key").unwrap().str().unwrap().get(3).unwrap().to_owned();
        assert_eq!(key, "=cmd|' /C calc'!A0");
        let names: Vec<String> = df.get_column_names().iter().map(|s| s.to_string()).collect();
        assert_eq!(names, ["analysis", "key", "start_s", "end_s", "latency_ns", "input"]);
    }

    #[test]
    fn parquet_footer_says_what_made_it() {
        let mut r = sample_report();
        r.command = Some("latscope report a.txt b.txt".into());
        r.inputs[0].sha256 = Some("0f".repeat(32));
        r.inputs[0].bytes = Some(12);
        let bytes = to_parquet(&r).unwrap();
        let mut reader = ParquetReader::new(std::io::Cursor::new(bytes));
        let meta = reader.get_metadata().unwrap().clone();
        let kv: Vec<(String, Option<String>)> = meta
            .key_value_metadata()
            .as_ref()
            .unwrap()
            .iter()
            .map(|kv| (kv.key.clone(), kv.value.clone()))
            .collect();
        let get = |k: &str| kv.iter().find(|(key, _)| key == k).and_then(|(_, v)| v.clone()).unwrap();
        assert_eq!(get("latscope_version"), crate::report::LATSCOPE_VERSION);
        assert_eq!(get("latscope_command"), "latscope report a.txt b.txt");
        let inputs: serde_json::Value = serde_json::from_str(&get("latscope_inputs")).unwrap();
        assert_eq!(inputs[0]["sha256"], "0f".repeat(32));
        assert_eq!(inputs[0]["bytes"], 12);
        assert_eq!(inputs[1]["path"], "b.txt");
        assert!(inputs[1]["sha256"].is_null());
    }
}
