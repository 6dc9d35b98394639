//! The files a user names, read and written by one set of rules. A leaf
//! module.
//!
//! Reading (a CA bundle, a client certificate or key, a `--write-out`
//! format): never more than a limit, so `/dev/zero`, an endless pipe or a
//! huge file ends in a clear error instead of all the memory there is (the
//! size a file system reports is no guide: `/dev/zero` and a FIFO say 0, so
//! the read itself stops one byte past the limit). Only a regular file is
//! read, unless the caller says a pipe will do; the file is opened without
//! blocking, so a FIFO nobody writes to cannot hold the run in `open()`.
//!
//! Writing (`--openmetrics FILE`, `--svg FILE`): into a new file of an
//! unguessable name beside the destination, created exclusively (never
//! through a link or into a file someone else made), then renamed over the
//! destination, so a reader never sees half of it. Only a regular file that
//! belongs to us is replaced; its mode is kept, and a new file gets the
//! usual `0666` less the umask.

use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

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
        if !(kind == Kind::RegularOrPipe && file_type.is_fifo()) {
            return Err(ReadError::NotRegular(kind_text(file_type)));
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
    }
}

/// The longest file name most file systems take (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// What the temporary name adds to the destination's: `.` before it, and
/// `.`, six random characters and `.tmp` after it.
const TEMP_EXTRA: usize = 1 + 1 + 6 + 4;

/// The effective user id: whose files we may replace.
fn our_uid() -> u32 {
    // SAFETY: geteuid(2) takes nothing, always succeeds and touches no memory.
    unsafe { libc::geteuid() }
}

/// Why `path` cannot be the destination of a file we write, if it cannot:
/// checked before the run (so a path that could only fail at the end fails
/// at the start) and again just before the rename.
pub fn unfit_destination(path: &Path) -> Option<String> {
    let text = path.as_os_str().as_encoded_bytes();
    if text.ends_with(b"/") || path.file_name().is_none() {
        return Some("names a directory, not a file".into());
    }
    let name_len = path.file_name().map_or(0, |n| n.len());
    if name_len + TEMP_EXTRA > NAME_MAX {
        return Some(format!(
            "the file name is longer than {} bytes, too long for the temporary file it is \
             written through",
            NAME_MAX - TEMP_EXTRA
        ));
    }
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Some(format!("{} is not an existing directory", dir.display()));
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Some(format!(
            "is {}, not a regular file; only a regular file is replaced",
            kind_text(m.file_type())
        )),
        Ok(m) if m.uid() != our_uid() => {
            Some("belongs to another user; only a file of ours is replaced".into())
        }
        Ok(_) => None,
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => Some(e.to_string()),
    }
}

/// Whether two destinations are one file: the same name in the same
/// directory, however each path spells it.
pub fn same_destination(a: &Path, b: &Path) -> bool {
    let dir = |p: &Path| std::fs::canonicalize(parent_dir(p)).ok();
    a.file_name() == b.file_name() && dir(a).is_some() && dir(a) == dir(b)
}

/// The directory a file is written in (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes what `fill` writes to `path`, through a new temporary file beside
/// it that is renamed over it once whole and on disk. The destination is
/// checked again (`unfit_destination`) just before the rename; on any error
/// the temporary file is removed and `path` is as it was.
pub fn replace_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let refuse = |why: String| io::Error::other(why);
    if let Some(why) = unfit_destination(path) {
        return Err(refuse(why));
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    // The mode of the file being replaced, kept; a new file's is 0666 less
    // the umask, as a plain create gives. Neither is ever wider.
    let kept = std::fs::symlink_metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777);
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .rand_bytes(6)
        .permissions(std::fs::Permissions::from_mode(kept.unwrap_or(0o666)))
        .tempfile_in(parent_dir(path))?;
    if let Some(mode) = kept {
        // The umask may have narrowed it; the file it replaces had this.
        temp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    {
        let mut out = io::BufWriter::new(temp.as_file_mut());
        fill(&mut out)?;
        out.flush()?;
    }
    temp.as_file().sync_all()?;
    if let Some(why) = unfit_destination(path) {
        return Err(refuse(why));
    }
    temp.persist(path).map(drop).map_err(|e| e.error)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A pipe with a writer that never stops (until the reader's end is
    /// dropped, or 64 MiB at most), named as `<(yes)` names one:
    /// `/proc/self/fd/N`. Keep the returned reader until the test is done.
    pub(crate) fn endless_pipe() -> (std::io::PipeReader, std::path::PathBuf) {
        use std::os::fd::AsRawFd;
        let (reader, mut writer) = std::io::pipe().unwrap();
        let path = PathBuf::from(format!("/proc/self/fd/{}", reader.as_raw_fd()));
        std::thread::spawn(move || {
            let chunk = [b'x'; 64 << 10];
            for _ in 0..1024 {
                if writer.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        (reader, path)
    }

    #[test]
    fn an_endless_pipe_stops_one_byte_past_the_limit() {
        let (_keep, pipe) = endless_pipe();
        let e = read_capped_as(&pipe, 1000, Kind::RegularOrPipe).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge), "{e:?}");
        let text = read_error_text("--key k", CLIENT_PEM_LIMIT, "a private key", e);
        assert_eq!(
            text,
            "--key k holds more than 256 KiB, the limit for a private key"
        );
    }

    #[test]
    fn a_device_or_a_fifo_is_refused_where_only_a_regular_file_is_read() {
        let e = read_named(
            "SSL_CERT_FILE=/dev/zero",
            Path::new("/dev/zero"),
            CA_LIMIT,
            "a CA bundle",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "SSL_CERT_FILE=/dev/zero: it is a device, not a regular file"
        );
        let e = read_capped_as(Path::new("/dev/zero"), 10, Kind::RegularOrPipe).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular("a device")), "{e:?}");
        // A FIFO nobody writes to: refused at once, not waited on in open().
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("nobody-writes");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        let e = read_capped(&fifo, CA_LIMIT).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular("a FIFO")), "{e:?}");
        // Where a pipe is taken, one with no writer reads as empty.
        assert_eq!(
            read_capped_as(&fifo, CA_LIMIT, Kind::RegularOrPipe).unwrap(),
            b""
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let e = read_capped(dir.path(), CA_LIMIT).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular("a directory")), "{e:?}");
    }

    #[test]
    fn a_file_at_the_limit_is_read_whole_and_one_byte_more_is_refused() {
        let dir = std::env::temp_dir().join(format!("tlsping-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("exact");
        std::fs::write(&path, [b'x'; 64]).unwrap();
        assert_eq!(read_capped(&path, 64).unwrap().len(), 64);
        assert!(matches!(read_capped(&path, 63), Err(ReadError::TooLarge)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn limits_are_said_in_their_unit() {
        assert_eq!(size_text(CA_LIMIT), "4 MiB");
        assert_eq!(size_text(CLIENT_PEM_LIMIT), "256 KiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }
}
