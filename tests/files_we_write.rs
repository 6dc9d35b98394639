//! The files a run writes (`--openmetrics FILE`, `--svg FILE`), through the
//! real binary on 127.0.0.1: a destination that is not a regular file of
//! ours (a device, a FIFO, a symbolic link, another user's file), or that
//! could only fail at the end (a trailing `/`, a name too long for its
//! temporary file, a directory we cannot write in, a file system that takes
//! no new file, a group we may not give, the same file twice under one name
//! or two), is refused before anything is dialed (exit 3): a trial file is
//! made and removed at the start as the one written at the end will be.
//! A file that is replaced keeps its owner, group and mode, is replaced
//! whole by a rename, and nothing else is left beside it; a name planted
//! where the old predictable temporary file went is never followed, nor
//! is a directory swapped for a link during the run. `-` is standard
//! output for both flags.

mod support;

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use support::{cacert, path_str, show, start, stderr, ServerOpts, TempDir};

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

fn is_root() -> bool {
    // SAFETY: geteuid(2) takes nothing and always succeeds.
    unsafe { libc::geteuid() == 0 }
}

/// A run with `flag path`, which must end as a usage error naming `says`.
fn refused(flag: &str, path: &str, url: &str, says: &str) {
    let out = support::tlsping(&["-n", "1", "--cacert", &cacert(), flag, path, url]);
    assert_eq!(out.status.code(), Some(3), "{flag} {path}: {}", show(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("tlsping: {flag} ")) && err.contains(says),
        "{flag} {path}: {err}"
    );
}

