//! The engine's one error type: every failure a front end shows, with what it was about (the
//! file, the preset, the rule or decoder text, the input) and the library error beneath it.
//! A variant's text includes that error (the workbench shows the text alone), so the error is
//! a plain field, not a `source` a command line's error chain would print a second time.

use crate::atomic::WriteError;
use latscope_analysis::measure::AnalysisError;
use latscope_analysis::report::ReportError;
use latscope_analysis::report::threshold::ThresholdError;
use latscope_analysis::spec::SpecError;
use latscope_decoders::DecodeError;
use latscope_importers::ImportError;
use latscope_model::{BuildError, FilterError};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error("unknown preset {name:?} (presets: {known})")]
    UnknownPreset { name: String, known: String },
    #[error("preset {name:?}: {error} (presets: {known})")]
    Preset { name: String, known: String, error: SpecError },
    #[error("rule {text:?}: {error}")]
    Rule { text: String, error: SpecError },
    #[error("--align {text:?}: {error}")]
    AlignSpec { text: String, error: SpecError },
    #[error(transparent)]
    Align(#[from] latscope_analysis::align::AlignError),
    #[error("decoder {spec:?}: {error}")]
    Decoder { spec: String, error: DecodeError },
    #[error("decoder {spec:?} on input {input} ({name}): {error}")]
    DecoderOnInput { spec: String, input: usize, name: String, error: DecodeError },
    #[error("decoder {spec:?}: no input has the channels: {error}")]
    NoInputHasChannels { spec: String, error: DecodeError },
    #[error("decoder {spec:?}: {name} is already decoded with it")]
    AlreadyDecoded { spec: String, name: String },
    #[error("{name}: adding the decoded events: {error}")]
    Attach { name: String, error: BuildError },
    /// An analysis that could not run, with what to record when a preset lacks events.
    #[error("analysis {name}: {error}{}", hint.as_ref().map(|h| format!("\n{h}")).unwrap_or_default())]
    Analysis { name: String, error: Box<AnalysisError>, hint: Option<String> },
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Stats(#[from] latscope_analysis::stats::StatsError),
    #[error(transparent)]
    Threshold(#[from] ThresholdError),
    #[error("filter {text:?}: {error}")]
    Filter { text: String, error: FilterError },
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("{what}: {source}")]
    Output { what: String, source: std::io::Error },
    /// An input could not be read again for the report's SHA-256 of it.
    #[error("{path}: reading it for its SHA-256: {source}")]
    Digest { path: String, source: std::io::Error },
    #[error("--format {format} writes a binary file: give an output path")]
    BinaryToStdout { format: &'static str },
    #[error(transparent)]
    Scenario(#[from] latscope_sim::ScenarioError),
    #[error(transparent)]
    Fleet(#[from] latscope_fleet::FleetError),
    #[cfg(feature = "query")]
    #[error(transparent)]
    Query(#[from] crate::query::QueryError),
    #[error("{0}")]
    Usage(String),
}

impl EngineError {
    /// Whether writing stopped because the reader went away (`latscope events big.dat |
    /// head`): not an error for a command line.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, EngineError::Output { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;
