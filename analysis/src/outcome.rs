//! What one analysis produced — a pair rule, pulse widths, a chain or a stall detector —
//! in the shape statistics, reports and the GUI consume. Analyses fill an [`Outcome`];
//! nothing in this module computes.
//!
//! Times are relative picoseconds of the source named by `source` (an index into the
//! inputs); reports convert them to that source's own clock with its `ClockOrigin`.

use latscope_model::Ps;

/// The JSON report's `kind` of an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnalysisKind {
    Pair,
    Pulse,
    Chain,
    Stall,
}

/// An event of an analysed input: the input (as the outcome's `source` counts them) and its
/// index in that source's event table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventAt {
    pub source: u32,
    pub index: u32,
}

/// One measured latency: a matched start and end, and the key it was matched by, rendered
/// for people (`cpu=0 irq=36`; empty when the rule has no key). A pair matched at events
/// names them, so a front end goes from the number to its events without searching; an
/// end at an edge of a digital track (or a measure that is no pair) names none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub start: Ps,
    pub end: Ps,
    pub key: String,
    pub start_event: Option<EventAt>,
    pub end_event: Option<EventAt>,
}

impl Sample {
    /// A sample whose ends are no recorded events.
    pub fn new(start: Ps, end: Ps, key: impl Into<String>) -> Self {
        Self { start, end, key: key.into(), start_event: None, end_event: None }
    }

    pub fn latency(&self) -> Ps {
        self.end - self.start
    }
}

/// A detector's window (stall, threshold, long span): where, and by how much it exceeded
/// what was expected (the median period for stalls, the threshold for long spans).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: Ps,
    pub end: Ps,
    pub excess: Ps,
}

/// A named count of something pairing noticed and users must see rather than lose: e.g.
/// `double completion`, `irq without command`, `lost events inside`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub what: String,
    pub count: u64,
}

impl Note {
    /// Ends the `what` of a note whose count is a duration in picoseconds (the stall
    /// detector's median period): JSON keeps the exact count, people see a duration.
    pub const PS_SUFFIX: &'static str = " (ps)";

    /// What the note counts, without the unit suffix.
    pub fn label(&self) -> &str {
        note_label(&self.what)
    }

    /// The count for people: a duration in the report's units (`4.000 ms`) or the number.
    pub fn value_text(&self) -> String {
        note_value_text(&self.what, self.count)
    }
}

/// [`Note::label`] of a note's `what`.
pub fn note_label(what: &str) -> &str {
    what.strip_suffix(Note::PS_SUFFIX).unwrap_or(what)
}

/// [`Note::value_text`] of a note's `what` and `count`.
pub fn note_value_text(what: &str, count: u64) -> String {
    if what.ends_with(Note::PS_SUFFIX) {
        crate::units::human_ns(count as f64 / 1e3)
    } else {
        count.to_string()
    }
}

/// Everything one analysis found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The rule or preset name (`block`, `irq-handler`, `pulse:D1`, a `NAME=` of a rule).
    pub name: String,
    pub kind: AnalysisKind,
    /// Index of the input source the times belong to.
    pub source: usize,
    /// Matched samples (pairs, pulses, chain totals, stall windows as gaps), by start time.
    pub samples: Vec<Sample>,
    pub unmatched_start: u64,
    pub unmatched_end: u64,
    pub notes: Vec<Note>,
    /// Detector windows (`stall:` rules; empty for pairs).
    pub windows: Vec<Window>,
    /// A chain's stages in order (command→IRQ, handler, wakeup, switch-in), each a full
    /// outcome of its own; empty for anything but chains.
    pub stages: Vec<Outcome>,
    /// Pairs left out of `samples` because an end is a failed decode (a CRC error, a frame
    /// cut by a stopped clock): their latency measures the failure, not the device.
    /// [`Outcome::include_errors`] puts them back.
    pub excluded: Vec<Sample>,
    /// Keys as stored, where the key people read differs (`dev=254,0` was
    /// `dev=266338304`, `pid=1234 (dd)` was `pid=1234`): by the readable key.
    pub raw_keys: std::collections::BTreeMap<String, String>,
}

/// The note an outcome carries when it left pairs out for failed decodes.
pub const EXCLUDED_NOTE: &str =
    "pairs with a failed decode left out of the statistics (--include-errors keeps them)";

impl Outcome {
    pub fn new(name: impl Into<String>, kind: AnalysisKind, source: usize) -> Self {
        Self {
            name: name.into(),
            kind,
            source,
            samples: Vec::new(),
            unmatched_start: 0,
            unmatched_end: 0,
            notes: Vec::new(),
            windows: Vec::new(),
            stages: Vec::new(),
            excluded: Vec::new(),
            raw_keys: Default::default(),
        }
    }

    /// Key `key` as stored (what `--rule` and filters match).
    pub fn raw_key<'a>(&'a self, key: &'a str) -> &'a str {
        self.raw_keys.get(key).map_or(key, String::as_str)
    }

    /// Puts the pairs left out for failed decodes back among the samples.
    pub fn include_errors(&mut self) {
        if self.excluded.is_empty() {
            return;
        }
        self.samples.append(&mut self.excluded);
        self.samples.sort_by_key(|s| (s.start, s.end));
        self.notes.retain(|n| n.what != EXCLUDED_NOTE);
        for st in &mut self.stages {
            st.include_errors();
        }
    }

    /// Latencies of the samples, in sample order.
    pub fn latencies(&self) -> Vec<Ps> {
        self.samples.iter().map(Sample::latency).collect()
    }
}
