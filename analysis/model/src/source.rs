//! Sources (one per opened file or simulator run) and the trace that holds them.

use super::analog::AnalogTrack;
use super::diagnostics::Diagnostics;
use super::digital::DigitalTrack;
use super::events::EventTable;
use super::intern::Interner;
use super::render::EventRenderer;
use super::spans::SpanTrack;
use super::time::{ClockOrigin, Ps};
use super::tracks::Tracks;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SourceKind {
    File,
    Simulator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrackKind {
    Events,
    Digital,
    Analog,
    Spans,
}

/// One line of `info`: a track's name, kind and count.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrackSummary {
    pub name: String,
    pub kind: TrackKind,
    pub count: u64,
}

/// One opened file or simulator run: its data only. Where it sits on the common timeline
/// (its alignment) is a [`crate::Placement`] kept beside it, so aligning never copies it.
#[derive(Debug, Clone)]
pub struct Source {
    /// Display name: the file name, or the scenario for a simulator run.
    pub name: String,
    pub path: Option<PathBuf>,
    /// Detected format, e.g. `ftrace-text`, `trace.dat`.
    pub format: String,
    pub kind: SourceKind,
    /// The source clock's value at relative time zero.
    pub origin: ClockOrigin,
    /// Strings of the events and span labels of this source.
    pub strings: Interner,
    pub events: EventTable,
    /// Shared between copies of the source ([`Tracks`]): edges and samples are never copied
    /// to add decoded annotations beside them.
    pub digital: Tracks<DigitalTrack>,
    pub analog: Tracks<AnalogTrack>,
    pub spans: Vec<SpanTrack>,
    /// Number of trace records as the format counts them; see [`Source::records`].
    pub records: Option<u64>,
    /// Facts from the file's header (tracer, clock, cpus, …) in file order.
    pub metadata: Vec<(String, String)>,
    pub diagnostics: Diagnostics,
    /// How this source's events read as text, set by importers whose files say it (trace.dat:
    /// the event formats' `print fmt`); `None` renders every event by
    /// [`crate::kernel_payload`]. Render through [`crate::render_event`].
    pub renderer: Option<Arc<dyn EventRenderer>>,
}

impl Source {
    /// This source's events repeated until there are `events` of them, each copy shifted
    /// past the previous one by the events' span plus 1 ms so copies never interleave: a
    /// real trace at benchmark size (the analysis and timeline benches use it).
    pub fn replicated(&self, events: usize) -> Result<Source, super::events::BuildError> {
        use super::builder::EventTableBuilder;
        use super::fields::FieldValue;
        let table = &self.events;
        let (Some(&first), Some(&last)) = (table.ts.first(), table.ts.last()) else {
            return Ok(Source::new("empty", self.format.clone(), self.kind));
        };
        let period = last - first + 1_000_000_000;
        let mut b = EventTableBuilder::new();
        b.interner = self.strings.clone();
        // Layouts are unique in a table, so re-adding them in order gives the same ids.
        for l in table.layouts() {
            b.layout(l.event, &l.fields);
        }
        b.reserve(events, table.field_bytes() * events.div_ceil(table.len()));
        let mut values: Vec<FieldValue> = Vec::new();
        let mut copy = 0;
        'fill: loop {
            let shift = copy * period;
            for ev in table.iter() {
                if b.len() == events {
                    break 'fill;
                }
                values.clear();
                values.extend(ev.fields().map(|(_, v)| v));
                b.push(
                    ev.ts() + shift,
                    ev.cpu(),
                    ev.pid(),
                    ev.comm(),
                    ev.flags(),
                    table.layout[ev.index],
                    &values,
                );
            }
            copy += 1;
        }
        let mut big = Source::new(format!("{} x{}", self.name, copy + 1), self.format.clone(), self.kind);
        big.origin = self.origin;
        big.renderer = self.renderer.clone();
        (big.events, big.strings) = b.finish()?;
        Ok(big)
    }

    pub fn new(name: impl Into<String>, format: impl Into<String>, kind: SourceKind) -> Self {
        Self {
            name: name.into(),
            path: None,
            format: format.into(),
            kind,
            origin: ClockOrigin::default(),
            strings: Interner::new(),
            events: EventTable::default(),
            digital: Tracks::new(),
            analog: Tracks::new(),
            spans: Vec::new(),
            records: None,
            metadata: Vec::new(),
            diagnostics: Diagnostics::default(),
            renderer: None,
        }
    }

    /// Tracks as `info` lists them: one per ftrace event name, then digital, analog and
    /// span tracks.
    pub fn tracks(&self) -> Vec<TrackSummary> {
        let mut out: Vec<TrackSummary> = self
            .events
            .counts_by_name()
            .into_iter()
            .map(|(name, count)| TrackSummary {
                name: self.strings.resolve(name).into_owned(),
                kind: TrackKind::Events,
                count,
            })
            .collect();
        out.extend(self.digital.iter().map(|d| TrackSummary {
            name: d.name.clone(),
            kind: TrackKind::Digital,
            count: d.transitions() as u64,
        }));
        out.extend(self.analog.iter().map(|a| TrackSummary {
            name: a.name.clone(),
            kind: TrackKind::Analog,
            count: a.samples.len() as u64,
        }));
        out.extend(self.spans.iter().map(|s| TrackSummary {
            name: s.name.clone(),
            kind: TrackKind::Spans,
            count: s.len() as u64,
        }));
        out
    }

    /// Trace records: what the importer counted, else events, else the sum of track counts.
    pub fn records(&self) -> u64 {
        if let Some(n) = self.records {
            return n;
        }
        if !self.events.is_empty() {
            return self.events.len() as u64;
        }
        self.tracks().iter().map(|t| t.count).sum()
    }

    /// First and last time held by any track (relative ps).
    pub fn time_range(&self) -> Option<(Ps, Ps)> {
        let mut lo = Ps::MAX;
        let mut hi = Ps::MIN;
        let mut any = false;
        let mut take = |a: Ps, b: Ps| {
            lo = lo.min(a);
            hi = hi.max(b);
            any = true;
        };
        if let (Some(&a), Some(&b)) = (self.events.ts.first(), self.events.ts.last()) {
            take(a, b);
        }
        for d in &self.digital {
            take(0, d.end.max(d.last_time().unwrap_or(0)));
        }
        for a in &self.analog {
            if !a.samples.is_empty() {
                take(a.t0, a.end());
            }
        }
        for s in &self.spans {
            if let (Some(&a), Some(b)) = (s.start.first(), s.max_end()) {
                take(a, b);
            }
        }
        any.then_some((lo, hi))
    }

    /// `time_range` in the source's own clock, seconds.
    pub fn time_range_seconds(&self) -> Option<(f64, f64)> {
        self.time_range().map(|(a, b)| (self.origin.to_source_seconds(a), self.origin.to_source_seconds(b)))
    }
}

/// Everything open at once: each source on one common timeline.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub sources: Vec<Source>,
}
