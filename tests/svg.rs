//! `--svg`: the picture of a run, from constructed samples. It is XML, holds
//! one bar per probe and the title the run gives it, does not change between
//! renders, and a real browser draws it (its screenshot is not blank and
//! shows the stage and failure colours).
//!
//! docs/example.svg is this file's picture; after an intended change,
//! regenerate it with `UPDATE_EXAMPLE=1 cargo test --test svg` and look at it.

mod support;
#[path = "support/synthetic.rs"]
mod synthetic;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use synthetic::{cold, failed, warm};
use tlsping::probe::{Axis, CompareInfo, ErrorKind, Mode, RunInfo, Sample, VariantInfo};
use tlsping::render::svg::{write_svg, HEIGHT, WIDTH};

/// 2025-11-30T17:00:00Z.
fn started() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_522_000)
}

fn info() -> RunInfo {
    let mut info = synthetic::run_info();
    info.started_at = Some(started());
    info.settings.count = 10;
    info
}

/// Ten rounds, alternating order, with what a picture must show apart: a
/// warmup round, a cold timeout, a warm reset, a warm probe that had to
/// dial again, and one slow round.
fn samples() -> Vec<Sample> {
    let mut v = Vec::new();
    for round in 1..=10u32 {
        let k = round * 37 % 11;
        let c = cold(
            round,
            60 + k * 7,
            30_000 + k * 400,
            31_000 + k * 600,
            32_000 + k * 900,
            250,
        );
        let w = warm(round, 40 + k, 32_000 + k * 800, 120, true);
        if round % 2 == 1 {
            v.extend([c, w]);
        } else {
            v.extend([w, c]);
        }
    }
    v[0].warmup = true;
    v[1].warmup = true;
    // Round 4: the cold probe times out after the connection was made.
    let i = v
        .iter()
        .position(|s| s.round == 4 && s.mode == Mode::Cold)
        .unwrap();
    v[i] = failed(4, Mode::Cold, ErrorKind::Timeout, 5_000_000);
    // Round 6: the warm probe's connection is reset.
    let i = v
        .iter()
        .position(|s| s.round == 6 && s.mode == Mode::Warm)
        .unwrap();
    v[i] = failed(6, Mode::Warm, ErrorKind::ConnReset, 1_200);
    // Round 7: the server had closed the kept connection, so warm dials.
    let i = v
        .iter()
        .position(|s| s.round == 7 && s.mode == Mode::Warm)
        .unwrap();
    v[i] = warm(7, 97_000, 31_500, 150, false);
    // Round 9: a slow path for the cold probe.
    let i = v
        .iter()
        .position(|s| s.round == 9 && s.mode == Mode::Cold)
        .unwrap();
    v[i] = cold(9, 70, 118_000, 123_000, 236_000, 400);
    v
}

/// The run's statistics, as the run computes them for its picture.
fn statistics(_info: &RunInfo, samples: &[Sample]) -> tlsping::stats::Summary {
    tlsping::stats::summarize(
        &tlsping::stats::History::of(samples),
        Duration::from_secs(10),
    )
}

fn picture(info: &RunInfo, samples: &[Sample]) -> String {
    let history = tlsping::stats::History::of(samples);
    let elapsed = Duration::from_secs(10);
    let comparison = info
        .compare
        .as_ref()
        .map(|c| tlsping::stats::compare_variants(&history, elapsed, c.variants.len()));
    let run = tlsping::render::output::Finished {
        info,
        samples,
        summary: &statistics(info, samples),
        comparison: comparison.as_ref(),
        warnings: &[],
        history: &tlsping::stats::NO_RECORDS,
        exit_code: 0,
        ending: tlsping::render::Ending::complete(info.settings.count),
    };
    let mut out = Vec::new();
    write_svg(&mut out, &run).unwrap();
    String::from_utf8(out).unwrap()
}

fn class_of<'a>(node: &roxmltree::Node<'a, '_>) -> Option<&'a str> {
    node.attribute("class")
}

fn bars<'a, 'i>(doc: &'a roxmltree::Document<'i>) -> Vec<roxmltree::Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("g") && class_of(n) == Some("bar"))
        .collect()
}

