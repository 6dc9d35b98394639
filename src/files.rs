//! The files a user names, read and written by one set of rules. A leaf
//! module.
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

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, Gid, Mode, OFlags, RenameFlags};

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

/// The longest file name most file systems take (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// What the temporary name adds to the destination's: `.` before it, and
/// `.`, six random characters and `.tmp` after it.
const TEMP_EXTRA: usize = 1 + 1 + 6 + 4;

/// How many new temporary names are tried when one is taken.
const TEMP_TRIES: usize = 16;

/// The effective user id: whose files we may replace.
fn our_uid() -> u32 {
    // SAFETY: geteuid(2) takes nothing, always succeeds and touches no memory.
    unsafe { libc::geteuid() }
}

/// The kind of a file from its `st_mode`, as messages say it.
fn mode_kind_text(mode: u32) -> &'static str {
    use rustix::fs::FileType;
    match FileType::from_raw_mode(mode) {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Socket => "a socket",
        FileType::Symlink => "a symbolic link",
        _ => "not a regular file",
    }
}

/// A file a run writes when it ends (`--openmetrics FILE`, `--svg FILE`):
/// checked when the run starts, and written then through the directory
/// held open since. Every later step (the checks again, the temporary
/// file, the rename) is relative to that directory, so a directory of
/// the path replaced by a link during the run is never followed.
#[derive(Clone)]
pub struct Destination {
    /// As the user named it, for messages.
    path: PathBuf,
    /// Its directory, opened once (`O_PATH`), shared by the clones.
    dir: Arc<OwnedFd>,
    /// Its name in that directory.
    name: OsString,
    /// The directory's device and inode.
    dir_id: (u64, u64),
    /// The file's device and inode, when one was there at the check.
    file_id: Option<(u64, u64)>,
}

impl std::fmt::Debug for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Destination").field(&self.path).finish()
    }
}

/// Two destinations are equal when they were named alike.
impl PartialEq for Destination {
    fn eq(&self, other: &Destination) -> bool {
        self.path == other.path
    }
}

impl Eq for Destination {}

/// An `rustix` error as the standard library says it (`Permission denied
/// (os error 13)`).
fn os_error(e: rustix::io::Errno) -> io::Error {
    io::Error::from(e)
}

