//! Snapshots of the human output: every layout × {plain, quiet, verbose} ×
//! {all ok, one cold timeout, one warm failure, warmup + new conn}, fed from
//! constructed samples so they never change by themselves.
//!
//! Regenerate after an intended change: `INSTA_UPDATE=always cargo test --test layouts`
//! (or `cargo insta review`), then read the diff before committing.

#[path = "support/synthetic.rs"]
mod synthetic;
use std::time::Duration;

use synthetic::{cold, failed, warm};
use tlsping::probe::{ErrorKind, Mode, RunInfo, Sample};
use tlsping::render::{Human, Layout, Style};
use tlsping::stats::{summarize, History};

fn info() -> RunInfo {
    synthetic::run_info()
}

/// Four rounds, alternating order as the scheduler runs them.
fn rounds(case: &str) -> Vec<Sample> {
    let mut r1c = cold(1, 2100, 31_000, 63_000, 32_000, 300);
    let mut r1w = warm(1, 96_000, 32_000, 200, false);
    r1c.warmup = true;
    r1w.warmup = true;
    let mut v = vec![
        r1c,
        r1w,
        warm(2, 40, 32_500, 120, true),
        cold(2, 80, 30_500, 31_000, 33_000, 250),
        cold(3, 95, 33_000, 30_000, 38_000, 240),
        warm(3, 35, 37_000, 90, true),
        warm(4, 38, 31_000, 110, true),
        cold(4, 70, 118_000, 123_000, 236_000, 400),
    ];
    match case {
        "ok" => {}
        "cold_timeout" => v[4] = failed(3, Mode::Cold, ErrorKind::Timeout, 5_000_000),
        "warm_failure" => v[5] = failed(3, Mode::Warm, ErrorKind::ConnReset, 1_200),
        "new_conn" => v[6] = warm(4, 97_000, 31_500, 150, false),
        other => panic!("{other}"),
    }
    v
}

fn render(layout: Layout, width: usize, variant: &str, case: &str) -> String {
    let style = Style {
        layout,
        width,
        color: false,
        quiet: variant == "quiet",
        verbose: variant == "verbose",
        unicode: true,
    };
    let info = info();
    let samples = rounds(case);
    let mut buf = Vec::new();
    {
        let mut h = Human::new(&mut buf, &info, style);
        h.start(&info).unwrap();
        synthetic::feed_rounds(&mut h, &samples);
        h.finish().unwrap();
        let summary = summarize(&History::of(&samples), Duration::from_millis(3400));
        h.statistics(&info, &summary, None).unwrap();
    }
    let text = String::from_utf8(buf).unwrap();
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "line over {width} columns: {line:?}"
        );
    }
    text
}

#[test]
fn every_layout_variant_and_case() {
    for (layout, width, lname) in [
        (Layout::Wide, 120, "wide"),
        (Layout::Stacked, 80, "stacked"),
        (Layout::Blocks, 60, "blocks"),
    ] {
        for variant in ["plain", "quiet", "verbose"] {
            for case in ["ok", "cold_timeout", "warm_failure", "new_conn"] {
                let name = format!("{lname}_{variant}_{case}");
                insta::assert_snapshot!(name, render(layout, width, variant, case));
            }
        }
    }
}

#[test]
fn failure_reason_replaces_only_the_failing_side() {
    let text = render(Layout::Wide, 120, "plain", "cold_timeout");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("3 |"))
        .unwrap();
    assert!(row.contains("timeout (5s)"), "{row}");
    assert!(row.contains("-/200"), "{row}");
    // The warm side still shows its three numbers.
    let warm_part = row.split('|').nth(2).unwrap();
    assert_eq!(warm_part.split_whitespace().count(), 3, "{row}");
}

#[test]
fn columns_do_not_shift_when_values_grow() {
    let text = render(Layout::Wide, 120, "plain", "ok");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" | ") && l.trim_start().starts_with(char::is_numeric))
        .collect();
    let bars: Vec<Vec<usize>> = rows
        .iter()
        .map(|r| r.match_indices('|').map(|(i, _)| i).collect())
        .collect();
    assert!(bars.windows(2).all(|w| w[0] == w[1]), "{rows:#?}");
}

