//! Which scale each distribution row is drawn on, and the picture of
//! each statistics block that follows from it.

use super::{axis_columns, legend, row, scale, wrapped, Axis, Figures};

/// Which scale each of `figures` is drawn on, as an index per row. Rows
/// share a scale only when, on the axis spanning them, each one's min..max
/// covers at least half of it: two such ranges always overlap, so the eye
/// compares what is comparable, and no box shrinks to a few columns next to
/// a distant neighbour (cold at 125 ms beside warm at 41 ms). Rows are taken
/// from the lowest minimum up, each joining the first scale it fits.
pub fn scale_of_each(figures: &[Figures]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..figures.len()).collect();
    order.sort_by_key(|&i| (figures[i].min, figures[i].max));
    let mut scales: Vec<Vec<usize>> = Vec::new();
    let mut scale_of = vec![0; figures.len()];
    for i in order {
        let fits = |members: &Vec<usize>| {
            let joined = || members.iter().chain([&i]).map(|&m| &figures[m]);
            let lo = joined().map(|f| f.min).min().unwrap_or_default();
            let hi = joined().map(|f| f.max).max().unwrap_or_default();
            let narrowest = joined().map(|f| f.max - f.min).min().unwrap_or_default();
            narrowest * 2 >= hi - lo
        };
        let at = match scales.iter().position(fits) {
            Some(at) => at,
            None => {
                scales.push(Vec::new());
                scales.len() - 1
            }
        };
        scales[at].push(i);
        scale_of[i] = at;
    }
    scale_of
}

/// Said above the legend whenever the rows are not all on one scale, so
/// that no one reads two boxes as if they were.
pub const SEPARATE_SCALES: &str = "separate scales: read each row against the ends below it";

/// One row of a picture: its name, its figures, and the index of its scale.
type Placed<'a> = (&'a str, Figures, usize);

/// One block's picture: its rows, a scale line under the last row of each
/// run of rows on one scale (so a scale line measures exactly the rows
/// above it, back to the previous one), the note when `axes` are several,
/// and the legend.
fn picture(rows: &[Placed], axes: &[Axis], unicode: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, (name, figures, at)) in rows.iter().enumerate() {
        lines.push(row(name, figures, &axes[*at], unicode));
        if rows.get(i + 1).is_none_or(|next| next.2 != *at) {
            lines.push(scale(&axes[*at]));
        }
    }
    let columns = axes[0].columns;
    if axes.len() > 1 {
        lines.extend(wrapped(SEPARATE_SCALES.split(' '), " ", columns));
    }
    let beyond = rows
        .iter()
        .any(|(_, f, at)| axes[*at].column(f.max) > axes[*at].column(f.p95));
    lines.extend(legend(unicode, beyond, columns));
    lines
}

