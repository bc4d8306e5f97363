//! The command line. Exit codes: 0 ok, 1 error, 3 a `--fail-if` threshold crossed.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use latscope_importers::LoadControl;
use latscope_model::{Source, TrackSummary};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "latscope", version, about = "Latency workbench for driver and firmware developers")]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Capture files, or a session (`*.latscope.json`), to open in the workbench (none: the
    /// simulator demo).
    files: Vec<PathBuf>,
    /// Render the real window, save it as this PNG once everything is drawn, and exit.
    #[arg(long, value_name = "PNG")]
    screenshot: Option<PathBuf>,
    /// A rule spec or preset to run in the analysis panel once the files are loaded; repeatable.
    #[arg(long = "rule", value_name = "SPEC")]
    rules: Vec<String>,
    /// Align the files as `latscope report --align` does, before the rules run.
    #[arg(long, value_name = "ALIGN")]
    align: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the detected format, sources, tracks and event counts of a capture.
    Info {
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also list the tracks a decoder stack adds (see `decode`); repeatable.
        #[arg(long = "decoder", value_name = "SPEC")]
        decoders: Vec<String>,
    },
    /// Run a built-in scenario (or a scenario TOML file) of the device simulator.
    Sim(SimArgs),
    /// Latency report of captures: statistics per analysis, A/B, CI thresholds (exit 3).
    Report(crate::report_cmd::ReportArgs),
    /// Every event of a capture as `trace-cmd report` prints it, or as CSV/JSON rows.
    Events(crate::events_cmd::EventsArgs),
    /// Protocol decoders (uart, spi, i2c, sd, sd-spi) over a capture's channels.
    Decode(crate::decode_cmd::DecodeArgs),
}

#[derive(Debug, clap::Args)]
struct SimArgs {
    /// A built-in scenario (e1000e-mta, litesdcard, imx8mq-cpuidle, axienet-napi) or a .toml path.
    scenario: String,
    /// Override a scenario setting or calibration constant (dotted for tables).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Random seed (the seed fully determines the trace).
    #[arg(long)]
    seed: Option<u64>,
    /// Stop at this simulated time (e.g. 50ms).
    #[arg(long)]
    duration: Option<String>,
    /// Write the report here (atomically) instead of stdout, as `report -o` does; the
    /// format follows the extension (.json, .md, .html, .csv, .parquet). OUT.txt and OUT.vcd
    /// still write the trace, as before --trace-out: deprecated, said on stderr.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
    /// Write the simulated trace: TRACE.txt as ftrace text, TRACE.vcd as VCD of the
    /// digital lines.
    #[arg(long = "trace-out", value_name = "TRACE")]
    trace_out: Option<PathBuf>,
    /// Report format (default: from the -o extension, else md).
    #[arg(long, value_enum)]
    format: Option<crate::report_cmd::ReportFormat>,
    /// Also run a preset analysis (irq-handler, block, ...) on the simulated trace; repeatable.
    #[arg(long = "preset", value_name = "NAME")]
    presets: Vec<String>,
    /// Decode the simulated lines first (e.g. the SD bus of `--set sd_bus=true`), so presets
    /// see the decoded events; repeatable (see `decode`).
    #[arg(long = "decoder", value_name = "SPEC")]
    decoders: Vec<String>,
}

