//! `--svg FILE`: the run as one self-contained picture, written when it ends.
//!
//! Left, one stacked bar per probe, round by round (cold: dns, tcp, tls with
//! the client's set-up shaded apart, srv, other; warm: wait, srv, other), a
//! failure in red up to where it gave up. Right, the timed totals of each
//! mode as strips and boxes on the same millisecond axis as the bars.
//!
//! plotters draws every shape, each part of the picture on a canvas of its
//! own; this file puts them together and wraps each probe's shapes in a
//! `<g class="bar">` with its round and mode, which plotters' SVG backend
//! cannot do, so a reader (or a test) can find every probe.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::ops::Range;
use std::time::Duration;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::probe::{tls_version_label, Mode, RunInfo, Sample, Stage};
use crate::render::format;
use crate::stats::{Comparison, Description, Summary};

use super::output::Finished;
use crate::text::{millis, printable};

/// The picture's size in pixels; it scales, but its text is sized for this.
pub const WIDTH: u32 = 1000;
pub const HEIGHT: u32 = 700;

/// Title, facts and legend above the two panels.
const HEADER: u32 = 96;
/// The bars' panel; the distributions get the rest of the width.
const BARS_WIDTH: u32 = 720;
/// Room above each panel's plot for its caption.
const CAPTION: u32 = 26;
const Y_LABELS: u32 = 56;
const X_LABELS: u32 = 50;

// The terminal's colours where it has them: failures red (xterm's red),
// annotations dim, headings bold black. The stages, plain in the terminal,
// take the Okabe–Ito palette, which every kind of colour vision tells apart.
// The background is opaque so the picture reads the same in a dark viewer.
const BACKGROUND: RGBColor = RGBColor(0xff, 0xff, 0xff);
const INK: RGBColor = RGBColor(0x1a, 0x1a, 0x1a);
const DIM: RGBColor = RGBColor(0x6b, 0x6b, 0x6b);
const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
const WARMUP_BAND: RGBColor = RGBColor(0xf1, 0xf1, 0xf1);
const FAILED: RGBColor = RGBColor(0xcd, 0x00, 0x00);
/// Warmup probes are drawn faint: shown, but not counted.
const WARMUP_ALPHA: f64 = 0.4;
/// A failure is a light red box with a red outline: the time it took, not a stage.
const FAILED_FILL: f64 = 0.22;

/// One piece of a bar: a stage, the client's TLS set-up drawn apart from
/// the rest of `tls`, or the time a failed probe spent before it gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// `Stage::Tls` is the rest of `tls`, or all of it when the set-up was
    /// not measured.
    Stage(Stage),
    /// The client's own work before its ClientHello (`Sample::tls_setup`).
    TlsSetup,
    /// From the last stage the probe finished to where it gave up.
    Failed,
}

impl Part {
    fn label(self) -> &'static str {
        match self {
            Part::Stage(stage) => stage.as_str(),
            Part::TlsSetup => "tls set-up",
            Part::Failed => "failed",
        }
    }

    fn color(self) -> RGBColor {
        match self {
            Part::Stage(Stage::Dns) => RGBColor(0x56, 0xb4, 0xe9),
            Part::Stage(Stage::Tcp) => RGBColor(0x00, 0x72, 0xb2),
            Part::TlsSetup => RGBColor(0x9a, 0x5b, 0x00),
            Part::Stage(Stage::Tls) => RGBColor(0xe6, 0x9f, 0x00),
            Part::Stage(Stage::Wait) => RGBColor(0xcc, 0x79, 0xa7),
            Part::Stage(Stage::Srv) => RGBColor(0x00, 0x9e, 0x73),
            Part::Stage(Stage::Other | Stage::Total) => RGBColor(0xb4, 0xb4, 0xb4),
            Part::Failed => FAILED,
        }
    }
}

