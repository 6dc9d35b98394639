//! `--compare` output from constructed samples: the rows of every layout
//! tagged with the variant (snapshots), the difference sentences, the JSON
//! keys against the schema, and the CSV `variant` column. Without a
//! comparison nothing changes: `layouts.rs`'s snapshots cover that, and the
//! machine formats are checked for absent keys here.
//!
//! Regenerate after an intended change: `INSTA_UPDATE=always cargo test --test compare_render`
//! (or `cargo insta review`), then read the diff before committing.

#[path = "support/synthetic.rs"]
mod synthetic;

use std::time::Duration;

use serde_json::Value;
use synthetic::{cold, failed, warm};
use tlsping::probe::{
    round_modes, variant_order, Axis, CompareInfo, ErrorKind, Mode, ModeChoice, RunInfo, Sample,
    VariantInfo,
};
use tlsping::render::csv::CsvStream;
use tlsping::render::{Finished, Human, Layout, Output, Style};
use tlsping::stats::{compare_variants, summarize, Comparison, History, Summary};

fn variant(label: &str, value: &str) -> VariantInfo {
    VariantInfo {
        addr: Some(([192, 0, 2, 10], 443).into()),
        ..VariantInfo::new(label, value)
    }
}

/// A `--compare tls` run over two variants, TLS1.2 the baseline.
fn info() -> RunInfo {
    let mut info = synthetic::run_info();
    info.compare = Some(CompareInfo {
        axis: Axis::Tls,
        variants: vec![variant("TLS1.2", "1.2"), variant("TLS1.3", "1.3")],
        probes_per_round: 4,
    });
    info
}

fn of(variant: u8, mut s: Sample) -> Sample {
    s.variant = variant;
    s
}

/// One probe of `variant` (0: TLS1.2, 1: TLS1.3) in `round`: TLS1.3's
/// handshake is about 30 ms shorter, its server stage 2 ms longer; warm
/// probes differ by a jitter that changes sign from round to round.
fn probe(round: u32, variant: u8, mode: Mode) -> Sample {
    let jitter = (round * 37 % 11) * 100;
    let tcp = 30_000 + round * 400;
    let s = match (mode, variant) {
        (Mode::Cold, 0) => cold(round, 80, tcp, 62_000 + jitter, 32_000, 250),
        (Mode::Cold, _) => cold(round, 80, tcp, 31_000 + jitter / 2, 34_000 + jitter, 250),
        (Mode::Warm, 0) => warm(round, 40, 31_000 + jitter, 100, true),
        (Mode::Warm, _) => warm(round, 40, 31_500 + 100 * (round % 3), 100, true),
    };
    of(variant, s)
}

/// `n` rounds as the scheduler runs them: the variants rotate, the modes
/// alternate; round 1 is warmup.
fn rounds(n: u32) -> Vec<Sample> {
    let mut v = Vec::new();
    for round in 1..=n {
        for variant in variant_order(2, round) {
            for mode in round_modes(ModeChoice::Both, tlsping::probe::Order::Alternate, round) {
                let mut s = probe(round, variant as u8, mode);
                s.warmup = round == 1;
                v.push(s);
            }
        }
    }
    v
}

fn style(layout: Layout, width: usize, variant: &str) -> Style {
    Style {
        layout,
        width,
        color: false,
        quiet: variant == "quiet",
        verbose: variant == "verbose",
        unicode: true,
    }
}

/// The whole human output of `samples`, every line checked against `width`.
fn render(info: &RunInfo, samples: &[Sample], style: Style) -> String {
    let variants = info.compare.as_ref().map_or(0, |c| c.variants.len());
    let mut buf = Vec::new();
    {
        let mut h = Human::new(&mut buf, info, style);
        h.start(info).unwrap();
        synthetic::feed_rounds(&mut h, samples);
        h.finish().unwrap();
        let (summary, comparison) =
            compared(&History::of(samples), Duration::from_millis(3400), variants);
        h.statistics(info, &summary, Some(&comparison)).unwrap();
    }
    let text = String::from_utf8(buf).unwrap();
    for line in text.lines() {
        assert!(
            line.chars().count() <= style.width,
            "line over {} columns: {line:?}\n{text}",
            style.width
        );
    }
    text
}

