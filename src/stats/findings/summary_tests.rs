//! The sample rules of the summary, on constructed samples with hand-computed answers.

use std::time::Duration;

use super::synthetic::{cold, failed, warm};
use crate::probe::{ErrorKind, Mode, Sample};

use super::delta::Delta;
use super::history::History;
use super::summary::{judge, large_residual, summarize, timed, Verdict};

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(v / 1000.0)
}

fn warmup(mut s: Sample) -> Sample {
    s.warmup = true;
    s
}

/// Round 1 warmup; rounds 2–4 timed; cold totals 10, 12, 14 ms; warm 3, 4, 8 ms.
fn three_rounds() -> Vec<Sample> {
    vec![
        warmup(cold(1, 1000, 2000, 6000, 1000, 0)),
        warmup(warm(1, 9000, 1000, 0, false)),
        // Totals are the stage sums plus curl's 5 µs lookup.
        cold(2, 995, 2000, 6000, 1000, 0),
        warm(2, 100, 2900, 0, true),
        cold(3, 995, 2000, 8000, 1000, 0),
        warm(3, 100, 3900, 0, true),
        cold(4, 995, 4000, 8000, 1000, 0),
        warm(4, 100, 7900, 0, true),
    ]
}

#[test]
fn timing_figures_use_only_timed_samples() {
    let s = summarize(&History::of(&three_rounds()), Duration::from_secs(4));
    assert_eq!((s.rounds, s.warmup_excluded), (3, 1));
    assert_eq!(s.cold.timing.n, 3);
    assert_eq!(s.cold.timing.median, Some(ms(12.0)));
    assert_eq!(s.cold.timing.min, Some(ms(10.0)));
    assert_eq!(s.cold.timing.max, Some(ms(14.0)));
    assert_eq!(s.warm.timing.median, Some(ms(4.0)));
    assert_eq!((s.cold.sent, s.cold.ok, s.cold.loss), (3, 3, Some(0.0)));
}

#[test]
fn handshake_overhead_is_the_median_of_per_sample_sums() {
    let s = summarize(&History::of(&three_rounds()), Duration::from_secs(4));
    // Sums: 0.995+2+6 = 8.995, 0.995+2+8 = 10.995, 0.995+4+8 = 12.995 → median 10.995.
    assert_eq!(s.handshake.overhead, Some(ms(10.995)));
    // Per-stage medians: tcp 2, tls 8 — 0.995+2+8 ≠ the sum's median in general.
    assert_eq!(s.handshake.tcp, Some(ms(2.0)));
    assert_eq!(s.handshake.tls, Some(ms(8.0)));
    assert_eq!(s.handshake.excluded, 0);
}

#[test]
fn gains_reference_and_paired() {
    let s = summarize(&History::of(&three_rounds()), Duration::from_secs(4));
    // median(cold) 12 − median(warm) 4 = 8.
    assert_eq!(s.keepalive_gain, Some(Delta::from_us(8_000)));
    // Per round: 10−3 = 7, 12−4 = 8, 14−8 = 6 → median 7.
    assert_eq!(s.paired_gain, Some(Delta::from_us(7_000)));
    assert_eq!(s.paired_rounds, 3);
}

#[test]
fn warm_new_connection_is_ok_counted_and_kept_out_of_timings() {
    let mut samples = three_rounds();
    samples[3] = warm(2, 9000, 1000, 0, false);
    let s = summarize(&History::of(&samples), Duration::ZERO);
    assert!(samples[3].ok() && !timed(&samples[3]));
    assert_eq!(s.new_conn, 1);
    assert_eq!((s.warm.sent, s.warm.ok, s.warm.timing.n), (3, 3, 2));
    // Round 2 no longer pairs.
    assert_eq!(s.paired_rounds, 2);
}

#[test]
fn failures_count_as_loss_per_mode_and_unmeasured_stages_exclude_from_overhead() {
    let mut samples = three_rounds();
    samples[4] = failed(3, Mode::Cold, ErrorKind::Timeout, 5_000_000);
    let mut no_dns = cold(4, 995, 4000, 8000, 1000, 0);
    no_dns.own_dns = None;
    no_dns.timers.namelookup_us = 0;
    samples[6] = no_dns;
    let s = summarize(&History::of(&samples), Duration::ZERO);
    assert_eq!((s.cold.sent, s.cold.ok), (3, 2));
    assert!((s.cold.loss.unwrap() - 1.0 / 3.0).abs() < 1e-9);
    assert_eq!((s.warm.sent, s.warm.ok, s.warm.loss), (3, 3, Some(0.0)));
    assert_eq!(s.handshake.excluded, 1);
    assert_eq!(s.handshake.overhead, Some(ms(8.995)));
}

#[test]
fn resumption_is_counted_over_cold_handshakes_outside_warmup() {
    let s = summarize(&History::of(&three_rounds()), Duration::ZERO);
    assert_eq!((s.tls_resumed, s.cold_handshakes), (3, 3));
}

#[test]
fn judgement_follows_the_exit_code_rules() {
    let ok = three_rounds();
    assert_eq!(judge(&History::of(&ok)), Verdict::AllOk);
    let mut some = ok.clone();
    some[2] = failed(2, Mode::Cold, ErrorKind::ConnReset, 10);
    assert_eq!(judge(&History::of(&some)), Verdict::SomeFailed);
    // A failed warmup does not count while real rounds exist.
    let mut warm_fail = ok.clone();
    warm_fail[0] = warmup(failed(1, Mode::Cold, ErrorKind::Timeout, 10));
    assert_eq!(judge(&History::of(&warm_fail)), Verdict::AllOk);
    // Only warmup samples: they are judged.
    let only_warmup = vec![warmup(failed(1, Mode::Cold, ErrorKind::Timeout, 10))];
    assert_eq!(judge(&History::of(&only_warmup)), Verdict::AllFailed);
    let all_failed: Vec<Sample> = (2..5)
        .map(|r| failed(r, Mode::Cold, ErrorKind::ConnRefused, 10))
        .collect();
    assert_eq!(judge(&History::of(&all_failed)), Verdict::AllFailed);
    // An interrupted probe is not the server's failure.
    let mut canceled = ok.clone();
    canceled.push(failed(5, Mode::Cold, ErrorKind::Canceled, 10));
    assert_eq!(judge(&History::of(&canceled)), Verdict::AllOk);
    assert_eq!(judge(&History::of(&[])), Verdict::Nothing);
    // 404 and 500 are round trips.
    let mut statuses = ok;
    statuses[2].status = 404;
    statuses[4].status = 500;
    assert_eq!(judge(&History::of(&statuses)), Verdict::AllOk);
}

#[test]
fn large_residual_is_found() {
    assert!(large_residual(&History::of(&three_rounds())).is_empty());
    // 10 ms of 13 unexplained.
    let samples = vec![cold(2, 1000, 1000, 1000, 1000, 10_000)];
    assert_eq!(large_residual(&History::of(&samples)), [(2, Mode::Cold)]);
}

#[test]
fn a_residual_under_a_millisecond_is_noise_whatever_its_share() {
    // A loopback probe: 0.6 ms of 1 ms unexplained is the machine's own
    // scheduling (what `--calibrate` warned about in 1 run of 4).
    let samples = vec![cold(2, 100, 100, 100, 100, 600)];
    assert!(large_residual(&History::of(&samples)).is_empty());
}
