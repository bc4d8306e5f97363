//! `latscope report`: open captures, run presets and rules, build the report
//!, write it in the asked format, and turn `--fail-if` thresholds into exit
//! code 3. Also the shared tail of `latscope sim --format`.

use crate::atomic;
use anyhow::{Context, Result, bail};
use latscope_analysis::outcome::Outcome;
use latscope_analysis::report::threshold::{Crossing, Threshold};
use latscope_analysis::report::{self, Format, Report, ReportInput, ReportOptions};
use latscope_analysis::runner::{self, Scope};
use latscope_analysis::spec::{self, Spec};
use latscope_importers::LoadControl;
use latscope_model::{Placed, Placement, Source};
use std::fmt;
use std::io::Write;
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

/// The format `-o` implies by its extension.
fn format_of(path: &Path) -> Option<Format> {
    Some(match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "json" => Format::Json,
        "md" | "markdown" => Format::Md,
        "html" | "htm" => Format::Html,
        "csv" => Format::Csv,
        "parquet" | "pq" => Format::Parquet,
        _ => return None,
    })
}

/// The report format of `--format` and `-o` (`report` and `sim` alike): the one asked for,
/// else the output's extension's, else Markdown; and whether a Perfetto trace was asked
/// for instead (its report, for `--fail-if`, is then JSON).
pub fn resolve_format(format: Option<ReportFormat>, output: Option<&Path>) -> (Format, bool) {
    let perfetto = format == Some(ReportFormat::Perfetto);
    let f = match (format.and_then(ReportFormat::report), output) {
        (Some(f), _) => f,
        (None, _) if perfetto => Format::Json,
        (None, Some(path)) => format_of(path).unwrap_or(Format::Md),
        (None, None) => Format::Md,
    };
    (f, perfetto)
}

/// Thresholds that a report crossed: the command still wrote its report, and exits 3.
#[derive(Debug)]
pub struct ThresholdsCrossed(pub Vec<Crossing>);

impl fmt::Display for ThresholdsCrossed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\nlatscope: "))
    }
}

impl std::error::Error for ThresholdsCrossed {}

/// The spec of `--preset NAME`: an analysis preset or an SD preset.
fn preset(name: &str) -> Result<Spec> {
    // The SD presets are rules over decoded events (`--decoder sd:...`).
    if let Some(rule) = latscope_decoders::presets::rule_for(name) {
        return spec::parse_spec(rule).with_context(|| format!("--preset {name:?}"));
    }
    let mut known: Vec<&str> = spec::PRESETS.iter().map(|p| p.0).collect();
    known.extend(latscope_decoders::presets::PRESETS.iter().map(|p| p.0));
    spec::preset_spec(name)
        .with_context(|| format!("--preset {name:?} (known presets: {})", known.join(", ")))
}

fn parse_specs(args: &ReportArgs) -> Result<Vec<Spec>> {
    let mut specs = Vec::new();
    for name in &args.presets {
        specs.push(preset(name)?);
    }
    for text in &args.rules {
        specs.push(spec::parse_spec(text).with_context(|| format!("--rule {text:?}"))?);
    }
    Ok(specs)
}

/// Runs `spec` by the runner's each-or-together and error rules; inputs it was not run on
/// (while it ran on others) are named on stderr when `warn`.
/// A preset that cannot run for want of events says which, and how to record them.
fn run_one(spec: &Spec, sources: &[Placed<'_>], scope: Scope, warn: bool) -> Result<Vec<Outcome>> {
    let ran = match runner::run(spec, sources, scope) {
        Ok(ran) => ran,
        Err(e) => {
            let plain: Vec<&Source> = sources.iter().map(|p| p.source).collect();
            return Err(match latscope_analysis::presets::missing_events(spec.name(), &plain) {
                Some(hint) => anyhow::anyhow!("analysis {}: {e}\n{hint}", spec.name()),
                None => anyhow::Error::new(e).context(format!("analysis {}", spec.name())),
            });
        }
    };
    if warn && !ran.skipped.is_empty() {
        let labels = runner::labels(sources);
        for (i, why) in &ran.skipped {
            eprintln!("latscope: analysis {}: not run on {}: {why}", spec.name(), labels[*i]);
        }
    }
    Ok(ran.outcomes)
}

/// Writes rendered `report` to `output` (atomically, never over one of `inputs`) or stdout.
pub fn emit(report: &Report, format: Format, output: Option<&Path>, inputs: &[PathBuf]) -> Result<()> {
    if output.is_none() && !format.is_text() {
        bail!("--format parquet writes a binary file: give -o OUT.parquet");
    }
    if let Some(path) = output {
        // Refuse before spending time on rendering.
        atomic::check_not_input(path, inputs)?;
    }
    let bytes = report::render(report, format)?;
    match output {
        Some(path) => atomic::write_atomic(path, &bytes, inputs)?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes).and_then(|()| out.flush()).context("writing the report to stdout")?;
        }
    }
    Ok(())
}

