//! Joining event tables built in parallel into one.
//!
//! Parsers that split their input build one event table builder per part, each with its
//! own strings and layouts. This module owns how the parts become one builder
//! ([`latscope_model::EventTableBuilder`]):
//!
//! - `merge`: [`merge_builders`] joins owned builders (trace.dat's and Perfetto's per-CPU
//!   runs; parts that each come sorted by time are merged into time order as they are
//!   joined), and the shared step of both ways renumbers every part's symbols and layouts
//!   into the first part's, in parallel, one task per part.
//! - `windows`: [`SharedColumns`] allocates the event columns once for all parts and cuts
//!   them into one [`ColumnWindow`] per part, an [`EventSink`](latscope_model::EventSink)
//!   that a builder writes its rows into (ftrace text's chunks, bounded by their line
//!   counts); [`SharedColumns::merge`] then only closes the gaps between the windows.
//!
//! Strings are renumbered where they lie in the field arena: below 2^14 symbols a string
//! value takes two bytes in any numbering (see `latscope_model::field_encoding`), so only
//! a part whose renumbering would change a length is re-encoded.

mod merge;
mod windows;

pub(crate) use merge::merge_builders;
pub(crate) use windows::{ColumnWindow, SharedColumns, WindowedPart};

use latscope_model::BuildError;

/// Why parts could not be joined.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum MergeError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("the parts to merge are not the windows of these columns, in order")]
    ForeignPart,
}
