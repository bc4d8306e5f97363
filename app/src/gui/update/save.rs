//! Saving: exports (reports, the Perfetto trace, the session, the timeline PNG) as jobs
//! that write atomically and never over an input, the `--screenshot`, and the in-window file
//! browser that stands in for a desktop dialog.

use crate::gui::app::Workbench;
use crate::gui::export::{PngRequest, ReportJob, SaveWhat, save_cropped_png, write_perfetto, write_report};
use crate::gui::file_browser::{BrowsePurpose, BrowserAnswer, FileBrowser};
use crate::gui::jobs::JobKind;
use crate::gui::message::{FileMsg, SaveMsg};
use latscope_engine::atomic;
use std::path::{Path, PathBuf};
use std::sync::Arc;

impl Workbench {
    pub(super) fn update_save(&mut self, msg: SaveMsg) {
        match msg {
            SaveMsg::Export(what) => self.ask_save(what),
            SaveMsg::SaveTo(what, path) => self.save_to(what, path),
            SaveMsg::Saved { ticket, result } => {
                self.jobs.accept(ticket, |_| true);
                match result {
                    Ok(path) => self.notice = Some(format!("saved {}", path.display())),
                    Err(e) => self.errors.push(e),
                }
            }
            SaveMsg::PixelsAsked(on_screen) => {
                self.png_request = None;
                self.png_waiting = on_screen;
                if !on_screen {
                    self.errors.push(anyhow::anyhow!("no timeline on screen to save"));
                }
            }
            SaveMsg::TimelineShot { path, rect_px, image } => {
                // Cropped and encoded off the thread that paints.
                self.png_waiting = false;
                let inputs = self.input_paths();
                self.spawn_save(path, move |p| save_cropped_png(&image, rect_px, p, &inputs));
            }
            SaveMsg::SessionRead { ticket, path, result } => {
                if self.jobs.accept(ticket, |_| true) {
                    match result {
                        Ok(session) => self.open_session(&path, session),
                        Err(e) => self.errors.push(e),
                    }
                }
            }
            SaveMsg::ScreenshotTaken(image) => self.save_screenshot(image),
            SaveMsg::ScreenshotSaved { ticket, result } => {
                self.jobs.accept(ticket, |_| true);
                match result {
                    Ok(path) => self.screenshot_saved = Some(path),
                    Err(e) => self.errors.push(e),
                }
                self.quit = true;
            }
            SaveMsg::BrowseFiles(purpose) => self.browse(purpose),
            SaveMsg::Browser(action) => {
                let Some(b) = &mut self.dialogs.browser else { return };
                let (answer, keep) = b.apply(action);
                if !keep {
                    self.dialogs.browser = None;
                }
                match answer {
                    Some(BrowserAnswer::Open(path)) => self.update(FileMsg::Open(vec![path]).into()),
                    Some(BrowserAnswer::SaveTo(what, path)) => self.save_to(what, path),
                    None => {}
                }
            }
        }
    }

    /// Writes a file as a save job; its end arrives as [`SaveMsg::Saved`].
    fn spawn_save(&mut self, path: PathBuf, job: impl FnOnce(&Path) -> anyhow::Result<()> + Send + 'static) {
        self.jobs.spawn(JobKind::Save, None, move |cx| {
            let result = job(&path).map(|()| path);
            cx.send(SaveMsg::Saved { ticket: cx.ticket, result });
        });
    }

    /// Whether there are results to report.
    fn report_ready(&self) -> anyhow::Result<()> {
        if self.analysis_running() {
            anyhow::bail!("the analysis is still running; export when it is done");
        }
        if self.analysis.results.is_empty() {
            anyhow::bail!("nothing to export: run an analysis first (Analysis > Run)");
        }
        Ok(())
    }

    /// The report job of the analysis panel's current results: shares them (the worker
    /// copies what it renders while the panel keeps showing them), so the UI thread does no
    /// work that grows with the samples.
    pub fn report_job(&self) -> anyhow::Result<ReportJob> {
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
            analyses: self.analysis.ran_with.clone(),
        })
    }

    /// Asks where to save `what`.
    fn ask_save(&mut self, what: SaveWhat) {
        let refused = match what {
            SaveWhat::Report(_) | SaveWhat::PerfettoTrace => self.report_ready().err(),
            SaveWhat::TimelinePng if self.doc.sources.is_empty() => {
                Some(anyhow::anyhow!("nothing on the timeline to save"))
            }
            SaveWhat::TimelinePng | SaveWhat::Session => None,
        };
        if let Some(e) = refused {
            self.errors.push(e);
            return;
        }
        self.picker().save(what, self.outbox());
    }

    /// Writes `what` at `path` in the background.
    fn save_to(&mut self, what: SaveWhat, path: PathBuf) {
        let inputs = self.input_paths();
        // Refused at once, in the window: the file the user is looking at stays intact.
        if let Err(e) = atomic::check_not_input(&path, &inputs) {
            self.errors.push(e.into());
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
                let mut s = self.session();
                let temporary = self.record.temporary.paths().to_vec();
                self.spawn_save(path, move |p| {
                    s.keep_temporary(p, &temporary, &inputs)?;
                    s.write(p, &inputs)
                });
            }
            SaveWhat::TimelinePng => self.png_request = Some(PngRequest { path }),
        }
    }

    /// Encoding a big window takes a while, so the `--screenshot` PNG is written by a job;
    /// the window closes when [`SaveMsg::ScreenshotSaved`] arrives.
    fn save_screenshot(&mut self, image: Arc<egui::ColorImage>) {
        let Some(path) = self.screenshot.clone() else { return };
        let inputs = self.input_paths();
        self.jobs.spawn(JobKind::Screenshot, None, move |cx| {
            let result = crate::gui::app::save_png(&path, &image, &inputs).map(|()| path);
            cx.send(SaveMsg::ScreenshotSaved { ticket: cx.ticket, result });
        });
    }

    /// The in-window browser, starting where the last file was.
    fn browse(&mut self, purpose: BrowsePurpose) {
        let dir = self
            .recent
            .first()
            .and_then(|p| p.parent())
            .filter(|d| d.is_dir())
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        self.dialogs.browser = Some(FileBrowser::new(purpose, dir));
    }
}
