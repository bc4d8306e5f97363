//! latscope's importers: detect a capture's format from its content and turn it into a
//! [`Source`] of the trace model. Every importer reports progress, honours cancel, bounds
//! its memory on hostile input and never panics; malformed records are counted in the
//! source's diagnostics and the rest loads.

mod assemble;
mod budget;
mod control;
pub mod csv;
mod detect;
mod error;
pub mod ftrace_text;
mod input;
mod marker;
pub mod perfetto;
pub mod sigrok;
pub mod tracedat;
pub mod vcd;
pub mod wave;

pub use control::{LoadControl, PREVIEW_EVERY, PreviewSink};
pub use detect::{Format, SUPPORTED_FORMATS, detect};
pub use error::{ImportError, ParseFailure, Position};
pub use input::Input;

use latscope_model::Source;
use std::path::Path;

/// Opens `path` read-only, detects its format and imports it.
pub fn open(path: &Path, ctl: &LoadControl) -> Result<Source, ImportError> {
    let input = Input::open(path)?;
    let data = input.bytes();
    ctl.set_total(data.len() as u64);
    let format = detect(data).ok_or_else(|| ImportError::Unsupported { path: path.to_owned() })?;
    let release = |range| input.release(range);
    let mut source = import_with(format, data, ctl, &release).map_err(|f| f.at_path(path))?;
    source.path = Some(path.to_owned());
    if let Some(name) = path.file_name() {
        source.name = name.to_string_lossy().into_owned();
    }
    Ok(source)
}

/// Imports bytes already known to be in `format`.
pub fn import_bytes(format: Format, data: &[u8], ctl: &LoadControl) -> Result<Source, ParseFailure> {
    import_with(format, data, ctl, &|_| {})
}

/// [`import_bytes`], telling `release` which byte ranges the importer is done with (see
/// [`Input::release`]).
fn import_with(
    format: Format,
    data: &[u8],
    ctl: &LoadControl,
    release: &(dyn Fn(std::ops::Range<usize>) + Sync),
) -> Result<Source, ParseFailure> {
    let mut source = match format {
        Format::FtraceText => ftrace_text::parse_releasing(data, ctl, release)?,
        Format::TraceDat => tracedat::parse(data, ctl)?,
        Format::Perfetto => perfetto::parse_releasing(data, ctl, release)?,
        Format::SigrokSr => sigrok::parse(data, ctl)?,
        Format::Vcd => vcd::parse(data, ctl)?,
        Format::Fst | Format::Ghw => wave::parse(data, ctl)?,
        Format::SaleaeCsv | Format::SigrokCsv | Format::ScopeCsv => match csv::sniff(data) {
            Some(kind) if kind.format() == format => csv::parse(kind, data, ctl)?,
            _ => {
                return Err(ParseFailure::invalid(
                    Position::Line(1),
                    format!("not a {} file: its header is not one latscope recognises", format.name()),
                ));
            }
        },
    };
    if let Some(warning) = cut_short(format, data) {
        source.diagnostics.warn(warning);
    }
    ctl.finish();
    Ok(source)
}

/// Text captures end with a line break; one that does not was probably cut off while being
/// written or copied, and its last line may be incomplete (yet still parse, e.g. an ftrace
/// event whose payload lost its tail). Says where, so the user can judge.
fn cut_short(format: Format, data: &[u8]) -> Option<String> {
    let text = matches!(
        format,
        Format::FtraceText | Format::Vcd | Format::SaleaeCsv | Format::SigrokCsv | Format::ScopeCsv
    );
    if !text || data.is_empty() || data.ends_with(b"\n") {
        return None;
    }
    let line = memchr::memchr_iter(b'\n', data).count() + 1;
    let start = memchr::memrchr(b'\n', data).map_or(0, |i| i + 1);
    Some(format!(
        "line {line}: the file ends without a line break at byte {} (the last line starts at byte {start}); \
         it may be truncated and its last line incomplete",
        data.len()
    ))
}
