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

/// Terminal width: `COLUMNS` wins, then the terminal itself, then 100.
pub fn terminal_width(columns_env: Option<&str>) -> usize {
    if let Some(w) = columns_env
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&w| w > 0)
    {
        return w;
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

/// How the human output looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub layout: Layout,
    pub width: usize,
    pub color: bool,
    pub quiet: bool,
    pub verbose: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

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
        assert_eq!(terminal_width(Some("80")), 80);
        assert_eq!(terminal_width(Some(" 60 ")), 60);
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