/// Every piece of text the picture shows (not its tooltips).
fn visible_text(doc: &roxmltree::Document) -> String {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn is_xml_with_one_bar_per_probe_in_their_order() {
    let samples = samples();
    let svg = picture(&info(), &samples);
    let doc = roxmltree::Document::parse(&svg).expect("the SVG parses as XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    assert_eq!(root.attribute("width"), Some(WIDTH.to_string().as_str()));
    assert_eq!(root.attribute("height"), Some(HEIGHT.to_string().as_str()));

    let bars = bars(&doc);
    assert_eq!(bars.len(), samples.len(), "one bar group per sample");
    for (bar, s) in bars.iter().zip(&samples) {
        assert_eq!(
            bar.attribute("data-round"),
            Some(s.round.to_string().as_str())
        );
        assert_eq!(bar.attribute("data-mode"), Some(s.mode.as_str()));
        assert_eq!(
            bar.attribute("data-warmup"),
            Some(if s.warmup { "true" } else { "false" })
        );
        let outcome = s.error.as_ref().map_or("ok", |e| e.kind.slug());
        assert_eq!(bar.attribute("data-outcome"), Some(outcome));
        // Each bar has its tooltip and at least one shape.
        let title = bar.children().find(|n| n.has_tag_name("title")).unwrap();
        assert!(title.text().unwrap().starts_with(&format!(
            "round {} {}",
            s.round,
            s.mode.as_str()
        )));
        assert!(
            bar.children()
                .any(|n| n.has_tag_name("rect") || n.has_tag_name("line")),
            "round {} {} draws nothing",
            s.round,
            s.mode.as_str()
        );
    }
    // One distribution per mode, cold first.
    let modes: Vec<&str> = doc
        .descendants()
        .filter(|n| class_of(n) == Some("distribution"))
        .filter_map(|n| n.attribute("data-mode"))
        .collect();
    assert_eq!(modes, ["cold", "warm"]);
}

#[test]
fn is_titled_with_the_target_the_date_and_the_header_facts() {
    let svg = picture(&info(), &samples());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let title = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("title"))
        .and_then(|n| n.text())
        .unwrap();
    assert_eq!(
        title,
        "tlsping https://example.test/ · 2025-11-30T17:00:00Z"
    );
    let shown = visible_text(&doc);
    assert!(shown.contains(title), "{shown}");
    let facts = "192.0.2.10:443 · h2 · TLS1.3 · HEAD · 9 rounds + 1 warmup";
    assert!(shown.contains(facts), "{shown}");
    // The failures say what happened, with the configured timeout.
    assert!(shown.contains("timeout (5s)"), "{shown}");
    assert!(shown.contains("conn reset"), "{shown}");
}

#[test]
fn has_an_opaque_light_background_and_the_terminal_red_for_failures() {
    let svg = picture(&info(), &samples());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let first = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("rect"))
        .unwrap();
    assert_eq!(class_of(&first), Some("background"));
    assert_eq!(first.attribute("fill"), Some("#FFFFFF"));
    assert_eq!(first.attribute("opacity"), None);
    for bar in bars(&doc) {
        let red = bar.descendants().any(|n| {
            n.attribute("fill") == Some("#CD0000") || n.attribute("stroke") == Some("#CD0000")
        });
        assert_eq!(red, bar.attribute("data-outcome") != Some("ok"));
    }
    // A cold bar shows the client's TLS set-up apart from the rest of tls.
    let cold = bars(&doc)
        .into_iter()
        .find(|b| {
            b.attribute("data-mode") == Some("cold") && b.attribute("data-outcome") == Some("ok")
        })
        .unwrap();
    let fills: Vec<&str> = cold
        .descendants()
        .filter_map(|n| n.attribute("fill"))
        .collect();
    assert!(
        fills.contains(&"#9A5B00") && fills.contains(&"#E69F00"),
        "{fills:?}"
    );
}

#[test]
fn the_same_run_gives_the_same_bytes() {
    assert_eq!(picture(&info(), &samples()), picture(&info(), &samples()));
}

#[test]
fn a_run_without_probes_is_still_a_picture() {
    let mut info = info();
    info.started_at = None;
    let svg = picture(&info, &[]);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(bars(&doc).is_empty());
    assert!(visible_text(&doc).contains("no probe ran"));
}

#[test]
fn a_long_run_stays_one_bar_per_probe_and_small() {
    let samples: Vec<Sample> = (1..=500u32)
        .flat_map(|r| {
            let k = r * 37 % 11;
            [
                cold(r, 60, 30_000 + k * 400, 31_000, 32_000 + k * 900, 250),
                warm(r, 40, 32_000 + k * 800, 120, true),
            ]
        })
        .collect();
    let svg = picture(&info(), &samples);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(bars(&doc).len(), 1000);
    eprintln!("1000 probes: {} bytes", svg.len());
    assert!(svg.len() < 2_000_000, "{} bytes", svg.len());
}

