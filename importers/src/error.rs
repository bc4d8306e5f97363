//! Import errors. Parsers return a [`ParseFailure`] with a position; [`crate::open`] adds
//! the file's path so every message a user sees names the file and where in it.

use std::fmt;
use std::path::PathBuf;

/// Where in a file: a 1-based line for text formats, a byte offset for binary ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    Line(u64),
    Byte(u64),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Line(l) => write!(f, "line {l}"),
            Position::Byte(b) => write!(f, "byte offset {b}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ParseFailure {
    #[error("{at}: {message}")]
    Invalid { at: Position, message: String },
    #[error("{what} at {at} exceeds the limit of {limit}")]
    Limit { at: Position, what: String, limit: String },
    #[error("loading was cancelled")]
    Cancelled,
    #[error("the {0} importer is not built yet")]
    Unimplemented(&'static str),
}

impl ParseFailure {
    pub fn invalid(at: Position, message: impl Into<String>) -> Self {
        ParseFailure::Invalid { at, message: message.into() }
    }

    pub fn at_path(self, path: &std::path::Path) -> ImportError {
        ImportError::Parse { path: path.to_owned(), failure: self }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{}: cannot read: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: not a supported format; latscope reads {}", path.display(), crate::SUPPORTED_FORMATS)]
    Unsupported { path: PathBuf },
    #[error("{}: {failure}", path.display())]
    Parse { path: PathBuf, failure: ParseFailure },
}
