//! Saving what the workbench shows (docs/ARCHITECTURE.md "Workbench export"): the
//! report of the current analyses in every `latscope report` format — built and written by
//! the engine's [`latscope_engine::report`], as the command line's, so the bytes are the
//! same — the Perfetto trace (the engine's [`latscope_engine::report::write_perfetto`]), the
//! session, and a PNG of the visible timeline. The
//! location comes from the [`super::picker::FilePicker`]; the writing runs on a worker
//! thread and is atomic, and a target that is one of the open inputs is refused in the
//! window.

use super::analysis::AnalysisResult;
use super::app::Workbench;
use super::jobs::JobKind;
use super::message::Message;
use super::prepare::Prepared;
use super::session;
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
    /// The workbench's session (`*.latscope.json`, [`session`]).
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
}

/// Builds and writes the report of `job` in `format` to `path` (atomically, never over an
/// input): `latscope report`'s own path.
pub fn write_report(job: &ReportJob, format: Format, path: &Path) -> anyhow::Result<()> {
    let sources: Vec<&Source> = job.sources.iter().map(|p| &p.source).collect();
    let outcomes: Vec<Outcome> = job.results.iter().map(|r| r.outcome.clone()).collect();
    let report =
        latscope_engine::report::build(&job.paths, &sources, &outcomes, job.align.clone(), None, None)?;
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
pub(super) struct PngRequest {
    pub path: PathBuf,
}

impl Workbench {
    /// Writes a file as a save job; its end arrives as `Message::Saved`.
    fn spawn_save(&mut self, path: PathBuf, job: impl FnOnce(&Path) -> anyhow::Result<()> + Send + 'static) {
        self.jobs.spawn(JobKind::Save, None, move |cx| {
            let result = job(&path).map(|()| path).map_err(|e| format!("{e:#}"));
            cx.send(Message::Saved { ticket: cx.ticket, result });
        });
    }

    /// Whether there are results to report.
    fn report_ready(&self) -> Result<(), String> {
        if self.analysis_running() {
            return Err("the analysis is still running; export when it is done".into());
        }
        if self.analysis.results.is_empty() {
            return Err("nothing to export: run an analysis first (Analysis > Run)".into());
        }
        Ok(())
    }

    /// The report job of the analysis panel's current results: shares them (the worker
    /// copies what it renders while the panel keeps showing them), so the UI thread does no
    /// work that grows with the samples.
    pub fn report_job(&self) -> Result<ReportJob, String> {
        self.report_ready()?;
        let sources = self.analysis.inputs.clone();
        let paths = sources
            .iter()
            .map(|p| {
                p.source.path.as_ref().map_or_else(|| p.source.name.clone(), |f| f.display().to_string())
            })
            .collect();
        // Sources moved from where their clocks put them (by the Align dialog or a session).
        let placed: Vec<latscope_model::Placed<'_>> = sources
            .iter()
            .zip(&self.analysis.placements)
            .map(|(s, p)| latscope_model::Placed::new(&s.source, *p))
            .collect();
        let labels = latscope_analysis::runner::labels(&placed);
        let aligned: Vec<String> = placed
            .iter()
            .enumerate()
            .filter(|(i, p)| p.placement != latscope_model::Placement::by_clock(&placed[..*i], p.source))
            .map(|(i, p)| (&labels[i], p.placement))
            .map(|(label, p)| {
                format!("{label}: offset {} ns, drift {:.3} ppm", p.offset as f64 / 1e3, p.drift_ppm)
            })
            .collect();
        let align = (!aligned.is_empty()).then(|| format!("set in the workbench ({})", aligned.join("; ")));
        Ok(ReportJob {
            paths,
            sources,
            results: self.analysis.results.clone(),
            align,
            placements: self.analysis.placements.clone(),
            inputs: self.input_paths(),
        })
    }

    /// `Message::Export`: ask where.
    pub(super) fn ask_save(&mut self, what: SaveWhat) {
        let refused = match what {
            SaveWhat::Report(_) | SaveWhat::PerfettoTrace => self.report_ready().err(),
            SaveWhat::TimelinePng if self.view.sources.is_empty() => {
                Some("nothing on the timeline to save".into())
            }
            SaveWhat::TimelinePng | SaveWhat::Session => None,
        };
        if let Some(e) = refused {
            self.errors.push(e);
            return;
        }
        self.picker().save(what, self.outbox());
    }

    /// `Message::SaveTo`: write `what` at `path` in the background.
    pub(super) fn save_to(&mut self, what: SaveWhat, path: PathBuf) {
        let inputs = self.input_paths();
        // Refused at once, in the window: the file the user is looking at stays intact.
        if let Err(e) = atomic::check_not_input(&path, &inputs) {
            self.errors.push(e.to_string());
            return;
        }
        match what {
            SaveWhat::Report(format) => match self.report_job() {
                Ok(job) => self.spawn_save(path, move |p| write_report(&job, format, p)),
                Err(e) => self.errors.push(e),
            },
            SaveWhat::PerfettoTrace => match self.report_job() {
                Ok(job) => self.spawn_save(path, move |p| write_perfetto(&job, p)),
                Err(e) => self.errors.push(e),
            },
            SaveWhat::Session => {
                let s = session::Session::capture(self);
                self.spawn_save(path, move |p| s.write(p, &inputs));
            }
            SaveWhat::TimelinePng => self.png_request = Some(PngRequest { path }),
        }
    }

    /// `Message::Saved`.
    pub(super) fn saved(&mut self, result: Result<PathBuf, String>) {
        match result {
            Ok(path) => self.notice = Some(format!("saved {}", path.display())),
            Err(e) => self.errors.push(e),
        }
    }

    /// Asks for this frame's pixels for the asked-for timeline PNG; they arrive as
    /// `Message::TimelineShot`.
    pub(super) fn request_png(&mut self, ctx: &egui::Context) {
        let Some(req) = self.png_request.take() else { return };
        let Some(rect) = self.view.layout.rect.filter(|_| !self.view.sources.is_empty()) else {
            self.errors.push("no timeline on screen to save".into());
            return;
        };
        let ppp = ctx.pixels_per_point();
        let rect_px =
            Rect::from_min_max((rect.min.to_vec2() * ppp).to_pos2(), (rect.max.to_vec2() * ppp).to_pos2());
        let out = self.outbox();
        self.png_waiting = true;
        ctx.request_screenshot(move |image| {
            out.send(Message::TimelineShot { path: req.path, rect_px, image });
        });
        ctx.request_repaint();
    }

    /// `Message::TimelineShot`: crop and encode off the thread that paints.
    pub(super) fn save_timeline_shot(&mut self, path: PathBuf, rect_px: Rect, image: Arc<ColorImage>) {
        self.png_waiting = false;
        let inputs = self.input_paths();
        self.spawn_save(path, move |p| save_cropped_png(&image, rect_px, p, &inputs));
    }
}
