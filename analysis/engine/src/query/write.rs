//! A query's result as the user asked for it: an aligned text table, CSV (a header row, then
//! the rows), JSON (an array of objects) or Parquet. Integers stay integers in every format.

use crate::error::{EngineError, Result};
use crate::output::Output;
use polars::prelude::*;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryFormat {
    Table,
    Csv,
    Json,
    Parquet,
}

impl QueryFormat {
    /// The format an output path implies by its extension.
    pub fn of_path(path: &std::path::Path) -> Option<Self> {
        Some(match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "csv" => QueryFormat::Csv,
            "json" => QueryFormat::Json,
            "parquet" | "pq" => QueryFormat::Parquet,
            "txt" => QueryFormat::Table,
            _ => return None,
        })
    }
}

/// Writes `df` as `format` to `output` (a file atomically, never over one of `inputs`).
pub fn write(df: &DataFrame, format: QueryFormat, output: &Output, inputs: &[PathBuf]) -> Result<()> {
    if format == QueryFormat::Parquet && matches!(output, Output::Stdout) {
        return Err(EngineError::BinaryToStdout { format: "parquet" });
    }
    output.check(inputs)?;
    match format {
        QueryFormat::Parquet => {
            // Rendered before the file is opened, so a failure leaves nothing behind.
            let mut bytes = Vec::new();
            let mut df = df.clone();
            ParquetWriter::new(&mut bytes).finish(&mut df).map_err(|e| EngineError::Output {
                what: "writing the query's result as Parquet".into(),
                source: std::io::Error::other(e.to_string()),
            })?;
            output.write("the query's result", inputs, |w| w.write_all(&bytes))
        }
        QueryFormat::Csv => output.write("the query's result", inputs, |w| write_csv(df, w)),
        QueryFormat::Json => output.write("the query's result", inputs, |w| write_json(df, w)),
        QueryFormat::Table => output.write("the query's result", inputs, |w| write_table(df, w)),
    }
}

