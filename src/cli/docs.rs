//! What the binary prints about itself (`--generate`): the man page and the
//! shell completions, generated from the clap definition, and the man
//! page's reference sections from the tables the code runs on
//! (`man_sections`), so that neither can drift from what the binary does.

use clap::CommandFactory;
use clap_complete::{Generator, Shell};

use super::man_sections;

/// `--generate KIND`: what to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Generate {
    // The man page (roff); the others are completion scripts (the help
    // lists the names bare).
    Man,
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

impl Generate {
    /// The shell a completion script is for; `None` for the man page.
    fn shell(self) -> Option<Shell> {
        match self {
            Generate::Man => None,
            Generate::Bash => Some(Shell::Bash),
            Generate::Zsh => Some(Shell::Zsh),
            Generate::Fish => Some(Shell::Fish),
            Generate::Elvish => Some(Shell::Elvish),
            Generate::Powershell => Some(Shell::PowerShell),
        }
    }

    /// The usual name of the file it goes in: `tlsping.1`, and each
    /// shell's own (`tlsping.bash`, `_tlsping`, `tlsping.fish`, ...).
    pub fn file_name(self) -> String {
        match self.shell() {
            None => "tlsping.1".into(),
            Some(shell) => shell.file_name("tlsping"),
        }
    }
}

/// What `--generate kind` prints on stdout.
pub fn generate(kind: Generate) -> String {
    match kind.shell() {
        None => man_page(),
        Some(shell) => completions(shell),
    }
}

/// The full clap command, as `--help`, the man page and completions see it.
pub fn command() -> clap::Command {
    super::Args::command()
}

/// Long names of every flag, for tests that check generated documents.
pub fn long_flags() -> Vec<String> {
    command()
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

/// The completion script of `shell`.
fn completions(shell: Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command(), "tlsping", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The man page: what clap_mangen makes of the flags (the help's text, one
/// section per heading), then the reference sections.
pub fn man_page() -> String {
    // The help's closing text (the safety note, the examples) has sections
    // of its own here, rather than clap_mangen's "EXTRA".
    let cmd = command()
        .after_help(None::<&str>)
        .long_about(man_sections::description());
    let man = clap_mangen::Man::new(cmd)
        .title("TLSPING")
        .section("1")
        // clap_mangen leaves an empty date out of `.TH` altogether, which
        // moves the source into the date's place: an empty quoted one.
        .date("\"\"")
        .source(format!("tlsping {}", env!("CARGO_PKG_VERSION")))
        .manual("User Commands");
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = man.render(&mut out);
    let page = String::from_utf8_lossy(&out);
    // No hyphenation: a field or variable name broken at a line's end
    // could not be searched for or copied.
    let (head, body) = page.split_once("\n.SH ").unwrap_or((&page, ""));
    format!(
        "{head}\n.nh\n.SH {body}{}",
        man_sections::reference_sections()
    )
}