#[test]
fn every_layout_and_variant_with_two_variants() {
    let mut samples = rounds(4);
    // Round 3: TLS1.2's cold probe timed out.
    let at = samples
        .iter()
        .position(|s| s.round == 3 && s.variant == 0 && s.mode == Mode::Cold)
        .unwrap();
    samples[at] = of(0, failed(3, Mode::Cold, ErrorKind::Timeout, 5_000_000));
    for (layout, width, lname) in [
        (Layout::Wide, 120, "wide"),
        (Layout::Stacked, 80, "stacked"),
        (Layout::Blocks, 60, "blocks"),
    ] {
        for variant in ["plain", "quiet", "verbose"] {
            let name = format!("{lname}_{variant}");
            let text = render(&info(), &samples, style(layout, width, variant));
            insta::assert_snapshot!(name, text);
        }
    }
}

/// The table's lines from the one starting with `lead` to the next round.
fn round_rows<'a>(table: &'a str, lead: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = table.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(lead))
        .unwrap_or_else(|| panic!("no {lead:?} in\n{table}"));
    let mut out = vec![lines[start]];
    out.extend(
        lines[start + 1..]
            .iter()
            .take_while(|l| l.starts_with("     ")),
    );
    out
}

#[test]
fn rows_follow_variant_order_whatever_ran_first() {
    // Round 2 ran TLS1.3 first (warm first), round 3 TLS1.2 first (cold
    // first): the rows keep their order, and `*` follows the first probe.
    let samples = rounds(4);
    let first = |round: u32| {
        let s = samples.iter().find(|s| s.round == round).unwrap();
        (s.variant, s.mode)
    };
    assert_eq!((first(2), first(3)), ((1, Mode::Warm), (0, Mode::Cold)));
    for (layout, width, two, three) in [
        (Layout::Wide, 120, "   2 ", "   3 "),
        (Layout::Stacked, 80, "  #2 ", "  #3 "),
    ] {
        let text = render(&info(), &samples, style(layout, width, "plain"));
        let table = text.split("\n--- ").next().unwrap();
        for lead in [two, three] {
            let rows = round_rows(table, lead);
            let tags: Vec<&str> = rows
                .iter()
                .map(|l| {
                    if l.contains("TLS1.2") {
                        "TLS1.2"
                    } else {
                        "TLS1.3"
                    }
                })
                .collect();
            let want: &[&str] = match layout {
                Layout::Wide => &["TLS1.2", "TLS1.3"],
                _ => &["TLS1.2", "TLS1.2", "TLS1.3", "TLS1.3"],
            };
            assert_eq!(tags, want, "{layout:?}\n{table}");
        }
        let starred = |lead| {
            let rows = round_rows(table, lead);
            let marked: Vec<&str> = rows.into_iter().filter(|l| l.contains('*')).collect();
            assert_eq!(marked.len(), 1, "{table}");
            marked[0]
        };
        assert!(starred(two).contains("TLS1.3"), "{table}");
        assert!(starred(three).contains("TLS1.2"), "{table}");
        if layout == Layout::Stacked {
            assert!(starred(two).contains("WARM*"), "{table}");
            assert!(starred(three).contains("COLD*"), "{table}");
        }
    }
}

#[test]
fn the_tag_column_lines_up_and_the_header_lists_the_variants() {
    let text = render(&info(), &rounds(4), style(Layout::Wide, 120, "plain"));
    assert!(
        text.lines()
            .any(|l| l == "compare tls: TLS1.2, TLS1.3 · 4 probes per round"),
        "{text}"
    );
    let bars: Vec<Vec<usize>> = text
        .lines()
        .filter(|l| l.contains(" |") && !l.starts_with("---"))
        .map(|l| l.match_indices('|').map(|(i, _)| i).collect())
        .collect();
    assert!(bars.len() > 6);
    assert!(bars.windows(2).all(|w| w[0] == w[1]), "{text}");
}

