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

    /// Says the importer has read `range` for good. A mapped file's page-table entries for
    /// the whole pages inside it are dropped now, by the thread that read them, instead of
    /// one by one when the map is closed: for a large text trace that is several serial
    /// milliseconds at the end of a parse moved into its parallel part. The pages stay in
    /// the page cache, so a later read of the range just maps them again.
    pub fn release(&self, range: std::ops::Range<usize>) {
        let Input::Mapped(map) = self else { return };
        // 64 KiB is a multiple of the 4-64 KiB pages of x86-64 and arm64, and the map starts on
        // a page; where pages are larger the call fails, which only skips the early release.
        const ALIGN: usize = 64 * 1024;
        let start = range.start.div_ceil(ALIGN) * ALIGN;
        let end = range.end.min(map.len()) / ALIGN * ALIGN;
        if end <= start {
            return;
        }
        // SAFETY: the map is a private read-only file mapping; MADV_DONTNEED drops its page
        // table entries and the next access faults the same file pages back in. Nothing is
        // discarded that a later read could miss (the caveat of a file changed under the map
        // is the one `open` already accepts).
        #[cfg(target_os = "linux")]
        #[allow(unsafe_code)]
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Owned(v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_ranges_of_a_mapped_file_read_back_the_same() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/ftrace/blk_read.txt");
        let input = Input::open(&path).expect("sample opens");
        assert!(matches!(input, Input::Mapped(_)), "a regular file is mapped");
        let copy = input.bytes().to_vec();
        assert!(copy.len() > 4 * 64 * 1024, "the sample spans several 64 KiB blocks");
        // Inner blocks, a range that holds no whole block, one past the end, and everything.
        for range in [70_000..200_000, 10..60_000, 100_000..usize::MAX, 0..copy.len()] {
            input.release(range);
            assert!(input.bytes() == copy.as_slice());
        }
        // Owned inputs ignore it (their memory is not a file's).
        let owned = Input::Owned(copy.clone());
        owned.release(0..copy.len());
        assert!(owned.bytes() == copy.as_slice());
    }
}
