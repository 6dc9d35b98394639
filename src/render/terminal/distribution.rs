//! The distribution picture in the statistics: one box-and-whisker row per
//! mode, then the ends of its scale and a legend. Rows whose ranges are
//! alike share one scale (with `--compare`, across the variants' blocks
//! too), so they can be compared by eye:
//!
//! ```text
//! cold         ├─────────[██████████████████│████████████]─────────┤
//! warm  ├───────[██████████│█████████]────────────┤
//!       28.0ms                                                45.0ms
//!       [█] p25..p75, │ median, ├─┤ min..p95
//! ```
//!
//! Rows far apart (cold at 125 ms, warm at 41 ms) would shrink to a few
//! columns on one scale; each gets its own, with its ends under it, and a
//! note says the scales differ (see `scales`):
//!
//! ```text
//! cold  ├───────────[███████████████████│██████████████]───────────┤
//!       123ms                                                  128ms
//! warm  ├───────────[██████████████│█████████████]─────────────────┤
//!       40.0ms                                                42.0ms
//!       separate scales: read each row against the ends below it
//!       [█] p25..p75, │ median, ├─┤ min..p95
//! ```
//!
//! Without a UTF-8 locale (`Style::unicode` false) the same marks in ASCII:
//! `|--[####|##]-|  .`

use std::time::Duration;

use crate::stats::descriptive::Description;

use super::format::ms;

mod scales;
pub use scales::{pictures, scale_of_each, SEPARATE_SCALES};

/// A row is drawn from this many timed totals on; fewer make a box of noise.
pub const MIN_N: usize = 5;
/// Columns before the axis, for the mode's name.
pub const LABEL: usize = 6;
/// The axis is never longer than this, however wide the terminal (a file
/// or a pipe has no width at all).
pub const MAX_AXIS: usize = 60;
/// The shortest axis that still holds both end labels of the scale.
pub const MIN_AXIS: usize = 20;

/// The six figures a row shows, from one mode's timed totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    pub min: Duration,
    pub p25: Duration,
    /// The statistics' own median (the mean of the two middle values for an
    /// even count), so the mark sits where the `median` line says.
    pub median: Duration,
    pub p75: Duration,
    pub p95: Duration,
    pub max: Duration,
}

impl Figures {
    /// The figures of a mode's statistics, the very ones its block prints
    /// (nearest-rank quartiles); `None` under `MIN_N` totals. The statistics
    /// leave `p95` out below `P95_MIN_N` totals, where the nearest rank of
    /// p95 is the last one (ceil(0.95 n) = n for n < 20): the maximum.
    pub fn of(d: &Description) -> Option<Figures> {
        if d.n < MIN_N {
            return None;
        }
        Some(Figures {
            min: d.min?,
            p25: d.p25?,
            median: d.median?,
            p75: d.p75?,
            p95: d.p95.or(d.max)?,
            max: d.max?,
        })
    }
}

/// The rows of one statistics block, a name and a mode's figures each;
/// `None` when a mode has fewer than `MIN_N` totals: all rows or none, so
/// none is compared with a mode that is missing.
pub fn rows<'a>(
    modes: impl IntoIterator<Item = (&'a str, &'a Description)>,
) -> Option<Vec<(&'a str, Figures)>> {
    modes
        .into_iter()
        .map(|(name, d)| Some((name, Figures::of(d)?)))
        .collect()
}

/// The columns an axis gets in `width` after the label (at most
/// `MAX_AXIS`); `None` when fewer than `MIN_AXIS` are left.
pub fn axis_columns(width: usize) -> Option<usize> {
    let columns = width.saturating_sub(LABEL).min(MAX_AXIS);
    (columns >= MIN_AXIS).then_some(columns)
}

/// A scale one or more rows are drawn on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis {
    pub lo: Duration,
    pub hi: Duration,
    /// Columns from `lo` (the first) to `hi` (the last).
    pub columns: usize,
}

impl Axis {
    /// From the smallest minimum of `figures` to the largest maximum, in
    /// `columns`; `None` when there are no figures.
    pub fn spanning(figures: &[Figures], columns: usize) -> Option<Axis> {
        Some(Axis {
            lo: figures.iter().map(|f| f.min).min()?,
            hi: figures.iter().map(|f| f.max).max()?,
            columns,
        })
    }

    /// The column of `d`, rounded to the nearest; every value is in the
    /// first column when the axis has no span.
    pub fn column(&self, d: Duration) -> usize {
        let span = self.hi.saturating_sub(self.lo).as_nanos() as f64;
        if span == 0.0 {
            return 0;
        }
        let at = d.saturating_sub(self.lo).as_nanos() as f64 / span;
        let last = self.columns - 1;
        ((at * last as f64).round() as usize).min(last)
    }
}