#[test]
fn slow_totals_are_painted_yellow_once_three_samples_are_seen() {
    let info = info();
    let style = Style {
        layout: Layout::Wide,
        width: 120,
        color: true,
        quiet: false,
        verbose: false,
        unicode: true,
    };
    let mut buf = Vec::new();
    {
        let mut h = Human::new(&mut buf, &info, style);
        // Totals 10, 10, 10 ms then 40 ms: only the fourth is above 1.5 × median.
        for round in 2..=5u32 {
            let srv = if round == 5 { 39_000 } else { 9_000 };
            h.round(round, &[cold(round, 0, 500, 495, srv, 0)]).unwrap();
        }
    }
    let text = String::from_utf8(buf).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let yellow = "\u{1b}[38;5;11m";
    assert!(lines[..3].iter().all(|l| !l.contains(yellow)), "{text}");
    assert!(lines[3].contains(yellow), "{text:?}");
}

#[test]
fn round_rows_fit_the_narrowest_width_of_their_layout() {
    // The bottom of each range: the figures and the notes of every round
    // must fit without a cut (statistics lines may fold).
    for (layout, width) in [(Layout::Wide, 100), (Layout::Stacked, 70)] {
        for variant in ["plain", "quiet", "verbose"] {
            for case in ["ok", "cold_timeout", "warm_failure", "new_conn"] {
                let text = render(layout, width, variant, case);
                let table = text.split("\n--- ").next().unwrap();
                // Round rows (they start with a space); the header lines
                // above them carry a URL and run facts of any length.
                for line in table.lines().filter(|l| l.starts_with(' ')) {
                    assert!(
                        !line.contains('…'),
                        "{layout:?} {variant} {case} at {width}: cut row {line:?}\n{text}"
                    );
                }
            }
        }
    }
}

#[test]
fn connection_flags_get_a_header_line_of_their_own() {
    let mut info = info();
    let header = |info: &RunInfo| {
        let style = Style {
            layout: Layout::Stacked,
            width: 80,
            color: false,
            quiet: false,
            verbose: false,
            unicode: true,
        };
        let mut buf = Vec::new();
        Human::new(&mut buf, info, style).start(info).unwrap();
        String::from_utf8(buf).unwrap()
    };
    assert!(!header(&info).contains("connection:"));
    info.settings.tls_max = Some(tlsping::probe::TlsMax::V1_2);
    info.settings.curves = Some("X25519:P-256".into());
    info.settings.resolve = vec!["example.test:443:127.0.0.1".into()];
    info.settings.client_cert = Some(tlsping::probe::PemFile {
        path: "/tmp/client.pem".into(),
        pem: std::sync::Arc::from(&b""[..]),
    });
    info.settings.early_data = true;
    let text = header(&info);
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("connection:"))
        .take(2)
        .collect();
    // Wrapped between items at 80 columns, never cut.
    assert_eq!(
        lines,
        [
            "connection: tls-max=1.2, curves=X25519:P-256,",
            "  resolve=example.test:443:127.0.0.1, client certificate, early data"
        ]
    );
}

/// Twenty timed rounds after a warmup one: cold 92 to 125 ms with one
/// 170 ms outlier, warm 31 to 43 ms with one 70 ms outlier, so each mode's
/// maximum lies beyond its p95.
fn rounds_with_outliers() -> Vec<Sample> {
    let mut v = Vec::new();
    for round in 1..=21u32 {
        let jitter = round * 37 % 11;
        // Spread in steps so the boxes have some width; one outlier a mode.
        let cold_srv = match round {
            12 => 108_000,
            _ => 30_000 + jitter * 1_800,
        };
        let warm_srv = match round {
            17 => 70_000,
            _ => 31_000 + jitter * 1_200,
        };
        let mut c = cold(round, 80, 31_000, 31_000 + jitter * 1_500, cold_srv, 250);
        let mut w = warm(round, 40, warm_srv, 100, round > 1);
        c.warmup = round == 1;
        w.warmup = round == 1;
        v.extend([c, w]);
    }
    v
}

