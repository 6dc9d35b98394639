//! `--compare`: one summary per variant, and how each variant differs from
//! the baseline, paired round by round so that what changes between rounds
//! (the path, the server's load) falls out of the difference.

use std::time::Duration;

use crate::probe::{Mode, Stage};

use super::delta::{median_delta, Delta};
use super::history::History;
use super::pairing::join_by_round;
use super::summary::{summarize_variant, Summary};

/// The stages compared for cold probes, in the order they are reported.
pub const COLD_STAGES: [Stage; 5] = Stage::COLD;
/// The stages compared for warm probes (a reused connection has no
/// handshake, and its `wait` is about 0 whatever the variant).
pub const WARM_STAGES: [Stage; 2] = [Stage::Srv, Stage::Total];

/// How `variant` differs from `against` on one stage of one mode: the median
/// of per-round `value(variant) − value(against)`, signed (negative:
/// `variant` is faster).
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub variant: u8,
    pub against: u8,
    pub mode: Mode,
    pub stage: Stage,
    pub median: Option<Delta>,
    /// The distribution-free 95% interval of that median; `None` when there
    /// are too few rounds for one (see `ci::min_n`).
    pub ci: Option<(Delta, Delta)>,
    /// Rounds in which both variants had a timed value for this stage.
    pub rounds: usize,
}

/// The statistics of a `--compare` run beyond the overall summary.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// One summary per variant that has samples, in variant order.
    pub summaries: Vec<(u8, Summary)>,
    /// Every variant after the baseline against the baseline: per variant,
    /// cold stages then warm stages. Stages with no pair are left out.
    pub differences: Vec<Difference>,
}

/// (round, value of `stage`) of the timed records of one variant and mode
/// that measured it, in round order.
fn stage_by_round<'a>(
    history: &'a History,
    variant: u8,
    mode: Mode,
    stage: Stage,
) -> impl Iterator<Item = (u32, u32)> + Clone + 'a {
    history
        .of_variant(Some(variant))
        .filter(move |r| r.mode() == mode && r.timed())
        .filter_map(move |r| Some((r.round(), r.stages().get(stage)?)))
}

/// The difference of `variant` against `against` on each stage with pairs.
fn differences(history: &History, variant: u8, against: u8) -> Vec<Difference> {
    let mut out = Vec::new();
    for (mode, stages) in [
        (Mode::Cold, &COLD_STAGES[..]),
        (Mode::Warm, &WARM_STAGES[..]),
    ] {
        for &stage in stages {
            let base = stage_by_round(history, against, mode, stage);
            let other = stage_by_round(history, variant, mode, stage);
            let mut diffs = Vec::new();
            join_by_round(base, other, |b, o| {
                diffs.push(Delta::from_us(i64::from(o) - i64::from(b)))
            });
            if diffs.is_empty() {
                continue;
            }
            diffs.sort_unstable();
            out.push(Difference {
                variant,
                against,
                mode,
                stage,
                median: median_delta(&diffs),
                ci: super::ci::median_ci(&diffs),
                rounds: diffs.len(),
            });
        }
    }
    out
}

