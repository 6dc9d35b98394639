//! The bars: one stacked bar per probe, its parts and its tooltip.

use std::fmt::Write as _;
use std::time::Duration;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::probe::{Mode, RunInfo, Sample, Stage};
use crate::render::format;
use crate::text::millis;

use super::{
    anchored, ms_text, text_style, Coord, DrawResult, Scene, FAILED, FAILED_FILL, WARMUP_ALPHA,
};

/// One piece of a bar: a stage, the client's TLS set-up drawn apart from
/// the rest of `tls`, or the time a failed probe spent before it gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// `Stage::Tls` is the rest of `tls`, or all of it when the set-up was
    /// not measured.
    Stage(Stage),
    /// The client's own work before its ClientHello (`Sample::tls_setup`).
    TlsSetup,
    /// From the last stage the probe finished to where it gave up.
    Failed,
}

impl Part {
    pub(super) fn label(self) -> &'static str {
        match self {
            Part::Stage(stage) => stage.as_str(),
            Part::TlsSetup => "tls set-up",
            Part::Failed => "failed",
        }
    }

    pub(super) fn color(self) -> RGBColor {
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
pub(super) fn parts(s: &Sample) -> Vec<(Part, f64)> {
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

/// The parts the legend lists: those of the modes present, `failed` only
/// when something failed.
pub(super) fn legend(samples: &[Sample]) -> Vec<Part> {
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

/// A bar's tooltip: every figure it is drawn from.
pub(super) fn bar_title(info: &RunInfo, s: &Sample) -> String {
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
                format::reason(e.kind, info.settings.timeout),
                format::ms(total)
            );
        }
        (Some(e), None) => {
            let _ = write!(t, " · {}", format::reason(e.kind, info.settings.timeout));
        }
        (None, Some(total)) => {
            let _ = write!(t, " · total {} ms · {}", format::ms(total), s.status);
        }
        (None, None) => {}
    }
    t
}

/// One probe's bar: its parts stacked, faint for warmup; a failure with a
/// red cross at its end and, where there is room, the reason along it.
pub(super) fn draw_bar(
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
        Some(e) => format::reason(e.kind, info.settings.timeout),
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
