//! Every line of the README's Install section works on a fresh machine. The
//! lines run, as written, in a clean temporary home and with a temporary
//! folder standing in for `/usr/local` (empty: a fresh Debian 12 has no
//! `/usr/local/share/man/man1`, and a new home no `~/.local/share/...`),
//! `sudo` dropped, and every file must land where its line says, holding
//! what it should: the binary runs, the man page is roff, a completion
//! names the flags.
//!
//! The build is not run again (minutes of compiling): `cargo build` and
//! `cargo install` stand in by putting the test binary where cargo puts
//! theirs (`target/release/`, and `$CARGO_HOME/bin`, `~/.cargo/bin` by
//! default), and the README must name that place. The systemd steps of
//! docs/monitoring.md have their own test (tests/systemd_unit.rs).

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::{docs, markdown, show, TempDir};

/// The command lines of README.md's Install section (the lines of its code
/// blocks), in order.
fn install_lines() -> Vec<String> {
    let readme = docs::read("README.md");
    let install = docs::section(&readme, "## Install").expect("README.md's Install section");
    markdown::code_blocks(install)
        .iter()
        .flat_map(|b| b.code.lines().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Where cargo puts what `cargo install` builds, as the README says.
const CARGO_INSTALLS_TO: &str = "~/.cargo/bin/tlsping";

/// Where a line writes its file: after `>`, the last word of an `install`
/// command that copies (not `install -d`), or cargo's own place for
/// `cargo install`. `None` for a line that writes no file of the user's
/// (`cargo build`).
fn destination(line: &str) -> Option<String> {
    if let Some((_, to)) = line.rsplit_once(" > ") {
        return to.split_whitespace().next().map(str::to_string);
    }
    if line.starts_with("cargo install ") {
        return Some(CARGO_INSTALLS_TO.into());
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = (0..words.len())
        .find(|&i| words[i] == "install" && (i == 0 || ["sudo", "|"].contains(&words[i - 1])))?;
    let copies = !words[at..].contains(&"-d") && words.len() > at + 2;
    copies.then(|| words.last().unwrap().to_string())
}

/// `line` with `/usr/local` moved to `prefix`, and `/etc` (where fish
/// looks for every user's completions) to `prefix/etc`.
fn in_prefix(line: &str, prefix: &Path) -> String {
    let p = prefix.to_str().unwrap();
    line.replace("/usr/local", p)
        .replace(" /etc/", &format!(" {p}/etc/"))
}

/// A place as the shell reads it: `~` is `home`.
fn place(path: &str, home: &Path) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(path),
    }
}

/// The shell's prelude: `sudo` runs the command as it is, and `cargo`
/// puts the built binary where cargo would.
const PRELUDE: &str = r#"set -eu
sudo() { "$@"; }
cargo() {
  case "$1" in
    build) install -D -m 755 "$TLSPING_BUILT" target/release/tlsping ;;
    install) install -D -m 755 "$TLSPING_BUILT" "${CARGO_HOME:-$HOME/.cargo}/bin/tlsping" ;;
    test) ;; # the set-up's test command: tests/readme_setup.rs holds it to .ci/run
    *) echo "cargo $1: not an install step" >&2; return 1 ;;
  esac
}
"#;

#[test]
fn the_readme_says_where_cargo_install_puts_the_binary() {
    let readme = docs::read("README.md");
    let install = docs::section(&readme, "## Install").unwrap();
    let blocks = markdown::blocks(install);
    let at = blocks
        .iter()
        .position(|b| b.kind == "code block" && b.source.trim().starts_with("cargo install "))
        .expect("a `cargo install` line");
    let paragraph = &blocks[..at]
        .iter()
        .rfind(|b| b.kind == "paragraph")
        .expect("a paragraph before it")
        .source;
    let folder = CARGO_INSTALLS_TO.trim_end_matches("/tlsping");
    let spans = markdown::code_spans(paragraph);
    assert!(spans.iter().any(|s| s.code == folder), "{paragraph}");
}

/// Runs `script` as a fresh machine would: in `clone` (the checkout),
/// with nothing of this environment but a `HOME` and a PATH that holds the
/// places the lines install to.
fn run_in_fresh_home(script: &[String], home: &Path, prefix: &Path, clone: &Path) {
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        home.join(".cargo/bin").display(),
        prefix.join("bin").display()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{PRELUDE}{}\n", script.join("\n")))
        .current_dir(clone)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .env("TLSPING_BUILT", support::bin())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the install lines failed:\n{}\n{}",
        script.join("\n"),
        show(&out)
    );
}