/// The characters a row is drawn with.
struct Glyphs {
    whisker: char,
    whisker_start: char,
    whisker_end: char,
    box_open: char,
    box_fill: char,
    box_close: char,
    median: char,
    beyond: char,
}

const UNICODE: Glyphs = Glyphs {
    whisker: '─',
    whisker_start: '├',
    whisker_end: '┤',
    box_open: '[',
    box_fill: '█',
    box_close: ']',
    median: '│',
    beyond: '·',
};

const ASCII: Glyphs = Glyphs {
    whisker: '-',
    whisker_start: '|',
    whisker_end: '|',
    box_open: '[',
    box_fill: '#',
    box_close: ']',
    median: '|',
    beyond: '.',
};

fn glyphs(unicode: bool) -> &'static Glyphs {
    if unicode {
        &UNICODE
    } else {
        &ASCII
    }
}

/// One row: `name`, then the whiskers from min to p95, the box from p25 to
/// p75 with the median in it, and a dot at the max when it lies beyond p95.
/// Where marks share a column the median wins, then the box, then the whisker.
pub fn row(name: &str, figures: &Figures, axis: &Axis, unicode: bool) -> String {
    let g = glyphs(unicode);
    let at = |d| axis.column(d);
    let (min, p25, mid, p75, p95, max) = (
        at(figures.min),
        at(figures.p25),
        at(figures.median),
        at(figures.p75),
        at(figures.p95),
        at(figures.max),
    );
    let mut cells = vec![' '; axis.columns];
    cells[min..=p95].fill(g.whisker);
    cells[min] = g.whisker_start;
    cells[p95] = g.whisker_end;
    cells[p25..=p75].fill(g.box_fill);
    cells[p25] = g.box_open;
    cells[p75] = g.box_close;
    cells[mid] = g.median;
    if max > p95 {
        cells[max] = g.beyond;
    }
    let name: String = name.chars().take(LABEL - 1).collect();
    let plot: String = cells.into_iter().collect();
    format!("{name:<LABEL$}{}", plot.trim_end())
}

/// The axis ends under the rows: `lo` at the first column, `hi` ending at
/// the last; only `lo` when the axis has no span or no room for both.
pub fn scale(axis: &Axis) -> String {
    let lo = format!("{}ms", ms(axis.lo));
    let hi = format!("{}ms", ms(axis.hi));
    let room = axis.columns.saturating_sub(lo.len() + hi.len());
    // Ends that print alike (125.2 and 125.4 are both `125ms`) are one label.
    if axis.hi == axis.lo || lo == hi || room == 0 {
        return format!("{:LABEL$}{lo}", "");
    }
    format!("{:LABEL$}{lo}{:room$}{hi}", "", "")
}

/// `items` joined by `sep` and wrapped between items to `columns`, each
/// line indented to the axis.
pub(crate) fn wrapped<'a>(
    items: impl IntoIterator<Item = &'a str>,
    sep: &str,
    columns: usize,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for item in items {
        let len = line.chars().count();
        if len > 0 && len + sep.chars().count() + item.chars().count() > columns {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push_str(sep);
        }
        line.push_str(item);
    }
    lines.push(line);
    lines
        .into_iter()
        .map(|l| format!("{:LABEL$}{l}", ""))
        .collect()
}

