//! Helpers shared by the app's integration tests.

use std::path::{Path, PathBuf};

/// A test's scratch directory under the system temp dir, fresh when made and removed when
/// dropped (also when the test fails).
pub struct Scratch(PathBuf);

impl Scratch {
    /// `latscope-NAME-PID`, emptied and created.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("latscope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
