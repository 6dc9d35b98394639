//! The files a user names, read and written by one set of rules. A leaf
//! module: reading here, writing in `destination.rs`, the file for TLS
//! secrets in `keylog.rs`.
//!
//! Reading (a CA bundle, a client certificate or key, a `--write-out`
//! format): never more than a limit, so `/dev/zero`, an endless pipe or a
//! huge file ends in a clear error instead of all the memory there is (the
//! size a file system reports is no guide: `/dev/zero` and a FIFO say 0, so
//! the read itself stops one byte past the limit). Only a regular file is
//! read, unless the caller says a pipe will do (`<(command)`; a FIFO made
//! with mkfifo never is); the file is opened without blocking, so a FIFO
//! nobody writes to cannot hold the run in `open()`, and it is checked and
//! read through the one descriptor.
//!
//! Writing (`--openmetrics FILE`, `--svg FILE`): the directory is opened
//! when the run starts and held; then, through it, into a new file of an
//! unguessable name beside the destination, created exclusively (never
//! through a link or into a file someone else made), then renamed over the
//! destination, so a reader never sees half of it. Only a regular file that
//! belongs to us is replaced; its owner, group and mode are kept, and a new
//! file gets the usual `0666` less the umask.

use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The most a CA bundle may hold (`--cacert`, `SSL_CERT_FILE`), and all the
/// certificates of `SSL_CERT_DIR` together: a bundle of every public root is
/// about 0.2 MiB.
pub const CA_LIMIT: u64 = 4 << 20;

/// The most a client certificate chain or its key may hold (`--cert`,
/// `--key`): a chain of a few certificates is a few KiB.
pub const CLIENT_PEM_LIMIT: u64 = 256 << 10;

/// Why a file could not be read whole.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    /// It holds more than the limit (at least one byte more was there).
    TooLarge,
    /// It is not a regular file (a FIFO, a device, a directory, a socket),
    /// and the caller did not take a pipe either.
    NotRegular(&'static str),
    /// It is a FIFO with a name, where the caller takes a regular file or
    /// a pipe.
    NamedFifo,
}

/// What a file read may be besides a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file only (CA bundles and directories).
    Regular,
    /// A regular file or a pipe: `--key <(pass show key)`, `@FILE` formats.
    RegularOrPipe,
}

/// The kind of a file, as messages say it.
fn kind_text(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// `4 MiB`, `256 KiB`: a limit as the messages and the help say it.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The whole of `path`, if it is a regular file holding at most `limit`
/// bytes.
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_capped_as(path, limit, Kind::Regular)
}

/// The whole of `path`, if it is of `kind` and holds at most `limit` bytes.
/// The open never waits: `O_NONBLOCK` makes a FIFO without a writer open at
/// once (and then read as empty), and only a pipe the caller takes is read
/// with blocking reads, on a descriptor already open.
pub fn read_capped_as(path: &Path, limit: u64, kind: Kind) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(ReadError::Io)?;
    let file_type = file.metadata().map_err(ReadError::Io)?.file_type();
    if !file_type.is_file() {
        use std::os::unix::fs::FileTypeExt;
        if kind == Kind::Regular || !file_type.is_fifo() {
            return Err(ReadError::NotRegular(kind_text(file_type)));
        }
        // A FIFO with a name in a file system is not read, even where a
        // pipe is: one with no writer would read as empty, at once.
        if !is_pipe(&file).map_err(ReadError::Io)? {
            return Err(ReadError::NamedFifo);
        }
        blocking(&file).map_err(ReadError::Io)?;
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// Whether an open FIFO is a pipe (`<(command)`, a `|`), made by pipe(2)
/// and living in the kernel's pipe file system, rather than a FIFO made by
/// mkfifo(3) in a directory.
fn is_pipe(file: &std::fs::File) -> io::Result<bool> {
    // PIPEFS_MAGIC, from <linux/magic.h>.
    Ok(rustix::fs::fstatfs(file).map_err(os_error)?.f_type == 0x5049_5045)
}

/// Clears `O_NONBLOCK` on a pipe we are about to read whole.
fn blocking(file: &std::fs::File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is the open descriptor `file` owns for the whole call;
    // F_GETFL and F_SETFL read and set its status flags, nothing else.
    let set = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if set {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// [`read_capped`] with its error as one line: `named` says which file
/// (`--cert /tmp/c.pem`, `SSL_CERT_FILE=/dev/zero`), `holds` what it is for.
pub fn read_named(named: &str, path: &Path, limit: u64, holds: &str) -> Result<Vec<u8>, String> {
    read_named_as(named, path, limit, holds, Kind::Regular)
}

/// [`read_named`] for a file that may also be of `kind`.
pub fn read_named_as(
    named: &str,
    path: &Path,
    limit: u64,
    holds: &str,
    kind: Kind,
) -> Result<Vec<u8>, String> {
    read_capped_as(path, limit, kind).map_err(|e| read_error_text(named, limit, holds, e))
}

/// One line for a file that could not be read.
pub fn read_error_text(named: &str, limit: u64, holds: &str, e: ReadError) -> String {
    match e {
        ReadError::Io(e) => format!("{named}: {e}"),
        ReadError::TooLarge => format!(
            "{named} holds more than {}, the limit for {holds}",
            size_text(limit)
        ),
        ReadError::NotRegular(what) => format!("{named}: it is {what}, not a regular file"),
        ReadError::NamedFifo => format!(
            "{named}: it is a named FIFO; only a regular file or a pipe (as `<(command)` \
             gives) is read"
        ),
    }
}

/// The effective user id: whose files we may replace.
fn our_uid() -> u32 {
    // SAFETY: geteuid(2) takes nothing, always succeeds and touches no memory.
    unsafe { libc::geteuid() }
}

/// An `rustix` error as the standard library says it (`Permission denied
/// (os error 13)`).
fn os_error(e: rustix::io::Errno) -> io::Error {
    io::Error::from(e)
}

mod destination;
mod keylog;

pub use destination::{replace_file, Destination};
pub use keylog::{check_keylog, keylog_refused, note_keylog_at_start, KEYLOG_VAR};

#[cfg(test)]
pub(crate) mod tests;
