//! Saving what the workbench shows (docs/ARCHITECTURE.md "Workbench export"): the
//! report of the current analyses in every `latscope report` format — built and written by
//! the engine's [`latscope_engine::report`], as the command line's, so the bytes are the
//! same — the Perfetto trace (the engine's [`latscope_engine::report::write_perfetto`]), the
//! session, and a PNG of the visible timeline. The
//! location comes from the [`super::picker::FilePicker`]; the writing runs on a worker
//! thread and is atomic, and a target that is one of the open inputs is refused in the
//! window.

use super::analysis::AnalysisResult;
use super::prepare::Prepared;
use anyhow::Context as _;
use egui::{ColorImage, Rect};
use latscope_analysis::outcome::Outcome;
use latscope_analysis::report::Format;
use latscope_engine::{Output, atomic};
use latscope_model::{Placed, Placement, Source};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a save writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveWhat {
    /// The report of the analysis panel's results.
    Report(Format),
    /// The sources and the analysis panel's results as Trace Event JSON for
    /// ui.perfetto.dev (`latscope report --format perfetto`).
    PerfettoTrace,
    /// The workbench's session (`*.latscope.json`, [`super::session`]).
    Session,
    /// The timeline as it is on screen.
    TimelinePng,
}

/// Every report format, in the order the menus list them.
pub const REPORT_FORMATS: [Format; 5] =
    [Format::Html, Format::Md, Format::Json, Format::Csv, Format::Parquet];

impl SaveWhat {
    /// The file name the save dialog proposes.
    pub fn default_name(self) -> &'static str {
        match self {
            Self::Report(Format::Html) => "report.html",
            Self::Report(Format::Md) => "report.md",
            Self::Report(Format::Json) => "report.json",
            Self::Report(Format::Csv) => "samples.csv",
            Self::Report(Format::Parquet) => "samples.parquet",
            Self::PerfettoTrace => "perfetto-trace.json",
            Self::Session => "workbench.latscope.json",
            Self::TimelinePng => "timeline.png",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Self::Report(Format::Html) => "html",
            Self::Report(Format::Md) => "md",
            Self::Report(Format::Json) | Self::PerfettoTrace | Self::Session => "json",
            Self::Report(Format::Csv) => "csv",
            Self::Report(Format::Parquet) => "parquet",
            Self::TimelinePng => "png",
        }
    }

    /// The menu entry and dialog title.
    pub fn title(self) -> &'static str {
        match self {
            Self::Report(Format::Html) => "Export report as HTML",
            Self::Report(Format::Md) => "Export report as Markdown",
            Self::Report(Format::Json) => "Export report as JSON",
            Self::Report(Format::Csv) => "Export samples as CSV",
            Self::Report(Format::Parquet) => "Export samples as Parquet",
            Self::PerfettoTrace => "Export trace for Perfetto (ui.perfetto.dev)",
            Self::Session => "Save session",
            Self::TimelinePng => "Save timeline as PNG",
        }
    }
}

/// Everything a report needs, taken from the workbench on the UI thread.
#[derive(Debug, Clone)]
pub struct ReportJob {
    /// The inputs as the report names them: the path the file was opened by.
    pub paths: Vec<String>,
    pub sources: Vec<Arc<Prepared>>,
    /// The analysis panel's results, shared: the worker copies the outcomes it reports.
    pub results: Arc<Vec<AnalysisResult>>,
    /// Offsets set in the workbench, as the report's `align` line.
    pub align: Option<String>,
    /// Where each of `sources` was analysed on the common timeline (the Perfetto trace
    /// places them there).
    pub placements: Vec<Placement>,
    /// Files that must not be overwritten.
    pub inputs: Vec<PathBuf>,
    /// The rule texts and preset names the results were run with (empty: the results'
    /// names).
    pub analyses: Vec<String>,
}

