//! trace-cmd `trace.dat`, file versions 6 and 7 (shared/FORMATS.md §2).

use crate::{LoadControl, ParseFailure};
use latscope_analysis::model::Source;

pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let _ = (data, ctl);
    Err(ParseFailure::Unimplemented("trace.dat"))
}