/// A probe's bar from the bottom up, in milliseconds, zero parts left out.
/// A failed probe shows the stages it finished, then red up to its end.
fn parts(s: &Sample) -> Vec<(Part, f64)> {
    let ms = |d: Option<Duration>| d.map_or(0.0, millis);
    let mut v = match s.mode {
        Mode::Cold => {
            let (setup, rest) = match (s.tls_setup(), s.tls_after_setup()) {
                (Some(setup), Some(rest)) => (Some(setup), Some(rest)),
                _ => (None, s.tls()),
            };
            vec![
                (Part::Stage(Stage::Dns), ms(s.dns())),
                (Part::Stage(Stage::Tcp), ms(s.tcp())),
                (Part::TlsSetup, ms(setup)),
                (Part::Stage(Stage::Tls), ms(rest)),
            ]
        }
        Mode::Warm => vec![(Part::Stage(Stage::Wait), ms(s.wait()))],
    };
    if s.ok() {
        v.push((Part::Stage(Stage::Srv), ms(s.srv())));
        v.push((Part::Stage(Stage::Other), ms(s.other())));
    } else {
        let reached: f64 = v.iter().map(|(_, d)| d).sum();
        v.push((Part::Failed, (ms(s.total()) - reached).max(0.0)));
    }
    v.retain(|(_, d)| *d > 0.0);
    v
}

/// A probe's track (its column of bars and its box) inside its round: cold before warm, then by variant.
type Track = (u8, u8);

fn track_of(s: &Sample) -> Track {
    let mode = match s.mode {
        Mode::Cold => 0,
        Mode::Warm => 1,
    };
    (mode, s.variant)
}

fn track_mode(track: Track) -> Mode {
    if track.0 == 0 {
        Mode::Cold
    } else {
        Mode::Warm
    }
}

/// `cold`, `warm`, or with `--compare` the variant too: `cold TLS1.3`.
fn track_label(info: &RunInfo, track: Track) -> String {
    let mode = track_mode(track).as_str();
    match &info.compare {
        Some(cmp) => format!("{mode} {}", cmp.label(track.1)),
        None => mode.to_string(),
    }
}

/// Everything both panels place by: the rounds, the tracks, the scale.
struct Scene {
    tracks: Vec<Track>,
    rounds: Range<u32>,
    /// The top of the millisecond axis: above every answered probe; a
    /// failure that took longer is cut there and says so.
    top_ms: f64,
}

impl Scene {
    fn new(samples: &[Sample]) -> Scene {
        let tracks: BTreeSet<Track> = samples.iter().map(track_of).collect();
        let first = samples.iter().map(|s| s.round).min().unwrap_or(1);
        let last = samples.iter().map(|s| s.round).max().unwrap_or(1);
        let highest = |ok_only: bool| {
            samples
                .iter()
                .filter(|s| s.ok() || !ok_only)
                .filter_map(Sample::total)
                .map(millis)
                .fold(0.0, f64::max)
        };
        let top = [highest(true), highest(false), 1.0]
            .into_iter()
            .find(|v| *v > 0.0)
            .unwrap_or(1.0);
        Scene {
            tracks: tracks.into_iter().collect(),
            rounds: first..last + 1,
            top_ms: top * 1.12,
        }
    }

    /// The left and right edge of a probe's bar on the round axis.
    fn bar_x(&self, s: &Sample) -> (f64, f64) {
        let n = self.tracks.len().max(1) as f64;
        let i = self
            .tracks
            .iter()
            .position(|l| *l == track_of(s))
            .unwrap_or(0) as f64;
        let slot = 0.8 / n;
        let left = f64::from(s.round) - 0.4 + i * slot;
        (left + slot * 0.06, left + slot * 0.94)
    }
}

type Coord = Cartesian2d<RangedCoordf64, RangedCoordf64>;
type DrawResult<T> = Result<T, DrawingAreaErrorKind<io::Error>>;

/// A sans-serif font whose SVG `font-size` is `px`: the backend writes
/// size / 1.24 (its em box). Whole sizes other than 13 come back exact.
fn font(px: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, px * 1.24, FontStyle::Normal)
}

fn text_style(px: f64, color: &RGBColor) -> TextStyle<'static> {
    font(px).color(color)
}

fn bold(px: f64, color: &RGBColor) -> TextStyle<'static> {
    font(px).style(FontStyle::Bold).color(color)
}

fn anchored(style: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    style.pos(Pos::new(h, v))
}

/// Draws one part of the picture on a canvas of its own and returns the
/// shapes plotters wrote, without its `<svg>` wrapper, and what `draw` gave.
fn fragment<T>(
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult<T>,
) -> io::Result<(String, T)> {
    let mut svg = String::new();
    let value = {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let value = draw(&root).map_err(drawing_error)?;
        root.present().map_err(drawing_error)?;
        value
    };
    // The first `>` closes plotters' own `<svg ...>`: its attribute values
    // are escaped, so none holds a `>`.
    let start = svg.find('>').map_or(0, |i| i + 1);
    let end = svg.rfind("</svg>").unwrap_or(svg.len());
    Ok((svg[start..end].trim_matches('\n').to_string(), value))
}