/// The statistics block of `samples` fed through the human output, every
/// line checked against the width.
fn statistics_of(samples: &[Sample], style: Style) -> String {
    let info = info();
    let mut buf = Vec::new();
    {
        let mut h = Human::new(&mut buf, &info, style);
        synthetic::feed_rounds(&mut h, samples);
        h.finish().unwrap();
        let summary = summarize(&History::of(samples), Duration::from_millis(21_000));
        h.statistics(&info, &summary, None).unwrap();
    }
    let text = String::from_utf8(buf).unwrap();
    for line in text.lines() {
        assert!(
            line.chars().count() <= style.width,
            "line over {} columns: {line:?}\n{text}",
            style.width
        );
    }
    text.lines()
        .skip_while(|l| !l.starts_with("--- "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn plain(layout: Layout, width: usize, unicode: bool) -> Style {
    Style {
        layout,
        width,
        color: false,
        quiet: false,
        verbose: false,
        unicode,
    }
}

#[test]
fn distribution_rows_show_the_outliers_in_unicode_and_ascii() {
    let samples = rounds_with_outliers();
    insta::assert_snapshot!(
        "distribution_unicode_stacked",
        statistics_of(&samples, plain(Layout::Stacked, 80, true))
    );
    insta::assert_snapshot!(
        "distribution_ascii_wide",
        statistics_of(&samples, plain(Layout::Wide, 120, false))
    );
    let ascii = statistics_of(&samples, plain(Layout::Wide, 120, false));
    let picture: Vec<&str> = ascii
        .lines()
        .filter(|l| l.starts_with("cold ") || l.starts_with("warm "))
        .collect();
    assert_eq!(picture.len(), 2, "{ascii}");
    assert!(picture.iter().all(|l| l.is_ascii()), "{ascii}");
    let unicode = statistics_of(&samples, plain(Layout::Wide, 120, true));
    // Both modes' maxima lie beyond p95: one dot each, apart from the whisker's end.
    for mode in ["cold", "warm"] {
        let row = unicode
            .lines()
            .find(|l| l.starts_with(&format!("{mode}  ")))
            .unwrap_or_else(|| panic!("no {mode} row\n{unicode}"));
        assert!(row.ends_with(" ·"), "{row}");
        assert!(row.contains("┤ "), "{row}");
        assert_eq!(row.matches('·').count(), 1, "{row}");
    }
}

#[test]
fn distribution_rows_sit_under_the_per_mode_figures() {
    let text = statistics_of(&rounds_with_outliers(), plain(Layout::Stacked, 80, true));
    let lines: Vec<&str> = text.lines().collect();
    let p95 = lines.iter().position(|l| l.starts_with("p95 ")).unwrap();
    // Cold (92 ms up) and warm (up to 70 ms) do not overlap: each row has
    // its own scale under it, starting at its own minimum.
    assert!(lines[p95 + 1].starts_with("cold  ├"), "{text}");
    assert!(lines[p95 + 2].trim_start().starts_with("92.3ms"), "{text}");
    assert!(lines[p95 + 3].starts_with("warm  ├"), "{text}");
    assert!(lines[p95 + 4].trim_start().starts_with("31.1ms"), "{text}");
    assert!(lines[p95 + 5].contains("separate scales"), "{text}");
    assert!(lines[p95 + 7].starts_with("handshake overhead"), "{text}");
}

#[test]
fn no_distribution_when_quiet_narrow_or_short() {
    let samples = rounds_with_outliers();
    let has_picture = |text: &str| text.contains("p25..p75");
    assert!(has_picture(&statistics_of(
        &samples,
        plain(Layout::Wide, 100, true)
    )));
    assert!(has_picture(&statistics_of(
        &samples,
        plain(Layout::Stacked, 70, false)
    )));
    let quiet = Style {
        quiet: true,
        ..plain(Layout::Wide, 120, true)
    };
    assert!(!has_picture(&statistics_of(&samples, quiet)));
    assert!(!has_picture(&statistics_of(
        &samples,
        plain(Layout::Blocks, 60, true)
    )));
    // Rounds 1..=5: a warmup and four timed probes a mode, one short of a row.
    let short: Vec<Sample> = samples.iter().filter(|s| s.round <= 5).cloned().collect();
    assert!(!has_picture(&statistics_of(
        &short,
        plain(Layout::Wide, 120, true)
    )));
    let five: Vec<Sample> = samples.iter().filter(|s| s.round <= 6).cloned().collect();
    assert!(has_picture(&statistics_of(
        &five,
        plain(Layout::Wide, 120, true)
    )));
}

/// Eleven rounds, the first a warmup; over the ten timed ones `step` takes
/// every value 0..=10 but one, each once, so the totals spread evenly.
fn spread_rounds(cold_at: impl Fn(u32) -> Sample, warm_at: impl Fn(u32) -> Sample) -> Vec<Sample> {
    let mut v = Vec::new();
    for round in 1..=11u32 {
        let (mut c, mut w) = (cold_at(round), warm_at(round));
        c.warmup = round == 1;
        w.warmup = round == 1;
        v.extend([c, w]);
    }
    v
}

/// What a real link gives: cold totals 123.0 to 128.0 ms, warm 40.0 to 42.0 ms.
fn lab_rounds() -> Vec<Sample> {
    spread_rounds(
        |r| cold(r, 80, 40_000, 41_000, 41_665 + r * 37 % 11 * 500, 250),
        |r| warm(r, 40, 39_860 + r * 53 % 11 * 200, 100, r > 1),
    )
}

/// Ranges that overlap: cold 30.0 to 45.0 ms, warm 28.0 to 40.0 ms.
fn overlapping_rounds() -> Vec<Sample> {
    spread_rounds(
        |r| cold(r, 80, 10_000, 10_000, 9_665 + r * 37 % 11 * 1_500, 250),
        |r| warm(r, 40, 27_860 + r * 53 % 11 * 1_200, 100, r > 1),
    )
}

/// The picture's lines: from the first row to the legend's first line.
fn picture_of(stats: &str) -> Vec<&str> {
    stats
        .lines()
        .skip_while(|l| !l.starts_with("cold "))
        .take_while(|l| !l.starts_with("handshake"))
        .collect()
}

/// The columns a row's marks cover, from its first mark to its last.
fn drawn(row: &str) -> usize {
    let plot: Vec<char> = row.chars().skip(6).collect();
    let first = plot.iter().position(|&c| c != ' ').unwrap();
    plot.len() - first
}

#[test]
fn lab_like_rows_get_a_scale_each_and_say_so() {
    let samples = lab_rounds();
    let unicode = statistics_of(&samples, plain(Layout::Stacked, 80, true));
    let ascii = statistics_of(&samples, plain(Layout::Wide, 120, false));
    insta::assert_snapshot!("distribution_lab_unicode_stacked", unicode);
    insta::assert_snapshot!("distribution_lab_ascii_wide", ascii);
    for text in [&unicode, &ascii] {
        let picture = picture_of(text);
        // cold, its ends, warm, its ends, the note, the legend.
        assert!(picture[1].trim_start().starts_with("123ms"), "{text}");
        assert!(picture[1].ends_with("128ms"), "{text}");
        assert!(picture[2].starts_with("warm "), "{text}");
        assert!(picture[3].trim_start().starts_with("40.0ms"), "{text}");
        assert!(picture[3].ends_with("42.0ms"), "{text}");
        assert!(picture[4].contains("separate scales"), "{text}");
        // Each row's marks cover its whole axis of 60 columns.
        assert_eq!((drawn(picture[0]), drawn(picture[2])), (60, 60), "{text}");
    }
    assert!(picture_of(&ascii).iter().all(|l| l.is_ascii()), "{ascii}");
}

#[test]
fn overlapping_rows_share_one_scale() {
    let text = statistics_of(&overlapping_rounds(), plain(Layout::Wide, 120, true));
    insta::assert_snapshot!("distribution_overlap_unicode_wide", text);
    let picture = picture_of(&text);
    assert!(picture[1].starts_with("warm  "), "{text}");
    assert!(picture[2].trim_start().starts_with("28.0ms"), "{text}");
    assert!(picture[2].ends_with("45.0ms"), "{text}");
    assert!(picture[3].contains("p25..p75"), "{text}");
    assert!(!text.contains("separate scales"), "{text}");
    // Each row keeps at least half of the shared axis.
    assert!(drawn(picture[0]) >= 30 && drawn(picture[1]) >= 30, "{text}");
}
