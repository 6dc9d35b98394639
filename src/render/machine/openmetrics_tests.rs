//! The exposition over synthetic runs: what only many samples, many
//! `Server-Timing` names or early data bring out, checked by hand.

use std::time::Duration;

use super::*;
use crate::probe::{EarlyData, ErrorKind, Sample, ServerTiming};
use crate::stats::{summarize, synthetic, History};

/// The exposition of `samples` (in round order), with `labels`.
fn of(samples: &[Sample], labels: &[(&str, &str)]) -> String {
    let info = synthetic::run_info();
    let history = History::of(samples);
    let summary = summarize(&history, Duration::from_secs(1));
    let run = Finished {
        info: &info,
        samples: &[],
        summary: &summary,
        comparison: None,
        warnings: &[],
        history: &history,
        exit_code: 1,
        ending: crate::render::Ending::complete(info.settings.count),
    };
    let labels: Labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    exposition(&run, &run_labels(&info, &labels))
}

fn line<'a>(text: &'a str, starts: &str) -> Option<&'a str> {
    text.lines().find(|l| l.starts_with(starts))
}

#[test]
fn p95_appears_from_twenty_timed_probes_on() {
    let rounds = |n: u32| -> Vec<Sample> {
        (1..=n)
            .map(|r| synthetic::cold(r, 40, 100 * r, 3000, 1000, 50))
            .collect()
    };
    let nineteen = of(&rounds(19), &[]);
    assert!(!nineteen.contains("quantile=\"0.95\""), "{nineteen}");
    let twenty = of(&rounds(20), &[]);
    // tcp 100..=2000 µs: nearest rank ceil(0.95 × 20) = 19, so 1.9 ms.
    let p95 = line(&twenty, "tlsping_stage_seconds{target=\"https://example.test/\",stage=\"tcp\",mode=\"cold\",quantile=\"0.95\"}");
    assert_eq!(
        p95.map(|l| l.rsplit(' ').next().unwrap()),
        Some("0.0019"),
        "{twenty}"
    );
    // The sum of 100..=2000 µs by 100: 21 000 µs.
    assert!(
        twenty.contains("stage=\"tcp\",mode=\"cold\"} 0.021\n"),
        "{twenty}"
    );
    assert!(twenty.contains("tlsping_run_exit_code{target=\"https://example.test/\"} 1.0\n"));
    assert!(twenty.ends_with("# EOF\n"));
}

#[test]
fn twenty_server_timing_names_get_series_and_the_rest_are_counted() {
    let mut s = synthetic::cold(1, 40, 100, 3000, 1000, 50);
    s.server_timing = (0..23)
        .map(|i| ServerTiming {
            name: format!("m{i}"),
            dur_ms: Some(f64::from(i)),
            desc: None,
        })
        .collect();
    let text = of(&[s], &[]);
    let series = text
        .lines()
        .filter(|l| l.starts_with("tlsping_server_timing_seconds{"))
        .count();
    assert_eq!(series, MAX_SERVER_TIMING_SERIES);
    assert!(
        text.contains("tlsping_server_timing_untracked{target=\"https://example.test/\"} 3.0\n")
    );
}

#[test]
fn early_data_outcomes_and_escaped_labels() {
    // Two accepted, one rejected, and a warm probe and a warmup probe that
    // do not count: the tally of the run's history (`stats::Tallies`).
    let mut samples: Vec<Sample> = [
        EarlyData::Accepted,
        EarlyData::Accepted,
        EarlyData::Rejected,
    ]
    .into_iter()
    .zip(2..)
    .map(|(outcome, round)| {
        let mut s = synthetic::cold(round, 40, 100, 3000, 1000, 50);
        s.early_data = Some(outcome);
        s
    })
    .collect();
    let mut warmup = synthetic::cold(1, 40, 100, 3000, 1000, 50);
    warmup.warmup = true;
    warmup.early_data = Some(EarlyData::Rejected);
    let mut warm = synthetic::warm(2, 30, 1000, 10, true);
    warm.early_data = Some(EarlyData::Accepted);
    samples.extend([warmup, warm]);
    let text = of(&samples, &[("vantage", "a\"b\\c\nd")]);
    let prefix =
        "tlsping_early_data_probes{target=\"https://example.test/\",vantage=\"a\\\"b\\\\c\\nd\"";
    for (outcome, n) in [
        ("accepted", "2.0"),
        ("rejected", "1.0"),
        ("not_sent", "0.0"),
    ] {
        let want = format!("{prefix},outcome=\"{outcome}\"}} {n}");
        assert!(text.lines().any(|l| l == want), "{want}\n{text}");
    }
    // Our summary escapes exactly as the client does.
    assert!(text.contains(&format!(
        "tlsping_stage_seconds_count{}",
        &prefix["tlsping_early_data_probes".len()..]
    )));
}