impl Destination {
    /// Checks `path` as a destination and holds its directory: `Err` says
    /// why it cannot be one, so a path that could only fail at the end
    /// fails at the start. It must name a file (no trailing `/`, `.` or
    /// `..`) short enough for its temporary name, in an existing directory
    /// we may create files in, and be a regular file of ours or nothing yet.
    pub fn open(path: &Path) -> Result<Destination, String> {
        let text = path.as_os_str().as_encoded_bytes();
        let last = text.rsplit(|&b| b == b'/').next().unwrap_or_default();
        let name = match path.file_name() {
            Some(name) if name.as_encoded_bytes() == last => name.to_os_string(),
            _ => return Err("names a directory, not a file".into()),
        };
        if name.len() + TEMP_EXTRA > NAME_MAX {
            return Err(format!(
                "the file name is longer than {} bytes, too long for the temporary file it is \
                 written through",
                NAME_MAX - TEMP_EXTRA
            ));
        }
        let dir_path = parent_dir(path);
        let dir = rustix::fs::open(
            &dir_path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR => {
                format!("{} is not an existing directory", dir_path.display())
            }
            e => format!("{}: {}", dir_path.display(), os_error(e)),
        })?;
        let dir_stat = rustix::fs::fstat(&dir).map_err(|e| os_error(e).to_string())?;
        let mut held = Destination {
            path: path.to_path_buf(),
            dir: Arc::new(dir),
            name,
            dir_id: identity(&dir_stat),
            file_id: None,
        };
        let existing = held.existing().map_err(|e| e.to_string())?;
        held.file_id = existing.as_ref().map(identity);
        held.trial(existing.as_ref(), &dir_path)?;
        Ok(held)
    }

    /// Makes what `replace` will make, and removes it: a new file in the
    /// held directory, created exclusively, given the group and mode of
    /// the file it replaces (`before`). Whatever would refuse that at the
    /// end (a directory we cannot create a file in, a read-only file
    /// system, a pseudo one like /proc or /sys that takes no new file, a
    /// group our ids may not give) refuses it now, before any connection.
    fn trial(&self, before: Option<&rustix::fs::Stat>, dir_path: &Path) -> Result<(), String> {
        let (name, temp) = self
            .create_temp(replacement_mode(before))
            .map_err(|e| format!("cannot create a file in {}: {e}", dir_path.display()))?;
        let kept = keep_group_and_mode(&temp, before);
        drop(temp);
        let removed = rustix::fs::unlinkat(&*self.dir, &name, AtFlags::empty());
        kept.map_err(|e| e.to_string())?;
        removed.map_err(|e| {
            format!(
                "cannot remove the trial file {} it made in {}: {}",
                name.to_string_lossy(),
                dir_path.display(),
                os_error(e)
            )
        })
    }

    /// The path as the user named it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether two destinations are one file: the same name in the same
    /// directory however each path spells it, or two names (hard links) of
    /// one file that was there at the check.
    pub fn same_file(&self, other: &Destination) -> bool {
        (self.dir_id == other.dir_id && self.name == other.name)
            || (self.file_id.is_some() && self.file_id == other.file_id)
    }

    /// What is at the name now, if anything: `Err` unless it is a regular
    /// file of ours, never following a link.
    fn existing(&self) -> io::Result<Option<rustix::fs::Stat>> {
        let st = match rustix::fs::statat(&*self.dir, &self.name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(os_error(e)),
        };
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(io::Error::other(format!(
                "is {}, not a regular file; only a regular file is replaced",
                mode_kind_text(st.st_mode)
            )));
        }
        if st.st_uid != our_uid() {
            return Err(io::Error::other(
                "belongs to another user; only a file of ours is replaced",
            ));
        }
        Ok(Some(st))
    }

    /// A new file of an unguessable name in the directory, created
    /// exclusively (never through a link, never into a file someone else
    /// made) with `mode` less the umask: its name and the file.
    fn create_temp(&self, mode: Mode) -> io::Result<(OsString, std::fs::File)> {
        let prefix = format!(".{}.", self.name.to_string_lossy());
        for _ in 0..TEMP_TRIES {
            let mut name = OsString::from(&prefix);
            name.push(random_part()?);
            name.push(".tmp");
            let flags = OFlags::CREATE
                | OFlags::EXCL
                | OFlags::WRONLY
                | OFlags::NOFOLLOW
                | OFlags::NOCTTY
                | OFlags::CLOEXEC;
            match rustix::fs::openat(&*self.dir, &name, flags, mode) {
                Ok(fd) => return Ok((name, std::fs::File::from(fd))),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(os_error(e)),
            }
        }
        Err(io::Error::other(
            "no free name for the temporary file beside it",
        ))
    }

    /// Writes what `fill` writes through a new temporary file beside the
    /// destination, renamed over it once whole and on disk. A file being
    /// replaced is checked again just before the rename, and its owner,
    /// group and mode are kept (nothing else of it is: not its ACLs, its
    /// extended attributes or its other hard links); a new file gets 0666
    /// less the umask. Where that last check finds nothing, the rename never
    /// replaces what appears after it. On any error the temporary file is
    /// removed and the destination is as it was.
    pub fn replace(&self, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
        let before = self.existing()?;
        let (temp_name, temp) = self.create_temp(replacement_mode(before.as_ref()))?;
        let written = self.fill_and_rename(&temp_name, temp, before.as_ref(), fill);
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&*self.dir, &temp_name, AtFlags::empty());
        }
        written
    }

    fn fill_and_rename(
        &self,
        temp_name: &OsStr,
        mut temp: std::fs::File,
        before: Option<&rustix::fs::Stat>,
        fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        keep_group_and_mode(&temp, before)?;
        {
            let mut out = io::BufWriter::new(&mut temp);
            fill(&mut out)?;
            out.flush()?;
        }
        temp.sync_all()?;
        drop(temp);
        let dir = &*self.dir;
        if self.existing()?.is_some() {
            return rustix::fs::renameat(dir, temp_name, dir, &self.name).map_err(os_error);
        }
        // Nothing was there: a name planted since is refused, not replaced.
        match rustix::fs::renameat_with(dir, temp_name, dir, &self.name, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(()),
            // A file system without RENAME_NOREPLACE.
            Err(rustix::io::Errno::INVAL) => {
                rustix::fs::renameat(dir, temp_name, dir, &self.name).map_err(os_error)
            }
            Err(rustix::io::Errno::EXIST) => Err(io::Error::other(
                "a file appeared at its name during the run; it was left alone",
            )),
            Err(e) => Err(os_error(e)),
        }
    }
}

