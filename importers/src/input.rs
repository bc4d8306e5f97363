//! Read-only access to an input file: memory-mapped when it is a regular file, read into
//! memory otherwise (pipes, /proc). Inputs are never opened for writing.

use crate::error::ImportError;
use std::fs::File;
use std::io::Read;
use std::path::Path;

#[derive(Debug)]
pub enum Input {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Input {
    pub fn open(path: &Path) -> Result<Input, ImportError> {
        let io = |source| ImportError::Io { path: path.to_owned(), source };
        let mut file = File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if meta.is_file() && meta.len() > 0 {
            // SAFETY: the map is read-only. If another process truncates the file while we
            // read it, the kernel raises SIGBUS; viewers of captured files accept that risk
            // (as wellen does) in exchange for zero-copy parsing of multi-GB traces.
            #[allow(unsafe_code)]
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
            #[cfg(unix)]
            let _ = map.advise(memmap2::Advice::Sequential);
            return Ok(Input::Mapped(map));
        }
        let mut data = Vec::new();
        file.read_to_end(&mut data).map_err(io)?;
        Ok(Input::Owned(data))
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Owned(v) => v,
        }
    }
}
