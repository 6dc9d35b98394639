//! The generated man page and completions exist and name every flag; the
//! README documents every flag, exit code and error kind.

use clap_complete::{generate, Shell};

fn man_page() -> String {
    let mut out = Vec::new();
    clap_mangen::Man::new(tlsping::cli::docs::command())
        .render(&mut out)
        .unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn man_page_mentions_every_flag() {
    let man = man_page();
    assert!(
        man.contains(".TH tlsping"),
        "{}",
        &man[..200.min(man.len())]
    );
    for flag in tlsping::cli::docs::long_flags() {
        // roff escapes the dashes: --count is written \-\-count.
        let escaped = flag.replace('-', "\\-");
        assert!(man.contains(&escaped), "{flag} missing from the man page");
    }
}

#[test]
fn completions_mention_every_flag() {
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut out = Vec::new();
        generate(
            shell,
            &mut tlsping::cli::docs::command(),
            "tlsping",
            &mut out,
        );
        let text = String::from_utf8(out).unwrap();
        for flag in tlsping::cli::docs::long_flags() {
            let bare = flag.trim_start_matches('-');
            // fish writes `-l count`, the others `--count`.
            let found = text.contains(&flag) || text.contains(&format!("-l {bare}"));
            assert!(found, "{flag} missing from the {shell} completions");
        }
    }
}

#[test]
fn readme_documents_every_flag_exit_code_and_error_kind() {
    let readme = include_str!("../README.md");
    for flag in tlsping::cli::docs::long_flags() {
        if flag == "--help" {
            continue;
        }
        assert!(
            readme.contains(&format!("`{flag}")),
            "README does not document {flag}"
        );
    }
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
            "README does not document {kind}"
        );
    }
    for code in ["| 0 |", "| 1 |", "| 2 |", "| 3 |"] {
        assert!(readme.contains(code), "README exit-code table lacks {code}");
    }
}
