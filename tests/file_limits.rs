//! Files the user names are read with a size limit: a CA bundle
//! (`--cacert`, `SSL_CERT_FILE`) and all of `SSL_CERT_DIR` at most 4 MiB,
//! a client certificate or key at most 256 KiB. Past it, or on an endless
//! pipe (`--key <(yes)`), the run is a usage error (exit 3) that names the
//! file and the limit, before anything is dialed. A device (`/dev/zero`)
//! or a FIFO is refused as what it is, at once. The files are read once, before the
//! run: a hashed directory is loaded whole, and a client certificate deleted
//! mid-run still serves every handshake.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use support::pki::client_identity;
use support::{ca, cacert, path_str, show, start, stderr, ServerOpts, TempDir};

/// The binary with `args`, no trust variables but those in `env`.
fn run_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = support::command(args);
    cmd.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("running tlsping")
}

/// `n` bytes of PEM-looking text: a file too large for its limit.
fn oversized(dir: &Path, name: &str, n: usize) -> PathBuf {
    let path = dir.join(name);
    let mut body = b"-----BEGIN CERTIFICATE-----\n".to_vec();
    body.resize(n, b'A');
    std::fs::write(&path, body).unwrap();
    path
}

#[test]
fn files_past_their_limit_are_usage_errors_before_any_connection() {
    let dir = TempDir::new("over");
    let (cert, _, _) = client_identity(dir.path());
    let big_bundle = oversized(dir.path(), "bundle.pem", (4 << 20) + 1);
    let big_key = oversized(dir.path(), "key.pem", (256 << 10) + 1);
    let hashed = dir.path().join("hashed");
    std::fs::create_dir_all(&hashed).unwrap();
    oversized(&hashed, "0123abcd.0", (4 << 20) + 1);
    let with_device = dir.path().join("with-device");
    std::fs::create_dir_all(&with_device).unwrap();
    std::os::unix::fs::symlink("/dev/zero", with_device.join("0123abcd.0")).unwrap();
    let server = start(ServerOpts::default());
    let url = server.url();
    let ca = cacert();
    let bundle_says = format!("--cacert {} holds more than 4 MiB", path_str(&big_bundle));
    let key_says = format!("--key {} holds more than 256 KiB", path_str(&big_key));
    let dir_says = format!(
        "the certificates in SSL_CERT_DIR={} hold more than 4 MiB, the limit for CA certificates",
        path_str(&hashed)
    );
    let device_in_dir_says = format!(
        "SSL_CERT_DIR={}: {}: it is a device, not a regular file",
        path_str(&with_device),
        path_str(&with_device.join("0123abcd.0"))
    );
    // (arguments, environment, what stderr must say)
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 7] = [
        (
            vec!["--cacert", path_str(&big_bundle)],
            vec![],
            &bundle_says,
        ),
        (
            vec![],
            vec![("SSL_CERT_FILE", "/dev/zero")],
            "SSL_CERT_FILE=/dev/zero is not a regular file",
        ),
        (vec![], vec![("SSL_CERT_DIR", path_str(&hashed))], &dir_says),
        (
            vec![],
            vec![("SSL_CERT_DIR", path_str(&with_device))],
            &device_in_dir_says,
        ),
        (
            vec!["--cacert", &ca, "--cert", "/dev/zero"],
            vec![],
            "--cert /dev/zero: it is a device, not a regular file",
        ),
        (
            vec![
                "--cacert",
                &ca,
                "--cert",
                path_str(&cert),
                "--key",
                "/dev/zero",
            ],
            vec![],
            "--key /dev/zero: it is a device, not a regular file",
        ),
        (
            vec![
                "--cacert",
                &ca,
                "--cert",
                path_str(&cert),
                "--key",
                path_str(&big_key),
            ],
            vec![],
            &key_says,
        ),
    ];
    for (mut args, env, says) in cases {
        args.extend(["-n", "1", url.as_str()]);
        let out = run_with(&args, &env);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{args:?} {env:?}: {}",
            show(&out)
        );
        let err = stderr(&out);
        let first = err.lines().next().unwrap_or_default();
        assert!(first.starts_with("tlsping: "), "{args:?} {env:?}: {err}");
        assert!(first.contains(says), "{args:?} {env:?}: {err}");
    }
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
}

