//! A capture: sources opened from files, where each sits on the common timeline, and the
//! decoders run on them — what `latscope report` works on, and what the Python API's
//! `latscope.open` returns. The workbench keeps its sources shared with its views instead,
//! and calls the same functions on borrowed [`Placed`] sources.

use crate::analyse::{self, Analysed, Which};
use crate::decode;
use crate::error::{EngineError, Result};
use crate::provenance::Request;
use crate::registry::Registry;
use latscope_analysis::align::{self, AlignSpec};
use latscope_analysis::outcome::Outcome;
use latscope_analysis::report::{Format, Report};
use latscope_analysis::runner::Scope;
use latscope_importers::LoadControl;
use latscope_model::{Placed, Placement, Source};
use std::path::PathBuf;

#[derive(Debug)]
pub struct Capture {
    /// The files, as the user named them.
    pub paths: Vec<PathBuf>,
    pub sources: Vec<Source>,
    /// Each source's place on the common timeline: by its clock until aligned.
    pub placements: Vec<Placement>,
    /// The alignment applied, as a report states it (what was fitted, not only what was
    /// asked), when the sources were aligned.
    pub aligned: Option<String>,
    /// The source every other one is compared with (`report --baseline`), when one is.
    pub baseline: Option<usize>,
}

impl Capture {
    /// Opens every file; sources start where their clocks put them (two traces of one
    /// kernel clock by their clock values).
    pub fn open(paths: &[PathBuf], ctl: &LoadControl) -> Result<Self> {
        let mut sources = Vec::with_capacity(paths.len());
        for path in paths {
            sources.push(crate::open(path, ctl)?);
        }
        Ok(Self::of(paths.to_vec(), sources))
    }

    /// Sources already loaded (a simulation, a test).
    pub fn of(paths: Vec<PathBuf>, sources: Vec<Source>) -> Self {
        let refs: Vec<&Source> = sources.iter().collect();
        let placements = Placement::all_by_clock(&refs);
        Capture { paths, sources, placements, aligned: None, baseline: None }
    }

    /// The inputs' names as reports give them: the paths as typed.
    pub fn path_names(&self) -> Vec<String> {
        self.paths.iter().map(|p| p.display().to_string()).collect()
    }

    /// Runs decoder stacks on every input that has their channels; per spec, the inputs it
    /// ran on.
    pub fn decode(&mut self, registry: &Registry, specs: &[String]) -> Result<Vec<Vec<usize>>> {
        decode::decode_where_present(registry, &mut self.sources, specs)
    }

    /// Aligns one source by `text` (`--align`); the sources are then analysed together.
    pub fn align(&mut self, text: &str) -> Result<()> {
        let spec = parse_align(text)?;
        let refs: Vec<&Source> = self.sources.iter().collect();
        let a = align::apply_align(&spec, &refs, &mut self.placements)?;
        let labels =
            latscope_model::source_labels(&self.path_names().iter().map(String::as_str).collect::<Vec<_>>());
        self.aligned = Some(format!(
            "{text} ({}: offset {} ns, drift {:.3} ppm, {} matched, rms {:.3} ns)",
            labels.get(a.source).map_or("?", String::as_str),
            a.placement.offset as f64 / 1e3,
            a.placement.drift_ppm,
            a.matched,
            a.residual_rms_ps / 1e3
        ));
        Ok(())
    }

    pub fn placed(&self) -> Vec<Placed<'_>> {
        Placed::with(&self.sources, &self.placements)
    }

    /// Each source alone (an A/B comparison) unless aligned or placed off their clocks.
    pub fn scope(&self) -> Scope {
        Scope::of(self.aligned.is_some(), &self.placed())
    }

    pub fn analyse(&self, registry: &Registry, which: &Which, options: analyse::Options) -> Analysed {
        analyse::analyse(registry, which, &self.placed(), self.scope(), options)
    }

    /// The report of `outcomes` asked for by `request`; when it will only be rendered as
    /// `format`, without the per-sample rows that format does not print.
    pub fn report(&self, outcomes: &[Outcome], format: Option<Format>, request: &Request) -> Result<Report> {
        let refs: Vec<&Source> = self.sources.iter().collect();
        crate::report::build(
            &self.path_names(),
            &refs,
            outcomes,
            self.aligned.clone(),
            format,
            self.baseline,
            request,
        )
    }
}

/// Parses `--align` text.
pub fn parse_align(text: &str) -> Result<AlignSpec> {
    align::parse_align(text).map_err(|error| EngineError::AlignSpec { text: text.to_owned(), error })
}
