//! A long run's memory, measured by counting every allocation: what a table
//! run keeps per sample once it has been printed (the statistics' record
//! and the live slow marker's running median), for a day of rounds at
//! 200 ms, and the peak while the statistics are computed at the end.
//! Nothing here touches a network.

#[path = "support/synthetic.rs"]
mod synthetic;

use std::time::Duration;

use tlsping::probe::Mode;
use tlsping::stats::{self, History, Record, RunningMedian};

#[path = "support/counting.rs"]
mod counting;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

const MIB: f64 = 1024.0 * 1024.0;
/// A day of rounds at 200 ms, a cold and a warm probe each.
const DAY_ROUNDS: u32 = 24 * 60 * 60 * 5;

fn sample(round: u32, mode: Mode) -> tlsping::probe::Sample {
    let jitter = (round.wrapping_mul(7919)) % 997;
    match mode {
        Mode::Cold => synthetic::cold(round, 40, 30_000 + jitter, 60_000, 31_000 + jitter, 200),
        Mode::Warm => synthetic::warm(round, 30, 31_000 + jitter, 100, true),
    }
}

#[test]
fn a_day_at_200ms_keeps_under_48_bytes_a_sample_and_peaks_under_50_mib() {
    assert!(std::mem::size_of::<Record>() <= 48);
    let before = counting::held();
    let mut history = History::new();
    let mut running = [RunningMedian::new(), RunningMedian::new()];
    for round in 1..=DAY_ROUNDS {
        for (i, mode) in [Mode::Cold, Mode::Warm].into_iter().enumerate() {
            // The full sample lives only while it is "printed", as in a run.
            let s = sample(round, mode);
            history.push(&s);
            if let Some(t) = s.total() {
                running[i].push(t);
            }
        }
    }
    let samples = 2 * DAY_ROUNDS as usize;
    assert_eq!(history.len(), samples);
    let kept = counting::held() - before;
    let per_sample = kept as f64 / samples as f64;
    println!(
        "a day at 200 ms: {samples} samples keep {:.1} MiB, {per_sample:.1} bytes each \
         (record {} bytes)",
        kept as f64 / MIB,
        std::mem::size_of::<Record>(),
    );
    assert!(per_sample <= 48.0, "{per_sample:.1} bytes per sample");
    // The statistics at the end: one value list at a time beside the records.
    counting::reset_peak();
    let summary = stats::summarize(&history, Duration::from_secs(86_400));
    let peak = counting::peak() - before;
    println!("peak while summarizing: {:.1} MiB", peak as f64 / MIB);
    assert_eq!(summary.cold.timing.n, DAY_ROUNDS as usize);
    assert_eq!(summary.paired_rounds, DAY_ROUNDS as usize);
    assert!(
        peak as f64 <= 50.0 * MIB,
        "peak {:.1} MiB",
        peak as f64 / MIB
    );
    drop(running);
}