#[test]
fn a_cold_only_run_has_one_lane() {
    let samples: Vec<Sample> = (1..=3)
        .map(|r| cold(r, 60, 30_000, 31_000, 32_000, 250))
        .collect();
    let svg = picture(&info(), &samples);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(bars(&doc).len(), 3);
    let lanes = doc
        .descendants()
        .filter(|n| class_of(n) == Some("distribution"))
        .count();
    assert_eq!(lanes, 1);
    assert!(!visible_text(&doc).contains("wait"), "no warm legend entry");
}

#[test]
fn a_comparison_has_a_lane_per_mode_and_variant() {
    let mut info = info();
    let variant = VariantInfo::new;
    info.compare = Some(CompareInfo {
        axis: Axis::Tls,
        variants: vec![variant("TLS1.2", "1.2"), variant("TLS1.3", "1.3")],
        probes_per_round: 4,
    });
    let samples: Vec<Sample> = (1..=4u32)
        .flat_map(|r| {
            [0u8, 1].into_iter().flat_map(move |v| {
                let mut c = cold(r, 60, 30_000, 62_000 - u32::from(v) * 30_000, 32_000, 250);
                let mut w = warm(r, 40, 32_000, 120, true);
                c.variant = v;
                w.variant = v;
                [c, w]
            })
        })
        .collect();
    let svg = picture(&info, &samples);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let bars = bars(&doc);
    assert_eq!(bars.len(), 16);
    assert!(bars
        .iter()
        .zip(&samples)
        .all(|(b, s)| { b.attribute("data-variant") == Some(s.variant.to_string().as_str()) }));
    let lanes: Vec<(&str, &str)> = doc
        .descendants()
        .filter(|n| class_of(n) == Some("distribution"))
        .map(|n| {
            (
                n.attribute("data-mode").unwrap(),
                n.attribute("data-variant").unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lanes,
        [("cold", "0"), ("cold", "1"), ("warm", "0"), ("warm", "1")]
    );
    let shown = visible_text(&doc);
    assert!(
        shown.contains("TLS1.2") && shown.contains("TLS1.3"),
        "{shown}"
    );
    if std::env::var_os("SVG_COMPARE_OUT").is_some() {
        std::fs::write(std::env::var_os("SVG_COMPARE_OUT").unwrap(), &svg).unwrap();
    }
}

/// docs/example.svg is what this build draws for the example run.
#[test]
fn the_example_in_docs_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/example.svg");
    let svg = picture(&info(), &samples());
    if std::env::var_os("UPDATE_EXAMPLE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &svg).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == svg,
        "docs/example.svg is out of date: UPDATE_EXAMPLE=1 cargo test --test svg"
    );
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tlsping-svg-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Headless Chromium's screenshot of `svg`, decoded to RGBA rows.
fn screenshot(svg: &Path, dir: &Path) -> (u32, u32, Vec<u8>) {
    let png_path = dir.join("shot.png");
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .arg(svg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting chromium");
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium took over 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && png_path.exists(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    buf.truncate(frame.buffer_size());
    let rgba = match frame.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    (frame.width, frame.height, rgba)
}

fn near(p: &[u8], rgb: [u8; 3]) -> bool {
    p.iter().zip(rgb).all(|(a, b)| a.abs_diff(b) <= 24)
}

#[test]
fn a_browser_draws_it() {
    if !support::have("chromium") {
        return;
    }
    let dir = scratch("browser");
    let svg_path = dir.join("run.svg");
    std::fs::write(&svg_path, picture(&info(), &samples())).unwrap();
    let (w, h, rgba) = screenshot(&svg_path, &dir);
    assert_eq!((w, h), (WIDTH, HEIGHT));
    let pixels: Vec<&[u8]> = rgba.chunks(4).collect();
    // The background is the most common colour, and it is the picture's white.
    let background = [255, 255, 255];
    let drawn = pixels.iter().filter(|p| !near(p, background)).count();
    let count = |rgb| pixels.iter().filter(|p| near(p, rgb)).count();
    let (tcp, tls, srv, red, red_fill) = (
        count([0x00, 0x72, 0xb2]),
        count([0xe6, 0x9f, 0x00]),
        count([0x00, 0x9e, 0x73]),
        count([0xcd, 0x00, 0x00]),
        // The failure's light fill: the red at 22% over white.
        count([0xf4, 0xc7, 0xc7]),
    );
    eprintln!(
        "screenshot {w}x{h}: {drawn} of {} pixels drawn (tcp {tcp}, tls {tls}, srv {srv}, red {red}, failure fill {red_fill})",
        pixels.len()
    );
    assert!(
        drawn > pixels.len() / 20,
        "{drawn} pixels off the background: blank?"
    );
    assert!(
        drawn < pixels.len() / 2,
        "{drawn} pixels off the background: no background?"
    );
    for (name, n) in [
        ("tcp", tcp),
        ("tls", tls),
        ("srv", srv),
        ("failure fill", red_fill),
    ] {
        assert!(n > 2000, "only {n} {name} pixels");
    }
    // The crosses, outlines and reasons of the two failures.
    assert!(red > 100, "only {red} red pixels");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Through the binary: `--svg FILE` beside the normal output writes a picture
/// with one bar per probe of the run; a path in no directory is a usage error.
#[test]
fn the_flag_writes_the_picture_of_the_run() {
    let server = support::start(support::ServerOpts::default());
    let ca = support::cacert();
    let dir = std::env::temp_dir().join(format!("tlsping-svg-flag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.svg");
    let path_arg = path.display().to_string();
    let out = support::tlsping(&[
        "--cacert",
        &ca,
        "-n",
        "2",
        "-i",
        "200ms",
        "--json",
        "--svg",
        &path_arg,
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["samples"].as_array().unwrap().len(),
        4,
        "the JSON is untouched"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let svg = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(bars(&svg).len(), 4);

    let missing = dir
        .join("no-such-dir")
        .join("run.svg")
        .display()
        .to_string();
    let out = support::tlsping(&["--svg", &missing, &server.url()]);
    assert_eq!(out.status.code(), Some(3), "{}", support::stderr(&out));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn each_box_shows_the_statistics_own_figures() {
    let samples = samples();
    let svg = picture(&info(), &samples);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let summary = statistics(&info(), &samples);
    for (mode, timing) in [
        ("cold", &summary.cold.timing),
        ("warm", &summary.warm.timing),
    ] {
        let tooltip = doc
            .descendants()
            .find(|n| class_of(n) == Some("distribution") && n.attribute("data-mode") == Some(mode))
            .and_then(|g| g.children().find(|c| c.has_tag_name("title")))
            .and_then(|t| t.text())
            .unwrap_or_else(|| panic!("no {mode} distribution"));
        let median = tlsping::render::format::ms(timing.median.unwrap());
        let expected = format!("median {median} ms, n={}", timing.n);
        assert!(
            tooltip.contains(&expected),
            "{mode}: {tooltip:?} lacks {expected:?}"
        );
        // Whiskers from the minimum to p95 (the maximum below 20 values),
        // as the terminal's distribution rows draw them.
        let ms = |d: Option<Duration>| tlsping::render::format::ms(d.unwrap());
        let whiskers = format!(
            "whiskers {}–{} ms, max {} ms",
            ms(timing.min),
            ms(timing.p95.or(timing.max)),
            ms(timing.max)
        );
        assert!(
            tooltip.contains(&whiskers),
            "{mode}: {tooltip:?} lacks {whiskers:?}"
        );
    }
}

/// With 20 timed totals and more, the box's whiskers end at p95 and a
/// maximum beyond it is a dot of its own, as in the terminal's rows.
#[test]
fn whiskers_end_at_p95_and_a_farther_maximum_is_a_dot() {
    let mut samples = Vec::new();
    for round in 1..=24u32 {
        let slow = if round == 24 { 400_000 } else { 0 };
        samples.push(cold(
            round,
            70,
            30_000 + round * 100,
            31_000,
            33_000 + slow,
            250,
        ));
    }
    let summary = statistics(&info(), &samples);
    let timing = &summary.cold.timing;
    assert!(timing.p95 < timing.max, "{timing:?}");
    let svg = picture(&info(), &samples);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let group = doc
        .descendants()
        .find(|n| class_of(n) == Some("distribution") && n.attribute("data-mode") == Some("cold"))
        .unwrap();
    let tooltip = group
        .children()
        .find(|c| c.has_tag_name("title"))
        .and_then(|t| t.text())
        .unwrap();
    let ms = |d: Option<Duration>| tlsping::render::format::ms(d.unwrap());
    assert!(
        tooltip.contains(&format!(
            "whiskers {}–{} ms",
            ms(timing.min),
            ms(timing.p95)
        )),
        "{tooltip}"
    );
    // The points are r=3; the maximum beyond the whisker is the one r=4 dot.
    let dots = group
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("r") == Some("4"))
        .count();
    assert_eq!(dots, 1, "{tooltip}");
}