pub fn main() -> ExitCode {
    // Usage errors exit 1 like every other error; --help and --version exit 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        }
    };
    let result = match cli.command {
        Some(Command::Info { file, json, decoders }) => info(&file, json, &decoders),
        Some(Command::Sim(args)) => sim(&args),
        Some(Command::Report(args)) => crate::report_cmd::run(&args),
        Some(Command::Events(args)) => crate::events_cmd::run(&args),
        Some(Command::Decode(args)) => crate::decode_cmd::run(&args),
        None => crate::gui::run_native(crate::gui::Options {
            files: cli.files,
            screenshot: cli.screenshot,
            demo: false,
            rules: cli.rules,
            align: cli.align,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stops early (`latscope info FILE | head`) is not an error.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.is::<crate::report_cmd::ThresholdsCrossed>() => {
            eprintln!("latscope: {e}");
            ExitCode::from(3)
        }
        Err(e) => {
            eprintln!("latscope: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

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

fn info(path: &Path, json: bool, decoders: &[String]) -> Result<()> {
    let mut source = latscope_importers::open(path, &LoadControl::new())?;
    crate::decode_cmd::attach(&mut source, decoders)?;
    let report = info_json(path, &source);
    // The process ends right after printing and the OS takes back all of its memory at
    // once: freeing a large trace's columns and strings one by one first would only delay
    // the exit (issue #8 measures `info` as a whole process).
    std::mem::forget(source);
    let mut out = std::io::stdout().lock();
    write_info(&mut out, &report, json)?;
    Ok(out.flush()?)
}

fn write_info(out: &mut impl Write, report: &InfoJson, json: bool) -> std::io::Result<()> {
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

/// Where `sim` writes the trace and the report: `-o` with a trace's extension is the old
/// spelling of `--trace-out`.
fn sim_outputs(args: &SimArgs) -> Result<(Option<&Path>, Option<&Path>)> {
    let is_trace = |p: &Path| matches!(p.extension().and_then(|e| e.to_str()), Some("txt" | "trace" | "vcd"));
    match (&args.output, &args.trace_out) {
        (Some(o), None) if is_trace(o) => {
            eprintln!(
                "latscope: note: `sim -o {}` writes the trace; this spelling is deprecated and will \
                 go in the next release: use `--trace-out {}` (-o is the report, as in `report -o`)",
                o.display(),
                o.display()
            );
            Ok((Some(o), None))
        }
        (Some(o), Some(_)) if is_trace(o) => {
            anyhow::bail!(
                "{}: -o writes the report (.json, .md, .html, .csv, .parquet); the trace goes to --trace-out",
                o.display()
            )
        }
        (report, trace) => Ok((trace.as_deref(), report.as_deref())),
    }
}

/// Writes the simulated trace by its extension: ftrace text or VCD.
fn write_trace(source: &Source, path: &Path) -> Result<()> {
    let mut bytes = Vec::new();
    match path.extension().and_then(|e| e.to_str()) {
        Some("vcd") => latscope_sim::output::write_vcd(source, &mut bytes),
        Some("txt" | "trace") => latscope_sim::output::write_ftrace(source, &mut bytes),
        _ => anyhow::bail!("{}: --trace-out takes TRACE.txt (ftrace text) or TRACE.vcd", path.display()),
    }
    .with_context(|| format!("writing {}", path.display()))?;
    crate::atomic::write_atomic(path, &bytes, &[])?;
    Ok(())
}

/// `latscope sim`: run, write the trace if asked, write or print the report.
fn sim(args: &SimArgs) -> Result<()> {
    let (trace_out, report_out) = sim_outputs(args)?;
    let scenario = latscope_sim::prepare(&args.scenario, &args.set, args.seed, args.duration.as_deref())?;
    let title = format!("{} (seed {})", scenario.name, scenario.seed);
    let mut out = latscope_sim::run(scenario)?;
    if let Some(path) = trace_out {
        write_trace(&out.source, path)?;
    }
    // The simulated trace goes through the same report path as a capture (decoded first;
    // the trace written above holds what was simulated, not what was decoded).
    crate::decode_cmd::attach(&mut out.source, &args.decoders)?;
    let (format, perfetto) = crate::report_cmd::resolve_format(args.format, report_out);
    if perfetto {
        anyhow::bail!(
            "sim --format perfetto: write the trace with --trace-out and convert it with `latscope report`"
        );
    }
    let report = crate::report_cmd::sim_report(&out, &args.presets, &title)?;
    let inputs: Vec<PathBuf> = trace_out.map(Path::to_path_buf).into_iter().collect();
    crate::report_cmd::emit(&report, format, report_out, &inputs)
}
