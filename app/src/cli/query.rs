//! `latscope query`: SQL over a capture's tables. The engine builds the tables and runs the
//! query ([`latscope_engine::query`]); this module reads the arguments.

use anyhow::Result;
use latscope_engine::analyse::Which;
use latscope_engine::query::{QueryFormat, run_capture, write};
use latscope_engine::{Capture, Output, Registry};
use latscope_importers::LoadControl;
use std::path::PathBuf;

/// The tables, as `--help` lists them (kept beside [`latscope_engine::query::FIXED`], which
/// a test compares it with).
pub const TABLES_HELP: &str = "\
Tables:
  events       one row per event: source, time_s, time_ps, cpu, pid, comm, name
  <EVENT>      one per event name (block_rq_issue, sched_switch, sd_cmd, ...): the event
               columns and one typed column per field (block_rq_issue.sector is unsigned)
  pairs        one row per measured pair of the analyses (--preset/--rule, else every preset
               that finds events): the fleet dataset's pairs schema (analysis, key, start_s,
               end_s, latency_ns, ...)
  windows      one row per detector window (stall:, long:): the fleet dataset's windows schema
  annotations  one row per decoded annotation (--decoder): source, decoder, row, start_s,
               end_s, start_ps, end_ps, start_sample, end_sample, text, fields
  edges        one row per level change of a digital track: source, track, time_s, time_ps, level
  tracks       one row per track: source, name, kind, count, start_s, end_s
time_s is the source's own clock in seconds (as trace-cmd prints it, and as pairs' start_s);
time_ps is the common timeline in picoseconds.";

#[derive(Debug, clap::Args)]
#[command(after_help = TABLES_HELP)]
pub struct QueryArgs {
    /// Capture files; with --align, one aligned timeline.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The query, e.g. `SELECT name, count(*) AS n FROM events GROUP BY name`.
    #[arg(long, value_name = "SQL")]
    pub sql: String,
    /// A preset analysis whose pairs `pairs` holds; repeatable.
    #[arg(long = "preset", value_name = "NAME")]
    pub presets: Vec<String>,
    /// A rule spec whose pairs `pairs` holds; repeatable.
    #[arg(long = "rule", value_name = "SPEC")]
    pub rules: Vec<String>,
    /// A protocol decoder stack run first (see `decode`): its annotations fill `annotations`
    /// and its events get tables; repeatable.
    #[arg(long = "decoder", value_name = "SPEC")]
    pub decoders: Vec<String>,
    /// Alignment onto input 0's timeline, as in `report`.
    #[arg(long, value_name = "ALIGN")]
    pub align: Option<String>,
    /// Keep pairs that end at a failed decode in `pairs`, as `report --include-errors`.
    #[arg(long = "include-errors")]
    pub include_errors: bool,
    /// Output format (default: from the -o extension, else table). parquet needs -o.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Write the result here (atomically; never over an input) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
    Parquet,
}

pub fn run(args: &QueryArgs) -> Result<()> {
    let registry = Registry::native();
    let format = match args.format {
        Some(Format::Table) => QueryFormat::Table,
        Some(Format::Csv) => QueryFormat::Csv,
        Some(Format::Json) => QueryFormat::Json,
        Some(Format::Parquet) => QueryFormat::Parquet,
        None => args.output.as_deref().and_then(QueryFormat::of_path).unwrap_or(QueryFormat::Table),
    };
    // Usage errors before any file is read.
    let specs = super::report::specs(&registry, &args.presets, &args.rules)?;
    if let Some(text) = &args.align {
        latscope_engine::capture::parse_align(text)?;
    }
    latscope_engine::query::tables_named(&args.sql)?;
    let output = Output::of(args.output.as_deref());
    if format == QueryFormat::Parquet && output == Output::Stdout {
        anyhow::bail!("--format parquet writes a binary file: give -o OUT.parquet");
    }
    output.check(&args.files)?;
    let mut capture = Capture::open(&args.files, &LoadControl::new())?;
    capture.decode(&registry, &args.decoders)?;
    if let Some(text) = &args.align {
        capture.align(text)?;
    }
    let which = if specs.is_empty() { Which::Defaults } else { Which::Specs(specs) };
    let options = latscope_engine::analyse::Options { include_errors: args.include_errors };
    let df = run_capture(&capture, &registry, &which, options, &args.sql)?;
    write(&df, format, &output, &args.files)?;
    // The process ends here: the OS takes the capture's memory back at once.
    std::mem::forget(capture);
    Ok(())
}