#[test]
fn destinations_that_are_not_a_regular_file_of_ours_are_refused_before_any_connection() {
    let dir = TempDir::new("unfit");
    let server = start(ServerOpts::default());
    let url = server.url();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let long = dir.path().join("m".repeat(250));
    let trailing = format!("{}/", path_str(dir.path()));
    let missing = dir.path().join("no-such-dir/x.prom");
    for flag in ["--openmetrics", "--svg"] {
        refused(flag, path_str(&fifo), &url, "is a FIFO, not a regular file");
        refused(flag, path_str(&link), &url, "is a symbolic link");
        refused(flag, &trailing, &url, "names a directory");
        refused(
            flag,
            path_str(&long),
            &url,
            "too long for the temporary file",
        );
        refused(
            flag,
            path_str(&missing),
            &url,
            "is not an existing directory",
        );
    }
    // `-` is the way to stdout, and the refusal says so.
    refused(
        "--openmetrics",
        path_str(&fifo),
        &url,
        "(`--openmetrics -` writes to standard output)",
    );
    if is_root() {
        // A device node of our own making, never /dev/null itself.
        let device = dir.path().join("null");
        let c = std::ffi::CString::new(path_str(&device)).unwrap();
        // SAFETY: mknod(2) with a NUL-terminated path we own; 1:3 is null.
        let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        assert_eq!(made, 0, "mknod");
        refused("--openmetrics", path_str(&device), &url, "is a device");
        assert!(std::fs::symlink_metadata(&device)
            .unwrap()
            .file_type()
            .is_char_device());
        // Another user's file is not ours to replace.
        let theirs = dir.path().join("theirs.prom");
        std::fs::write(&theirs, "theirs").unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        refused("--svg", path_str(&theirs), &url, "belongs to another user");
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "theirs");
    }
    // The same file twice, however it is spelled.
    let same = dir.path().join("same");
    let dotted = format!("{}/./same", path_str(dir.path()));
    let out = support::tlsping(&[
        "-n",
        "1",
        "--svg",
        path_str(&same),
        "--openmetrics",
        &dotted,
        &url,
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(stderr(&out).contains("both name"), "{}", show(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
}

#[test]
fn a_file_is_replaced_whole_keeping_its_mode_and_nothing_is_left_beside_it() {
    let dir = TempDir::new("replace");
    let server = start(ServerOpts::default());
    let metrics = dir.path().join("tlsping.prom");
    std::fs::write(&metrics, "old").unwrap();
    std::fs::set_permissions(&metrics, std::fs::Permissions::from_mode(0o600)).unwrap();
    let inode_before = std::fs::metadata(&metrics).unwrap().ino();
    let picture = dir.path().join("run.svg");
    let mut cmd = support::command(&[
        "-n",
        "2",
        "-i",
        "200ms",
        "--cacert",
        &cacert(),
        "--openmetrics",
        path_str(&metrics),
        "--svg",
        path_str(&picture),
        &server.url(),
    ]);
    // SAFETY: umask(2) in the child between fork and exec only sets its mask.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    let out = cmd.output().expect("running tlsping");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let kept = std::fs::symlink_metadata(&metrics).unwrap();
    assert!(kept.file_type().is_file());
    assert_eq!(kept.mode() & 0o777, 0o600, "a 0600 file stays 0600");
    assert_ne!(
        kept.ino(),
        inode_before,
        "replaced by a rename, not rewritten"
    );
    let text = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        text.starts_with("# ") && text.ends_with("# EOF\n"),
        "{text}"
    );
    let made = std::fs::symlink_metadata(&picture).unwrap();
    assert_eq!(
        made.mode() & 0o777,
        0o644,
        "a new file: 0666 less the umask"
    );
    assert!(std::fs::read_to_string(&picture)
        .unwrap()
        .trim_end()
        .ends_with("</svg>"));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["run.svg", "tlsping.prom"], "no temporary file left");
}

#[test]
fn a_name_planted_where_the_temporary_file_once_went_is_never_followed() {
    // Before, the temporary file was `.<name>.tmp<pid>`, opened with a
    // create that followed links and truncated: another user could point
    // it at any file root can write, or make it a FIFO that hung the run.
    let dir = TempDir::new("planted");
    let server = start(ServerOpts::default());
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "root's file").unwrap();
    let metrics = dir.path().join("m.prom");
    let picture = dir.path().join("p.svg");
    let mut child = support::command(&[
        "-n",
        "3",
        "-i",
        "300ms",
        "--cacert",
        &cacert(),
        "--openmetrics",
        path_str(&metrics),
        "--svg",
        path_str(&picture),
        &server.url(),
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("running tlsping");
    let pid = child.id();
    std::os::unix::fs::symlink(&victim, dir.path().join(format!(".m.prom.tmp{pid}"))).unwrap();
    mkfifo(&dir.path().join(format!(".p.svg.tmp{pid}")));
    let until = std::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run hung at its end (a planted FIFO?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's file");
    assert!(std::fs::symlink_metadata(&metrics)
        .unwrap()
        .file_type()
        .is_file());
    assert!(std::fs::read_to_string(&metrics)
        .unwrap()
        .ends_with("# EOF\n"));
    assert!(std::fs::symlink_metadata(&picture)
        .unwrap()
        .file_type()
        .is_file());
}

/// The group nobody's files have on Debian (`nogroup`), an existing system
/// group: no user or group is made for the test.
const NOGROUP: u32 = 65534;

#[test]
fn a_replaced_file_keeps_its_owner_and_group() {
    if !support::root_or_skip("a_replaced_file_keeps_its_owner_and_group") {
        return;
    }
    // root:nogroup 0640, read by a collector through its group. Before,
    // the replacement was root:root 0640 and the collector lost it.
    let dir = TempDir::new("group");
    let server = start(ServerOpts::default());
    let metrics = dir.path().join("tlsping.prom");
    std::fs::write(&metrics, "old").unwrap();
    std::os::unix::fs::chown(&metrics, Some(0), Some(NOGROUP)).unwrap();
    std::fs::set_permissions(&metrics, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = support::tlsping(&[
        "-n",
        "1",
        "--cacert",
        &cacert(),
        "--openmetrics",
        path_str(&metrics),
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let m = std::fs::symlink_metadata(&metrics).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (0, NOGROUP, 0o640));
    assert!(std::fs::read_to_string(&metrics)
        .unwrap()
        .ends_with("# EOF\n"));
}

#[test]
fn a_directory_we_cannot_write_in_is_refused_before_any_connection() {
    if !support::root_or_skip("a_directory_we_cannot_write_in_is_refused_before_any_connection") {
        return;
    }
    // root's 0755 directory, the run as nobody: before, found after the
    // whole run (`Permission denied ... .m.prom.XXXXXX.tmp`, exit 2).
    use std::os::unix::process::CommandExt;
    let dir = TempDir::new("unwritable");
    let server = start(ServerOpts::default());
    for flag in ["--openmetrics", "--svg"] {
        let file = dir.path().join("m.out");
        let out = support::command(&["-n", "1", "-k", flag, path_str(&file), &server.url()])
            .uid(NOGROUP)
            .gid(NOGROUP)
            .output()
            .expect("running tlsping as nobody");
        assert_eq!(out.status.code(), Some(3), "{flag}: {}", show(&out));
        let says = format!(
            "tlsping: {flag} {}: cannot create a file in {}: Permission denied",
            path_str(&file),
            path_str(dir.path())
        );
        assert!(stderr(&out).starts_with(&says), "{flag}: {}", show(&out));
    }
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_group_we_cannot_give_is_refused_before_any_connection() {
    if !support::root_or_skip("a_group_we_cannot_give_is_refused_before_any_connection") {
        return;
    }
    // nobody's folder, nobody's file in root's group (0640): nobody may
    // write there, but not give a new file the group root. Before, every
    // round ran, then `cannot give the new file the group 0 the old one
    // had` (exit 2); now the trial at the start finds it (exit 3).
    use std::os::unix::process::CommandExt;
    let dir = TempDir::new("group-trial");
    let theirs = dir.path().join("nobodys");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOGROUP), Some(NOGROUP)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let metrics = theirs.join("m.prom");
    std::fs::write(&metrics, "old").unwrap();
    std::os::unix::fs::chown(&metrics, Some(NOGROUP), Some(0)).unwrap();
    std::fs::set_permissions(&metrics, std::fs::Permissions::from_mode(0o640)).unwrap();
    let server = start(ServerOpts::default());
    let out = support::command(&[
        "-n",
        "3",
        "-k",
        "--openmetrics",
        path_str(&metrics),
        &server.url(),
    ])
    .uid(NOGROUP)
    .gid(NOGROUP)
    .output()
    .expect("running tlsping as nobody");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        stderr(&out).starts_with(&format!(
            "tlsping: --openmetrics {}: cannot give the new file the group 0 the old one had: \
             Operation not permitted",
            path_str(&metrics)
        )),
        "{}",
        show(&out)
    );
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
    // The trial file is gone; the old one is as it was.
    let left: Vec<_> = std::fs::read_dir(&theirs).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(std::fs::read_to_string(&metrics).unwrap(), "old");
}

#[test]
fn a_file_system_that_takes_no_new_file_is_refused_before_any_connection() {
    // /sys takes no file of ours, though access(2) lets root pass for it:
    // before, root ran every round and failed at the end (exit 2).
    let server = start(ServerOpts::default());
    let url = server.url();
    for flag in ["--openmetrics", "--svg"] {
        let out = support::tlsping(&["-n", "3", "-k", flag, "/sys/tlsping-test.out", &url]);
        assert_eq!(out.status.code(), Some(3), "{flag}: {}", show(&out));
        assert!(
            stderr(&out).starts_with(&format!(
                "tlsping: {flag} /sys/tlsping-test.out: cannot create a file in /sys: "
            )),
            "{flag}: {}",
            show(&out)
        );
    }
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
}

#[test]
fn a_directory_swapped_for_a_link_during_the_run_is_not_followed() {
    // The directory is held from the check at the start: renamed away and
    // replaced by a link to another during the run, the file still goes
    // where the directory went. Before, it went into the link's target.
    let dir = TempDir::new("swapped");
    let server = start(ServerOpts::default());
    let sub = dir.path().join("sub");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&sub).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    let metrics = sub.join("m.prom");
    let mut child = support::command(&[
        "-n",
        "3",
        "-i",
        "400ms",
        "--cacert",
        &cacert(),
        "--openmetrics",
        path_str(&metrics),
        &server.url(),
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("running tlsping");
    // The rounds started, so the check is behind; the end is 800 ms away.
    support::wait_for(&mut child, "the first connection", || {
        server.counters.snapshot().tcp >= 1
    });
    let moved = dir.path().join("sub.orig");
    std::fs::rename(&sub, &moved).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &sub).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "written through the link"
    );
    assert!(std::fs::read_to_string(moved.join("m.prom"))
        .unwrap()
        .ends_with("# EOF\n"));
}

#[test]
fn two_hard_links_of_one_file_are_refused_as_the_same_name_twice() {
    let dir = TempDir::new("links");
    let server = start(ServerOpts::default());
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::write(&a, "one file").unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    let out = support::tlsping(&[
        "-n",
        "1",
        "--cacert",
        &cacert(),
        "--svg",
        path_str(&a),
        "--openmetrics",
        path_str(&b),
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        stderr(&out).contains(&format!(
            "--svg and --openmetrics both name one file, as {} and {}",
            path_str(&a),
            path_str(&b)
        )),
        "{}",
        show(&out)
    );
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "one file");
    assert_eq!(std::fs::metadata(&a).unwrap().nlink(), 2);
}

#[test]
fn a_dash_is_standard_output_for_the_picture_as_for_the_figures() {
    // Before, `--svg -` wrote a file named `-` where `--openmetrics -`
    // meant stdout.
    let dir = TempDir::new("dash");
    let server = start(ServerOpts::default());
    let url = server.url();
    let ca = cacert();
    let run = |args: &[&str]| {
        let mut all = vec!["-n", "1", "--cacert", &ca];
        all.extend_from_slice(args);
        all.push(&url);
        support::command(&all)
            .current_dir(dir.path())
            .output()
            .expect("running tlsping")
    };
    let out = run(&["--svg", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let picture = support::stdout(&out);
    assert!(picture.starts_with("<svg"), "{picture}");
    assert!(picture.trim_end().ends_with("</svg>"), "{picture}");
    assert!(!dir.path().join("-").exists(), "a file named -");
    for (args, says) in [
        (
            &["--svg", "-", "--openmetrics", "-"][..],
            "--openmetrics - and --svg - both want standard output",
        ),
        (
            &["--svg", "-", "--json"][..],
            "--svg - and --json both want standard output",
        ),
        (
            &["--svg", "-", "--csv"][..],
            "--svg - and --csv both want standard output",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", show(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", show(&out));
    }
    // A file named `-` is `./-`, for both.
    let out = run(&["--svg", "./-"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(std::fs::read_to_string(dir.path().join("-"))
        .unwrap()
        .starts_with("<svg"));
}
