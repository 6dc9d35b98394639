//! Scratch directories for files a test hands the binary.

use std::path::{Path, PathBuf};

/// A directory under the system temp dir that this test owns; removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// `tlsping-tmp-<tag>-<random>`, made new (never one that was there
    /// already, which someone else could have prepared), then opened to
    /// reading by others (mode 0755) for a binary run as another user.
    pub fn new(tag: &str) -> TempDir {
        TempDir(private_dir(&format!("tlsping-tmp-{tag}-")))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// A directory made new under the system temp dir with `prefix` and a
/// random part, mode 0755; it stays until removed.
pub fn private_dir(prefix: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("a new temp dir")
        .keep();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
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
