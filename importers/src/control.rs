//! Progress and cancellation shared between a loading worker and whoever shows it, which
//! tracks the caller needs (a track selection importers may honour to skip work), and where
//! a preview of a capture still loading goes.

use latscope_model::Source;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Where an importer sends previews of what it has read so far: a source shaped like the one
/// it will return (same channels, same time range), drawn from a coarse summary (see
/// [`LoadControl::with_preview`]).
pub type PreviewSink = Arc<dyn Fn(Source) + Send + Sync>;

/// Cheap to clone; all clones share the same counters.
#[derive(Clone, Default)]
pub struct LoadControl {
    done: Arc<AtomicU64>,
    total: Arc<AtomicU64>,
    cancel: Arc<AtomicBool>,
    /// The track names the caller will use; `None`: every track.
    tracks: Option<Arc<[String]>>,
    preview: Option<PreviewSink>,
}

impl std::fmt::Debug for LoadControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadControl")
            .field("done", &self.done)
            .field("total", &self.total)
            .field("cancel", &self.cancel)
            .field("tracks", &self.tracks)
            .field("preview", &self.preview.is_some())
            .finish()
    }
}

/// How often a preview is sent while a capture loads.
pub const PREVIEW_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

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

    /// Asks for previews while loading: an importer that can (the `.sr` logic reader) sends
    /// `sink` a source of the capture's channels at a coarse level of detail (a few thousand
    /// buckets across the capture, each as quiet or busy), built as its chunks are read, every
    /// [`PREVIEW_EVERY`] or so, before all edges are stored: a window draws a large capture's
    /// tracks long before it has loaded.
    pub fn with_preview(mut self, sink: PreviewSink) -> Self {
        self.preview = Some(sink);
        self
    }

    pub(crate) fn preview(&self) -> Option<&PreviewSink> {
        self.preview.as_ref()
    }

    /// Whether the track `name` is wanted (always, without a selection): asked for by its
    /// name, or by a name it ends with after a separator, as rules resolve names
    /// ([`latscope_model::name_answers`]; `CMD` keeps `litesdcard.CMD`).
    pub fn wants_track(&self, name: &str) -> bool {
        self.tracks.as_ref().is_none_or(|t| t.iter().any(|n| latscope_model::name_answers(name, n)))
    }
}
