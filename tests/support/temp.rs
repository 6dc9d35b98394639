//! Scratch directories for files a test hands the binary.

use std::path::{Path, PathBuf};

/// A directory under the system temp dir that this test owns; removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// `tlsping-tmp-<pid>-<tag>`, emptied first: `tag` tells apart the
    /// directories of one test binary, the pid those of binaries run at once.
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("tlsping-tmp-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A temp path as an argument of the binary.
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}
