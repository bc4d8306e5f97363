//! `latscope events FILE [--filter TERMS] [--format text|csv|json]`: every event of a
//! capture, as `trace-cmd report` prints it or as CSV/JSON rows
//! ([`latscope_engine::events`]).

use anyhow::{Context, Result};
use latscope_engine::events::{EventsFormat as Form, write_events};
use latscope_importers::LoadControl;
use latscope_model::Filter;
use std::io::{self, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// A capture in any format latscope reads (trace.dat, ftrace text, …).
    pub file: PathBuf,
    /// Only events matching every term: `word`, `"a phrase"`, `field=value`, `field~text`,
    /// `-term` (not); `event`, `comm`, `pid` and `cpu` name the columns.
    #[arg(long, value_name = "TERMS")]
    pub filter: Option<String>,
    /// Output: trace-cmd report's text, CSV (one column per field name), or a JSON array.
    #[arg(long, value_enum, default_value = "text")]
    pub format: EventsFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EventsFormat {
    Text,
    Csv,
    Json,
}

pub fn run(args: &EventsArgs) -> Result<()> {
    let filter = match &args.filter {
        Some(f) => Filter::parse(f).with_context(|| format!("--filter {f:?}"))?,
        None => Filter::default(),
    };
    let source = latscope_engine::open(&args.file, &LoadControl::new())?;
    let form = match args.format {
        EventsFormat::Text => Form::Text,
        EventsFormat::Csv => Form::Csv,
        EventsFormat::Json => Form::Json,
    };
    let mut w = io::BufWriter::with_capacity(1 << 20, io::stdout().lock());
    let written = write_events(&source, &filter, form, &mut w).and_then(|()| w.flush());
    // The process ends right after printing; freeing a large trace piece by piece would
    // only delay the exit.
    std::mem::forget(source);
    match written {
        // `latscope events big.dat | head` is not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("writing the events"),
    }
}