#[test]
fn round_rows_fit_the_narrowest_width_of_their_layout() {
    // At the bottom of each range the labels may not fit beside the row:
    // then letters stand in for them, and the header says which is which.
    for (layout, width) in [
        (Layout::Wide, 100),
        (Layout::Stacked, 70),
        (Layout::Blocks, 60),
    ] {
        for variant in ["plain", "quiet", "verbose"] {
            let text = render(&info(), &rounds(4), style(layout, width, variant));
            let table = text.split("\n--- ").next().unwrap();
            for line in table.lines().filter(|l| l.starts_with(' ')) {
                assert!(
                    !line.contains('…'),
                    "{layout:?} {variant} at {width}: cut row {line:?}\n{text}"
                );
            }
        }
    }
    let narrow = render(&info(), &rounds(4), style(Layout::Blocks, 60, "plain"));
    assert!(
        narrow.contains("compare tls: TLS1.2 (A), TLS1.3 (B) · 4 probes per round"),
        "{narrow}"
    );
    assert!(narrow.contains("\n   2 A dns "), "{narrow}");
    // Where they fit, the labels themselves.
    let stacked = render(&info(), &rounds(4), style(Layout::Stacked, 70, "plain"));
    assert!(stacked.contains("  #2 TLS1.2 COLD "), "{stacked}");
}

#[test]
fn an_unavailable_variant_is_listed_with_its_reason_and_has_no_rows() {
    let mut info = info();
    let cmp = info.compare.as_mut().unwrap();
    cmp.variants.insert(
        1,
        VariantInfo {
            unavailable: Some(synthetic::preflight_failed(
                ErrorKind::TlsError,
                "no protocols available",
            )),
            addr: None,
            ..variant("TLS1.1", "1.1")
        },
    );
    // TLS1.3 is now variant 2.
    let samples: Vec<Sample> = rounds(4)
        .into_iter()
        .map(|s| {
            let v = if s.variant == 1 { 2 } else { 0 };
            of(v, s)
        })
        .collect();
    let text = render(&info, &samples, style(Layout::Wide, 120, "plain"));
    assert!(
        text.contains(
            "compare tls: TLS1.2, TLS1.1 (unavailable: tls_error), TLS1.3 · 4 probes per round"
        ),
        "{text}"
    );
    let table = text.split("\n--- ").next().unwrap();
    assert!(
        table.lines().filter(|l| l.contains("TLS1.1")).count() == 1,
        "{text}"
    );
    assert!(
        text.contains("cold tls: no conclusion yet on TLS1.3 against TLS1.2"),
        "{text}"
    );
}

#[test]
fn statistics_give_a_block_per_variant_and_a_sentence_per_difference() {
    let text = render(&info(), &rounds(11), style(Layout::Wide, 120, "plain"));
    let stats = text.split_once("\n--- ").unwrap().1;
    assert!(
        stats.starts_with("example.test statistics: TLS1.2 ---"),
        "{stats}"
    );
    assert!(
        stats.contains("--- example.test statistics: TLS1.3 ---"),
        "{stats}"
    );
    assert!(
        stats.contains("--- tls compared with TLS1.2, round by round ---"),
        "{stats}"
    );
    let lines: Vec<&str> = stats.lines().collect();
    let find = |prefix: &str| {
        *lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in\n{stats}"))
    };
    // 10 timed rounds: every difference has an interval.
    let tls = find("cold tls: ");
    assert!(
        tls.starts_with("cold tls: TLS1.3 is ") && tls.contains("ms faster than TLS1.2 (95% CI "),
        "{tls}"
    );
    assert!(tls.ends_with("), 10 rounds"), "{tls}");
    assert!(find("cold srv: ").contains("ms slower than TLS1.2 (95% CI "));
    assert_eq!(
        find("cold tcp: "),
        "cold tcp: no difference detectable between TLS1.3 and TLS1.2 \
         (median 0.00ms, 95% CI 0.00 .. 0.00), 10 rounds"
    );
    assert!(find("warm srv: ").contains("no difference detectable between TLS1.3 and TLS1.2"));
    assert!(lines.iter().any(|l| l.starts_with("warm total: ")));
    // Without an interval there is no conclusion, and no direction.
    let few = render(&info(), &rounds(4), style(Layout::Wide, 120, "plain"));
    assert!(
        few.lines().any(|l| l
            == "cold tls: no conclusion yet on TLS1.3 against TLS1.2: an interval needs 6 \
                rounds (medians 31.2ms apart), 3 rounds"),
        "{few}"
    );
    assert!(
        !few.lines()
            .any(|l| l.contains(" faster than ") || l.contains(" slower than ")),
        "{few}"
    );
}

