//! The frame of the picture: title, facts, legend, both panels' axes and
//! captions, and the warmup rounds' bands.

use std::collections::BTreeSet;

use plotters::chart::MeshStyle;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::probe::{RunInfo, Sample};
use crate::render::format;
use crate::text::printable;

use super::bars::{legend, Part};
use super::{
    anchored, axis_ms, bold, facts, text_style, title, track_mode, track_of, Coord, DrawResult,
    Scene, BARS_WIDTH, CAPTION, DIM, FAILED, FAILED_FILL, GRID, HEADER, INK, WARMUP_BAND, X_LABELS,
    Y_LABELS,
};

/// What both panels' meshes share: no vertical grid, the y axis in ms,
/// light grid lines, the picture's inks.
fn house_mesh<'m, 'a, 'b, 's>(
    mesh: &'m mut MeshStyle<'a, 'b, RangedCoordf64, RangedCoordf64, SVGBackend<'s>>,
) -> &'m mut MeshStyle<'a, 'b, RangedCoordf64, RangedCoordf64, SVGBackend<'s>> {
    mesh.disable_x_mesh()
        .y_labels(8)
        .y_label_formatter(&axis_ms)
        .max_light_lines(1)
        .light_line_style(GRID)
        .bold_line_style(GRID)
        .axis_style(DIM)
        .label_style(text_style(12.0, &INK))
        .axis_desc_style(text_style(12.0, &DIM))
        .y_desc("ms")
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Title, facts, legend, both panels' axes and captions, and the warmup
/// rounds' bands; gives back the two panels' coordinates for what follows.
pub(super) fn draw_frame(
    root: &Area<'_>,
    info: &RunInfo,
    samples: &[Sample],
    scene: &Scene,
) -> DrawResult<(Coord, Coord)> {
    draw_header(root, info, samples)?;
    let (_, body) = root.split_vertically(HEADER);
    let (left, right) = body.split_horizontally(BARS_WIDTH);
    let rounds = (f64::from(scene.rounds.start) - 0.5)..(f64::from(scene.rounds.end) - 0.5);
    let mut bars = panel(&left).build_cartesian_2d(rounds, 0.0..scene.top_ms)?;
    let tracks = scene.tracks.len().max(1) as f64;
    let mut boxes = panel(&right).build_cartesian_2d(-0.5..tracks - 0.5, 0.0..scene.top_ms)?;
    // Warmup rounds get a band behind their bars.
    let warmup: BTreeSet<u32> = samples
        .iter()
        .filter(|s| s.warmup)
        .map(|s| s.round)
        .collect();
    for round in &warmup {
        let r = f64::from(*round);
        bars.draw_series(std::iter::once(Rectangle::new(
            [(r - 0.48, 0.0), (r + 0.48, scene.top_ms)],
            WARMUP_BAND.filled(),
        )))?;
    }
    let round_count = scene.rounds.len();
    let round_label = |x: &f64| {
        if (x - x.round()).abs() < 1e-9 {
            format!("{x:.0}")
        } else {
            String::new()
        }
    };
    house_mesh(&mut bars.configure_mesh())
        .x_labels(round_count.min(16))
        .x_label_formatter(&round_label)
        .x_desc("round")
        .draw()?;
    house_mesh(&mut boxes.configure_mesh()).x_labels(0).draw()?;
    // Captions, over each panel's plot.
    for (chart_area, caption) in [
        (bars.plotting_area(), "each probe, by round"),
        (boxes.plotting_area(), "timed totals"),
    ] {
        let (xs, ys) = chart_area.get_pixel_range();
        root.draw(&Text::new(
            caption,
            (xs.start, ys.start - 8),
            anchored(bold(14.0, &INK), HPos::Left, VPos::Bottom),
        ))?;
    }
    let coord = boxes.as_coord_spec().clone();
    draw_track_names(root, info, samples, scene, &coord)?;
    if samples.is_empty() {
        let (x, y) = bars
            .as_coord_spec()
            .translate(&(f64::from(scene.rounds.start), scene.top_ms / 2.0));
        root.draw(&Text::new(
            "no probe ran",
            (x, y),
            anchored(text_style(14.0, &DIM), HPos::Center, VPos::Center),
        ))?;
    }
    Ok((bars.as_coord_spec().clone(), coord))
}

/// One panel's chart, before its ranges: the margins both panels share.
fn panel<'a, 'b>(area: &'a Area<'b>) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut chart = ChartBuilder::on(area);
    chart
        .margin_top(CAPTION)
        .margin_left(8)
        .margin_right(16)
        .margin_bottom(4)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS);
    chart
}

