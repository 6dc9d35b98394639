//! `tlsping --generate KIND`: the binary prints its own man page and shell
//! completions. Each kind is run through the built binary; the completions
//! are read by their own shell; the man page is rendered by man(1) and
//! holds, in its reference sections, every exit code, failure kind,
//! environment variable, sample field and write-out variable, each taken
//! from the code's own tables rather than a list written here.

mod support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use clap::ValueEnum;
use tlsping::cli::docs::Generate;

/// The name `--generate` takes for `kind`.
fn name(kind: Generate) -> String {
    kind.to_possible_value()
        .expect("no kind is hidden")
        .get_name()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(support::bin())
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("the binary runs")
}

/// What `--generate kind` prints, having exited 0 with nothing on stderr.
fn generated(kind: Generate) -> String {
    let name = name(kind);
    let out = run(&["--generate", &name]);
    assert_eq!(out.status.code(), Some(0), "--generate {name}: {out:?}");
    assert!(out.stderr.is_empty(), "--generate {name}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 text")
}

/// `input` through `program args`: its exit status, stdout and stderr.
fn piped(program: &str, args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn every_kind_exits_0_and_prints_something() {
    let kinds = Generate::value_variants();
    let names: Vec<String> = kinds.iter().map(|&k| name(k)).collect();
    assert_eq!(
        names,
        ["man", "bash", "zsh", "fish", "elvish", "powershell"],
        "the kinds the issue asks for"
    );
    for &kind in kinds {
        let text = generated(kind);
        assert!(text.len() > 1000, "--generate {}: {text}", name(kind));
        if kind != Generate::Man {
            assert!(text.contains("tlsping"), "{text}");
        }
    }
}

#[test]
fn generate_is_in_the_help_and_stands_alone() {
    let help = run(&["--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("--generate <KIND>"), "{help}");
    for kind in Generate::value_variants() {
        assert!(help.contains(&name(*kind)), "{help}");
    }
    // A target (or any other flag) with it is a usage error, not a run.
    let out = run(&["--generate", "man", "127.0.0.1:9"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let out = run(&["--generate", "tcsh"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--generate"), "{stderr}");
}

#[test]
fn the_man_page_names_every_flag() {
    let man = generated(Generate::Man);
    assert!(
        man.contains(".TH TLSPING 1"),
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
fn every_completion_names_every_flag() {
    for &kind in Generate::value_variants() {
        if kind == Generate::Man {
            continue;
        }
        let text = generated(kind);
        for flag in tlsping::cli::docs::long_flags() {
            let bare = flag.trim_start_matches('-');
            // fish writes `-l count`, the others `--count`.
            let found = text.contains(&flag) || text.contains(&format!("-l {bare}"));
            assert!(found, "{flag} missing from the {} completions", name(kind));
        }
    }
}

/// Each completion script read by its own shell without running it.
#[test]
fn the_completions_are_valid_in_their_shells() {
    let checks = [
        (Generate::Bash, "bash", &["-n"][..]),
        (Generate::Zsh, "zsh", &["-n"][..]),
        (Generate::Fish, "fish", &["--no-execute"][..]),
    ];
    for (kind, shell, args) in checks {
        if !support::have(shell) {
            continue;
        }
        let script = generated(kind);
        let dir = support::TempDir::new("generate");
        let path = dir.path().join(kind.file_name());
        std::fs::write(&path, &script).unwrap();
        let out = Command::new(shell).args(args).arg(&path).output().unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{shell} {args:?} {}: {out:?}",
            path.display()
        );
        // The check itself can fail: an `if` never closed is refused.
        std::fs::write(&path, format!("if true\n{script}")).unwrap();
        let out = Command::new(shell).args(args).arg(&path).output().unwrap();
        assert!(!out.status.success(), "{shell} took an unclosed if");
    }
}

/// The flags whose values the completions offer instead of file names,
/// with those values.
fn offered() -> Vec<(&'static str, Vec<&'static str>)> {
    let axes = tlsping::probe::AXES.iter().map(|a| a.name).collect();
    vec![
        ("compare", axes),
        ("tls-max", vec!["1.2", "1.3"]),
        ("http-version", vec!["1.1", "2", "auto"]),
        ("mode", vec!["both", "cold", "warm"]),
    ]
}

/// What bash completes after `tlsping --FLAG `, asked of the script
/// `--generate bash` prints, as bash's programmable completion calls it.
fn bash_completes(script: &std::path::Path, flag: &str) -> Vec<String> {
    let line = format!("tlsping --{flag} ");
    let program = format!(
        "source {}; COMP_WORDS=(tlsping --{flag} ''); COMP_CWORD=2; COMP_LINE='{line}'; \
         COMP_POINT=${{#COMP_LINE}}; _tlsping tlsping '' --{flag}; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "-c", &program])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// What fish completes after `tlsping --FLAG `, with the script `--generate
/// fish` prints.
fn fish_completes(script: &std::path::Path, flag: &str) -> Vec<String> {
    let program = format!(
        "source {}; complete -C 'tlsping --{flag} '",
        script.display()
    );
    let out = Command::new("fish")
        .args(["--no-config", "-c", &program])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap_or(l).to_string())
        .collect()
}

#[test]
fn the_completions_offer_the_axes_and_versions_not_files() {
    let dir = support::TempDir::new("completions");
    // A file that a completion of file names would offer.
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    let write = |kind: Generate| {
        let path = dir.path().join(kind.file_name());
        std::fs::write(&path, generated(kind)).unwrap();
        path
    };
    let (bash, fish) = (write(Generate::Bash), write(Generate::Fish));
    let zsh = generated(Generate::Zsh);
    for (flag, values) in offered() {
        if support::have("bash") {
            assert_eq!(bash_completes(&bash, flag), values, "bash, --{flag}");
        }
        if support::have("fish") {
            // fish sorts what it offers.
            let mut sorted = values.clone();
            sorted.sort_unstable();
            assert_eq!(fish_completes(&fish, flag), sorted, "fish, --{flag}");
        }
        // zsh's spec of the flag ends in the values it offers: `:(a b)`.
        let spec = zsh
            .lines()
            .find(|l| l.starts_with(&format!("'--{flag}=")))
            .unwrap_or_else(|| panic!("no zsh spec for --{flag}"));
        assert!(
            spec.ends_with(&format!(":({})' \\", values.join(" "))),
            "zsh, --{flag}: {spec}"
        );
    }
}

#[test]
fn the_man_page_makes_no_roff_warnings() {
    if !support::have("groff") {
        return;
    }
    let page = generated(Generate::Man);
    let out = piped("groff", &["-man", "-ww", "-z"], &[], &page);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "groff: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The man page as man(1) renders it for a wide terminal, as plain text.
fn rendered_man_page() -> Option<String> {
    if !support::have("man") || !support::have("groff") {
        return None;
    }
    let page = generated(Generate::Man);
    let env = [
        ("MANWIDTH", "200"),
        ("COLUMNS", "200"),
        ("MANPAGER", "cat"),
        ("PAGER", "cat"),
        ("LC_ALL", "C.UTF-8"),
    ];
    let out = piped("man", &["-P", "cat", "-l", "-"], &env, &page);
    assert!(out.status.success(), "man -l -: {out:?}");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    // Overstrike bold (`x\bx`) would hide the words; man leaves it out of
    // a pipe, but be sure. roff's \- may be typeset as U+2212.
    assert!(!text.contains('\u{8}'), "formatting left in: {text}");
    Some(text.replace(['\u{2212}', '\u{2010}'], "-"))
}

/// The lines of the section `heading` of a rendered page, up to the next
/// heading (a line at the left margin).
fn section<'a>(page: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = page.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "no section {heading} in:\n{page}");
    lines
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

/// Whether one of `lines` starts (after its indent) with `tag` as a word.
fn tagged(lines: &[&str], tag: &str) -> bool {
    lines.iter().any(|l| {
        l.trim_start()
            .strip_prefix(tag)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ',', '(']))
    })
}

#[test]
fn the_rendered_man_page_has_every_exit_code_kind_variable_and_field() {
    let Some(page) = rendered_man_page() else {
        return;
    };
    for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SEE ALSO"] {
        section(&page, heading);
    }
    let exit = section(&page, "EXIT STATUS");
    for (code, _) in tlsping::exit::CODES {
        assert!(tagged(&exit, &code.to_string()), "exit {code}: {exit:#?}");
    }
    assert!(tagged(&exit, "128+N"), "{exit:#?}");

    let kinds = section(&page, "FAILURE KINDS");
    for kind in tlsping::probe::ErrorKind::ALL {
        assert!(tagged(&kinds, kind.slug()), "{}: {kinds:#?}", kind.slug());
    }

    let env = section(&page, "ENVIRONMENT");
    for (names, _) in tlsping::cli::man_sections::ENVIRONMENT {
        for var in names {
            let listed = env.iter().any(|l| l.split([' ', ',']).any(|w| w == *var));
            assert!(listed, "{var}: {env:#?}");
        }
    }

    let files = section(&page, "FILES");
    for flag in ["--svg", "--openmetrics", "--cacert", "--key", "--write-out"] {
        assert!(files.iter().any(|l| l.contains(flag)), "{flag}: {files:#?}");
    }

    let fields = section(&page, "OUTPUT FIELDS");
    for field in &tlsping::render::fields::FIELDS {
        let json = match field.json {
            tlsping::render::fields::JsonKey::Top(k) => k.to_string(),
            tlsping::render::fields::JsonKey::Nested(o, k) => format!("{o}.{k}"),
        };
        let line = fields
            .iter()
            .find(|l| l.trim_start().split(' ').next() == Some(json.as_str()))
            .unwrap_or_else(|| panic!("field {json}: {fields:#?}"));
        if let Some(csv) = field.csv {
            assert!(line.contains(&format!("CSV {}", csv.name)), "{line}");
        }
        assert!(!field.about.is_empty(), "{json} has no description");
    }

    let summary = section(&page, "SUMMARY FIELDS");
    for field in tlsping::render::summary_fields::SUMMARY_FIELDS {
        let line = summary
            .iter()
            .find(|l| l.trim_start().split(' ').next() == Some(field.name))
            .unwrap_or_else(|| panic!("summary field {}: {summary:#?}", field.name));
        if let Some(m) = &field.metric {
            assert!(
                line.contains(&format!("gauge tlsping_{}", m.name)),
                "{line}"
            );
        }
        assert!(!field.about.is_empty(), "{} has no description", field.name);
    }

    let vars = section(&page, "WRITE-OUT VARIABLES");
    for var in tlsping::render::write_out::variables() {
        assert!(tagged(&vars, var.name), "%{{{}}}: {vars:#?}", var.name);
    }
}

/// The list of write-out variables is what the parser takes: every name
/// listed as answered parses, every one listed as refused is refused with
/// its reason, and the list has no name twice.
#[test]
fn the_listed_write_out_variables_are_what_a_format_takes() {
    let vars = tlsping::render::write_out::variables();
    let mut names: Vec<&str> = vars.iter().map(|v| v.name).collect();
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "a name twice");
    for var in &vars {
        let parsed = tlsping::render::write_out::parse_format(&format!("%{{{}}}", var.name));
        match var.refused {
            None => assert!(parsed.is_ok(), "%{{{}}}: {parsed:?}", var.name),
            Some(why) => {
                let err = parsed.expect_err(var.name);
                assert!(err.contains(why), "{err}");
            }
        }
        assert!(!var.about.is_empty(), "{} has no description", var.name);
    }
}

#[test]
fn an_unknown_write_out_variable_points_to_the_man_page() {
    // Refused before anything is dialed (exit 3).
    let out = run(&["-k", "--write-out", "%{nosuch}", "127.0.0.1:9"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("'nosuch'"), "{stderr}");
    assert!(stderr.contains("man tlsping"), "{stderr}");
    assert!(!stderr.contains("README"), "{stderr}");
}

/// Every message the binary can print is in `src/`: none sends the user
/// to the README, which a user with only the binary does not have. (The
/// man page's SEE ALSO, `cli/man_sections.rs`, names the project's docs;
/// test files read the README itself.)
#[test]
fn no_message_points_to_the_readme() {
    for (file, text) in sources() {
        if file.ends_with("man_sections.rs") || file.contains("test") {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let comment = line.trim_start().starts_with("//");
            let said = line.contains("README") && line.contains('"');
            assert!(comment || !said, "{file}:{}: {line}", n + 1);
        }
    }
}

/// Every `.rs` file under `src/`, with its text, tests and all.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.display().to_string(), text));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut out,
    );
    out
}

/// The man page's ENVIRONMENT table names every variable the code reads:
/// each literal name given to `env::var`, `env::var_os` or the trust
/// store's `env_path`, and each read through a named constant.
#[test]
fn the_environment_table_names_every_variable_the_code_reads() {
    let listed: Vec<&str> = tlsping::cli::man_sections::ENVIRONMENT
        .iter()
        .flat_map(|(names, _)| names.iter().copied())
        .collect();
    // Reads whose name is not a literal at the call: the variable each
    // call site reads through, checked here by its value.
    let through = [
        ("var_os(name)", vec!["SSL_CERT_FILE", "SSL_CERT_DIR"]),
        ("var(k)", tlsping::cli::PROXY_VARS.to_vec()),
        ("var_os(PUSH_AUTH_VAR)", vec![tlsping::cli::PUSH_AUTH_VAR]),
        ("var_os(KEYLOG_VAR)", vec![tlsping::files::KEYLOG_VAR]),
        // probe::push::env_value: the probes' proxy, as libcurl picks it.
        (
            "var(name)",
            [&tlsping::cli::PROXY_VARS[..], &["no_proxy", "NO_PROXY"]].concat(),
        ),
    ];
    let mut seen = 0;
    for (file, text) in sources() {
        // A test file of its own (`files/tests.rs`, `*_tests.rs`) is all tests.
        let name = file.rsplit('/').next().unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for call in ["env::var(", "env::var_os(", "env_path("] {
            for (at, _) in code.match_indices(call) {
                let arg = &code[at + call.len()..];
                let arg = &arg[..arg.find(')').unwrap_or(arg.len())];
                if let Some(name) = arg.strip_prefix('"') {
                    let name = name.trim_end_matches('"');
                    assert!(listed.contains(&name), "{file}: {name} not in ENVIRONMENT");
                    seen += 1;
                } else if call != "env_path(" {
                    let site = format!("{}{arg})", call.trim_start_matches("env::"));
                    let (_, names) =
                        through.iter().find(|(s, _)| *s == site).unwrap_or_else(|| {
                            panic!("{file}: a read this test does not know: {site}")
                        });
                    for name in names {
                        assert!(listed.contains(name), "{file}: {name} not in ENVIRONMENT");
                    }
                    seen += 1;
                }
            }
        }
    }
    assert!(seen >= 8, "the scan found only {seen} reads");
}
