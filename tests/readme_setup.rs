//! The README's two set-up commands, as a newcomer finds them: the one that
//! builds and runs tlsping and the one that runs its tests, both in the
//! Install section of README.md and of README.ko.md. They are the commands
//! CI runs (`.ci/run`), the README names every tool CI installs for the
//! tests, and the build-and-run command works as written on this checkout.
//!
//! Bounded on purpose: the build command runs against the release build
//! `.ci/run` made just before the tests (cargo finds it fresh in seconds,
//! and `--locked` still checks Cargo.lock), then runs the binary; where the
//! release build is missing or older than the sources it would take
//! minutes, and the test skips (fails under `CI=true`). The test command is
//! not run again inside itself (a nested `cargo test` is the whole suite
//! again): it is held to be exactly the line `.ci/run` runs, whose run of it
//! is this very test run, and under `CI=true`, where that run has built
//! every test target, `cargo test --locked --no-run` checks that the line
//! as written finds them all built from the lock file.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::{docs, show};

/// The README's set-up commands: the build-and-run line and the test line
/// of its Install section.
struct SetUp {
    build_and_run: String,
    test: String,
}

fn set_up(readme: &str) -> SetUp {
    let text = docs::read(readme);
    let heading = if readme == "README.md" {
        "## Install"
    } else {
        "## 설치"
    };
    let install = docs::section(&text, heading).unwrap_or_else(|| panic!("{readme}: {heading}"));
    let lines: Vec<&str> = install
        .lines()
        .filter_map(|l| l.strip_prefix("    "))
        .collect();
    let one = |starts: &str| {
        let found: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.starts_with(starts))
            .collect();
        assert_eq!(found.len(), 1, "{readme}: one `{starts}` line: {found:?}");
        found[0].to_string()
    };
    SetUp {
        build_and_run: one("cargo build "),
        test: one("cargo test"),
    }
}

/// `.ci/run`'s lines, comments and blanks left out.
fn ci_commands() -> Vec<String> {
    let script = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run"))
        .expect(".ci/run");
    script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[test]
fn both_readmes_show_the_two_set_up_commands_ci_runs() {
    let english = set_up("README.md");
    let korean = set_up("README.ko.md");
    assert_eq!(english.build_and_run, korean.build_and_run);
    assert_eq!(english.test, korean.test);
    let ci = ci_commands();
    // The test command is the line CI runs, word for word.
    assert_eq!(english.test, "cargo test --locked");
    assert!(ci.contains(&english.test), "{ci:#?}");
    // The build is CI's build; what runs after it is the binary it built.
    let (build, run) = english
        .build_and_run
        .split_once(" && ")
        .expect("build, then run");
    assert!(ci.iter().any(|l| l == build), "{build}: {ci:#?}");
    assert!(run.starts_with("target/release/tlsping "), "{run}");
    // CI builds before it tests, as the README has them.
    let at = |line: &str| ci.iter().position(|l| l == line).unwrap();
    assert!(at(build) < at(&english.test), "{ci:#?}");
}

#[test]
fn the_readmes_name_every_tool_ci_installs_for_the_tests() {
    // `command -v TOOL >/dev/null || need+=(...)`: the tools a fresh
    // machine gets, beyond the build's own (a C compiler, perl, make).
    let build = ["cc", "perl", "make"];
    let tools: Vec<String> = ci_commands()
        .iter()
        .filter_map(|l| l.strip_prefix("command -v "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|t| !build.contains(t))
        .map(str::to_string)
        .collect();
    assert!(tools.len() > 10, "{tools:?}");
    for (readme, heading) in [("README.md", "## Install"), ("README.ko.md", "## 설치")] {
        let text = docs::read(readme);
        let install = docs::section(&text, heading).unwrap();
        for tool in &tools {
            assert!(
                install.contains(&format!("`{tool}`")),
                "{readme} does not say the tests use `{tool}`"
            );
        }
        assert!(install.contains("`CI=true`"), "{readme}");
    }
}

/// The newest modification among the checkout's sources, its lock file and
/// what build.rs watches (the commit checked out, which `--version`
/// reports): a release build older than this is not the one the README's
/// command would find.
fn newest_source(root: &Path) -> std::time::SystemTime {
    fn walk(dir: &Path, newest: &mut std::time::SystemTime) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                walk(&path, newest);
            } else if let Ok(modified) = meta.modified() {
                *newest = (*newest).max(modified);
            }
        }
    }
    let mut newest = std::time::UNIX_EPOCH;
    let mut parts: Vec<std::path::PathBuf> = ["src", "build.rs", "Cargo.toml", "Cargo.lock"]
        .iter()
        .map(|p| root.join(p))
        .collect();
    let git = Command::new("git")
        .args([
            "rev-parse",
            "--git-dir",
            "--git-common-dir",
            "--symbolic-full-name",
            "HEAD",
        ])
        .current_dir(root)
        .output();
    if let Some(out) = git.ok().filter(|o| o.status.success()) {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        if let [dir, common, branch] = lines[..] {
            parts.push(root.join(dir).join("HEAD"));
            parts.push(root.join(common).join(branch));
        }
    }
    for path in parts {
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk(&path, &mut newest),
            Ok(meta) => newest = newest.max(meta.modified().unwrap()),
            Err(_) => {}
        }
    }
    newest
}

