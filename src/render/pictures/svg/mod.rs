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
//! cannot do, so a reader (or a test) can find every probe. The bars
//! (`bars.rs`), the frame (`frame.rs`) and the boxes (`boxes.rs`) are drawn
//! in files of their own.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::ops::Range;
use std::time::Duration;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::probe::{tls_version_label, Mode, RunInfo, Sample};
use crate::render::format;
use crate::stats::{Comparison, Description, Summary};

use super::output::Finished;

mod bars;
mod boxes;
mod frame;

use crate::text::{millis, printable};
use bars::{bar_title, draw_bar};
use boxes::draw_distribution;
use frame::draw_frame;

/// The picture's size in pixels; it scales, but its text is sized for this.
pub const WIDTH: u32 = 1000;
pub const HEIGHT: u32 = 700;

/// Title, facts and legend above the two panels.
pub(super) const HEADER: u32 = 96;
/// The bars' panel; the distributions get the rest of the width.
pub(super) const BARS_WIDTH: u32 = 720;
/// Room above each panel's plot for its caption.
pub(super) const CAPTION: u32 = 26;
pub(super) const Y_LABELS: u32 = 56;
pub(super) const X_LABELS: u32 = 50;

// The terminal's colours where it has them: failures red (xterm's red),
// annotations dim, headings bold black. The stages, plain in the terminal,
// take the Okabe–Ito palette, which every kind of colour vision tells apart.
// The background is opaque so the picture reads the same in a dark viewer.
pub(super) const BACKGROUND: RGBColor = RGBColor(0xff, 0xff, 0xff);
pub(super) const INK: RGBColor = RGBColor(0x1a, 0x1a, 0x1a);
pub(super) const DIM: RGBColor = RGBColor(0x6b, 0x6b, 0x6b);
pub(super) const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
pub(super) const WARMUP_BAND: RGBColor = RGBColor(0xf1, 0xf1, 0xf1);
pub(super) const FAILED: RGBColor = RGBColor(0xcd, 0x00, 0x00);
/// Warmup probes are drawn faint: shown, but not counted.
pub(super) const WARMUP_ALPHA: f64 = 0.4;
/// A failure is a light red box with a red outline: the time it took, not a stage.
pub(super) const FAILED_FILL: f64 = 0.22;

/// A probe's track (its column of bars and its box) inside its round: cold before warm, then by variant.
pub(super) type Track = (u8, u8);

pub(super) fn track_of(s: &Sample) -> Track {
    let mode = match s.mode {
        Mode::Cold => 0,
        Mode::Warm => 1,
    };
    (mode, s.variant)
}

pub(super) fn track_mode(track: Track) -> Mode {
    if track.0 == 0 {
        Mode::Cold
    } else {
        Mode::Warm
    }
}

/// `cold`, `warm`, or with `--compare` the variant too: `cold TLS1.3`.
pub(super) fn track_label(info: &RunInfo, track: Track) -> String {
    let mode = track_mode(track).as_str();
    match &info.compare {
        Some(cmp) => format!("{mode} {}", cmp.label(track.1)),
        None => mode.to_string(),
    }
}

/// Everything both panels place by: the rounds, the tracks, the scale.
pub(super) struct Scene {
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

pub(super) type Coord = Cartesian2d<RangedCoordf64, RangedCoordf64>;
pub(super) type DrawResult<T> = Result<T, DrawingAreaErrorKind<io::Error>>;

/// A sans-serif font whose SVG `font-size` is `px`: the backend writes
/// size / 1.24 (its em box). Whole sizes other than 13 come back exact.
pub(super) fn font(px: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, px * 1.24, FontStyle::Normal)
}

pub(super) fn text_style(px: f64, color: &RGBColor) -> TextStyle<'static> {
    font(px).color(color)
}

pub(super) fn bold(px: f64, color: &RGBColor) -> TextStyle<'static> {
    font(px).style(FontStyle::Bold).color(color)
}

pub(super) fn anchored(style: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    style.pos(Pos::new(h, v))
}

/// Draws one part of the picture on a canvas of its own and returns the
/// shapes plotters wrote, without its `<svg>` wrapper, and what `draw` gave.
pub(super) fn fragment<T>(
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

pub(super) fn drawing_error(e: DrawingAreaErrorKind<io::Error>) -> io::Error {
    io::Error::other(format!("drawing the SVG: {e}"))
}

/// Text for an XML attribute or element; control characters made visible
/// first, since XML 1.0 cannot carry most of them even escaped.
pub(super) fn xml(text: &str) -> String {
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
pub(super) fn title(info: &RunInfo) -> String {
    let started = match info.started_at {
        Some(at) => humantime::format_rfc3339_seconds(at).to_string(),
        None => "no round ran".to_string(),
    };
    format!("tlsping {} · {started}", info.url)
}

/// The header's facts: address, protocol and TLS version, as negotiated by
/// the preflight, and how many rounds the picture holds.
pub(super) fn facts(info: &RunInfo, samples: &[Sample]) -> String {
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
pub(super) fn track_timing(
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

pub(super) fn render(
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

pub(super) fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// An axis tick: `100`, `2.5`, `0.25` (plotters' own would say `100.0`).
pub(super) fn axis_ms(v: &f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(super) fn ms_text(ms: f64) -> String {
    format::ms(Duration::from_secs_f64(ms / 1000.0))
}