fn drawing_error(e: DrawingAreaErrorKind<io::Error>) -> io::Error {
    io::Error::other(format!("drawing the SVG: {e}"))
}

/// Text for an XML attribute or element; control characters made visible
/// first, since XML 1.0 cannot carry most of them even escaped.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in printable(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// `tlsping https://host/ · 2026-11-30T17:00:00Z`: the picture's title.
fn title(info: &RunInfo) -> String {
    let started = match info.started_at {
        Some(at) => humantime::format_rfc3339_seconds(at).to_string(),
        None => "no round ran".to_string(),
    };
    format!("tlsping {} · {started}", info.url)
}

/// The header's facts: address, protocol and TLS version, as negotiated by
/// the preflight, and how many rounds the picture holds.
fn facts(info: &RunInfo, samples: &[Sample]) -> String {
    let mut items = Vec::new();
    items.push(match info.addr {
        Some(addr) => addr.to_string(),
        None => info.host.clone(),
    });
    items.push(info.proto.map_or("-", |p| p.as_str()).to_string());
    if let Some(tls) = &info.tls {
        items.push(tls_version_label(tls.version));
    }
    items.push(info.method.clone());
    let rounds: BTreeSet<u32> = samples
        .iter()
        .filter(|s| !s.warmup)
        .map(|s| s.round)
        .collect();
    let warmup: BTreeSet<u32> = samples
        .iter()
        .filter(|s| s.warmup)
        .map(|s| s.round)
        .collect();
    let mut count = format!(
        "{} round{}",
        rounds.len(),
        if rounds.len() == 1 { "" } else { "s" }
    );
    if !warmup.is_empty() {
        let _ = write!(count, " + {} warmup", warmup.len());
    }
    items.push(count);
    items.join(" · ")
}

/// The parts the legend lists: those of the modes present, `failed` only
/// when something failed.
fn legend(samples: &[Sample]) -> Vec<Part> {
    let has = |mode| samples.iter().any(|s| s.mode == mode);
    let mut v = Vec::new();
    if has(Mode::Cold) {
        v.extend([
            Part::Stage(Stage::Dns),
            Part::Stage(Stage::Tcp),
            Part::TlsSetup,
            Part::Stage(Stage::Tls),
        ]);
    }
    if has(Mode::Warm) {
        v.push(Part::Stage(Stage::Wait));
    }
    if !samples.is_empty() {
        v.extend([Part::Stage(Stage::Srv), Part::Stage(Stage::Other)]);
    }
    if samples.iter().any(|s| !s.ok()) {
        v.push(Part::Failed);
    }
    v
}

/// Writes the picture of a run: `info` for its title and header, `samples`
/// (every probe, warmup and failures included) for its bars and points,
/// `summary` (the run's statistics) for its boxes. The same input always
/// gives the same bytes.
pub fn write_svg(out: &mut dyn Write, run: &Finished) -> io::Result<()> {
    out.write_all(render(run.info, run.samples, run.summary, run.comparison)?.as_bytes())?;
    out.flush()
}

/// The timed totals' figures of a track, from the run's statistics (a
/// variant's own with `--compare`; none for a variant without any).
fn track_timing(
    summary: &Summary,
    comparison: Option<&Comparison>,
    info: &RunInfo,
    track: Track,
) -> Description {
    let of_mode = |s: &Summary| match track_mode(track) {
        Mode::Cold => s.cold.timing,
        Mode::Warm => s.warm.timing,
    };
    match (&info.compare, comparison) {
        (Some(_), Some(c)) => c
            .summaries
            .iter()
            .find(|(v, _)| *v == track.1)
            .map(|(_, own)| of_mode(own))
            .unwrap_or_default(),
        _ => of_mode(summary),
    }
}

