//! The command line (DESIGN §7). Exit codes: 0 ok, 1 error, 3 a `--fail-if` threshold crossed.

use anyhow::Result;
use clap::{Parser, Subcommand};
use latscope_analysis::model::{Source, TrackSummary};
use latscope_importers::LoadControl;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "latscope", version, about = "Latency workbench for driver and firmware developers")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Capture files to open in the workbench.
    files: Vec<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the detected format, sources, tracks and event counts of a capture.
    Info {
        file: PathBuf,
        /// Print JSON (DESIGN §7.0) instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn main() -> ExitCode {
    // Usage errors exit 1 like every other error (DESIGN §7); --help and --version exit 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        }
    };
    let result = match cli.command {
        Some(Command::Info { file, json }) => info(&file, json),
        None => {
            eprintln!("latscope: the graphical workbench is not built yet; try `latscope info FILE`");
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("latscope: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// `info --json` (DESIGN §7.0).
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

pub fn info_json(path: &Path, source: &Source) -> InfoJson {
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

fn info(path: &Path, json: bool) -> Result<()> {
    let source = latscope_importers::open(path, &LoadControl::new())?;
    let report = info_json(path, &source);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("{}: {}", report.path, report.format);
    println!("  records: {}", report.events);
    if let (Some(a), Some(b)) = (report.start_s, report.end_s) {
        println!("  time:    {a:.6} s .. {b:.6} s ({:.6} s)", b - a);
    }
    for s in &report.sources {
        println!("  source {}", s.name);
        for t in &s.tracks {
            println!("    {:<32} {:<8} {}", t.name, format!("{:?}", t.kind).to_lowercase(), t.count);
        }
    }
    for w in &report.warnings {
        println!("  warning: {w}");
    }
    Ok(())
}
