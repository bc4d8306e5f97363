//! `latscope fleet DIR`: a fleet dataset aggregated (`latscope_fleet`), with `--fail-if` per
//! group turned into exit code 3 as in `report`. Captures join a dataset through
//! `latscope report --label K=V --dataset DIR`.

use anyhow::{Result, bail};
use latscope_engine::Output;
use latscope_fleet::Dataset;
use latscope_fleet::aggregate::{FleetCrossing, FleetOptions, parse_selector};
use std::fmt;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct FleetArgs {
    /// The dataset directory (written by `latscope report --dataset DIR`).
    pub dir: PathBuf,
    /// Label names to group by, comma-separated (e.g. board,kernel).
    #[arg(long = "group-by", value_name = "LABELS", value_delimiter = ',')]
    pub group_by: Vec<String>,
    /// Only this analysis; repeatable (default: every analysis in the dataset).
    #[arg(long = "analysis", value_name = "NAME")]
    pub analyses: Vec<String>,
    /// A/B: the baseline captures, LABEL=VALUE (with --compare).
    #[arg(long, value_name = "LABEL=VALUE", requires = "compare")]
    pub baseline: Option<String>,
    /// A/B: the captures compared with the baseline, LABEL=VALUE.
    #[arg(long, value_name = "LABEL=VALUE", requires = "baseline")]
    pub compare: Option<String>,
    /// Statistics per value of this label (a commit, a date), in order of first append,
    /// and the change points: values whose p99 differs from the previous value's with
    /// significance --trend-alpha.
    #[arg(long, value_name = "LABEL")]
    pub trend: Option<String>,
    /// The significance level of a trend's change points, Holm-adjusted over its steps:
    /// `0.05` or `5%`.
    #[arg(long = "trend-alpha", value_name = "LEVEL", default_value = "0.05")]
    pub trend_alpha: String,
    /// A change point must also move p99 by more than this fraction of the previous value:
    /// `10%` or `0.1` (default: any significant change).
    #[arg(long = "trend-threshold", value_name = "FRACTION", default_value = "0%")]
    pub trend_threshold: String,
    /// ANALYSIS.STAT>DURATION or ANALYSIS.STAT<DURATION, checked per group, or with
    /// --baseline/--compare `ANALYSIS.STAT regressed[(C%)] [by P%]`; exit code 3.
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
    /// Worst pairs kept per group.
    #[arg(long, default_value_t = 5)]
    pub worst: usize,
    /// Output format (default: from the -o extension, else md).
    #[arg(long, value_enum)]
    pub format: Option<FleetFormat>,
    /// Write the report here (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FleetFormat {
    Json,
    Md,
    Html,
}

/// Groups that crossed a `--fail-if`: the report was still written; the command exits 3.
#[derive(Debug)]
pub struct FleetThresholdsCrossed(pub Vec<FleetCrossing>);

impl fmt::Display for FleetThresholdsCrossed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\nlatscope: "))
    }
}

impl std::error::Error for FleetThresholdsCrossed {}

fn parse_fraction(text: &str, flag: &str) -> Result<f64> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => bail!("{flag} {text:?}: expected a fraction such as 0.1 or a percentage such as 10%"),
    }
}

pub fn run(args: &FleetArgs) -> Result<()> {
    // Usage errors first, before the dataset is read.
    let thresholds = latscope_engine::report::thresholds(&args.fail_if)?;
    latscope_engine::report::require_baseline(
        &thresholds,
        args.baseline.is_some(),
        "--baseline LABEL=A --compare LABEL=B",
    )?;
    let trend_alpha = parse_fraction(&args.trend_alpha, "--trend-alpha")?;
    if !(trend_alpha > 0.0 && trend_alpha < 1.0) {
        bail!("--trend-alpha {:?}: expected a level between 0 and 1, such as 0.05", args.trend_alpha);
    }
    let format = match (args.format, &args.output) {
        (Some(f), _) => f,
        (None, Some(p)) => {
            match p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
                Some("json") => FleetFormat::Json,
                Some("html" | "htm") => FleetFormat::Html,
                _ => FleetFormat::Md,
            }
        }
        (None, None) => FleetFormat::Md,
    };
    let opts = FleetOptions {
        group_by: args.group_by.iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect(),
        analyses: args.analyses.clone(),
        baseline: args.baseline.as_deref().map(|t| parse_selector(t, "--baseline")).transpose()?,
        compare: args.compare.as_deref().map(|t| parse_selector(t, "--compare")).transpose()?,
        trend: args.trend.clone(),
        trend_alpha,
        trend_threshold: parse_fraction(&args.trend_threshold, "--trend-threshold")?,
        worst: args.worst,
        ..FleetOptions::default()
    };
    let dataset = Dataset::open(&args.dir)?;
    let report = latscope_fleet::fleet(&dataset, &opts, &thresholds)?;
    for w in &report.warnings {
        eprintln!("latscope: warning: {w}");
    }
    let bytes = match format {
        FleetFormat::Json => latscope_fleet::render::to_json(&report),
        FleetFormat::Md => latscope_fleet::render::to_markdown(&report),
        FleetFormat::Html => latscope_fleet::render::to_html(&report),
    };
    Output::of(args.output.as_deref()).write("the fleet report", &[], |w| w.write_all(bytes.as_bytes()))?;
    if report.crossings.is_empty() { Ok(()) } else { Err(FleetThresholdsCrossed(report.crossings).into()) }
}