/// Two variants at clearly different cold levels, as on a real link:
/// TLS1.2's cold totals 123.0 to 128.0 ms, TLS1.3's a round trip shorter
/// (83.0 to 88.0 ms) with a lookup 3 µs slower; both warm 40.0 to 42.0 ms,
/// spread in another order each, so their rounds differ either way.
fn lab_rounds(n: u32) -> Vec<Sample> {
    let mut v = Vec::new();
    for round in 1..=n {
        for variant in variant_order(2, round) {
            for mode in round_modes(ModeChoice::Both, tlsping::probe::Order::Alternate, round) {
                let (step, other) = (round * 37 % 11, round * 53 % 11);
                let s = match (mode, variant) {
                    (Mode::Cold, 0) => cold(round, 80, 40_000, 41_000, 41_665 + step * 500, 250),
                    (Mode::Cold, _) => cold(round, 83, 40_000, 1_000, 41_662 + step * 500, 250),
                    (Mode::Warm, 0) => warm(round, 40, 39_860 + step * 200, 100, true),
                    (Mode::Warm, _) => warm(round, 40, 39_860 + other * 200, 100, true),
                };
                let mut s = of(variant as u8, s);
                s.warmup = round == 1;
                v.push(s);
            }
        }
    }
    v
}

/// The statistics of `text`, from the first block's title on.
fn statistics_part(text: &str) -> String {
    let at = text.find("--- example.test statistics").unwrap();
    text[at..].to_string()
}

#[test]
fn variants_at_different_levels_draw_rows_on_the_scales_they_share() {
    let text = render(
        &info(),
        &lab_rounds(11),
        style(Layout::Stacked, 80, "plain"),
    );
    let stats = statistics_part(&text);
    insta::assert_snapshot!("distribution_two_levels_stacked", stats);
    let blocks: Vec<&str> = stats
        .split("--- example.test statistics: ")
        .skip(1)
        .collect();
    assert_eq!(blocks.len(), 2, "{text}");
    // Each row with the scale line under it, then the note and the legend.
    let scales = |block: &str| {
        let lines: Vec<&str> = block.lines().collect();
        let cold = lines.iter().position(|l| l.starts_with("cold  ")).unwrap();
        assert!(lines[cold + 2].starts_with("warm  "), "{block}");
        assert!(lines[cold + 4].contains("separate scales"), "{block}");
        assert!(lines[cold + 5].contains("p25..p75"), "{block}");
        (lines[cold + 1].to_string(), lines[cold + 3].to_string())
    };
    let (tls12, tls13) = (scales(blocks[0]), scales(blocks[1]));
    // Cold levels 40 ms apart: a scale each, from each one's own minimum.
    assert!(tls12.0.trim_start().starts_with("123ms"), "{stats}");
    assert!(tls13.0.trim_start().starts_with("83.0ms"), "{stats}");
    // Warm rows alike: one scale, the same ends under both blocks.
    assert_eq!(tls12.1, tls13.1, "{stats}");
    assert!(tls12.1.trim_start().starts_with("40.0ms"), "{stats}");
}

#[test]
fn variant_blocks_whose_rows_all_overlap_share_one_scale() {
    // The variants' warm rows alike, without the cold rows that lie apart.
    let mut warm_info = info();
    warm_info.settings.mode = ModeChoice::Warm;
    let warm_only: Vec<Sample> = lab_rounds(11)
        .into_iter()
        .filter(|s| s.mode == Mode::Warm)
        .collect();
    let text = render(&warm_info, &warm_only, style(Layout::Stacked, 80, "plain"));
    let scale_lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("warm  "))
        .filter(|l| l.trim_start().starts_with("40.0ms"))
        .collect();
    assert_eq!(scale_lines.len(), 2, "{text}");
    assert_eq!(scale_lines[0], scale_lines[1], "{text}");
    assert!(!text.contains("separate scales"), "{text}");
    // Quiet and the narrow layout have none; 3 timed rounds are too few.
    for (layout, width, variant, n) in [
        (Layout::Stacked, 80, "quiet", 11),
        (Layout::Blocks, 60, "plain", 11),
        (Layout::Wide, 120, "plain", 4),
    ] {
        let text = render(&info(), &rounds(n), style(layout, width, variant));
        assert!(!text.contains("p25..p75"), "{text}");
    }
}

#[test]
fn difference_sentences_wrap_within_narrow_widths() {
    let text = render(&info(), &rounds(11), style(Layout::Blocks, 50, "plain"));
    let section = text.split("--- tls compared").nth(1).unwrap();
    assert!(!section.contains('…'), "{section}");
    assert!(section.lines().any(|l| l.starts_with("    ")), "{section}");
}