#[test]
fn an_endless_pipe_is_read_to_its_limit_where_a_pipe_is_taken() {
    // `--key <(yes)`: the documented way to hand over a key without a file.
    let dir = TempDir::new("pipe");
    let (cert, _, _) = client_identity(dir.path());
    let server = start(ServerOpts::default());
    let line = format!(
        "exec {} -n 1 --cacert {} --cert {} --key <(yes) {}",
        support::bin(),
        cacert(),
        path_str(&cert),
        server.url()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &line])
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("running bash");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let err = stderr(&out);
    assert!(
        err.contains("holds more than 256 KiB, the limit for a private key"),
        "{err}"
    );
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
}

#[test]
fn a_hashed_ca_directory_is_loaded_and_trusted() {
    let dir = TempDir::new("hashed");
    let server = start(ServerOpts::default());
    let url = server.url();
    // Without a hashed name, OpenSSL would never look at the file.
    std::fs::copy(&ca().pem_path, dir.path().join("test-ca.pem")).unwrap();
    let out = run_with(
        &["-n", "1", &url],
        &[("SSL_CERT_DIR", path_str(dir.path()))],
    );
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        stderr(&out).contains("holds no certificate under a hashed name"),
        "{}",
        show(&out)
    );
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");

    let hash = ca().cert.subject_name_hash();
    std::fs::copy(&ca().pem_path, dir.path().join(format!("{hash:08x}.0"))).unwrap();
    let out = run_with(
        &["-n", "1", "-i", "200ms", &url],
        &[("SSL_CERT_DIR", path_str(dir.path()))],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

#[test]
fn client_certificate_files_are_read_once_before_the_run() {
    let dir = TempDir::new("once");
    let (cert, key, _) = client_identity(dir.path());
    let server = start(ServerOpts {
        require_client_cert: true,
        ..Default::default()
    });
    let ca = cacert();
    let args = [
        "--jsonl",
        "-m",
        "cold",
        "-n",
        "3",
        "-i",
        "300ms",
        "--warmup",
        "0",
        "--cacert",
        &ca,
        "--cert",
        path_str(&cert),
        "--key",
        path_str(&key),
        &server.url(),
    ];
    let mut child = support::command(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting tlsping");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut samples = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if line.contains("\"type\":\"sample\"") {
            samples.push(line);
            break;
        }
    }
    // Round 1 is over: from now on no file is there to be read.
    std::fs::remove_file(&cert).unwrap();
    std::fs::remove_file(&key).unwrap();
    samples.extend(
        lines
            .map(Result::unwrap)
            .filter(|l| l.contains("\"type\":\"sample\"")),
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{samples:#?}\n{}", stderr(&out));
    assert_eq!(samples.len(), 3, "{samples:#?}");
    for s in &samples {
        let s: serde_json::Value = serde_json::from_str(s).unwrap();
        assert!(s["error"].is_null(), "{s:#}");
    }
}

#[test]
fn a_format_from_a_named_fifo_is_refused_and_one_from_a_pipe_is_read() {
    // Before, `--write-out @FIFO` with no writer ran with an empty format
    // and printed nothing, silently.
    let dir = TempDir::new("fifo-format");
    let fifo = dir.path().join("format");
    let c = std::ffi::CString::new(path_str(&fifo)).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let server = start(ServerOpts::default());
    let url = server.url();
    let ca = cacert();
    let at_fifo = format!("@{}", path_str(&fifo));
    let started = std::time::Instant::now();
    let out = run_with(
        &["-n", "1", "--cacert", &ca, "--write-out", &at_fifo, &url],
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        stderr(&out).contains(&format!(
            "--write-out: cannot read {}: it is a named FIFO; only a regular file or a pipe",
            path_str(&fifo)
        )),
        "{}",
        show(&out)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
    // A pipe (what `@<(...)` or a `|` gives) is still read.
    let mut child = support::command(&[
        "-n",
        "1",
        "-m",
        "cold",
        "--cacert",
        &ca,
        "--write-out",
        "@/dev/stdin",
        &url,
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("running tlsping");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"code=%{http_code}\\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(support::stdout(&out), "code=200\n");
}
