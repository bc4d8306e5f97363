//! Atomic outputs: a file is written beside its target and renamed over it once complete
//! and synced; a folder is filled under a temporary name and renamed. A full disk or a
//! crash leaves the target as it was (or absent), never half-written.

use crate::RecordError;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

fn temp_beside(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Writes `target` from `write`, atomically.
pub fn file(
    target: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), RecordError> {
    let tmp = temp_beside(target);
    let result = (|| {
        let f = fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::new(f);
        write(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        fs::rename(&tmp, target)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        RecordError::io(target, e)
    })
}

/// Makes the folder `target` (which must not exist) from `fill`, which writes into the
/// temporary folder it is given.
pub fn folder(target: &Path, fill: impl FnOnce(&Path) -> Result<(), RecordError>) -> Result<(), RecordError> {
    if target.exists() {
        return Err(RecordError::Usage(format!("{} exists: choose a new name", target.display())));
    }
    let tmp = temp_beside(target);
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(|e| RecordError::io(&tmp, e))?;
    let result = fill(&tmp).and_then(|()| fs::rename(&tmp, target).map_err(|e| RecordError::io(target, e)));
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result
}
