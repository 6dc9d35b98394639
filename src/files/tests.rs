use std::io::Write;
use std::path::PathBuf;

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
