//! Shared test support: certificates, servers and helpers to run the binary.
#![allow(dead_code, unused_imports)]

pub mod capture;
pub mod curl_cli;
mod cut;
pub mod delay;
pub mod docs;
pub mod faults;
pub mod json_doc;
pub mod markdown;
pub mod ocsp;
pub mod path;
pub mod pki;
pub mod prometheus;
pub mod proxy;
pub mod quickstart;
mod relay;
pub mod server;
mod server_streams;
pub mod spawned;
pub mod temp;
pub mod why;
pub mod wire;

use std::process::{Command, Output};

pub use json_doc::{error_kinds, run_field, samples, stop_warnings, warnings};
pub use pki::{ca, CertKind, HOSTILE_CN};
pub use server::{handshakes, start, FlightCut, ServerOpts, Snapshot, TestServer};
pub use temp::{path_str, TempDir};

/// The binary under test (integration tests only; the example server has none).
pub fn bin() -> &'static str {
    match option_env!("CARGO_BIN_EXE_tlsping") {
        Some(path) => path,
        None => panic!("only integration tests run the binary"),
    }
}

/// The real binary with a clean environment for colours, width and proxies.
pub fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    for proxy in tlsping::cli::PROXY_VARS {
        cmd.env_remove(proxy);
    }
    cmd.env("NO_COLOR", "1").env("COLUMNS", "120");
    cmd
}

/// The test CA's PEM file, as a `--cacert` argument.
pub fn cacert() -> String {
    ca().pem_path
        .to_str()
        .expect("the CA path is UTF-8")
        .to_string()
}

/// The arguments of a run against `https://localhost:PORT/` with
/// `localhost` pinned to `ip` and the test CA trusted, no warmup: `-w
/// timeout -i interval`, then `args`, then the URL (last).
pub fn localhost_run(
    ip: std::net::IpAddr,
    port: u16,
    timeout: &str,
    interval: &str,
    args: &[&str],
) -> Vec<String> {
    let mut all: Vec<String> = ["-w", timeout, "-i", interval, "--warmup", "0"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    all.extend(["--resolve".into(), format!("localhost:{port}:{ip}")]);
    all.extend(["--cacert".into(), cacert()]);
    all.extend(args.iter().map(|a| a.to_string()));
    all.push(format!("https://localhost:{port}/"));
    all
}

/// Runs the real binary to completion.
pub fn tlsping(args: &[&str]) -> Output {
    command(args).output().expect("running tlsping")
}

/// Runs the binary and parses its stdout as one JSON document.
pub fn json_output(args: &[&str]) -> (serde_json::Value, Output) {
    let out = tlsping(args);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}):\nstdout:\n{}\nstderr:\n{}",
            stdout(&out),
            stderr(&out)
        )
    });
    (doc, out)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A finished run for a failure message: its exit code and both streams.
pub fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        stdout(out),
        stderr(out)
    )
}

/// The middle value, or the mean of the two middle ones (NaN when empty):
/// the median every test and benchmark reads its figures with.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Runs the binary, which must succeed, and returns its one JSON document.
pub fn json_run(args: &[&str]) -> serde_json::Value {
    let (doc, out) = json_output(args);
    assert!(out.status.success(), "{}", stderr(&out));
    doc
}

/// `tlsping -4 --cacert <test CA> <args>`: only 127.0.0.1 is dialled.
pub fn ipv4_run(args: &[&str]) -> Output {
    let ca = cacert();
    let mut all = vec!["-4", "--cacert", &ca];
    all.extend_from_slice(args);
    tlsping(&all)
}

/// `tlsping --json -4 --cacert <test CA> <args>`; the exit code is the
/// caller's to check.
pub fn ipv4_json(args: &[&str]) -> (serde_json::Value, Output) {
    let ca = cacert();
    let mut all = vec!["--json", "-4", "--cacert", &ca];
    all.extend_from_slice(args);
    json_output(&all)
}

/// `tlsping --json --cacert <test CA> -w 5s -i 200ms <args>`: short rounds
/// with a deadline a busy machine meets; the exit code is the caller's to check.
pub fn quick_json(args: &[&str]) -> (serde_json::Value, Output) {
    let ca = cacert();
    let mut all = vec!["--json", "--cacert", &ca, "-w", "5s", "-i", "200ms"];
    all.extend_from_slice(args);
    json_output(&all)
}

