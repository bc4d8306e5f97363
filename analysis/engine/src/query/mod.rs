//! `latscope query`: SQL over a capture's tables (`events`, one table per event name,
//! `pairs`, `windows`, `annotations`, `edges`, `tracks`) on polars' SQL engine, and the
//! result written as a table, CSV, JSON or Parquet. The command line, the workbench's query
//! panel and the Python API all call [`run`] (or [`run_capture`]), so they give the same rows.
//!
//! Only the tables a query names are built; `pairs` and `windows` run the analyses first.

pub mod tables;
mod write;

pub use tables::{FIXED, Tables};
pub use write::{QueryFormat, TextRows, cell_text, text_rows, write};

use crate::analyse::{Options, Which};
use crate::capture::Capture;
use crate::error::EngineError;
use crate::registry::Registry;
use latscope_analysis::runner::Scope;
use latscope_model::Placed;
use polars::prelude::*;
use polars::sql::SQLContext;

/// Why a query did not run. Each names what it was about: the SQL, the table, the column.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("SQL: {message}")]
    Sql { message: String },
    #[error("unknown table {table:?} (tables: {})", known.join(", "))]
    UnknownTable { table: String, known: Vec<String> },
    #[error("unknown column {column:?} in {}", in_tables(tables))]
    UnknownColumn { column: String, tables: Vec<(String, Vec<String>)> },
    #[error("table {table}: {message}")]
    Build { table: String, message: String },
}

fn in_tables(tables: &[(String, Vec<String>)]) -> String {
    let each: Vec<String> =
        tables.iter().map(|(t, cols)| format!("table {t} (columns: {})", cols.join(", "))).collect();
    if each.is_empty() { "the query".to_owned() } else { each.join("; ") }
}

/// The tables `sql` reads, as written (a name that is not a table is left to polars, which
/// knows the query's own names: `WITH x AS (…)`).
pub fn tables_named(sql: &str) -> Result<Vec<String>, QueryError> {
    polars::sql::extract_table_identifiers(sql, false, true)
        .map_err(|e| QueryError::Sql { message: message(&e) })
}

/// Whether `sql` reads a table that needs the analyses (`pairs`, `windows`).
pub fn needs_report(sql: &str) -> Result<bool, QueryError> {
    Ok(tables_named(sql)?.iter().any(|t| t == "pairs" || t == "windows"))
}

/// Runs `sql` over `tables`; every table the query names is built and registered under its
/// name, the result collected.
pub fn run(tables: &Tables<'_>, sql: &str) -> Result<DataFrame, QueryError> {
    let named = tables_named(sql)?;
    if named.is_empty() && !sql.to_ascii_lowercase().contains("select") {
        return Err(QueryError::Sql { message: format!("no query in {sql:?}") });
    }
    let known = tables.table_names();
    let mut ctx = SQLContext::new();
    let mut registered: Vec<String> = Vec::new();
    for name in &named {
        if known.contains(name) {
            ctx.register(name, tables.frame(name)?.lazy());
            registered.push(name.clone());
        }
    }
    let result = ctx.execute(sql).and_then(LazyFrame::collect);
    result.map_err(|e| explain(tables, &named, &registered, &e))
}

/// A polars error in the words of the tables: which table or column was not found.
fn explain(tables: &Tables<'_>, named: &[String], registered: &[String], e: &PolarsError) -> QueryError {
    let text = message(e);
    if let Some(missing) = quoted_after(&text, "relation '") {
        return tables.unknown_table(&missing);
    }
    if let Some(missing) = named.iter().find(|n| !registered.contains(n) && text.contains(n.as_str())) {
        return tables.unknown_table(missing);
    }
    let column = match e {
        PolarsError::ColumnNotFound(_) => quoted_after(&text, "\"").or_else(|| quoted_after(&text, "'")),
        _ => quoted_after(&text, "no table or struct column named '"),
    };
    if let Some(column) = column {
        let tables = registered.iter().map(|t| (t.clone(), tables.columns(t).unwrap_or_default())).collect();
        return QueryError::UnknownColumn { column, tables };
    }
    QueryError::Sql { message: text }
}

/// polars' message without its backtrace hint.
fn message(e: &PolarsError) -> String {
    let text = e.to_string();
    let first = text.split("\n\n").next().unwrap_or(&text);
    first.trim().to_owned()
}

/// The text from after `open` to the next quote of the same kind.
fn quoted_after(text: &str, open: &str) -> Option<String> {
    let at = text.find(open)? + open.len();
    let close = open.chars().last()?;
    let rest = &text[at..];
    Some(rest[..rest.find(close)?].to_owned())
}

/// Runs `sql` over an opened capture: the analyses of `which` run first when the query
/// reads `pairs` or `windows` (with every pair kept, as a fleet dataset stores them).
pub fn run_capture(
    capture: &Capture,
    registry: &Registry,
    which: &Which,
    options: Options,
    sql: &str,
) -> Result<DataFrame, EngineError> {
    let on = On {
        names: capture.path_names(),
        placed: capture.placed(),
        scope: capture.scope(),
        aligned: capture.aligned.clone(),
        capture: capture_id(capture),
    };
    run_on(&on, registry, which, options, sql)
}

/// Sources as a query sees them: named, placed, analysed together or each alone.
#[derive(Debug)]
pub struct On<'a> {
    /// Each source's name in the `source` columns (the path as typed).
    pub names: Vec<String>,
    pub placed: Vec<Placed<'a>>,
    pub scope: Scope,
    /// The alignment as a report states it, when the sources were aligned.
    pub aligned: Option<String>,
    /// The capture's id in `pairs` and `windows`.
    pub capture: String,
}

/// Runs `sql` over placed sources (the workbench's, shared with its views): the analyses of
/// `which` run first when the query reads `pairs` or `windows`.
pub fn run_on(
    on: &On<'_>,
    registry: &Registry,
    which: &Which,
    options: Options,
    sql: &str,
) -> Result<DataFrame, EngineError> {
    let report = if needs_report(sql)? {
        let analysed = crate::analyse::analyse(registry, which, &on.placed, on.scope, options);
        if let Some(failure) = analysed.failures.into_iter().next() {
            return Err(failure);
        }
        let refs: Vec<&latscope_model::Source> = on.placed.iter().map(|p| p.source).collect();
        // The report's provenance is not a table: what was asked is left empty.
        let asked = crate::provenance::Request::default();
        Some(crate::report::build(
            &on.names,
            &refs,
            &analysed.outcomes,
            on.aligned.clone(),
            None,
            None,
            &asked,
        )?)
    } else {
        None
    };
    let tables = Tables {
        names: on.names.clone(),
        placed: on.placed.clone(),
        report: report.as_ref(),
        capture: on.capture.clone(),
    };
    Ok(run(&tables, sql)?)
}

/// The capture's id in `pairs` and `windows`: the fleet dataset's content hash of its
/// files, or empty for sources that are not files (a simulation).
pub fn capture_id(capture: &Capture) -> String {
    latscope_fleet::dataset::capture_id(&capture.paths).unwrap_or_default()
}
