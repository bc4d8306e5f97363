//! Where a command's output goes: standard output, or a file written atomically that is never
//! one of the inputs ([`crate::atomic`]).

use crate::atomic;
use crate::error::{EngineError, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

impl Output {
    /// A file when `path` is given, else standard output.
    pub fn of(path: Option<&Path>) -> Self {
        path.map_or(Output::Stdout, |p| Output::File(p.to_owned()))
    }

    /// Fails when the output is one of `inputs`: checked before the work that fills it.
    pub fn check(&self, inputs: &[PathBuf]) -> Result<()> {
        match self {
            Output::Stdout => Ok(()),
            Output::File(path) => Ok(atomic::check_not_input(path, inputs)?),
        }
    }

    /// Writes what `fill` produces; `what` names it in an error.
    pub fn write(
        &self,
        what: &str,
        inputs: &[PathBuf],
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        match self {
            Output::File(path) => Ok(atomic::write_atomic_with(path, inputs, fill)?),
            Output::Stdout => {
                let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
                fill(&mut out).and_then(|()| out.flush()).map_err(|source| EngineError::Output {
                    what: format!("writing {what} to stdout"),
                    source,
                })
            }
        }
    }
}