/// Like [`quick_json`], and the run must exit 0.
pub fn quick_json_ok(args: &[&str]) -> serde_json::Value {
    let (doc, out) = quick_json(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
    doc
}

/// An observer of the in-process engine that ignores every event.
pub struct Quiet;
impl tlsping::probe::Observer for Quiet {}

/// The preflight, then the rounds of `cfg` in this process: the samples of
/// a run that must not stop early.
pub fn engine_samples(cfg: &tlsping::probe::Config) -> Vec<tlsping::probe::Sample> {
    use tlsping::probe::{self, Cancel, ProbeEnv};
    let env = ProbeEnv::new(cfg, Cancel::new()).unwrap();
    let pre = probe::preflight(cfg, &env).expect("preflight");
    let r = run_rounds(cfg, &pre.method, pre.addr, &env, &mut Quiet);
    assert!(r.stop.is_none(), "run stopped early: {:?}", r.stop);
    r.samples
}

/// The settings the in-process engine tests share: `count` rounds 20 ms
/// apart, a 5 s timeout, trusting the test CA.
pub fn engine_config(
    url: &str,
    mode: tlsping::probe::ModeChoice,
    count: u32,
) -> tlsping::probe::Config {
    let target = tlsping::probe::Target::parse(url).unwrap();
    let mut cfg = tlsping::probe::Config::new(target);
    cfg.settings.count = count;
    cfg.settings.interval = std::time::Duration::from_millis(20);
    cfg.settings.timeout = std::time::Duration::from_secs(5);
    cfg.settings.mode = mode;
    cfg.ca_file = Some(ca().pem_path.clone());
    cfg
}

/// The rounds of `cfg` as a run without a comparison, every probe
/// connecting to `dial` when pinned: what the engine tests drive without
/// the binary's planning (`run::plan` makes the same one setup).
pub fn run_rounds(
    cfg: &tlsping::probe::Config,
    method: &tlsping::probe::Method,
    dial: Option<std::net::SocketAddr>,
    env: &tlsping::probe::ProbeEnv,
    observer: &mut dyn tlsping::probe::Observer,
) -> tlsping::probe::Rounds {
    let setup = tlsping::probe::VariantSetup {
        variant: 0,
        config: cfg.clone(),
        method: method.clone(),
        dial,
    };
    let start = tlsping::probe::RunStart::now();
    tlsping::probe::run_variants(cfg, &[setup], env, start, observer)
}

/// Whether `tool` is on the PATH. A test that needs a tool beyond the build
/// prerequisites calls this first: outside CI a missing tool skips the test
/// with one printed line; under `CI=true` it fails it, since `.ci/run`
/// installs every such tool and a skip there would hide a gap.
pub fn have(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    });
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`{tool}` is missing, and CI must have it (.ci/run installs it)"
        );
        // Straight to the process's stderr: libtest captures what the print
        // macros write (eprintln! included) for passing tests, and a skip
        // must be seen. A direct write is not captured.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: this test needs `{tool}`, which is not installed"
        );
    }
    found
}

/// Skips the test that calls it (which returns next) with one line saying
/// why, written past libtest's capture as `have` writes its own, so the
/// skip is seen; under `CI=true` (which installs every tool and runs as
/// root) it fails the test instead. Any other value of `CI` skips.
pub fn skip(why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI must not skip: {why}"
    );
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
}

/// Whether the test runs as root; elsewhere it is skipped (`skip`).
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid(2) takes nothing and always succeeds.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        skip(&format!("{test} needs root"));
    }
    root
}

/// One value per timed sample of `mode` in a `--json` document (not warmup,
/// no error), as `f` reads it; samples where `f` gives nothing are skipped.
pub fn sample_values(
    doc: &serde_json::Value,
    mode: &str,
    f: impl Fn(&serde_json::Value) -> Option<f64>,
) -> Vec<f64> {
    doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["mode"] == mode && s["warmup"] == false && s["error"].is_null())
        .filter_map(f)
        .collect()
}

/// Polls `done` every 20 ms for at most 10 s (the binary may start slowly on a
/// busy machine); past that the child is killed, so an endless run never outlives the test.
pub fn wait_for(child: &mut std::process::Child, what: &str, done: impl Fn() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !done() {
        if std::time::Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn sigint(child: &std::process::Child) {
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0, "kill -INT failed");
}
