//! The document: what the workbench has open, apart from how it is shown. Each source has a
//! stable [`SourceId`] (taken when its load starts, so the command line's `--align 1:…` and
//! a fleet jump name a file before it has loaded), its data shared with the views and jobs,
//! its place on the common timeline and the decoders run on it (kept in its metadata), and
//! whether it still grows (the live simulator). The alignment in force is the document's too.
//! The view (lanes, viewport, overlay) and the jobs stand apart and name sources by id.

use super::prepare::Prepared;
use latscope_analysis::align::Alignment;
use latscope_model::{Placed, Placement, Source};
use std::sync::Arc;

/// A source's identity for as long as the workbench runs: not its position (sources close)
/// nor its file name (one file may be open twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId(pub u64);

/// One open source.
#[derive(Debug, Clone)]
pub struct DocSource {
    pub id: SourceId,
    pub prepared: Arc<Prepared>,
    /// Where the source sits on the common timeline, beside its data.
    pub placement: Placement,
    /// Changes when `prepared` is replaced (a decode, a live snapshot, a derived lane):
    /// what a job's stamp records, so a job that read older data is known stale.
    pub data_generation: u64,
    /// The live simulator appends to it.
    pub growing: bool,
    /// How it was placed, when neither its clock nor an alignment did (a logic analyzer
    /// recorded beside the kernel: "host clocks (±U): …"); any later move drops it.
    pub placed_by: Option<String>,
}

impl DocSource {
    pub fn source(&self) -> &Source {
        &self.prepared.source
    }

    /// Source-relative ps to the common timeline.
    pub fn to_common(&self, t: latscope_model::Ps) -> f64 {
        self.placement.to_common_f64(t)
    }

    /// Common timeline to source-relative ps.
    pub fn to_source(&self, t: f64) -> f64 {
        self.placement.from_common_f64(t)
    }
}

/// The data a job read: source `id` as it was at `generation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceStamp {
    pub id: SourceId,
    pub generation: u64,
}

/// Everything open, in timeline order.
#[derive(Debug)]
pub struct Document {
    pub sources: Vec<DocSource>,
    /// The alignment in force (rules then run across the sources together), if any.
    pub alignment: Option<Alignment>,
    next_id: u64,
    generation: u64,
}

impl Default for Document {
    fn default() -> Self {
        Self { sources: Vec::new(), alignment: None, next_id: 1, generation: 1 }
    }
}

impl Document {
    /// An id for a source about to be opened.
    pub fn reserve_id(&mut self) -> SourceId {
        let id = SourceId(self.next_id);
        self.next_id += 1;
        id
    }

    fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }

    pub fn index_of(&self, id: SourceId) -> Option<usize> {
        self.sources.iter().position(|s| s.id == id)
    }

    pub fn get(&self, id: SourceId) -> Option<&DocSource> {
        self.sources.iter().find(|s| s.id == id)
    }

    pub fn get_mut(&mut self, id: SourceId) -> Option<&mut DocSource> {
        self.sources.iter_mut().find(|s| s.id == id)
    }

    pub fn ids(&self) -> Vec<SourceId> {
        self.sources.iter().map(|s| s.id).collect()
    }

    /// Adds source `id` where its clock puts it: by its clock values when an earlier source
    /// reads the same kind of clock (two ftrace captures of one machine), else at its own
    /// origin.
    pub fn add(&mut self, id: SourceId, prepared: Arc<Prepared>, growing: bool) {
        let placement = Placement::by_clock(&self.placed(), &prepared.source);
        let data_generation = self.next_generation();
        self.sources.push(DocSource { id, prepared, placement, data_generation, growing, placed_by: None });
    }

    /// Replaces the data of source `id`; its placement stays.
    pub fn replace(&mut self, id: SourceId, prepared: Arc<Prepared>) {
        let generation = self.next_generation();
        if let Some(s) = self.get_mut(id) {
            s.prepared = prepared;
            s.data_generation = generation;
        }
    }

    /// Source `id`'s data changed in place (a track added): a new data generation.
    pub fn touch(&mut self, id: SourceId) {
        let generation = self.next_generation();
        if let Some(s) = self.get_mut(id) {
            s.data_generation = generation;
        }
    }

    /// Moves source `id` on the common timeline; whether it moved (no data is touched, and
    /// jobs that read its data stay current).
    pub fn place(&mut self, id: SourceId, placement: Placement) -> bool {
        match self.get_mut(id) {
            Some(s) if s.placement != placement => {
                s.placement = placement;
                s.placed_by = None;
                true
            }
            _ => false,
        }
    }

    /// Moves source `id` as [`Document::place`] does, saying how it was placed (shown where
    /// the placement is, kept in sessions).
    pub fn place_by(&mut self, id: SourceId, placement: Placement, how: String) {
        self.place(id, placement);
        if let Some(s) = self.get_mut(id) {
            s.placed_by = Some(how);
        }
    }

    /// Source `id` taken away (a load's preview whose load failed or was cancelled).
    pub fn remove(&mut self, id: SourceId) {
        self.sources.retain(|s| s.id != id);
    }

    /// Everything closed.
    pub fn clear(&mut self) {
        self.sources.clear();
        self.alignment = None;
    }

    /// What a job reading source `id` now reads.
    pub fn stamp(&self, id: SourceId) -> Option<SourceStamp> {
        self.get(id).map(|s| SourceStamp { id, generation: s.data_generation })
    }

    /// Whether source `stamp.id` still holds the data the stamp was taken of.
    pub fn is_current(&self, stamp: SourceStamp) -> bool {
        self.get(stamp.id).is_some_and(|s| s.data_generation == stamp.generation)
    }

    /// The sources with their placements, borrowed.
    pub fn placed(&self) -> Vec<Placed<'_>> {
        self.sources.iter().map(|s| Placed::new(s.source(), s.placement)).collect()
    }

    /// What the workbench calls each source: names first, numbers only where names repeat
    /// (as reports do).
    pub fn labels(&self) -> Vec<String> {
        latscope_analysis::runner::labels(&self.placed())
    }

    /// Where source `index` sits by its clock, after the sources before it as placed.
    pub fn clock_placement(&self, index: usize) -> Placement {
        let placed = self.placed();
        match placed.get(index) {
            Some(p) => Placement::by_clock(&placed[..index], p.source),
            None => Placement::IDENTITY,
        }
    }

    /// The common-timeline range of everything loaded.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        let mut out: Option<(f64, f64)> = None;
        for s in &self.sources {
            if let Some((a, b)) = s.source().time_range() {
                let (a, b) = (s.to_common(a), s.to_common(b));
                out = Some(match out {
                    Some((lo, hi)) => (lo.min(a), hi.max(b)),
                    None => (a, b),
                });
            }
        }
        out
    }
}
