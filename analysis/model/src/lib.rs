//! The trace model (DESIGN §2): time in `i64` picoseconds relative to a source's origin,
//! sources made of tracks (events, digital, analog, spans), columnar and interned storage.
//!
//! Importers and the simulator build sources through [`EventTableBuilder`] and the track
//! constructors; analyses and the GUI only read.

mod analog;
mod diagnostics;
mod digital;
mod events;
mod fields;
mod flags;
mod intern;
pub mod kernel;
mod placement;
mod source;
mod spans;
mod threshold;
mod time;

pub use analog::AnalogTrack;
pub use diagnostics::{Diagnostic, Diagnostics, Gap, MAX_KEPT_DIAGNOSTICS};
pub use digital::DigitalTrack;
pub use events::{
    BuildError, ColumnWindow, EventRef, EventTable, EventTableBuilder, SharedColumns, TableBuilder,
    WindowedPart,
};
pub use fields::{FieldKind, FieldValue, Layout, LayoutId};
pub use flags::IrqFlags;
pub use intern::{Interner, Sym};
pub use placement::{Placed, Placement};
pub use source::{Source, SourceKind, Trace, TrackKind, TrackSummary};
pub use spans::SpanTrack;
pub use threshold::{DEFAULT_AUTO_HYSTERESIS, Threshold};
pub use time::{ClockOrigin, PS_PER_NS, PS_PER_S, PS_PER_US, Ps, format_seconds};
