//! Which layout fits the terminal, and whether to colour.

use std::io::IsTerminal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// 100 columns and up: cold and warm side by side, one row per round.
    Wide,
    /// 70–99 columns: two stacked lines per round.
    Stacked,
    /// Under 70: the whole cold block, then the whole warm block.
    Blocks,
}

impl Layout {
    pub fn for_width(width: usize) -> Layout {
        match width {
            100.. => Layout::Wide,
            70..=99 => Layout::Stacked,
            _ => Layout::Blocks,
        }
    }
}

/// The width of output that goes to a file or a pipe: no limit, so the wide
/// layout is used and nothing is cut.
pub const UNLIMITED: usize = usize::MAX;

/// Output width: `COLUMNS` wins; then, when stdout is a terminal, its width
/// (100 if it cannot be read); a file or a pipe has no width at all. The
/// terminal is only asked when stdout is one: crossterm would otherwise open
/// the controlling terminal or run `tput`, and size a file by a window.
pub fn terminal_width(columns_env: Option<&str>, stdout_is_tty: bool) -> usize {
    if let Some(w) = columns_env
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&w| w > 0)
    {
        return w;
    }
    if !stdout_is_tty {
        return UNLIMITED;
    }
    crossterm::terminal::size()
        .map(|(w, _)| w as usize)
        .ok()
        .filter(|&w| w > 0)
        .unwrap_or(100)
}

/// `--no-color` wins, then `NO_COLOR` (any value, even empty), then stdout must be a terminal.
pub fn use_color(
    no_color_flag: bool,
    no_color_env: Option<&std::ffi::OsStr>,
    stdout_is_tty: bool,
) -> bool {
    !no_color_flag && no_color_env.is_none() && stdout_is_tty
}

pub fn stdout_is_tty() -> bool {
    std::io::stdout().is_terminal()
}

/// Whether the terminal can show characters beyond ASCII (block elements in
/// the distribution row): the locale names UTF-8. The first of `LC_ALL`,
/// `LC_CTYPE`, `LANG` that is set and not empty decides, as in C.
pub fn unicode_ok(lc_all: Option<&str>, lc_ctype: Option<&str>, lang: Option<&str>) -> bool {
    [lc_all, lc_ctype, lang]
        .into_iter()
        .flatten()
        .find(|v| !v.is_empty())
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

/// How the human output looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub layout: Layout,
    pub width: usize,
    pub color: bool,
    pub quiet: bool,
    pub verbose: bool,
    /// The terminal shows Unicode (see `unicode_ok`); else plain ASCII pictures.
    pub unicode: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn unicode_follows_the_first_locale_variable_set() {
        assert!(unicode_ok(None, None, Some("en_US.UTF-8")));
        assert!(unicode_ok(Some("C.utf8"), None, Some("C")));
        assert!(!unicode_ok(Some("C"), None, Some("en_US.UTF-8")));
        assert!(unicode_ok(Some(""), Some("ko_KR.UTF-8"), None));
        assert!(!unicode_ok(None, None, None));
        assert!(!unicode_ok(None, None, Some("POSIX")));
    }

    #[test]
    fn thresholds() {
        assert_eq!(Layout::for_width(120), Layout::Wide);
        assert_eq!(Layout::for_width(100), Layout::Wide);
        assert_eq!(Layout::for_width(99), Layout::Stacked);
        assert_eq!(Layout::for_width(70), Layout::Stacked);
        assert_eq!(Layout::for_width(69), Layout::Blocks);
    }

    #[test]
    fn columns_overrides_detection() {
        assert_eq!(terminal_width(Some("80"), true), 80);
        assert_eq!(terminal_width(Some(" 60 "), false), 60);
    }

    #[test]
    fn a_pipe_or_a_file_has_no_width() {
        assert_eq!(terminal_width(None, false), UNLIMITED);
        assert_eq!(Layout::for_width(UNLIMITED), Layout::Wide);
    }

    #[test]
    fn colour_rules() {
        assert!(use_color(false, None, true));
        assert!(!use_color(true, None, true), "--no-color wins");
        assert!(
            !use_color(false, Some(OsStr::new("")), true),
            "NO_COLOR set but empty still counts"
        );
        assert!(!use_color(false, Some(OsStr::new("1")), true));
        assert!(!use_color(false, None, false), "not a terminal");
    }
}
