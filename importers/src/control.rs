//! Progress and cancellation shared between a loading worker and whoever shows it, and
//! which tracks the caller needs (a track selection importers may honour to skip work).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Cheap to clone; all clones share the same counters.
#[derive(Debug, Clone, Default)]
pub struct LoadControl {
    done: Arc<AtomicU64>,
    total: Arc<AtomicU64>,
    cancel: Arc<AtomicBool>,
    /// The track names the caller will use; `None`: every track.
    tracks: Option<Arc<[String]>>,
}

impl LoadControl {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set_total(&self, bytes: u64) {
        self.total.store(bytes, Ordering::Relaxed);
    }

    /// Adds `bytes` to the work done (called by parsers every few thousand records).
    pub fn advance(&self, bytes: u64) {
        self.done.fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn finish(&self) {
        self.done.store(self.total.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// Fraction done in `0.0..=1.0`.
    pub fn fraction(&self) -> f32 {
        let total = self.total.load(Ordering::Relaxed);
        if total == 0 {
            return 0.0;
        }
        (self.done.load(Ordering::Relaxed) as f64 / total as f64).min(1.0) as f32
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Asks for only the tracks named `names`. An importer that honours the selection (the
    /// `.sr` logic decoder) leaves the other tracks out and says so in the source's metadata;
    /// the others load everything. Only for callers that know every track they will read
    /// (`latscope report` with rules naming their channels), never for browsing.
    pub fn with_tracks<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.tracks = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the track `name` is wanted (always, without a selection): asked for by its
    /// name, or by a name it ends with after a separator, as rules resolve names
    /// ([`latscope_model::name_answers`]; `CMD` keeps `litesdcard.CMD`).
    pub fn wants_track(&self, name: &str) -> bool {
        self.tracks.as_ref().is_none_or(|t| t.iter().any(|n| latscope_model::name_answers(name, n)))
    }
}