/// Writes the Perfetto trace (Trace Event JSON) of `sources` and `outcomes` to `output`
/// (atomically, never over one of `inputs`) or stdout.
pub fn emit_perfetto(
    paths: &[String],
    sources: &[Placed<'_>],
    outcomes: &[Outcome],
    output: Option<&Path>,
    inputs: &[PathBuf],
) -> Result<()> {
    if let Some(path) = output {
        atomic::check_not_input(path, inputs)?;
    }
    let export: Vec<report::perfetto::ExportSource<'_>> = paths
        .iter()
        .zip(sources)
        .map(|(name, p)| report::perfetto::ExportSource { name, source: p.source, placement: p.placement })
        .collect();
    // Streamed: the JSON of a large trace is several times its size.
    match output {
        Some(path) => atomic::write_atomic_with(path, inputs, |w| {
            report::perfetto::write_trace_events(&export, outcomes, w)
        })
        .context("writing the Perfetto trace")?,
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            report::perfetto::write_trace_events(&export, outcomes, &mut out)
                .and_then(|()| out.flush())
                .context("writing the Perfetto trace to stdout")?;
        }
    }
    Ok(())
}

/// Checks every threshold; `Err(ThresholdsCrossed)` when any is crossed. A `regressed`
/// gate that passes says why on stderr (no change shown, or too little data).
pub fn gate(report: &Report, thresholds: &[Threshold]) -> Result<()> {
    let mut crossed = Vec::new();
    for t in thresholds {
        crossed.extend(t.check(report).map_err(anyhow::Error::msg)?);
        for line in t.passed(report) {
            eprintln!("latscope: {line}");
        }
    }
    if crossed.is_empty() { Ok(()) } else { Err(ThresholdsCrossed(crossed).into()) }
}

/// The report of a simulator run: the scenario's own analyses and `presets` over the
/// simulated trace, the scenario figures as `metrics`.
pub fn sim_report(out: &latscope_sim::Output, presets: &[String], title: &str) -> Result<Report> {
    let mut outcomes = out.report.outcomes.clone();
    let sources = [Placed::unaligned(&out.source)];
    for name in presets {
        outcomes.extend(run_one(&preset(name)?, &sources, Scope::Each, true)?);
    }
    let path = out.report.path.clone();
    let inputs = [ReportInput { path: &path, source: &out.source }];
    let opts = ReportOptions {
        metrics: out.report.metrics.clone(),
        title: Some(title.to_owned()),
        ..ReportOptions::default()
    };
    Ok(report::build(&inputs, &outcomes, &opts)?)
}

/// The report of `outcomes` over `sources` named by `paths` (as the user gave them): the one
/// path from analyses to a report, for `latscope report` and the workbench's export.
pub fn build_report(
    paths: &[String],
    sources: &[&Source],
    outcomes: &[Outcome],
    align: Option<String>,
) -> Result<Report> {
    build_report_as(paths, sources, outcomes, align, None, None)
}

/// [`build_report`] for rendering only as `format`, when known: JSON and Markdown print no
/// per-sample rows, so none are built. `baseline` is the input the others are compared with.
fn build_report_as(
    paths: &[String],
    sources: &[&Source],
    outcomes: &[Outcome],
    align: Option<String>,
    format: Option<Format>,
    baseline: Option<usize>,
) -> Result<Report> {
    let inputs: Vec<ReportInput<'_>> =
        paths.iter().zip(sources).map(|(path, source)| ReportInput { path, source }).collect();
    let without_samples = matches!(format, Some(Format::Json | Format::Md));
    let opts = ReportOptions { align, without_samples, baseline, ..ReportOptions::default() };
    Ok(report::build(&inputs, outcomes, &opts)?)
}

/// The tracks the analyses can read, when every one of them names its tracks (rules, not
/// presets, and no `--align` fitted from matched events): importers then decode only those.
/// `None` means everything, as `info` and the workbench load.
fn tracks_needed(specs: &[Spec], align: Option<&latscope_analysis::align::AlignSpec>) -> Option<Vec<String>> {
    if specs.is_empty() || align.is_some() {
        return None;
    }
    let mut names: Vec<String> = Vec::new();
    for spec in specs {
        names.extend(spec.named_tracks()?.into_iter().map(str::to_owned));
    }
    Some(names)
}