fn render(
    info: &RunInfo,
    samples: &[Sample],
    summary: &Summary,
    comparison: Option<&Comparison>,
) -> io::Result<String> {
    let scene = Scene::new(samples);
    let (frame, (bars, boxes)) = fragment(|root| draw_frame(root, info, samples, &scene))?;

    let mut doc = String::with_capacity(4096 + samples.len() * 900);
    let _ = writeln!(
        doc,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">"#
    );
    let _ = writeln!(doc, "<title>{}</title>", xml(&title(info)));
    let _ = writeln!(doc, "<desc>{}</desc>", xml(&facts(info, samples)));
    let _ = writeln!(
        doc,
        r#"<rect class="background" x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="{}"/>"#,
        hex(BACKGROUND)
    );
    let _ = writeln!(doc, "<g class=\"frame\">\n{frame}\n</g>");

    doc.push_str("<g class=\"bars\">\n");
    for s in samples {
        let (shapes, ()) = fragment(|root| draw_bar(root, &bars, &scene, info, s))?;
        let outcome = match &s.error {
            Some(e) => e.kind.slug(),
            None if s.ok() => "ok",
            None => "no_response",
        };
        let _ = writeln!(
            doc,
            r#"<g class="bar" data-round="{}" data-mode="{}" data-variant="{}" data-warmup="{}" data-outcome="{outcome}">"#,
            s.round,
            s.mode.as_str(),
            s.variant,
            s.warmup,
        );
        let _ = writeln!(doc, "<title>{}</title>", xml(&bar_title(info, s)));
        if !shapes.is_empty() {
            let _ = writeln!(doc, "{shapes}");
        }
        doc.push_str("</g>\n");
    }
    doc.push_str("</g>\n");

    doc.push_str("<g class=\"distributions\">\n");
    for (i, track) in scene.tracks.iter().enumerate() {
        let in_track: Vec<&Sample> = samples.iter().filter(|s| track_of(s) == *track).collect();
        let timing = track_timing(summary, comparison, info, *track);
        let (shapes, figures) =
            fragment(|root| draw_distribution(root, &boxes, i, &in_track, &timing))?;
        let _ = writeln!(
            doc,
            r#"<g class="distribution" data-mode="{}" data-variant="{}">"#,
            track_mode(*track).as_str(),
            track.1,
        );
        let _ = writeln!(
            doc,
            "<title>{}</title>",
            xml(&format!("{} totals: {figures}", track_label(info, *track)))
        );
        if !shapes.is_empty() {
            let _ = writeln!(doc, "{shapes}");
        }
        doc.push_str("</g>\n");
    }
    doc.push_str("</g>\n</svg>\n");
    Ok(doc)
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// A bar's tooltip: every figure it is drawn from.
fn bar_title(info: &RunInfo, s: &Sample) -> String {
    let mut t = format!("round {} {}", s.round, s.mode.as_str());
    if let Some(cmp) = &info.compare {
        let _ = write!(t, " {}", cmp.label(s.variant));
    }
    if s.warmup {
        t.push_str(" (warmup)");
    }
    if s.new_conn() {
        t.push_str(" (new conn)");
    }
    for (part, ms) in parts(s) {
        let _ = write!(t, " · {} {}", part.label(), ms_text(ms));
    }
    match (&s.error, s.total()) {
        (Some(e), Some(total)) => {
            let _ = write!(
                t,
                " · {} after {} ms",
                format::reason(e.kind, info.timeout),
                format::ms(total)
            );
        }
        (Some(e), None) => {
            let _ = write!(t, " · {}", format::reason(e.kind, info.timeout));
        }
        (None, Some(total)) => {
            let _ = write!(t, " · total {} ms · {}", format::ms(total), s.status);
        }
        (None, None) => {}
    }
    t
}

/// An axis tick: `100`, `2.5`, `0.25` (plotters' own would say `100.0`).
fn axis_ms(v: &f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn ms_text(ms: f64) -> String {
    format::ms(Duration::from_secs_f64(ms / 1000.0))
}

/// Title, facts, legend, both panels' axes and captions, and the warmup
/// rounds' bands; gives back the two panels' coordinates for what follows.
fn draw_frame(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    info: &RunInfo,
    samples: &[Sample],
    scene: &Scene,
) -> DrawResult<(Coord, Coord)> {
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

    let (_, body) = root.split_vertically(HEADER);
    let (left, right) = body.split_horizontally(BARS_WIDTH);
    let rounds = (f64::from(scene.rounds.start) - 0.5)..(f64::from(scene.rounds.end) - 0.5);
    let mut bars = ChartBuilder::on(&left)
        .margin_top(CAPTION)
        .margin_left(8)
        .margin_right(16)
        .margin_bottom(4)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(rounds, 0.0..scene.top_ms)?;
    let tracks = scene.tracks.len().max(1) as f64;
    let mut boxes = ChartBuilder::on(&right)
        .margin_top(CAPTION)
        .margin_left(8)
        .margin_right(16)
        .margin_bottom(4)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(-0.5..tracks - 0.5, 0.0..scene.top_ms)?;

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
    bars.configure_mesh()
        .disable_x_mesh()
        .x_labels(round_count.min(16))
        .x_label_formatter(&round_label)
        .y_labels(8)
        .y_label_formatter(&axis_ms)
        .max_light_lines(1)
        .light_line_style(GRID)
        .bold_line_style(GRID)
        .axis_style(DIM)
        .label_style(text_style(12.0, &INK))
        .axis_desc_style(text_style(12.0, &DIM))
        .x_desc("round")
        .y_desc("ms")
        .draw()?;
    boxes
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_label_formatter(&axis_ms)
        .max_light_lines(1)
        .light_line_style(GRID)
        .bold_line_style(GRID)
        .axis_style(DIM)
        .label_style(text_style(12.0, &INK))
        .axis_desc_style(text_style(12.0, &DIM))
        .y_desc("ms")
        .draw()?;

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
    // Track names under the distributions (the variant on a line of its
    // own, cut to the track's width), then their failures.
    let coord = boxes.as_coord_spec().clone();
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

/// One probe's bar: its parts stacked, faint for warmup; a failure with a
/// red cross at its end and, where there is room, the reason along it.
fn draw_bar(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    coord: &Coord,
    scene: &Scene,
    info: &RunInfo,
    s: &Sample,
) -> DrawResult<()> {
    let (left, right) = scene.bar_x(s);
    let alpha = if s.warmup { WARMUP_ALPHA } else { 1.0 };
    let mut base = 0.0;
    for (part, ms) in parts(s) {
        let top = (base + ms).min(scene.top_ms);
        let (x0, mut y0) = coord.translate(&(left, top));
        let (x1, y1) = coord.translate(&(right, base));
        base += ms;
        if y1 - y0 < 1 {
            // A part under a pixel still shows, as one pixel taken from the
            // part below it, so the bar's height stays true.
            y0 = y1 - 1;
        }
        let style = match part {
            Part::Failed => part.color().mix(FAILED_FILL * alpha).filled(),
            _ => part.color().mix(alpha).filled(),
        };
        root.draw(&Rectangle::new([(x0, y0), (x1.max(x0 + 1), y1)], style))?;
        if part == Part::Failed {
            root.draw(&Rectangle::new(
                [(x0, y0), (x1.max(x0 + 1), y1)],
                FAILED.mix(alpha).stroke_width(1),
            ))?;
        }
    }
    if s.ok() {
        return Ok(());
    }
    let end = base.min(scene.top_ms);
    let (x0, y_end) = coord.translate(&(left, end));
    let (x1, y_base) = coord.translate(&(right, 0.0));
    let cx = (x0 + x1) / 2;
    let arm = ((x1 - x0) / 2).clamp(3, 7);
    root.draw(&Cross::new(
        (cx, y_end),
        arm,
        FAILED.mix(alpha).stroke_width(2),
    ))?;
    let reason = match &s.error {
        Some(e) => format::reason(e.kind, info.timeout),
        None => "no response".to_string(),
    };
    // Rotated text needs about 13 px across; thinner bars keep the cross only.
    if x1 - x0 >= 13 {
        let inside = y_base - y_end > 8 * reason.len() as i32 + 16;
        let start = if inside { y_base - 6 } else { y_end - 12 };
        root.draw(&Text::new(
            reason,
            (cx, start),
            anchored(text_style(12.0, &FAILED), HPos::Left, VPos::Center)
                .transform(FontTransform::Rotate270),
        ))?;
    }
    Ok(())
}

/// One track's timed totals: every value as a point (spread sideways by a
/// fixed sequence, so the picture does not change between runs), and the
/// box the statistics block draws in the terminal from the same figures
/// (`timing`, the run's own `Description`): p25..p75, the median, whiskers
/// from the minimum to p95 (to the maximum below 20 values, where p95 is
/// the maximum) and a dot for a maximum beyond p95. Gives back the figures
/// for the track's tooltip.
fn draw_distribution(
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