/// `file`, which `line` wrote, is what the line promises: a man page, a
/// completion that names the flags, or the binary, executable, that runs.
fn check_landed(line: &str, file: &Path) {
    let meta = std::fs::metadata(file)
        .unwrap_or_else(|e| panic!("`{line}` left nothing at {}: {e}", file.display()));
    assert!(
        meta.is_file() && meta.len() > 0,
        "{line}: {}",
        file.display()
    );
    let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
    if line.contains("--generate man") {
        assert!(text.contains(".TH "), "{line}: not a man page");
        assert_eq!(
            meta.permissions().mode() & 0o444,
            0o444,
            "{line}: not readable by all"
        );
    } else if line.contains("--generate ") {
        assert!(
            text.contains("count"),
            "{line}: a completion without --count"
        );
    } else {
        assert_eq!(meta.permissions().mode() & 0o777, 0o755, "{line}");
        let version = Command::new(file).arg("--version").output().unwrap();
        assert!(version.status.success(), "{line}: {}", show(&version));
    }
}

#[test]
fn every_install_line_works_in_a_fresh_home_and_prefix() {
    let lines = install_lines();
    let dir = TempDir::new("install-lines");
    let (home, prefix, clone) = (
        dir.path().join("home"),
        dir.path().join("usr-local"),
        dir.path().join("clone"),
    );
    for d in [&home, &prefix, &clone] {
        std::fs::create_dir(d).unwrap();
    }
    let script: Vec<String> = lines.iter().map(|l| in_prefix(l, &prefix)).collect();
    // The lines run as root here: none may reach outside the test's folder.
    for line in &script {
        for word in line.split([' ', '>', '=']).filter(|w| w.starts_with('/')) {
            assert!(
                Path::new(word).starts_with(dir.path()) || word == "/dev/stdin",
                "'{word}' is outside the test's folder once moved: {line}"
            );
        }
    }
    run_in_fresh_home(&script, &home, &prefix, &clone);
    let mut landed = Vec::new();
    for (line, run) in lines.iter().zip(&script) {
        if let Some(to) = destination(run) {
            let file = place(&to, &home);
            assert!(file.starts_with(dir.path()), "{line} writes {file:?}");
            check_landed(line, &file);
            landed.push(file);
        }
    }
    // Each kind of file, for one user and for every user.
    let under = |root: &Path, what: &str| {
        landed
            .iter()
            .any(|f| f.starts_with(root) && f.to_str().unwrap().ends_with(what))
    };
    for what in [
        "/bin/tlsping",
        "/man1/tlsping.1",
        "/completions/tlsping",
        "_tlsping",
        "tlsping.fish",
    ] {
        assert!(
            under(&home, what),
            "nothing for one user ends in {what}: {landed:?}"
        );
        assert!(
            under(&prefix, what),
            "nothing for every user ends in {what}: {landed:?}"
        );
    }
    // As the README says, `man` finds the page for one user once
    // `~/.local/bin` is on the PATH (whether that folder exists or not).
    if support::have("man") {
        let found = Command::new("man")
            .args(["-w", "tlsping"])
            .env_clear()
            .env("HOME", &home)
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", home.join(".local/bin").display()),
            )
            .output()
            .unwrap();
        let page = home.join(".local/share/man/man1/tlsping.1");
        assert_eq!(
            support::stdout(&found).trim(),
            page.to_str().unwrap(),
            "{}",
            show(&found)
        );
    }
}

#[test]
fn the_destination_of_a_line_is_read_as_the_shell_writes_it() {
    let cases = [
        (
            "mkdir -p ~/.zfunc && tlsping --generate zsh > ~/.zfunc/_tlsping",
            Some("~/.zfunc/_tlsping"),
        ),
        (
            "sudo install -D -m 755 target/release/tlsping /usr/local/bin/tlsping",
            Some("/usr/local/bin/tlsping"),
        ),
        ("sudo install -d /etc/tlsping", None),
        ("cargo build --release --locked", None),
        ("cargo install --locked --path .", Some(CARGO_INSTALLS_TO)),
        (
            "tlsping --generate bash | sudo install -D -m 644 /dev/stdin /usr/local/x/tlsping",
            Some("/usr/local/x/tlsping"),
        ),
    ];
    for (line, want) in cases {
        assert_eq!(destination(line).as_deref(), want, "{line}");
    }
    let home = Path::new("/h");
    assert_eq!(
        place("~/.zfunc/_tlsping", home),
        home.join(".zfunc/_tlsping")
    );
    assert_eq!(
        in_prefix("/usr/local/share/man/man1/tlsping.1", Path::new("/p")),
        "/p/share/man/man1/tlsping.1"
    );
}