/// The title, the run's facts and the legend (with the warmup band's
/// swatch when a warmup round is drawn).
fn draw_header(root: &Area<'_>, info: &RunInfo, samples: &[Sample]) -> DrawResult<()> {
    // plotters escapes XML's own characters; control characters are ours.
    root.draw(&Text::new(
        printable(&title(info)),
        (16, 12),
        anchored(bold(20.0, &INK), HPos::Left, VPos::Top),
    ))?;
    root.draw(&Text::new(
        printable(&facts(info, samples)),
        (16, 42),
        anchored(text_style(14.0, &INK), HPos::Left, VPos::Top),
    ))?;
    let mut x = 16;
    for part in legend(samples) {
        let swatch = [(x, 70), (x + 12, 82)];
        if part == Part::Failed {
            root.draw(&Rectangle::new(swatch, FAILED.mix(FAILED_FILL).filled()))?;
            root.draw(&Rectangle::new(swatch, FAILED.stroke_width(1)))?;
        } else {
            root.draw(&Rectangle::new(swatch, part.color().filled()))?;
        }
        root.draw(&Text::new(
            part.label(),
            (x + 17, 76),
            anchored(text_style(12.0, &INK), HPos::Left, VPos::Center),
        ))?;
        // The naive width estimate is enough to keep the entries apart.
        x += 17 + 13 * part.label().len() as i32 / 2 + 18;
    }
    if samples.iter().any(|s| s.warmup) {
        root.draw(&Rectangle::new(
            [(x, 70), (x + 12, 82)],
            WARMUP_BAND.filled(),
        ))?;
        root.draw(&Rectangle::new(
            [(x, 70), (x + 12, 82)],
            DIM.stroke_width(1),
        ))?;
        root.draw(&Text::new(
            "warmup (faint, not counted)",
            (x + 17, 76),
            anchored(text_style(12.0, &DIM), HPos::Left, VPos::Center),
        ))?;
    }
    Ok(())
}

/// Track names under the distributions (the variant on a line of its own,
/// cut to the track's width), then their failures.
fn draw_track_names(
    root: &Area<'_>,
    info: &RunInfo,
    samples: &[Sample],
    scene: &Scene,
    coord: &Coord,
) -> DrawResult<()> {
    let track_px = coord.translate(&(1.0, 0.0)).0 - coord.translate(&(0.0, 0.0)).0;
    for (i, track) in scene.tracks.iter().enumerate() {
        let (x, y) = coord.translate(&(i as f64, 0.0));
        let mut lines = vec![(track_mode(*track).as_str().to_string(), bold(14.0, &INK))];
        if let Some(cmp) = &info.compare {
            let fits = (track_px / 7).max(3) as usize;
            lines.push((
                format::truncate(&printable(cmp.label(track.1)), fits),
                text_style(12.0, &INK),
            ));
        }
        let failed = samples
            .iter()
            .filter(|s| track_of(s) == *track && !s.warmup && !s.ok())
            .count();
        if failed > 0 {
            lines.push((format!("{failed} failed"), text_style(12.0, &FAILED)));
        }
        for (n, (text, style)) in lines.into_iter().enumerate() {
            root.draw(&Text::new(
                text,
                (x, y + 6 + 17 * n as i32),
                anchored(style, HPos::Center, VPos::Top),
            ))?;
        }
    }
    Ok(())
}
