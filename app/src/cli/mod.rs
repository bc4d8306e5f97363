//! The command line: arguments read by clap, the work done by the engine
//! ([`latscope_engine`]), and what it found said on stderr. Exit codes: 0 ok, 1 error, 3 a
//! `--fail-if` threshold crossed.

pub mod decode;
pub mod events;
pub mod fleet;
pub mod query;
pub mod record;
pub mod report;

use anyhow::Result;
use clap::{Parser, Subcommand};
use latscope_engine::report::ThresholdsCrossed;
use latscope_engine::{Output, Registry};
use latscope_importers::LoadControl;
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
    /// A fleet dataset (`latscope report --dataset DIR`) to aggregate in the fleet window.
    #[arg(long, value_name = "DIR")]
    dataset: Option<PathBuf>,
    /// With --dataset: label names to group by, comma-separated.
    #[arg(long = "group-by", value_name = "LABELS", value_delimiter = ',', requires = "dataset")]
    group_by: Vec<String>,
    /// With --dataset: the label whose values make the trend plot (a commit, a date).
    #[arg(long, value_name = "LABEL", requires = "dataset")]
    trend: Option<String>,
    /// A protocol decoder stack (see `decode`) to run on the files that have its channels
    /// once they are loaded; repeatable.
    #[arg(long = "decoder", value_name = "SPEC")]
    decoders: Vec<String>,
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
    Report(report::ReportArgs),
    /// Every event of a capture as `trace-cmd report` prints it, or as CSV/JSON rows.
    Events(events::EventsArgs),
    /// Protocol decoders (uart, spi, i2c, sd, sd-spi) over a capture's channels.
    Decode(decode::DecodeArgs),
    /// Aggregate a fleet dataset: exact percentiles per group of labels, A/B, trends, CI gates.
    Fleet(fleet::FleetArgs),
    /// SQL over a capture's tables (events, one per event name, pairs, windows, annotations,
    /// edges, tracks) as a table, CSV, JSON or Parquet.
    Query(query::QueryArgs),
    /// Record this machine's kernel through tracefs: live statistics, a flight recorder of
    /// the slow pairs, a trace.dat that trace-cmd reads.
    Record(record::RecordArgs),
}

#[derive(Debug, clap::Args)]
struct SimArgs {
    /// A built-in scenario (e1000e-mta, litesdcard, imx8mq-cpuidle, axienet-napi) or a .toml
    /// path; `--list` says which question it answers and what each setting changes.
    scenario: String,
    /// Print the scenario's question and its settings with what each changes, and exit.
    #[arg(long)]
    list: bool,
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
    format: Option<report::ReportFormat>,
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
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::Events(args)) => events::run(&args),
        Some(Command::Decode(args)) => decode::run(&args),
        Some(Command::Fleet(args)) => fleet::run(&args),
        Some(Command::Query(args)) => query::run(&args),
        Some(Command::Record(args)) => record::run(&args),
        None => crate::gui::run_native(crate::gui::Options {
            files: cli.files,
            screenshot: cli.screenshot,
            demo: false,
            rules: cli.rules,
            align: cli.align,
            dataset: cli.dataset,
            group_by: cli.group_by,
            trend: cli.trend,
            decoders: cli.decoders,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stops early (`latscope info FILE | head`) is not an error.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.is::<ThresholdsCrossed>() || e.is::<fleet::FleetThresholdsCrossed>() => {
            eprintln!("latscope: {e}");
            ExitCode::from(3)
        }
        Err(e) => {
            eprintln!("latscope: {}", crate::errors::error_text(&e));
            ExitCode::from(1)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn info(path: &Path, json: bool, decoders: &[String]) -> Result<()> {
    let registry = Registry::native();
    let mut source = latscope_engine::open(path, &LoadControl::new())?;
    latscope_engine::decode::decode_into(&registry, &mut source, decoders)?;
    let report = latscope_engine::info::info(path, &source);
    // The process ends right after printing and the OS takes back all of its memory at
    // once: freeing a large trace's columns and strings one by one first would only delay
    // the exit (issue #8 measures `info` as a whole process).
    std::mem::forget(source);
    Ok(Output::Stdout.write("the summary", &[], |w| latscope_engine::info::write_info(w, &report, json))?)
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

/// `latscope sim`: run, write the trace if asked, write or print the report.
fn sim(args: &SimArgs) -> Result<()> {
    if args.list {
        let scenario = latscope_sim::prepare(&args.scenario, &args.set, args.seed, args.duration.as_deref())?;
        print!("{}", latscope_engine::sim::describe(&scenario));
        return Ok(());
    }
    let (trace_out, report_out) = sim_outputs(args)?;
    let scenario = latscope_sim::prepare(&args.scenario, &args.set, args.seed, args.duration.as_deref())?;
    let title = format!("{} (seed {})", scenario.name, scenario.seed);
    let registry = Registry::native();
    let presets = report::specs(&registry, &args.presets, &[])?;
    let (format, perfetto) = report::resolve_format(args.format, report_out);
    if perfetto {
        anyhow::bail!(
            "sim --format perfetto: write the trace with --trace-out and convert it with `latscope report`"
        );
    }
    let mut out = latscope_sim::run(scenario)?;
    if let Some(path) = trace_out {
        latscope_engine::sim::write_trace(&out.source, path, &[])?;
    }
    // The simulated trace goes through the same report path as a capture (decoded first;
    // the trace written above holds what was simulated, not what was decoded).
    latscope_engine::decode::decode_into(&registry, &mut out.source, &args.decoders)?;
    let report = latscope_engine::sim::report_of(&registry, &out, &presets, &title)?;
    let inputs: Vec<PathBuf> = trace_out.map(Path::to_path_buf).into_iter().collect();
    Ok(latscope_engine::report::write(&report, format, &Output::of(report_out), &inputs)?)
}