/// The mode a new file is created with: the one of the file it replaces
/// (`before`), else 0666, either less the umask.
fn replacement_mode(before: Option<&rustix::fs::Stat>) -> Mode {
    before.map_or(Mode::from_raw_mode(0o666), |st| {
        Mode::from_raw_mode(st.st_mode & 0o777)
    })
}

/// Gives the new file `temp` the group and mode of the file it replaces
/// (`before`; nothing for a new one): the group first (a change of group
/// may clear mode bits), then the mode, which the umask may have narrowed.
fn keep_group_and_mode(temp: &std::fs::File, before: Option<&rustix::fs::Stat>) -> io::Result<()> {
    let Some(old) = before else {
        return Ok(());
    };
    let made = rustix::fs::fstat(temp).map_err(os_error)?;
    if made.st_gid != old.st_gid {
        rustix::fs::fchown(temp, None, Some(Gid::from_raw(old.st_gid))).map_err(|e| {
            io::Error::other(format!(
                "cannot give the new file the group {} the old one had: {}",
                old.st_gid,
                os_error(e)
            ))
        })?;
    }
    rustix::fs::fchmod(temp, replacement_mode(Some(old))).map_err(os_error)
}

/// A file's device and inode.
// The fields are `u64` on some targets and `c_ulong` or `u32` on others.
#[allow(clippy::unnecessary_cast)]
fn identity(st: &rustix::fs::Stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

/// Six characters from OpenSSL's random generator, for a temporary name.
fn random_part() -> io::Result<String> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut bytes = [0u8; 6];
    openssl::rand::rand_bytes(&mut bytes).map_err(io::Error::other)?;
    Ok(bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect())
}

/// The directory a file is written in (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

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
/// regular file of ours, which libcurl may then append to.
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
    Ok(())
}