/// What the marks mean, wrapped between items to the axis; the dot only
/// when a row has one.
pub fn legend(unicode: bool, beyond: bool, columns: usize) -> Vec<String> {
    let mut items = if unicode {
        vec!["[█] p25..p75", "│ median", "├─┤ min..p95"]
    } else {
        vec!["[#] p25..p75", "| median", "|-| min..p95"]
    };
    if beyond {
        items.push(if unicode {
            "· max beyond p95"
        } else {
            ". max beyond p95"
        });
    }
    wrapped(items, ", ", columns)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stats::descriptive::describe;

    pub(crate) fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&x| Duration::from_millis(x)).collect()
    }

    /// What the statistics make of `totals` (whole microseconds, as kept).
    pub(crate) fn described(totals: &[Duration]) -> Description {
        describe(totals.iter().map(|d| d.as_micros() as u32).collect())
    }

    pub(crate) fn figures(totals: &[Duration]) -> Option<Figures> {
        Figures::of(&described(totals))
    }

    /// The picture of one block as the table draws it: the statistics of
    /// each series, their rows, on the scales they get in `width` columns.
    pub(crate) fn picture_in(
        series: &[(&str, &[Duration])],
        width: usize,
        unicode: bool,
    ) -> Vec<String> {
        let stats: Vec<(&str, Description)> =
            series.iter().map(|(n, v)| (*n, described(v))).collect();
        let block = rows(stats.iter().map(|(n, d)| (*n, d)));
        pictures(&[block], width, unicode).pop().unwrap()
    }

    /// An axis from 0 to `hi` ms over `columns`, so that 1 ms is one column
    /// when `columns` is `hi + 1`.
    fn axis(hi: u64, columns: usize) -> Axis {
        Axis {
            lo: Duration::ZERO,
            hi: Duration::from_millis(hi),
            columns,
        }
    }

    pub(crate) fn plot(line: &str) -> &str {
        &line[LABEL..]
    }

    /// Twenty totals: 0..=18 ms by ones, then 40 ms. Nearest rank: p25 is
    /// the 5th (4), p75 the 15th (14), p95 the 19th (18); the median is
    /// the mean of the 10th and 11th (9 and 10 → 9.5, column 10 rounded).
    pub(crate) fn twenty_with_an_outlier() -> Vec<Duration> {
        let mut v: Vec<u64> = (0..=18).collect();
        v.push(40);
        ms(&v)
    }

    #[test]
    fn figures_follow_the_statistics_rules() {
        let f = figures(&twenty_with_an_outlier()).unwrap();
        assert_eq!(f.min, Duration::ZERO);
        assert_eq!(f.p25, Duration::from_millis(4));
        assert_eq!(f.median, Duration::from_micros(9_500));
        assert_eq!(f.p75, Duration::from_millis(14));
        assert_eq!(f.p95, Duration::from_millis(18));
        assert_eq!(f.max, Duration::from_millis(40));
    }

    #[test]
    fn marks_sit_in_their_columns() {
        let v = twenty_with_an_outlier();
        let f = figures(&v).unwrap();
        let line = row("cold", &f, &axis(40, 41), true);
        assert!(line.starts_with("cold  ├"), "{line}");
        let cells: Vec<char> = plot(&line).chars().collect();
        assert_eq!(cells[0], '├');
        assert!(cells[1..4].iter().all(|&c| c == '─'), "{line}");
        assert_eq!(cells[4], '[');
        assert_eq!(cells[10], '│', "median 9.5 rounds to column 10");
        assert!(cells[5..10].iter().all(|&c| c == '█'), "{line}");
        assert!(cells[11..14].iter().all(|&c| c == '█'), "{line}");
        assert_eq!(cells[14], ']');
        assert!(cells[15..18].iter().all(|&c| c == '─'), "{line}");
        assert_eq!(cells[18], '┤');
        assert!(cells[19..40].iter().all(|&c| c == ' '), "{line}");
        assert_eq!(cells[40], '·');
        assert_eq!(cells.len(), 41);
    }

    #[test]
    fn ascii_draws_the_same_marks_in_the_same_places() {
        let f = figures(&twenty_with_an_outlier()).unwrap();
        let unicode = row("cold", &f, &axis(40, 41), true);
        let ascii = row("cold", &f, &axis(40, 41), false);
        assert!(ascii.is_ascii(), "{ascii}");
        assert_eq!(
            ascii,
            format!("cold  |---[#####|###]---|{}.", " ".repeat(21))
        );
        assert_eq!(unicode.chars().count(), ascii.chars().count());
        let map = |c| match c {
            '├' | '┤' | '│' => '|',
            '─' => '-',
            '█' => '#',
            '·' => '.',
            c => c,
        };
        assert_eq!(unicode.chars().map(map).collect::<String>(), ascii);
    }

    #[test]
    fn a_max_at_p95_draws_no_dot() {
        // Under 20 totals the nearest-rank p95 is the maximum itself.
        let f = figures(&ms(&[2, 4, 6, 8, 20])).unwrap();
        assert_eq!(f.p95, f.max);
        let line = row("warm", &f, &axis(20, 21), true);
        assert_eq!(line, format!("warm    ├─[█│█]{}┤", "─".repeat(11)));
        assert!(!line.contains('·'));
    }

    #[test]
    fn the_legend_wraps_between_items_on_a_short_axis() {
        assert_eq!(
            legend(false, true, 60),
            ["      [#] p25..p75, | median, |-| min..p95, . max beyond p95"]
        );
        assert_eq!(
            legend(true, true, 30),
            [
                "      [█] p25..p75, │ median",
                "      ├─┤ min..p95, · max beyond p95"
            ]
        );
    }

    #[test]
    fn the_scale_keeps_only_its_start_when_both_ends_do_not_fit() {
        let a = Axis {
            lo: Duration::from_secs(99_000),
            hi: Duration::from_secs(99_999),
            columns: MIN_AXIS,
        };
        // 10 + 10 characters: no room for a gap between them.
        assert_eq!(scale(&a), "      99000000ms");
    }
}
