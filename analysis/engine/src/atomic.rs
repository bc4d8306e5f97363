//! Writing output files without ever damaging one: the bytes go to a
//! temporary file in the target's directory, are flushed to disk, then renamed over the
//! target, so a reader sees the old file or the new one, never half of it. A target that is
//! one of the inputs (same canonical path, or the same inode through a hard link) is refused.
//! A device or a pipe (`/dev/null`, `/dev/stdout`, a FIFO) is written in place, and a symbolic
//! link keeps pointing where it did: the file it names is the one replaced.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{}: refusing to overwrite an input file", path.display())]
    WouldOverwriteInput { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// Where `path` points once symlinks and `..` are resolved, also when it does not exist yet
/// (its directory is resolved then).
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    dir.canonicalize().ok().map(|d| d.join(name))
}

#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &Path, _: &Path) -> bool {
    false
}

/// Fails when writing `path` would replace one of `inputs`.
pub fn check_not_input(path: &Path, inputs: &[PathBuf]) -> Result<(), WriteError> {
    let target = resolved(path);
    for input in inputs {
        let hit = match (&target, input.canonicalize()) {
            (Some(t), Ok(i)) => *t == i,
            _ => false,
        } || same_file(path, input);
        if hit {
            return Err(WriteError::WouldOverwriteInput { path: path.to_path_buf() });
        }
    }
    Ok(())
}

fn write_then_rename(
    tmp: &Path,
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let f = std::fs::OpenOptions::new().write(true).create_new(true).open(tmp)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
    write(&mut out)?;
    let f = out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(tmp, path)
}

fn write_in_place(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let f = std::fs::OpenOptions::new().write(true).open(path)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, f);
    write(&mut out)?;
    out.flush()
}

/// Writes `bytes` to `path` atomically, refusing to replace any of `inputs`.
pub fn write_atomic(path: &Path, bytes: &[u8], inputs: &[PathBuf]) -> Result<(), WriteError> {
    write_atomic_with(path, inputs, |w| w.write_all(bytes))
}

/// Writes what `write` produces to `path` atomically, refusing to replace any of `inputs`.
/// The output streams into the temporary file, so a large one (a Perfetto trace of
/// millions of events) is never held in memory whole; when `write` fails the temporary
/// file is removed and the target stays as it was.
pub fn write_atomic_with(
    path: &Path,
    inputs: &[PathBuf],
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    check_not_input(path, inputs)?;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let io = |source| WriteError::Io { path: path.to_path_buf(), source };
    match std::fs::metadata(path) {
        // A device or a pipe (`-o /dev/null`, `/dev/stdout`, a FIFO) is written in place:
        // renaming over it would replace the device with a file.
        Ok(m) if !m.is_file() && !m.is_dir() => return write_in_place(path, write).map_err(io),
        _ => {}
    }
    // A symbolic link stays: the file it names is replaced, in that file's directory.
    let linked = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let resolved_target = if linked { path.canonicalize().ok() } else { None };
    let path = resolved_target.as_deref().unwrap_or(path);
    let name = path
        .file_name()
        .ok_or_else(|| io(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name")))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.latscope-tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    if let Err(e) = write_then_rename(&tmp, path, write) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("latscope-atomic-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn replaces_atomically_and_leaves_no_temporary() {
        let d = tempdir("replace");
        let out = d.join("r.json");
        std::fs::write(&out, b"old").unwrap();
        write_atomic(&out, b"new", &[]).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failing_writer_leaves_the_target_and_no_temporary() {
        let d = tempdir("failing");
        let out = d.join("t.json");
        std::fs::write(&out, b"old").unwrap();
        let r = write_atomic_with(&out, &[], |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("the writer gave up"))
        });
        assert!(matches!(r, Err(WriteError::Io { .. })), "{r:?}");
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        let names: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn refuses_inputs_by_path_symlink_and_hard_link() {
        let d = tempdir("refuse");
        let input = d.join("trace.txt");
        std::fs::write(&input, b"keep").unwrap();
        let inputs = vec![input.clone()];
        let dotted = d.join("sub/../trace.txt");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        assert!(matches!(write_atomic(&dotted, b"x", &inputs), Err(WriteError::WouldOverwriteInput { .. })));
        #[cfg(unix)]
        {
            let link = d.join("link.txt");
            std::os::unix::fs::symlink(&input, &link).unwrap();
            assert!(write_atomic(&link, b"x", &inputs).is_err());
            let hard = d.join("hard.txt");
            std::fs::hard_link(&input, &hard).unwrap();
            assert!(write_atomic(&hard, b"x", &inputs).is_err());
        }
        assert_eq!(std::fs::read(&input).unwrap(), b"keep");
        write_atomic(&d.join("other.txt"), b"x", &inputs).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_written_in_place_and_a_symlink_keeps_its_target() {
        use std::os::unix::fs::FileTypeExt;
        let d = tempdir("special");
        // A FIFO stands for /dev/null and /dev/stdout: renaming over it would replace it.
        let fifo = d.join("out.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        write_atomic(&fifo, b"through the pipe", &[]).unwrap();
        // Checked first: a replaced FIFO would leave the reader waiting for a writer.
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        // A link to a report: the report is replaced, the link still points at it.
        let real = d.join("report.json");
        std::fs::write(&real, b"old").unwrap();
        let link = d.join("latest.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new", &[]).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