/// [`Destination::open`] and [`Destination::replace`] in one step, for a
/// file written once (the READMEs' generated parts).
pub fn replace_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    Destination::open(path)
        .map_err(io::Error::other)?
        .replace(fill)
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
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let e = read_capped(dir.path(), CA_LIMIT).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular("a directory")), "{e:?}");
    }

    fn mkfifo(path: &Path) {
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_named_fifo_is_refused_even_where_a_pipe_is_read() {
        // Before, a FIFO with no writer read as empty: `--write-out @FIFO`
        // ran silently with an empty format.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("nobody-writes");
        mkfifo(&fifo);
        let started = std::time::Instant::now();
        let e = read_capped_as(&fifo, CA_LIMIT, Kind::RegularOrPipe).unwrap_err();
        assert!(matches!(e, ReadError::NamedFifo), "{e:?}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(
            read_error_text("--write-out @f", 10, "a format", e),
            "--write-out @f: it is a named FIFO; only a regular file or a pipe \
             (as `<(command)` gives) is read"
        );
        // A pipe, as `<(printf x)` hands one over, is read.
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"%{http_code}").unwrap();
        drop(writer);
        use std::os::fd::AsRawFd;
        let named = PathBuf::from(format!("/proc/self/fd/{}", reader.as_raw_fd()));
        assert_eq!(
            read_capped_as(&named, CA_LIMIT, Kind::RegularOrPipe).unwrap(),
            b"%{http_code}"
        );
        // Where only a regular file is read, a pipe is refused too.
        let e = read_capped(&named, CA_LIMIT).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular("a FIFO")), "{e:?}");
    }

    fn is_root() -> bool {
        our_uid() == 0
    }

    /// A test that needs root: says so and skips elsewhere, fails under
    /// `CI=true` (any other value skips, as the integration tests do).
    fn needs_root(test: &str) -> bool {
        if is_root() {
            return true;
        }
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test} needs root, which CI has"
        );
        say_skipped(test);
        false
    }

    fn say_skipped(test: &str) {
        use std::io::Write;
        let _ = writeln!(io::stderr(), "{test}: skipped, it needs root");
    }

    fn contents(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn a_replaced_file_keeps_its_owner_group_and_mode() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if !needs_root("a_replaced_file_keeps_its_owner_group_and_mode") {
            return;
        }
        // root:nogroup 0640, the way a collector's group reads it. Before,
        // the new file was root:root 0640.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.prom");
        std::fs::write(&file, "old").unwrap();
        let nogroup = 65534;
        std::os::unix::fs::chown(&file, None, Some(nogroup)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let inode = std::fs::metadata(&file).unwrap().ino();
        replace_file(&file, |w| w.write_all(b"new")).unwrap();
        let m = std::fs::symlink_metadata(&file).unwrap();
        assert_ne!(m.ino(), inode, "replaced by a rename");
        assert_eq!(
            (m.uid(), m.gid(), m.mode() & 0o7777),
            (0, nogroup, 0o640),
            "owner, group and mode kept"
        );
        assert_eq!(contents(&file), "new");
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_the_check_is_not_followed() {
        // The run checks its destination at the start and writes at the
        // end; meanwhile `sub` is renamed away and a link to another
        // directory put in its place. Before, the file landed in the link's
        // target.
        let root = tempfile::tempdir().unwrap();
        let sub = root.path().join("sub");
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&sub).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        let held = Destination::open(&sub.join("m.prom")).unwrap();
        let moved = root.path().join("sub.orig");
        std::fs::rename(&sub, &moved).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &sub).unwrap();
        held.replace(|w| w.write_all(b"figures")).unwrap();
        assert_eq!(contents(&moved.join("m.prom")), "figures");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        let left: Vec<_> = std::fs::read_dir(&moved).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left: {left:?}");
    }

    #[test]
    fn what_appears_at_a_new_name_during_the_run_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.svg");
        let held = Destination::open(&path).unwrap();
        // Planted between the check at the start and the write: a link is
        // refused by the check made again before the rename; a regular file
        // of ours found by it is replaced. (What appears after that last
        // check is never replaced: RENAME_NOREPLACE, not reached here.)
        std::os::unix::fs::symlink("/etc/passwd", &path).unwrap();
        let e = held.replace(|w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "someone's").unwrap();
        held.replace(|w| w.write_all(b"ours")).unwrap();
        assert_eq!(
            contents(&path),
            "ours",
            "a regular file of ours is replaced"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn two_names_of_one_file_are_one_destination() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, "x").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        let open = |p: &Path| Destination::open(p).unwrap();
        assert!(open(&a).same_file(&open(&b)), "hard links");
        let dotted = dir.path().join(".").join("a");
        assert!(open(&a).same_file(&open(&dotted)), "one name spelled apart");
        let c = dir.path().join("c");
        std::fs::write(&c, "x").unwrap();
        assert!(!open(&a).same_file(&open(&c)));
        assert!(!open(&c).same_file(&open(&dir.path().join("d"))));
    }

    #[test]
    fn a_destination_names_a_file_in_an_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_str().unwrap();
        for name in [
            format!("{base}/"),
            format!("{base}/."),
            format!("{base}/.."),
            ".".to_string(),
        ] {
            let e = Destination::open(Path::new(&name)).unwrap_err();
            assert_eq!(e, "names a directory, not a file", "{name}");
        }
        let e = Destination::open(&dir.path().join("no/x")).unwrap_err();
        assert!(e.ends_with("is not an existing directory"), "{e}");
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let e = Destination::open(&file.join("x")).unwrap_err();
        assert!(e.ends_with("is not an existing directory"), "{e}");
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