/// The statistics of a `--compare` run beyond its overall summary: each
/// variant's own summary and the paired differences, over `variants`
/// variants (a record's `variant` indexes them). The baseline is the
/// lowest-index variant that has samples.
pub fn compare(history: &History, elapsed: Duration, variants: usize) -> Comparison {
    let present: Vec<u8> = (0..variants.min(usize::from(u8::MAX) + 1))
        .map(|v| v as u8)
        .filter(|&v| history.iter().any(|r| r.variant() == v))
        .collect();
    let summaries = present
        .iter()
        .map(|&v| (v, summarize_variant(history, Some(v), elapsed)))
        .collect();
    let differences = match present.split_first() {
        Some((&baseline, rest)) => rest
            .iter()
            .flat_map(|&v| differences(history, v, baseline))
            .collect(),
        None => Vec::new(),
    };
    Comparison {
        summaries,
        differences,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn compare(samples: &[Sample], elapsed: Duration, variants: usize) -> Comparison {
        super::compare(&History::of(samples), elapsed, variants)
    }
    use crate::probe::{ErrorKind, Sample};

    use super::super::synthetic::{cold, failed, warm};

    fn of(variant: u8, mut s: Sample) -> Sample {
        s.variant = variant;
        s
    }

    /// `n` rounds from round 2: variant 0's tls takes 50 ms, variant 1's
    /// 10 ms plus a round-dependent 0..n µs; both share the round's tcp.
    fn two_variants(n: u32) -> Vec<Sample> {
        let mut v = Vec::new();
        for round in 2..2 + n {
            let tcp = 20_000 + round * 1000;
            v.push(of(1, cold(round, 100, tcp, 10_000 + round, 5_000, 0)));
            v.push(of(0, cold(round, 100, tcp, 50_000, 5_000, 0)));
            v.push(of(0, warm(round, 50, 4_000, 0, true)));
            v.push(of(1, warm(round, 50, 4_000 + round, 0, true)));
        }
        v
    }

    fn find(c: &Comparison, mode: Mode, stage: Stage) -> Difference {
        c.differences
            .iter()
            .find(|d| d.mode == mode && d.stage == stage)
            .cloned()
            .unwrap_or_else(|| panic!("no {stage:?}: {:#?}", c.differences))
    }

    #[test]
    fn a_known_difference_and_its_interval() {
        let c = compare(&two_variants(10), Duration::from_secs(10), 2);
        assert_eq!(c.summaries.len(), 2);
        assert_eq!((c.summaries[0].0, c.summaries[1].0), (0, 1));
        assert_eq!(c.summaries[1].1.cold.timing.n, 10);
        let tls = find(&c, Mode::Cold, Stage::Tls);
        assert_eq!((tls.variant, tls.against, tls.rounds), (1, 0, 10));
        // Per round: (10 000 + r) − 50 000 µs for r = 2..=11, i.e. −39.998 ..
        // −39.989 ms; the median is the mean of r = 6 and 7.
        assert_eq!(tls.median, Some(Delta::from_nanos(-39_993_500)), "{tls:?}");
        // n = 10: the interval is [x2, x9] of the ascending differences
        // (r = 2 is the lowest), i.e. r = 3 and r = 10.
        let (lo, hi) = tls.ci.unwrap();
        assert_eq!(lo, Delta::from_us(-39_997));
        assert_eq!(hi, Delta::from_us(-39_990));
        // Same tcp in each round: a difference of exactly zero.
        let tcp = find(&c, Mode::Cold, Stage::Tcp);
        assert_eq!(tcp.median, Some(Delta::ZERO));
        assert_eq!(tcp.ci, Some((Delta::ZERO, Delta::ZERO)));
        // Warm: srv and total only, in that order after the cold stages.
        let stages: Vec<(Mode, Stage)> = c.differences.iter().map(|d| (d.mode, d.stage)).collect();
        assert_eq!(
            stages,
            [
                (Mode::Cold, Stage::Dns),
                (Mode::Cold, Stage::Tcp),
                (Mode::Cold, Stage::Tls),
                (Mode::Cold, Stage::Srv),
                (Mode::Cold, Stage::Total),
                (Mode::Warm, Stage::Srv),
                (Mode::Warm, Stage::Total),
            ]
        );
        let warm_srv = find(&c, Mode::Warm, Stage::Srv);
        assert_eq!(warm_srv.median, Some(Delta::from_nanos(6_500)));
    }

    #[test]
    fn too_few_rounds_give_no_interval() {
        let c = compare(&two_variants(5), Duration::ZERO, 2);
        let tls = find(&c, Mode::Cold, Stage::Tls);
        assert_eq!(tls.rounds, 5);
        assert!(tls.median.is_some());
        assert_eq!(tls.ci, None);
        let c = compare(&two_variants(6), Duration::ZERO, 2);
        assert!(find(&c, Mode::Cold, Stage::Tls).ci.is_some());
    }

    #[test]
    fn pairs_only_within_the_same_round() {
        // Variant 1 in rounds 2 and 3, variant 0 in rounds 3 and 4: one pair.
        let samples = vec![
            of(1, cold(2, 100, 1_000, 1_000, 1_000, 0)),
            of(0, cold(3, 100, 1_000, 5_000, 1_000, 0)),
            of(1, cold(3, 100, 1_000, 2_000, 1_000, 0)),
            of(0, cold(4, 100, 1_000, 9_000, 1_000, 0)),
        ];
        let c = compare(&samples, Duration::ZERO, 2);
        let tls = find(&c, Mode::Cold, Stage::Tls);
        assert_eq!(tls.rounds, 1);
        assert_eq!(tls.median, Some(Delta::from_us(-3_000)));
        assert!(c.differences.iter().all(|d| d.mode == Mode::Cold));
    }

    #[test]
    fn a_failed_sample_drops_its_rounds_pair() {
        let mut samples = two_variants(6);
        // Round 4's cold probe of variant 1 timed out.
        let at = samples
            .iter()
            .position(|s| s.round == 4 && s.variant == 1 && s.mode == Mode::Cold)
            .unwrap();
        samples[at] = of(1, failed(4, Mode::Cold, ErrorKind::Timeout, 5_000_000));
        let c = compare(&samples, Duration::ZERO, 2);
        assert_eq!(find(&c, Mode::Cold, Stage::Tls).rounds, 5);
        assert_eq!(find(&c, Mode::Cold, Stage::Total).rounds, 5);
        assert_eq!(find(&c, Mode::Warm, Stage::Total).rounds, 6);
        // The failure still counts as loss in its variant's own summary.
        let (_, v1) = &c.summaries[1];
        assert_eq!((v1.cold.sent, v1.cold.ok), (6, 5));
    }

    #[test]
    fn the_baseline_is_the_first_variant_with_samples() {
        // Variant 0 could not run: variant 1 is the baseline of variant 2.
        let samples: Vec<Sample> = two_variants(3)
            .into_iter()
            .map(|s| of(s.variant + 1, s))
            .collect();
        let c = compare(&samples, Duration::ZERO, 3);
        assert_eq!(
            c.summaries.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            [1, 2]
        );
        assert!(c
            .differences
            .iter()
            .all(|d| (d.variant, d.against) == (2, 1)));
    }

    #[test]
    fn unmeasured_stages_are_left_out() {
        let samples: Vec<Sample> = two_variants(3)
            .into_iter()
            .map(|mut s| {
                s.https = false;
                s
            })
            .collect();
        let c = compare(&samples, Duration::ZERO, 2);
        assert!(c.differences.iter().all(|d| d.stage != Stage::Tls));
    }

    #[test]
    fn the_overall_paired_gain_counts_each_round_once_with_its_last_probes() {
        // Four rounds of two variants: one paired difference per round, the
        // round's last cold (variant 0: 70.1 ms) less its last warm
        // (variant 1: 4.05 ms + round µs), not one per variant.
        let s = summarize(&History::of(&two_variants(4)), Duration::ZERO);
        assert_eq!((s.rounds, s.paired_rounds), (4, 4));
        // Rounds 2..=5: tcp grows 1 ms a round, warm 1 µs: the median is
        // between rounds 3 and 4, each round's difference in µs being
        // its cold total (70.1 ms + the round's ms) less its warm (4.05 ms + µs).
        let at = |round: i64| 100 + 5 + 20_000 + round * 1000 + 50_000 + 5_000 - (4_050 + round);
        let median = Delta::from_nanos((at(3) + at(4)) * 1000 / 2);
        assert_eq!(s.paired_gain, Some(median), "{s:#?}");
    }
}