/// `sh -c LINE` in `root`, with the environment a newcomer's shell has:
/// without what cargo sets for the test that runs it (`CARGO_BIN_EXE_*`,
/// `CARGO_PKG_*`, `OUT_DIR`...), which a nested cargo would take for a
/// change (an example reads `CARGO_BIN_EXE_tlsping` and would be built
/// again); cargo's own configuration in the environment stays.
fn shell(line: &str, root: &Path) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(line).current_dir(root);
    let configuration = [
        "CARGO_HOME",
        "CARGO_TARGET_DIR",
        "CARGO_INCREMENTAL",
        "CARGO_BUILD_",
        "CARGO_NET_",
        "CARGO_HTTP_",
        "CARGO_REGISTR",
        "CARGO_PROFILE_",
        "CARGO_TERM_",
    ];
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_by_cargo = (name.starts_with("CARGO") || name == "OUT_DIR")
            && !configuration.iter().any(|c| name.starts_with(c));
        if set_by_cargo {
            cmd.env_remove(name);
        }
    }
    cmd
}

#[test]
fn the_build_and_run_command_works_as_written_on_this_checkout() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tested = Path::new(env!("CARGO_BIN_EXE_tlsping"));
    let release = tested
        .parent()
        .and_then(Path::parent)
        .expect("the target directory")
        .join("release/tlsping");
    let fresh = std::fs::metadata(&release)
        .and_then(|m| m.modified())
        .is_ok_and(|built| built >= newest_source(root));
    if !fresh {
        support::skip(&format!(
            "no release build newer than the sources at {} (cargo build --release --locked \
             builds it; .ci/run does, before the tests)",
            release.display()
        ));
        return;
    }
    let line = set_up("README.md").build_and_run;
    // Run as written, from the checkout; the release build lives in this
    // run's target directory, wherever that is.
    let target = release.parent().unwrap().parent().unwrap();
    let line = line.replace("target/release/", &format!("{}/release/", target.display()));
    let mut cmd = shell(&line, root);
    cmd.env("NO_COLOR", "1").env("COLUMNS", "120");
    if target != root.join("target") {
        cmd.env("CARGO_TARGET_DIR", target);
    }
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "`{line}`: {}", show(&out));
    let text = support::stdout(&out);
    assert!(text.contains("calibration: tlsping's own server"), "{text}");
    assert!(text.contains("statistics (calibration"), "{text}");
    // A fresh build is found fresh: nothing was compiled again.
    let err = support::stderr(&out);
    assert!(!err.contains("Compiling "), "{err}");
    assert!(took < Duration::from_secs(120), "{took:?}");
}

#[test]
fn under_ci_the_test_command_finds_every_test_built_from_the_lock_file() {
    if std::env::var("CI").as_deref() != Ok("true") {
        // Outside CI this command may build every test target: minutes.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: runs under CI=true only, after `cargo test --locked` built every test"
        );
        return;
    }
    let test = set_up("README.md").test;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = shell(&format!("{test} --no-run"), root).output().unwrap();
    assert!(out.status.success(), "`{test} --no-run`: {}", show(&out));
    assert!(
        !support::stderr(&out).contains("Compiling "),
        "{}",
        show(&out)
    );
}
