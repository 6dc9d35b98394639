//! Writing a file the user names (`--openmetrics FILE`, `--svg FILE`):
//! through its directory, held from the check at the start to the rename
//! at the end (see the top of `files`).

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, Gid, Mode, OFlags, RenameFlags};

use super::{os_error, our_uid};

/// The longest file name most file systems take (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// What the temporary name adds to the destination's: `.` before it, and
/// `.`, six random characters and `.tmp` after it.
const TEMP_EXTRA: usize = 1 + 1 + 6 + 4;

/// How many new temporary names are tried when one is taken.
const TEMP_TRIES: usize = 16;

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
