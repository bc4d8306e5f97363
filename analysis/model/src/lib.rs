//! The trace model: time in `i64` picoseconds relative to a source's origin,
//! sources made of tracks (events, digital, analog, spans), columnar and interned storage.
//!
//! Importers and the simulator build sources through [`EventTableBuilder`] and the track
//! constructors; analyses and the GUI only read. Importers that build a table in pieces
//! (in parallel, into memory of their own) use the builder's [`EventSink`], the raw
//! [`EventTableParts`] and the arena encoding in [`field_encoding`]; how pieces are joined
//! is theirs.

#![forbid(unsafe_code)]

mod analog;
mod builder;
mod diagnostics;
mod digital;
pub mod display;
mod events;
pub mod field_encoding;
mod fields;
mod filter;
mod flags;
mod intern;
pub mod kernel;
mod labels;
mod names;
mod placement;
mod render;
mod source;
mod spans;
mod threshold;
mod time;
mod tracks;

pub use analog::AnalogTrack;
pub use builder::{BuilderParts, EventRow, EventSink, EventTableBuilder, InTable};
pub use diagnostics::{Diagnostic, Diagnostics, Finding, Gap, MAX_KEPT_DIAGNOSTICS, Severity};
pub use digital::{DigitalTrack, SampleClock, TimesIter};
pub use display::value_text;
pub use events::{BuildError, EventRef, EventTable, EventTableParts};
pub use fields::{FieldKind, FieldValue, Layout, LayoutId};
pub use filter::{Filter, FilterError};
pub use flags::IrqFlags;
pub use intern::{Interner, Sym};
pub use labels::source_labels;
pub use names::{NameError, is_name_suffix, name_answers, resolve_name};
pub use placement::{Placed, Placement};
pub use render::{
    EventRenderer, fields_payload, kernel_payload, render_event, tp_printk_payload, write_payload,
    write_task_state,
};
pub use source::{Source, SourceKind, Trace, TrackKind, TrackSummary};
pub use spans::SpanTrack;
pub use threshold::{DEFAULT_AUTO_HYSTERESIS, Threshold};
pub use time::{ClockDomain, ClockOrigin, KernelClock, PS_PER_NS, PS_PER_S, PS_PER_US, Ps, format_seconds};
pub use tracks::Tracks;
