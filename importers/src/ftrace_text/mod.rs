//! ftrace text: tracefs `trace`/`trace_pipe`, `trace-cmd report`, function, function_graph
//! and latency formats (shared/FORMATS.md §1).

use crate::{LoadControl, ParseFailure};
use latscope_analysis::model::Source;

pub fn parse(data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    let _ = (data, ctl);
    Err(ParseFailure::Unimplemented("ftrace text"))
}