#[test]
fn labels_from_the_command_line_are_shown_not_obeyed() {
    let mut info = info();
    info.compare.as_mut().unwrap().variants[1].label = "evil\u{1b}]0;x\u{7}".into();
    for layout in [Layout::Wide, Layout::Stacked, Layout::Blocks] {
        let text = render(&info, &rounds(4), style(layout, 200, "plain"));
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{layout:?}: {text:?}"
        );
        assert!(text.contains("evil\\x{1b}]0;x\\x{07}"), "{text}");
    }
}

fn validate(doc: &Value) {
    synthetic::assert_valid_document(doc);
}

/// The overall summary of `history` and its comparison, as a run makes them.
fn compared(history: &History, elapsed: Duration, variants: usize) -> (Summary, Comparison) {
    (
        summarize(history, elapsed),
        compare_variants(history, elapsed, variants),
    )
}

fn json(
    info: &RunInfo,
    samples: &[Sample],
    summary: &Summary,
    comparison: Option<&Comparison>,
) -> Value {
    let mut buf = Vec::new();
    let run = tlsping::render::output::Finished {
        info,
        samples,
        summary,
        comparison,
        warnings: &[],
        history: &tlsping::stats::NO_RECORDS,
        exit_code: 0,
        ending: tlsping::render::Ending::complete(info.settings.count),
    };
    tlsping::render::json::write_document(&mut buf, &run).unwrap();
    serde_json::from_slice(&buf).unwrap()
}

#[test]
fn json_carries_the_variants_and_matches_the_schema() {
    let info = info();
    let samples = rounds(8);
    let (summary, comparison) = compared(&History::of(&samples), Duration::from_secs(8), 2);
    let doc = json(&info, &samples, &summary, Some(&comparison));
    validate(&doc);
    let cmp = &doc["run"]["compare"];
    assert_eq!(cmp["axis"], "tls");
    assert_eq!(cmp["probes_per_round"], 4);
    assert_eq!(cmp["variants"][1]["label"], "TLS1.3");
    assert_eq!(cmp["variants"][1]["value"], "1.3");
    assert_eq!(cmp["variants"][1]["available"], true);
    assert_eq!(cmp["variants"][1]["addr"], "192.0.2.10:443");
    assert!(cmp["variants"][1]["error"].is_null());
    let labels: Vec<&str> = doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["variant"].as_str().unwrap())
        .collect();
    assert_eq!(&labels[..4], ["TLS1.2", "TLS1.2", "TLS1.3", "TLS1.3"]);
    let sum = &doc["summary"];
    let variants = sum["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2);
    assert_eq!(variants[0]["label"], "TLS1.2");
    // Every figure of the top-level summary, for each variant.
    let top: Vec<&String> = sum
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "variants" && *k != "differences")
        .collect();
    for v in variants {
        let mut keys: Vec<&String> = v
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "label")
            .collect();
        keys.sort();
        let mut want = top.clone();
        want.sort();
        assert_eq!(keys, want);
        assert_eq!(v["cold"]["n"], 7);
    }
    let diffs = sum["differences"].as_array().unwrap();
    let tls = diffs
        .iter()
        .find(|d| d["mode"] == "cold" && d["stage"] == "tls")
        .unwrap();
    assert_eq!(
        (tls["variant"].as_str(), tls["against"].as_str()),
        (Some("TLS1.3"), Some("TLS1.2"))
    );
    assert_eq!(tls["rounds"], 7);
    assert!(tls["median_ms"].as_f64().unwrap() < -25.0, "{tls}");
    let ci = tls["ci_ms"].as_array().unwrap();
    assert!(ci[0].as_f64() <= ci[1].as_f64());
    assert!(diffs
        .iter()
        .all(|d| d["mode"] == "cold" || d["stage"] != "tls"));
}

