//! The documents give every flag (docs/output.md), exit code and error kind
//! (docs/measurement.md), in both editions (the man page and completions
//! the binary prints are `tests/generate.rs`'s).

mod support;

use support::{docs, markdown};

/// The first cells of the flags table (the table with a row for `-n`),
/// from `-n`'s row on.
fn flag_cells(text: &str) -> Vec<String> {
    let first_cells = |t: markdown::Table| -> Vec<String> {
        t.rows.into_iter().map(|r| r.cells[0].clone()).collect()
    };
    markdown::tables(text)
        .into_iter()
        .map(first_cells)
        .find_map(|cells| {
            let at = cells.iter().position(|c| c.starts_with("`-n`"))?;
            Some(cells[at..].to_vec())
        })
        .unwrap_or_default()
}

#[test]
fn the_flags_tables_name_every_flag_clap_knows() {
    let mut command = tlsping::cli::docs::command();
    // clap adds `-h`/`--help` when it builds the command.
    command.build();
    for name in ["docs/output.md", "docs/ko/output.md"] {
        let text = docs::read(name);
        let cells = flag_cells(&text);
        assert!(cells.len() >= 20, "{name}: flags table not found");
        let in_table = |spelling: String| cells.iter().any(|c| c.contains(&spelling));
        for arg in command.get_arguments() {
            if let Some(long) = arg.get_long() {
                // `--count N`: the name, then its value or the cell's end.
                let named = in_table(format!("`--{long} ")) || in_table(format!("`--{long}`"));
                assert!(named, "{name}'s flags table lacks --{long}");
            }
            let shorts = arg
                .get_short()
                .into_iter()
                .chain(arg.get_visible_short_aliases().into_iter().flatten());
            for short in shorts {
                assert!(
                    in_table(format!("`-{short}")),
                    "{name}'s flags table lacks -{short}"
                );
            }
        }
    }
}

#[test]
fn the_docs_give_every_exit_code_and_error_kind() {
    let readme = docs::read("docs/measurement.md");
    for kind in [
        "timeout",
        "conn_refused",
        "conn_reset",
        "dns_fail",
        "unreachable",
        "cert_expired",
        "cert_name",
        "cert_unknown_ca",
        "cert_invalid",
        "tls_error",
        "conn_closed",
        "body_error",
        "canceled",
        "error",
    ] {
        assert!(
            readme.contains(&format!("`{kind}`")),
            "docs/measurement.md does not document {kind}"
        );
    }
    let codes = markdown::section(&readme, "## Exit codes")
        .map(markdown::tables)
        .unwrap_or_default();
    let first_cells: Vec<&str> = codes
        .iter()
        .flat_map(|t| &t.rows)
        .map(|r| r.cells[0].as_str())
        .collect();
    for code in ["0", "1", "2", "3"] {
        assert!(
            first_cells.contains(&code),
            "docs/measurement.md's exit-code table lacks {code}"
        );
    }
}

#[test]
fn the_declared_rust_version_is_the_readmes_and_covers_every_dependency() {
    let declared = env!("CARGO_PKG_RUST_VERSION");
    assert!(!declared.is_empty(), "Cargo.toml declares no rust-version");
    for (name, text) in [
        ("README.md", include_str!("../README.md")),
        ("README.ko.md", include_str!("../README.ko.md")),
    ] {
        assert!(
            text.contains(&format!("({declared} "))
                || text.contains(&format!("({declared} or newer)")),
            "{name} does not name Rust {declared}"
        );
    }
    assert!(
        include_str!("../vendor-notes.md").contains(&format!("Rust {declared} or newer")),
        "vendor-notes.md does not name Rust {declared}"
    );
    // No locked dependency may need a newer Rust than the one declared.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        // This platform's packages only: those are the ones a build has
        // downloaded (wasm-only crates in the lock never are).
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", env!("TLSPING_TARGET")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let version = |v: &str| -> Vec<u32> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    let ours = version(declared);
    for p in meta["packages"].as_array().unwrap() {
        if let Some(needs) = p["rust_version"].as_str() {
            assert!(
                version(needs) <= ours,
                "{} needs Rust {needs}, above the declared {declared}",
                p["name"]
            );
        }
    }
}

#[test]
fn version_names_the_checked_out_commit() {
    let git = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    let Some(head) = git
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    else {
        println!("skipped: not a git checkout");
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tlsping"))
        .arg("--version")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("git {head}")),
        "--version must name HEAD {head}: {text}"
    );
}

/// CI holds every stop to the lints the guide asks for before it: clippy
/// over every target with warnings denied, before the tests.
#[test]
fn ci_runs_clippy_with_warnings_denied_before_the_tests() {
    let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")).unwrap();
    let lines: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    let clippy = lines.iter().position(|l| {
        l.starts_with("cargo clippy")
            && l.contains("--all-targets")
            && l.ends_with("-- -D warnings")
    });
    let tests = lines.iter().position(|l| l.starts_with("cargo test"));
    assert!(
        clippy.is_some(),
        ".ci/run runs no `cargo clippy --all-targets -- -D warnings`"
    );
    assert!(clippy < tests, ".ci/run lints after the tests");
}