/// The picture of each statistics block (one per `--compare` variant; a
/// block without rows draws nothing), each row on the scale
/// `scale_of_each` gives it among the rows of every block, so that equal
/// ends under rows of two blocks mean one scale. Nothing at all when
/// `width` leaves no room for an axis.
pub fn pictures(
    blocks: &[Option<Vec<(&str, Figures)>>],
    width: usize,
    unicode: bool,
) -> Vec<Vec<String>> {
    let all: Vec<Figures> = blocks.iter().flatten().flatten().map(|(_, f)| *f).collect();
    let scale_of = scale_of_each(&all);
    let scales = scale_of.iter().max().map_or(0, |last| last + 1);
    let axes: Vec<Axis> = match axis_columns(width) {
        Some(columns) => (0..scales)
            .filter_map(|s| {
                let members: Vec<Figures> = all
                    .iter()
                    .zip(&scale_of)
                    .filter(|(_, &of)| of == s)
                    .map(|(f, _)| *f)
                    .collect();
                Axis::spanning(&members, columns)
            })
            .collect(),
        None => Vec::new(),
    };
    let mut scale_at = scale_of.into_iter();
    blocks
        .iter()
        .map(|block| match block {
            Some(rows) if !rows.is_empty() && !axes.is_empty() => {
                let placed: Vec<Placed> = rows
                    .iter()
                    .map(|(name, f)| (*name, *f, scale_at.next().unwrap_or(0)))
                    .collect();
                picture(&placed, &axes, unicode)
            }
            _ => Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::distribution::tests::{
        described, figures, ms, picture_in, plot, twenty_with_an_outlier,
    };
    use crate::render::distribution::{LABEL, MAX_AXIS, MIN_AXIS};
    use std::time::Duration;

    #[test]
    fn fewer_than_five_totals_draw_nothing() {
        let four = ms(&[1, 2, 3, 4]);
        let five = ms(&[1, 2, 3, 4, 5]);
        assert_eq!(figures(&four), None);
        assert!(picture_in(&[("cold", &four)], 80, true).is_empty());
        // One short mode hides both: the rows are there to be compared.
        assert!(picture_in(&[("cold", &five), ("warm", &four)], 80, true).is_empty());
        assert!(!picture_in(&[("cold", &five), ("warm", &five)], 80, true).is_empty());
        assert!(picture_in(&[], 80, true).is_empty());
    }

    #[test]
    fn ends_that_print_alike_are_one_label() {
        use crate::render::distribution::{scale, Axis};
        let axis = Axis {
            lo: Duration::from_micros(125_200),
            hi: Duration::from_micros(125_400),
            columns: 40,
        };
        let line = scale(&axis);
        assert_eq!(line.matches("125ms").count(), 1, "{line:?}");
        assert_eq!(line.trim(), "125ms");
    }

    #[test]
    fn all_equal_values_are_one_mark_and_one_label() {
        let same = ms(&[7, 7, 7, 7, 7, 7]);
        let lines = picture_in(&[("cold", &same), ("warm", &same)], 80, true);
        assert_eq!(
            lines,
            [
                "cold  │",
                "warm  │",
                "      7.00ms",
                "      [█] p25..p75, │ median, ├─┤ min..p95",
            ]
        );
    }

    #[test]
    fn rows_far_apart_get_a_scale_each_with_its_ends_under_it() {
        // Lab-like totals: cold 123..128 ms, warm 40..42 ms.
        let cold = ms(&[123, 124, 125, 126, 128]);
        let warm = ms(&[40, 40, 41, 41, 42]);
        let lines = picture_in(&[("cold", &cold), ("warm", &warm)], 66, true);
        // Each row spans its whole axis of 60 columns, min to max (warm's
        // box opens at its minimum).
        for at in [0, 2] {
            assert!(!plot(&lines[at]).starts_with(' '), "{lines:#?}");
            assert!(plot(&lines[at]).ends_with('┤'), "{lines:#?}");
            assert_eq!(plot(&lines[at]).chars().count(), 60, "{lines:#?}");
        }
        assert_eq!(lines[1], format!("      123ms{}128ms", " ".repeat(60 - 10)));
        assert_eq!(
            lines[3],
            format!("      40.0ms{}42.0ms", " ".repeat(60 - 12))
        );
        assert_eq!(lines[4], format!("      {SEPARATE_SCALES}"));
        assert!(lines[5].contains("p25..p75"), "{lines:#?}");
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn overlapping_rows_share_one_scale_and_need_no_note() {
        let cold = ms(&[30, 34, 38, 42, 45]);
        let warm = ms(&[28, 31, 33, 36, 40]);
        let lines = picture_in(&[("cold", &cold), ("warm", &warm)], 66, true);
        // 28..45 ms over 60 columns: cold starts at round(2/17 × 59) = 7.
        assert_eq!(plot(&lines[0]).chars().position(|c| c == '├'), Some(7));
        assert!(lines[1].starts_with("warm  ├"), "{lines:#?}");
        assert_eq!(
            lines[2],
            format!("      28.0ms{}45.0ms", " ".repeat(60 - 12))
        );
        assert!(lines[3].contains("p25..p75"), "{lines:#?}");
        assert!(!lines.iter().any(|l| l.contains("separate")), "{lines:#?}");
    }

    #[test]
    fn a_shared_scale_keeps_every_row_at_least_half_of_it() {
        let f = |min, max| {
            let (min, max) = (Duration::from_millis(min), Duration::from_millis(max));
            Figures {
                min,
                p25: min,
                median: min,
                p75: max,
                p95: max,
                max,
            }
        };
        // Overlapping, but the second row would cover 10 of 100 ms.
        assert_eq!(scale_of_each(&[f(0, 100), f(40, 50)]), [0, 1]);
        // Each covers 60 of 100 ms: one scale.
        assert_eq!(scale_of_each(&[f(0, 60), f(40, 100)]), [0, 0]);
        // Two levels, two rows each (variants of a --compare run): a scale
        // per level, whatever order the rows come in.
        assert_eq!(
            scale_of_each(&[f(123, 128), f(40, 42), f(83, 88), f(40, 42)]),
            [2, 0, 1, 0]
        );
        // A row joins the first scale it fits, not only the latest one.
        assert_eq!(scale_of_each(&[f(0, 10), f(1, 2), f(2, 12)]), [0, 1, 0]);
        assert_eq!(scale_of_each(&[]), Vec::<usize>::new());
    }

    #[test]
    fn blocks_share_a_scale_only_row_by_row() {
        let rows = |cold: (u64, u64)| {
            let f = |lo: u64, hi: u64| {
                let d = described(&ms(&[lo, lo, (lo + hi) / 2, hi, hi]));
                Figures::of(&d).unwrap()
            };
            Some(vec![("cold", f(cold.0, cold.1)), ("warm", f(40, 42))])
        };
        let lines = pictures(&[rows((123, 128)), None, rows((83, 88))], 66, false);
        assert!(lines[1].is_empty());
        let scales = |block: &[String]| [block[1].clone(), block[3].clone()];
        let (a, b) = (scales(&lines[0]), scales(&lines[2]));
        assert_ne!(a[0], b[0], "cold levels apart: a scale each");
        assert_eq!(a[1], b[1], "warm rows alike: one scale");
        assert!(lines[0].iter().all(|l| l.is_ascii()), "{lines:#?}");
        assert!(lines[2].contains(&format!("      {SEPARATE_SCALES}")));
    }

    #[test]
    fn every_line_fits_the_width_and_a_tiny_width_draws_nothing() {
        let v = twenty_with_an_outlier();
        for width in 0..200 {
            let lines = picture_in(&[("cold", &v), ("warm", &v)], width, width % 2 == 0);
            if width < LABEL + MIN_AXIS {
                assert!(lines.is_empty(), "width {width}: {lines:?}");
                continue;
            }
            assert!(!lines.is_empty(), "width {width}");
            for line in &lines {
                assert!(line.chars().count() <= width, "width {width}: {line:?}");
                assert!(line.chars().count() <= LABEL + MAX_AXIS, "{line:?}");
            }
        }
        // A file or a pipe: no width at all, the longest axis.
        let lines = picture_in(&[("cold", &v)], usize::MAX, true);
        assert_eq!(plot(&lines[0]).chars().count(), MAX_AXIS);
    }
}
