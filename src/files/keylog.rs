//! The file `SSLKEYLOGFILE` names, checked as a file we write before
//! libcurl opens it.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::{kind_text, our_uid};

/// The variable naming the file libcurl appends the TLS secrets of every
/// handshake to (for Wireshark or tshark to decrypt a capture).
pub const KEYLOG_VAR: &str = "SSLKEYLOGFILE";

/// Why the file `SSLKEYLOGFILE` names was refused, once checked.
static KEYLOG_REFUSED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Checks the file `SSLKEYLOGFILE` names as a file we write, before libcurl
/// opens it (its global initialisation, in the curl crate's start-up hook,
/// opens it with `fopen(.., "a")`: through a link, and a new file readable by
/// all under the usual umask). Called from the binary's own start-up hook,
/// which runs first, while the process has one thread. A file that is not
/// fit is refused, and the variable removed so that libcurl opens nothing;
/// `keylog_refused` then says why.
pub fn note_keylog_at_start() {
    let Some(path) = std::env::var_os(KEYLOG_VAR).filter(|v| !v.is_empty()) else {
        return;
    };
    if let Err(why) = check_keylog(Path::new(&path)) {
        // Sound here: no other thread exists yet to read the environment.
        std::env::remove_var(KEYLOG_VAR);
        let _ = KEYLOG_REFUSED.set(why);
    }
}

/// Why the `SSLKEYLOGFILE` file was refused at start-up, if it was.
pub fn keylog_refused() -> Option<String> {
    KEYLOG_REFUSED.get().cloned()
}

/// The file for TLS secrets at `path`, opened (created `0600` when new)
/// without following a link or waiting on a FIFO: `Err` unless it is a
/// regular file of ours that other users cannot open, which libcurl may
/// then append to.
pub fn check_keylog(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let named = format!("{KEYLOG_VAR}={}", path.display());
    let refuse = |what: &str| {
        format!(
            "{named}: it is {what}; TLS secrets are written only to a regular file of yours \
             (name one, or unset {KEYLOG_VAR})"
        )
    };
    let opened = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        // A link (ELOOP), a FIFO nobody reads (ENXIO): named by what is there.
        Err(e) => {
            return Err(match std::fs::symlink_metadata(path) {
                Ok(m) if !m.is_file() => refuse(kind_text(m.file_type())),
                _ => format!("{named}: {e}"),
            })
        }
    };
    let meta = file.metadata().map_err(|e| format!("{named}: {e}"))?;
    if !meta.is_file() {
        return Err(refuse(kind_text(meta.file_type())));
    }
    if meta.uid() != our_uid() {
        return Err(refuse("another user's file"));
    }
    // A file of ours every user may read (or write): libcurl would append
    // the secrets where anyone can take them. Its group's access is the
    // owner's choice and stays.
    let mode = meta.mode() & 0o777;
    if mode & 0o007 != 0 {
        return Err(format!(
            "{named}: every user may read or write it (mode {mode:04o}); TLS secrets are \
             written only to a file others cannot open (chmod o-rwx it, or unset {KEYLOG_VAR})"
        ));
    }
    Ok(())
}