/// Builds and writes the report of `job` in `format` to `path` (atomically, never over an
/// input): `latscope report`'s own path.
pub fn write_report(job: &ReportJob, format: Format, path: &Path) -> anyhow::Result<()> {
    let sources: Vec<&Source> = job.sources.iter().map(|p| &p.source).collect();
    let outcomes: Vec<Outcome> = job.results.iter().map(|r| r.outcome.clone()).collect();
    // The analyses as they were asked for: presets by name, rules by their whole text
    // (else, for results that came with no rule list, by their names).
    let names: Vec<&str> = if job.analyses.is_empty() {
        outcomes.iter().map(|o| o.name.as_str()).collect()
    } else {
        job.analyses.iter().map(String::as_str).collect()
    };
    let request = latscope_engine::report::Request::of_analyses(&latscope_engine::Registry::native(), &names);
    let report = latscope_engine::report::build(
        &job.paths,
        &sources,
        &outcomes,
        job.align.clone(),
        None,
        None,
        &request,
    )?;
    Ok(latscope_engine::report::write(&report, format, &Output::File(path.to_owned()), &job.inputs)?)
}

/// Writes the Perfetto trace (Trace Event JSON) of `job` to `path` (atomically, never over
/// an input): `latscope report --format perfetto`'s own path, so the bytes are the same.
pub fn write_perfetto(job: &ReportJob, path: &Path) -> anyhow::Result<()> {
    let placed: Vec<Placed<'_>> = job
        .sources
        .iter()
        .zip(job.placements.iter().copied().chain(std::iter::repeat(Placement::IDENTITY)))
        .map(|(p, placement)| Placed { source: &p.source, placement })
        .collect();
    let outcomes: Vec<Outcome> = job.results.iter().map(|r| r.outcome.clone()).collect();
    Ok(latscope_engine::report::write_perfetto(
        &job.paths,
        &placed,
        &outcomes,
        &Output::File(path.to_owned()),
        &job.inputs,
    )?)
}

/// The part of `image` under `rect` (physical pixels), clipped to the image; `None` when
/// nothing of it is inside.
pub fn crop(image: &ColorImage, rect: Rect) -> Option<ColorImage> {
    let [w, h] = image.size;
    let x0 = rect.left().max(0.0).floor() as usize;
    let y0 = rect.top().max(0.0).floor() as usize;
    let x1 = (rect.right().max(0.0).ceil() as usize).min(w);
    let y1 = (rect.bottom().max(0.0).ceil() as usize).min(h);
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    let mut pixels = Vec::with_capacity((x1 - x0) * (y1 - y0));
    for y in y0..y1 {
        pixels.extend_from_slice(&image.pixels[y * w + x0..y * w + x1]);
    }
    Some(ColorImage::new([x1 - x0, y1 - y0], pixels))
}

/// An 8-bit RGBA PNG of `image`.
pub fn encode_png(image: &ColorImage) -> anyhow::Result<Vec<u8>> {
    let [w, h] = image.size;
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, u32::try_from(w)?, u32::try_from(h)?);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().context("encoding the PNG")?;
    let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_srgba_unmultiplied()).collect();
    writer.write_image_data(&bytes).context("encoding the PNG")?;
    writer.finish().context("encoding the PNG")?;
    Ok(out)
}

/// Crops `image` to `rect_px` and writes it as a PNG at `path`, atomically, never over one
/// of `inputs`.
pub fn save_cropped_png(
    image: &ColorImage,
    rect_px: Rect,
    path: &Path,
    inputs: &[PathBuf],
) -> anyhow::Result<()> {
    let cropped = crop(image, rect_px).context("the timeline is not on screen")?;
    let bytes = encode_png(&cropped)?;
    atomic::write_atomic(path, &bytes, inputs)?;
    Ok(())
}

/// A timeline PNG asked for (taken from the next frame's pixels).
#[derive(Debug, Clone)]
pub struct PngRequest {
    pub path: PathBuf,
}
