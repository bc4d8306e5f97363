//! `latscope report`: open captures, decode and align them, run presets and rules, write the
//! report in the asked format, and turn `--fail-if` thresholds into exit code 3. The work
//! is the engine's ([`latscope_engine`]); this module reads the arguments and says on stderr
//! what the engine found.

use anyhow::{Context, Result};
use latscope_analysis::report::Format;
use latscope_analysis::spec::Spec;
use latscope_engine::analyse::Which;
use latscope_engine::report::{Request, ThresholdsCrossed};
use latscope_engine::{Capture, Output, Registry};
use latscope_importers::LoadControl;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Capture files; two files are compared A/B analysis by analysis, and with --baseline
    /// each one is a candidate compared with the baseline.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// A preset analysis (irq-handler, block, ...); repeatable. Without --preset and --rule,
    /// every preset whose events the trace contains.
    #[arg(long = "preset", value_name = "NAME")]
    pub presets: Vec<String>,
    /// A rule spec, e.g. `io=block_rq_issue -> block_rq_complete by dev,sector`; repeatable.
    #[arg(long = "rule", value_name = "SPEC")]
    pub rules: Vec<String>,
    /// Alignment onto input 0's timeline: `N:OFFSET[:DRIFTppm]` by hand, or
    /// `N:match REF_ENDPOINT -> ENDPOINT [drift]` fitted from matched events; analyses then
    /// see all inputs together.
    #[arg(long, value_name = "ALIGN")]
    pub align: Option<String>,
    /// ANALYSIS.STAT>DURATION or ANALYSIS.STAT<DURATION, or with --baseline
    /// `ANALYSIS.STAT regressed[(C%)] [by P%]` (STAT p50 p90 p99 mean); exit code 3 when
    /// crossed or regressed with confidence.
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
    /// The capture every FILE (a candidate) is compared with: each analysis's change in p50,
    /// p90, p99 and mean with 95 % intervals, p-values and verdicts, and a shift test.
    #[arg(long, value_name = "BASELINE")]
    pub baseline: Option<PathBuf>,
    /// Output format (default: from the -o extension, else md).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Write the report here (atomically; never over an input) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// A protocol decoder stack run first on each input that has its channels (see `decode`);
    /// its annotations become events (`sd_cmd`, `sd_resp`, `uart_data`, ...) for presets and
    /// rules, and `chain` runs through a decoded SD bus. Repeatable.
    #[arg(long = "decoder", value_name = "SPEC")]
    pub decoders: Vec<String>,
    /// Keep pairs that end at a failed decode (a CRC error, a frame cut by a stopped clock)
    /// in the statistics; by default they are left out and counted as `excluded_errors`.
    #[arg(long = "include-errors")]
    pub include_errors: bool,
    /// A label of this capture in the fleet dataset, NAME=VALUE; repeatable (needs --dataset).
    #[arg(long = "label", value_name = "NAME=VALUE")]
    pub labels: Vec<String>,
    /// Also append the capture's pairs, windows and summary to the fleet dataset in DIR.
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Json,
    Md,
    Html,
    Csv,
    Parquet,
    /// Trace Event Format JSON for ui.perfetto.dev and chrome://tracing: the inputs' events
    /// and spans with every analysis sample as a slice (see docs/PERFETTO.md).
    Perfetto,
}

impl ReportFormat {
    /// The report format, or `None` for the Perfetto trace, which is not a report.
    fn report(self) -> Option<Format> {
        Some(match self {
            ReportFormat::Json => Format::Json,
            ReportFormat::Md => Format::Md,
            ReportFormat::Html => Format::Html,
            ReportFormat::Csv => Format::Csv,
            ReportFormat::Parquet => Format::Parquet,
            ReportFormat::Perfetto => return None,
        })
    }
}

/// The report format of `--format` and `-o` (`report` and `sim` alike), and whether a
/// Perfetto trace was asked for instead (its report, for `--fail-if`, is then JSON).
pub fn resolve_format(format: Option<ReportFormat>, output: Option<&Path>) -> (Format, bool) {
    let perfetto = format == Some(ReportFormat::Perfetto);
    let asked = format.and_then(ReportFormat::report).or(perfetto.then_some(Format::Json));
    (latscope_engine::report::resolve_format(asked, output), perfetto)
}

/// The specs of `--preset` and `--rule`, in that order.
pub fn specs(registry: &Registry, presets: &[String], rules: &[String]) -> Result<Vec<Spec>> {
    let mut specs = Vec::new();
    for name in presets {
        specs.push(registry.preset(name).context("--preset")?);
    }
    for text in rules {
        specs.push(registry.rule(text).context("--rule")?);
    }
    Ok(specs)
}

/// The tracks the analyses can read, when every one of them names its tracks (rules, not
/// presets, and no `--align` fitted from matched events): importers then decode only those.
/// `None` means everything, as `info` and the workbench load.
fn tracks_needed(specs: &[Spec], aligned: bool) -> Option<Vec<String>> {
    if specs.is_empty() || aligned {
        return None;
    }
    let mut names: Vec<String> = Vec::new();
    for spec in specs {
        names.extend(spec.named_tracks()?.into_iter().map(str::to_owned));
    }
    Some(names)
}

