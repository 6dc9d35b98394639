//! The boxes: each track's timed totals as points and a box drawn from the
//! run's own statistics.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::probe::Sample;
use crate::stats::Description;
use crate::text::millis;

use super::{anchored, bold, ms_text, text_style, Coord, DrawResult, DIM, INK};

/// One track's timed totals: every value as a point (spread sideways by a
/// fixed sequence, so the picture does not change between runs), and the
/// box the statistics block draws in the terminal from the same figures
/// (`timing`, the run's own `Description`): p25..p75, the median, whiskers
/// from the minimum to p95 (to the maximum below 20 values, where p95 is
/// the maximum) and a dot for a maximum beyond p95. Gives back the figures
/// for the track's tooltip.
pub(super) fn draw_distribution(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    coord: &Coord,
    track: usize,
    samples: &[&Sample],
    timing: &Description,
) -> DrawResult<String> {
    let x = track as f64;
    let totals = samples
        .iter()
        .filter(|s| crate::stats::timed(s))
        .filter_map(|s| s.total());
    let (Some(median), Some(low), Some(q1), Some(q3), Some(max)) = (
        timing.median,
        timing.min,
        timing.p25,
        timing.p75,
        timing.max,
    ) else {
        let (px, py) = coord.translate(&(x, 0.0));
        root.draw(&Text::new(
            "no timed probes",
            (px, py - 40),
            anchored(text_style(12.0, &DIM), HPos::Center, VPos::Center),
        ))?;
        return Ok("none timed".into());
    };
    for (i, total) in totals.enumerate() {
        // The golden-ratio sequence spreads points evenly with no randomness.
        let jitter = ((i as f64 + 1.0) * 0.618_033_988_749_895).fract() - 0.5;
        let at = coord.translate(&(x + jitter * 0.44, millis(total)));
        root.draw(&Circle::new(at, 3, INK.mix(0.35).filled()))?;
    }
    let whisker = timing.p95.unwrap_or(max);
    let [low, q1, mid, q3, high, max] = [low, q1, median, q3, whisker, max].map(millis);
    let pt = |dx: f64, ms: f64| coord.translate(&(x + dx, ms));
    let line = INK.stroke_width(1);
    root.draw(&PathElement::new(vec![pt(0.0, q3), pt(0.0, high)], line))?;
    root.draw(&PathElement::new(vec![pt(0.0, low), pt(0.0, q1)], line))?;
    for end in [low, high] {
        root.draw(&PathElement::new(vec![pt(-0.1, end), pt(0.1, end)], line))?;
    }
    if max > high {
        root.draw(&Circle::new(pt(0.0, max), 4, INK.filled()))?;
    }
    root.draw(&Rectangle::new(
        [pt(-0.26, q3), pt(0.26, q1)],
        INK.stroke_width(1),
    ))?;
    root.draw(&PathElement::new(
        vec![pt(-0.26, mid), pt(0.26, mid)],
        INK.stroke_width(3),
    ))?;
    let (lx, ly) = pt(0.0, max);
    let summary = format!("median {} ms, n={}", ms_text(mid), timing.n);
    // A narrow track (with `--compare`) has room for the figure alone.
    let wide = pt(0.5, 0.0).0 - pt(-0.5, 0.0).0 >= 90;
    root.draw(&Text::new(
        if wide {
            format!("median {}", ms_text(mid))
        } else {
            ms_text(mid)
        },
        (lx, ly - 22),
        anchored(bold(12.0, &INK), HPos::Center, VPos::Bottom),
    ))?;
    root.draw(&Text::new(
        format!("n={}", timing.n),
        (lx, ly - 8),
        anchored(text_style(12.0, &DIM), HPos::Center, VPos::Bottom),
    ))?;
    Ok(format!(
        "{summary}, quartiles {}–{} ms, whiskers {}–{} ms, max {} ms",
        ms_text(q1),
        ms_text(q3),
        ms_text(low),
        ms_text(high),
        ms_text(max)
    ))
}
