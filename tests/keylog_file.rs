//! `SSLKEYLOGFILE`, through the real binary on 127.0.0.1: libcurl appends
//! every handshake's secrets to the file it names (for tshark), and tlsping
//! opens that file first as a file it writes. A new one is made `0600`
//! whatever the umask, an existing regular file of ours is appended to,
//! and a symbolic link, a FIFO or another user's file is refused (exit 3)
//! before anything is dialled. Before, libcurl wrote through the link, and
//! a new file was readable by all under umask 022.

mod support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;

use support::{cacert, path_str, show, start, stderr, ServerOpts, TempDir};

/// One round against `url` with `SSLKEYLOGFILE=keylog`, under umask 022.
fn run_logging_to(keylog: &Path, url: &str) -> Output {
    let ca = cacert();
    let mut cmd = support::command(&["-4", "-n", "1", "--cacert", &ca, url]);
    cmd.env("SSLKEYLOGFILE", keylog);
    // SAFETY: umask(2) only sets the child's file mode mask; it cannot fail
    // and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    cmd.output().expect("running tlsping")
}

/// The secrets of at least one TLS 1.3 handshake, as NSS's key log has them.
fn holds_secrets(text: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("CLIENT_HANDSHAKE_TRAFFIC_SECRET "))
}

#[test]
fn a_new_key_log_is_ours_alone_and_an_existing_one_is_appended_to() {
    let dir = TempDir::new("keylog");
    let server = start(ServerOpts::default());
    let fresh = dir.path().join("new.keys");
    let out = run_logging_to(&fresh, &server.url());
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let mode = std::fs::metadata(&fresh).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}: before, 0644 under umask 022");
    assert!(holds_secrets(&std::fs::read_to_string(&fresh).unwrap()));
    // An existing file keeps what it had, and its mode.
    let kept = dir.path().join("kept.keys");
    std::fs::write(&kept, "# earlier\n").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = run_logging_to(&kept, &server.url());
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = std::fs::read_to_string(&kept).unwrap();
    assert!(
        text.starts_with("# earlier\n") && holds_secrets(&text),
        "{text}"
    );
    assert_eq!(std::fs::metadata(&kept).unwrap().mode() & 0o777, 0o640);
}

#[test]
fn a_key_log_that_is_not_a_regular_file_of_ours_is_refused_before_any_connection() {
    let dir = TempDir::new("keylog-unfit");
    let server = start(ServerOpts::default());
    let url = server.url();
    // A link planted at the name: before, the secrets went to its target.
    let target = dir.path().join("target.keys");
    let link = dir.path().join("link.keys");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = dir.path().join("fifo.keys");
    let c = std::ffi::CString::new(path_str(&fifo)).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let mut cases = vec![
        (link.clone(), "it is a symbolic link"),
        (fifo, "it is a FIFO"),
    ];
    if support::root_or_skip("the case of another user's key log") {
        let theirs = dir.path().join("theirs.keys");
        std::fs::write(&theirs, "").unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        cases.push((theirs, "it is another user's file"));
    }
    for (path, says) in cases {
        let out = run_logging_to(&path, &url);
        assert_eq!(out.status.code(), Some(3), "{says}: {}", show(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "tlsping: SSLKEYLOGFILE={}: {says}; TLS secrets are written only to a regular \
                 file of yours (name one, or unset SSLKEYLOGFILE)\n",
                path_str(&path)
            )
        );
    }
    assert!(!target.exists(), "written through the link");
    // A file of ours that every user may read: before, the secrets went
    // where anyone could take them.
    let open = dir.path().join("open.keys");
    std::fs::write(&open, "").unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = run_logging_to(&open, &url);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        stderr(&out).contains("every user may read or write it (mode 0644)")
            && stderr(&out).contains("chmod o-rwx"),
        "{}",
        show(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&open).unwrap(),
        "",
        "nothing written"
    );
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
    // Refused even where nothing would be dialled: libcurl opens the file
    // when it starts, whatever the command.
    let out = support::command(&["--version"])
        .env("SSLKEYLOGFILE", &link)
        .output()
        .expect("running tlsping");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(!target.exists(), "written through the link");
}