#[test]
fn json_schema_refuses_unknown_keys_in_a_variant_summary() {
    let info = info();
    let samples = rounds(3);
    let (summary, comparison) = compared(&History::of(&samples), Duration::from_secs(3), 2);
    let mut doc = json(&info, &samples, &summary, Some(&comparison));
    validate(&doc);
    doc["summary"]["variants"][0]["surprise"] = Value::from(1);
    let schema: Value =
        serde_json::from_str(include_str!("../schema/tlsping.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(!validator.is_valid(&doc));
    doc["summary"]["variants"][0]
        .as_object_mut()
        .unwrap()
        .remove("surprise");
    doc["summary"]["surprise"] = Value::from(1);
    assert!(!validator.is_valid(&doc));
}

#[test]
fn json_of_an_unavailable_variant_says_why() {
    let mut info = info();
    info.compare.as_mut().unwrap().variants[0].unavailable = Some(synthetic::preflight_failed(
        ErrorKind::ConnRefused,
        "Connection refused",
    ));
    info.compare.as_mut().unwrap().variants[0].addr = None;
    let samples: Vec<Sample> = rounds(3).into_iter().filter(|s| s.variant == 1).collect();
    let (summary, comparison) = compared(&History::of(&samples), Duration::from_secs(3), 2);
    let doc = json(&info, &samples, &summary, Some(&comparison));
    validate(&doc);
    let v0 = &doc["run"]["compare"]["variants"][0];
    assert_eq!(v0["available"], false);
    assert_eq!(v0["error_kind"], "conn_refused");
    assert_eq!(v0["error"], "Connection refused");
    assert!(v0["addr"].is_null());
    assert_eq!(doc["summary"]["variants"].as_array().unwrap().len(), 1);
    assert_eq!(doc["summary"]["differences"], Value::Array(Vec::new()));
}

#[test]
fn without_compare_the_json_has_none_of_the_new_keys() {
    let info = synthetic::run_info();
    let samples: Vec<Sample> = rounds(3).into_iter().filter(|s| s.variant == 0).collect();
    let summary = summarize(&History::of(&samples), Duration::from_secs(3));
    let doc = json(&info, &samples, &summary, None);
    validate(&doc);
    assert!(doc["run"].get("compare").is_none());
    assert!(doc["summary"].get("variants").is_none());
    assert!(doc["summary"].get("differences").is_none());
    assert!(doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s.get("variant").is_none()));
}

fn csv_of(info: &RunInfo, samples: &[Sample]) -> Vec<Vec<String>> {
    let mut buf = Vec::new();
    {
        let mut w = CsvStream::new(&mut buf, false);
        w.start(info).unwrap();
        for s in samples {
            w.sample(s).unwrap();
        }
    }
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(buf.as_slice())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

#[test]
fn csv_gains_a_last_variant_column_only_with_compare() {
    let samples = rounds(2);
    let compared = csv_of(&info(), &samples);
    let plain = csv_of(&synthetic::run_info(), &samples);
    assert_eq!(compared[0].last().unwrap(), "variant");
    assert_eq!(compared[0].len(), plain[0].len() + 1);
    assert_eq!(&compared[0][..plain[0].len()], &plain[0][..]);
    assert_ne!(plain[0].last().unwrap(), "variant");
    let column: Vec<&str> = compared[1..]
        .iter()
        .map(|r| r.last().unwrap().as_str())
        .collect();
    let want: Vec<&str> = samples
        .iter()
        .map(|s| if s.variant == 0 { "TLS1.2" } else { "TLS1.3" })
        .collect();
    assert_eq!(column, want);
    for (c, p) in compared[1..].iter().zip(&plain[1..]) {
        assert_eq!(&c[..p.len()], &p[..], "the other cells are unchanged");
    }
}

#[test]
fn csv_preflight_row_keeps_the_variant_column() {
    let mut info = info();
    info.preflight_error = Some(synthetic::preflight_failed(
        ErrorKind::ConnRefused,
        "refused",
    ));
    let mut buf = Vec::new();
    {
        let summary = summarize(&History::new(), Duration::ZERO);
        let run = Finished {
            info: &info,
            samples: &[],
            summary: &summary,
            comparison: None,
            warnings: &[],
            history: &tlsping::stats::NO_RECORDS,
            exit_code: 0,
            ending: tlsping::render::Ending::complete(info.settings.count),
        };
        CsvStream::new(&mut buf, false)
            .ended_before_rounds(&run)
            .unwrap();
    }
    let rows: Vec<csv::StringRecord> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(buf.as_slice())
        .records()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(rows[0].len(), rows[1].len());
    assert_eq!(&rows[1][1], "preflight");
    assert_eq!(rows[1].iter().next_back(), Some(""));
}