pub fn run(args: &ReportArgs) -> Result<()> {
    // Usage errors first, before any file is read.
    let thresholds = args.fail_if.iter().map(|t| Threshold::parse(t)).collect::<Result<Vec<_>, _>>()?;
    if let Some(t) = thresholds.iter().find(|t| t.needs_baseline() && args.baseline.is_none()) {
        bail!("--fail-if {:?}: `regressed` compares with a baseline: give --baseline BASELINE", t.text);
    }
    if args.baseline.is_some() && (args.align.is_some() || args.dataset.is_some()) {
        bail!(
            "--baseline compares captures analysed apart: it cannot be combined with {}",
            if args.align.is_some() { "--align" } else { "--dataset (append the capture on its own)" }
        );
    }
    // The baseline is input 0, the candidates follow in the order given.
    let files: Vec<PathBuf> = args.baseline.iter().chain(&args.files).cloned().collect();
    let baseline = args.baseline.as_ref().map(|_| 0);
    let (format, perfetto) = resolve_format(args.format, args.output.as_deref());
    let specs = parse_specs(args)?;
    let labels = crate::fleet_cmd::labels_for(&args.labels, args.dataset.as_deref())?;
    let align = match &args.align {
        Some(text) => {
            Some(latscope_analysis::align::parse_align(text).with_context(|| format!("--align {text:?}"))?)
        }
        None => None,
    };
    let mut ctl = LoadControl::new();
    if let Some(tracks) = tracks_needed(&specs, align.as_ref())
        && args.decoders.is_empty()
    {
        ctl = ctl.with_tracks(tracks);
    }
    let mut sources = Vec::with_capacity(files.len());
    for path in &files {
        sources.push(latscope_importers::open(path, &ctl)?);
    }
    // Decoders run on the inputs that have their channels (a capture beside a kernel trace).
    let ran_on = crate::decode_cmd::attach_where_present(&mut sources, &args.decoders)?;
    for (spec, on) in args.decoders.iter().zip(&ran_on) {
        if on.len() < sources.len() {
            let on: Vec<String> = on.iter().map(|i| format!("{i} ({})", files[*i].display())).collect();
            eprintln!("latscope: --decoder {spec:?} decoded input {}", on.join(", "));
        }
    }
    // Sources start where their clocks put them (two traces of one kernel clock by their
    // clock values); an alignment moves one from there. Neither copies or changes them.
    let refs: Vec<&Source> = sources.iter().collect();
    let mut placements = Placement::all_by_clock(&refs);
    // The alignment as applied, for the report: what was fitted, not only what was asked.
    let applied = match &align {
        Some(spec) => {
            let a = latscope_analysis::align::apply_align(spec, &refs, &mut placements)?;
            let paths: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
            let labels = latscope_model::source_labels(&paths.iter().map(String::as_str).collect::<Vec<_>>());
            Some(format!(
                "{} ({}: offset {} ns, drift {:.3} ppm, {} matched, rms {:.3} ns)",
                args.align.as_deref().unwrap_or_default(),
                labels.get(a.source).map_or("?", String::as_str),
                a.placement.offset as f64 / 1e3,
                a.placement.drift_ppm,
                a.matched,
                a.residual_rms_ps / 1e3
            ))
        }
        None => None,
    };
    // Without --align two inputs are two captures to compare; with it, one aligned trace.
    let placed = Placed::with(&sources, &placements);
    let scope = Scope::of(args.align.is_some(), &placed);
    let outcomes = if specs.is_empty() {
        let runner::DefaultPresets { names, outcomes, missing } = runner::default_presets(&placed, scope);
        for hint in &missing {
            eprintln!("latscope: not run: {hint}");
        }
        if names.is_empty() {
            eprintln!(
                "latscope: no --preset or --rule given and no preset finds events in the input; \
                 try --rule (presets: {})",
                spec::PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
            );
        } else {
            eprintln!(
                "latscope: no --preset or --rule given; using the presets that find events: {}",
                names.join(", ")
            );
        }
        outcomes
    } else {
        let mut all = Vec::new();
        for s in &specs {
            all.extend(run_one(s, &placed, scope, true)?);
        }
        all
    };
    let paths: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    // A dataset stores every pair, so the report keeps its samples then.
    let rows_for = if args.dataset.is_some() { None } else { Some(format) };
    let report = build_report_as(&paths, &refs, &outcomes, applied, rows_for, baseline)?;
    if perfetto {
        emit_perfetto(&paths, &placed, &outcomes, args.output.as_deref(), &files)?;
    } else {
        emit(&report, format, args.output.as_deref(), &files)?;
    }
    if let Some(dir) = &args.dataset {
        crate::fleet_cmd::append(dir, &files, &labels, &report)?;
    }
    let gated = gate(&report, &thresholds);
    // The process ends with this command: handing the captures' and analyses' memory (tens
    // of MB for a million pulses) back page by page would cost more than the statistics.
    drop(placed);
    std::mem::forget((sources, outcomes, report));
    gated
}