/// The rows of `df`, each cell as [`AnyValue`], without copying a column.
fn for_each_row(
    df: &DataFrame,
    mut f: impl FnMut(&[AnyValue<'_>]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let series: Vec<Series> = df.columns().iter().map(|c| c.as_materialized_series().rechunk()).collect();
    let mut iters: Vec<_> = series.iter().map(|s| s.iter()).collect();
    let mut row: Vec<AnyValue<'_>> = Vec::with_capacity(iters.len());
    for _ in 0..df.height() {
        row.clear();
        row.extend(iters.iter_mut().map(|it| it.next().unwrap_or(AnyValue::Null)));
        f(&row)?;
    }
    Ok(())
}

/// A cell as text: integers as integers, floats in their shortest exact form, null empty.
pub fn cell_text(v: &AnyValue<'_>) -> String {
    match v {
        AnyValue::Null => String::new(),
        AnyValue::Boolean(b) => b.to_string(),
        AnyValue::String(s) => (*s).to_owned(),
        AnyValue::StringOwned(s) => s.to_string(),
        AnyValue::UInt8(x) => x.to_string(),
        AnyValue::UInt16(x) => x.to_string(),
        AnyValue::UInt32(x) => x.to_string(),
        AnyValue::UInt64(x) => x.to_string(),
        AnyValue::Int8(x) => x.to_string(),
        AnyValue::Int16(x) => x.to_string(),
        AnyValue::Int32(x) => x.to_string(),
        AnyValue::Int64(x) => x.to_string(),
        AnyValue::Float32(x) => x.to_string(),
        AnyValue::Float64(x) => x.to_string(),
        other => other.to_string(),
    }
}

fn json_value(v: &AnyValue<'_>) -> serde_json::Value {
    use serde_json::Value;
    match v {
        AnyValue::Null => Value::Null,
        AnyValue::Boolean(b) => Value::Bool(*b),
        AnyValue::UInt8(x) => Value::from(*x),
        AnyValue::UInt16(x) => Value::from(*x),
        AnyValue::UInt32(x) => Value::from(*x),
        AnyValue::UInt64(x) => Value::from(*x),
        AnyValue::Int8(x) => Value::from(*x),
        AnyValue::Int16(x) => Value::from(*x),
        AnyValue::Int32(x) => Value::from(*x),
        AnyValue::Int64(x) => Value::from(*x),
        // Not a number (NaN, infinity) has no JSON form: null.
        AnyValue::Float32(x) => {
            serde_json::Number::from_f64(f64::from(*x)).map_or(Value::Null, Value::Number)
        }
        AnyValue::Float64(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
        other => Value::String(cell_text(other)),
    }
}

fn write_csv(df: &DataFrame, w: &mut dyn Write) -> std::io::Result<()> {
    let quote = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_owned()
        }
    };
    let header: Vec<String> = df.get_column_names().iter().map(|n| quote(n.as_str())).collect();
    writeln!(w, "{}", header.join(","))?;
    for_each_row(df, |row| {
        let cells: Vec<String> = row.iter().map(|v| quote(&cell_text(v))).collect();
        writeln!(w, "{}", cells.join(","))
    })
}

fn write_json(df: &DataFrame, w: &mut dyn Write) -> std::io::Result<()> {
    let names: Vec<String> = df.get_column_names().iter().map(|n| n.to_string()).collect();
    w.write_all(b"[")?;
    let mut first = true;
    for_each_row(df, |row| {
        let object: serde_json::Map<String, serde_json::Value> =
            names.iter().cloned().zip(row.iter().map(json_value)).collect();
        w.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        serde_json::to_writer(&mut *w, &object).map_err(std::io::Error::other)
    })?;
    w.write_all(if first { b"]\n" } else { b"\n]\n" })
}

/// An aligned text table: the header, a rule, the rows; numbers right-aligned.
fn write_table(df: &DataFrame, w: &mut dyn Write) -> std::io::Result<()> {
    let names: Vec<String> = df.get_column_names().iter().map(|n| n.to_string()).collect();
    let numeric: Vec<bool> = df.columns().iter().map(|c| c.dtype().is_primitive_numeric()).collect();
    let mut cells: Vec<Vec<String>> = Vec::with_capacity(df.height());
    for_each_row(df, |row| {
        cells.push(row.iter().map(cell_text).collect());
        Ok(())
    })?;
    let mut widths: Vec<usize> = names.iter().map(|n| n.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[String], w: &mut dyn Write| -> std::io::Result<()> {
        let padded: Vec<String> = row
            .iter()
            .zip(&widths)
            .zip(&numeric)
            .map(|((c, &width), &num)| if num { format!("{c:>width$}") } else { format!("{c:<width$}") })
            .collect();
        writeln!(w, "{}", padded.join("  ").trim_end())
    };
    line(&names, w)?;
    let rule: Vec<String> = widths.iter().map(|&n| "-".repeat(n)).collect();
    writeln!(w, "{}", rule.join("  "))?;
    for row in &cells {
        line(row, w)?;
    }
    writeln!(w, "({} row{})", cells.len(), if cells.len() == 1 { "" } else { "s" })
}

/// A result as a front end draws it: the columns, the first rows' cells as text, and the
/// same cells as numbers where they are numbers (a time to go to).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextRows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub numbers: Vec<Vec<Option<f64>>>,
    /// How many rows the result has (`rows` holds at most the number asked for).
    pub total: usize,
}

/// The first `max` rows of `df` as [`TextRows`].
pub fn text_rows(df: &DataFrame, max: usize) -> TextRows {
    let columns: Vec<String> = df.get_column_names().iter().map(|c| c.to_string()).collect();
    let kept = df.height().min(max);
    let head = df.slice(0, kept);
    let mut rows = Vec::with_capacity(kept);
    let mut numbers = Vec::with_capacity(kept);
    let _ = for_each_row(&head, |row| {
        rows.push(row.iter().map(cell_text).collect());
        numbers.push(row.iter().map(|v| if v.is_null() { None } else { v.extract::<f64>() }).collect());
        Ok(())
    });
    TextRows { columns, rows, numbers, total: df.height() }
}