/// What `args` asked for, as the report prints it: the presets chosen by the inputs when none
/// was named, so the line names what ran (and equals the workbench's export of the same
/// presets).
fn request(args: &ReportArgs, chosen: Option<&[String]>) -> Request {
    let presets = match chosen {
        Some(names) if args.presets.is_empty() && args.rules.is_empty() => names.to_vec(),
        _ => args.presets.clone(),
    };
    Request {
        presets,
        rules: args.rules.clone(),
        decoders: args.decoders.clone(),
        align: args.align.clone(),
        baseline: args.baseline.is_some(),
        include_errors: args.include_errors,
    }
}

pub fn run(args: &ReportArgs) -> Result<()> {
    let registry = Registry::native();
    // Usage errors first, before any file is read.
    let thresholds = latscope_engine::report::thresholds(&args.fail_if)?;
    latscope_engine::report::require_baseline(&thresholds, args.baseline.is_some(), "--baseline BASELINE")?;
    if args.baseline.is_some() && (args.align.is_some() || args.dataset.is_some()) {
        anyhow::bail!(
            "--baseline compares captures analysed apart: it cannot be combined with {}",
            if args.align.is_some() { "--align" } else { "--dataset (append the capture on its own)" }
        );
    }
    // The baseline is input 0, the candidates follow in the order given.
    let files: Vec<PathBuf> = args.baseline.iter().chain(&args.files).cloned().collect();
    let (format, perfetto) = resolve_format(args.format, args.output.as_deref());
    let specs = specs(&registry, &args.presets, &args.rules)?;
    let labels = latscope_engine::fleet::labels_for(&args.labels, args.dataset.as_deref())?;
    if let Some(text) = &args.align {
        latscope_engine::capture::parse_align(text)?;
    }
    let mut ctl = LoadControl::new();
    if let Some(tracks) = tracks_needed(&specs, args.align.is_some())
        && args.decoders.is_empty()
    {
        ctl = ctl.with_tracks(tracks);
    }
    let mut capture = Capture::open(&files, &ctl)?;
    capture.baseline = args.baseline.as_ref().map(|_| 0);
    // What an importer left out (a capture loaded only up to a limit, a chunk it could not
    // read) changes every answer on that input, so it is said before them.
    for (path, source) in files.iter().zip(&capture.sources) {
        for w in &source.diagnostics.warnings {
            eprintln!("latscope: warning: {}: {w}", path.display());
        }
    }
    // Decoders run on the inputs that have their channels (a capture beside a kernel trace).
    let ran_on = capture.decode(&registry, &args.decoders)?;
    for (spec, on) in args.decoders.iter().zip(&ran_on) {
        if on.len() < capture.sources.len() {
            let on: Vec<String> = on.iter().map(|i| format!("{i} ({})", files[*i].display())).collect();
            eprintln!("latscope: --decoder {spec:?} decoded input {}", on.join(", "));
        }
    }
    // Without --align two inputs are two captures to compare; with it, one aligned trace.
    if let Some(text) = &args.align {
        capture.align(text)?;
    }
    let which = if specs.is_empty() { Which::Defaults } else { Which::Specs(specs) };
    let options = latscope_engine::analyse::Options { include_errors: args.include_errors };
    let analysed = capture.analyse(&registry, &which, options);
    if let Some(failure) = analysed.failures.into_iter().next() {
        return Err(failure.into());
    }
    let names = latscope_analysis::runner::labels(&capture.placed());
    for s in &analysed.skipped {
        let on = names.get(s.input).map_or("?", String::as_str);
        eprintln!("latscope: analysis {}: not run on {on}: {}", s.analysis, s.why);
    }
    if let Some(names) = &analysed.chosen {
        for hint in &analysed.missing {
            eprintln!("latscope: not run: {hint}");
        }
        if names.is_empty() {
            eprintln!(
                "latscope: no --preset or --rule given and no preset finds events in the input; \
                 try --rule (presets: {})",
                registry.preset_names()
            );
        } else {
            eprintln!(
                "latscope: no --preset or --rule given; using the presets that find events: {}",
                names.join(", ")
            );
        }
    }
    let outcomes = analysed.outcomes;
    // A dataset stores every pair, so the report keeps its samples then.
    let rows_for = if args.dataset.is_some() { None } else { Some(format) };
    let report = capture.report(&outcomes, rows_for, &request(args, analysed.chosen.as_deref()))?;
    let output = Output::of(args.output.as_deref());
    if perfetto {
        latscope_engine::report::write_perfetto(
            &capture.path_names(),
            &capture.placed(),
            &outcomes,
            &output,
            &files,
        )?;
    } else {
        latscope_engine::report::write(&report, format, &output, &files)?;
    }
    if let Some(dir) = &args.dataset {
        let (warning, said) = latscope_engine::fleet::append(dir, &files, &labels, &report)
            .with_context(|| format!("appending to {}", dir.display()))?;
        eprintln!("latscope: {}{said}", if warning { "warning: " } else { "" });
    }
    let crossed = latscope_engine::report::gate(&report, &thresholds)?;
    for line in latscope_engine::report::passed(&report, &thresholds) {
        eprintln!("latscope: {line}");
    }
    // The process ends with this command: handing the captures' and analyses' memory (tens
    // of MB for a million pulses) back page by page would cost more than the statistics.
    std::mem::forget((capture, outcomes, report));
    if crossed.is_empty() { Ok(()) } else { Err(ThresholdsCrossed(crossed).into()) }
}