/// The exposition of a run that ended before round 1, as the run writes it.
fn ended_at_preflight(info: &crate::probe::RunInfo) -> String {
    let history = History::of(&[]);
    let summary = summarize(&history, Duration::ZERO);
    let run = Finished {
        info,
        samples: &[],
        summary: &summary,
        comparison: None,
        warnings: &[],
        history: &history,
        exit_code: 2,
        ending: crate::render::Ending::complete(info.settings.count),
    };
    exposition(&run, &run_labels(info, &Vec::new()))
}

fn refused() -> crate::probe::EndReason {
    synthetic::preflight_failed(ErrorKind::ConnRefused, "connection refused")
}

/// The `tlsping_loss_ratio` series, each one's labels after `target` and
/// its value, sorted (a family writes its series in no set order).
fn losses(text: &str) -> Vec<String> {
    let prefix = "tlsping_loss_ratio{target=\"https://example.test/\",";
    let mut found: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(str::to_string)
        .collect();
    found.sort();
    found
}

#[test]
fn a_run_that_reached_nothing_is_a_total_loss_in_every_mode_it_asked_for() {
    let mut info = synthetic::run_info();
    info.preflight_error = Some(refused());
    let text = ended_at_preflight(&info);
    assert_eq!(
        losses(&text),
        ["mode=\"cold\"} 1.0", "mode=\"warm\"} 1.0"],
        "{text}"
    );
    // No probe went out: the count says so, the ratio says it failed.
    assert!(
        text.contains("tlsping_probes_sent{target=\"https://example.test/\",mode=\"cold\"} 0.0\n")
    );
    info.settings.mode = crate::probe::ModeChoice::Warm;
    assert_eq!(losses(&ended_at_preflight(&info)), ["mode=\"warm\"} 1.0"]);
}

#[test]
fn a_preflight_cut_short_by_ctrl_c_is_no_loss() {
    let mut info = synthetic::run_info();
    info.preflight_error = Some(crate::probe::EndReason::Interrupted);
    let text = ended_at_preflight(&info);
    assert_eq!(losses(&text), Vec::<String>::new(), "{text}");
}

#[test]
fn a_compare_variant_that_could_not_run_is_a_total_loss_beside_the_others() {
    let mut info = synthetic::run_info();
    info.settings.mode = crate::probe::ModeChoice::Cold;
    let mut down = crate::probe::VariantInfo::new("b", "https://b.test/");
    down.unavailable = Some(refused());
    info.compare = Some(crate::probe::CompareInfo {
        axis: crate::probe::Axis::Target,
        variants: vec![
            crate::probe::VariantInfo::new("a", "https://example.test/"),
            down,
        ],
        probes_per_round: 1,
    });
    let samples: Vec<Sample> = (1..=3)
        .map(|r| synthetic::cold(r, 40, 100, 3000, 1000, 50))
        .collect();
    let history = History::of(&samples);
    let summary = summarize(&history, Duration::from_secs(1));
    let comparison = crate::stats::compare_variants(&history, Duration::from_secs(1), 2);
    let run = Finished {
        info: &info,
        samples: &[],
        summary: &summary,
        comparison: Some(&comparison),
        warnings: &[],
        history: &history,
        exit_code: 0,
        ending: crate::render::Ending::complete(info.settings.count),
    };
    let text = exposition(&run, &run_labels(&info, &Vec::new()));
    assert_eq!(
        losses(&text),
        [
            "variant=\"a\",variant_target=\"https://example.test/\",mode=\"cold\"} 0.0",
            "variant=\"b\",variant_target=\"https://b.test/\",mode=\"cold\"} 1.0"
        ],
        "{text}"
    );
}
