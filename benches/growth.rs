//! Growth: statistics and every renderer over 10^3 … 10^6 synthetic samples,
//! the memory a run keeps per sample once it has been printed (counted by
//! a counting allocator), the running median per sample, and a day of
//! rounds at 200 ms: what a table run keeps and its peak at the end.
//!
//!     cargo bench --bench growth

#[path = "../tests/support/synthetic.rs"]
mod synthetic;
use std::hint::black_box;
use std::io::sink;
use std::time::{Duration, Instant};

use synthetic::{cold, warm};
use tlsping::probe::{RunInfo, Sample};
use tlsping::render::csv::CsvStream;
use tlsping::render::{json, Human, Layout, Output, Style};
use tlsping::stats::{summarize, History, Record, RunningMedian};

#[path = "../tests/support/counting.rs"]
mod counting;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

const MIB: f64 = 1024.0 * 1024.0;

/// A table run of `-n 0 -i 200ms` for a day: every sample is printed and
/// then kept as a `Record`, and the slow marker's running medians grow by
/// one value per timed total. Prints what is held, per sample, and the
/// peak while the statistics are computed at the end.
fn a_day_at_200ms() {
    let rounds = 24 * 60 * 60 * 5;
    let before = counting::held();
    let mut history = History::new();
    let mut running = [RunningMedian::new(), RunningMedian::new()];
    for i in 0..2 * rounds {
        let s = sample(i);
        history.push(&s);
        running[i % 2].push(s.total().unwrap());
    }
    let kept = counting::held() - before;
    counting::reset_peak();
    let (t_sum, summary) = time(|| summarize(&history, Duration::from_secs(86_400)));
    let peak = counting::peak() - before;
    black_box(summary);
    println!(
        "a day at 200 ms: {} samples keep {:.1} MiB ({:.1} bytes a sample: a {}-byte record \
         and the running median); peak while summarizing {:.1} MiB, in {:.0} ms",
        2 * rounds,
        kept as f64 / MIB,
        kept as f64 / (2 * rounds) as f64,
        std::mem::size_of::<Record>(),
        peak as f64 / MIB,
        t_sum.as_secs_f64() * 1e3
    );
    drop(running);
}

fn sample(i: usize) -> Sample {
    let round = (i / 2 + 1) as u32;
    let jitter = ((i as u64 * 7919) % 997) as u32;
    if i.is_multiple_of(2) {
        cold(
            round,
            40 + jitter % 50,
            30_000 + jitter,
            60_000 + jitter * 3,
            31_000 + jitter,
            200,
        )
    } else {
        warm(round, 30, 31_000 + jitter, 100, true)
    }
}

fn samples(n: usize) -> Vec<Sample> {
    (0..n).map(sample).collect()
}

fn info() -> RunInfo {
    let mut info = synthetic::run_info();
    info.settings.count = 0;
    info
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let v = f();
    (t.elapsed(), v)
}

fn main() {
    println!(
        "size_of::<Sample>() = {} bytes (an ok sample owns no heap memory); \
         size_of::<Record>() = {} bytes (what the statistics keep)",
        std::mem::size_of::<Sample>(),
        std::mem::size_of::<Record>()
    );
    println!(
        "{:>9} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10}",
        "samples", "summary", "json", "csv", "table", "median/push", "kept/smp"
    );
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let data = samples(n);
        let before = counting::held();
        let history = History::of(&data);
        let kept_per_sample = (counting::held() - before) as f64 / n as f64;
        drop(history);
        let (t_sum, summary) = time(|| summarize(&History::of(&data), Duration::from_secs(1)));
        let info = info();
        let (t_json, _) = time(|| {
            let run = tlsping::render::output::Finished {
                info: &info,
                samples: &data,
                summary: &summary,
                comparison: None,
                warnings: &[],
                history: &tlsping::stats::NO_RECORDS,
                exit_code: 0,
                ending: tlsping::render::Ending::complete(info.settings.count),
            };
            json::write_document(std::io::BufWriter::new(sink()), &run)
        });
        let (t_csv, _) = time(|| {
            let mut w = CsvStream::new(std::io::BufWriter::new(sink()), false);
            w.start(&info).unwrap();
            for s in &data {
                w.sample(s).unwrap();
            }
        });
        let style = Style {
            layout: Layout::Wide,
            width: 120,
            color: true,
            quiet: false,
            verbose: true,
            unicode: true,
        };
        let (t_table, _) = time(|| {
            let mut h = Human::new(std::io::BufWriter::new(sink()), &info, style);
            for pair in data.chunks(2) {
                h.round(pair[0].round, pair).unwrap();
            }
            h.statistics(&info, &summary, None).unwrap();
        });
        let (t_med, _) = time(|| {
            let mut m = RunningMedian::new();
            for s in &data {
                m.push(s.total().unwrap());
                black_box(m.median());
            }
        });
        println!(
            "{n:>9} {:>9.1}ms {:>9.1}ms {:>9.1}ms {:>9.1}ms {:>10.0}ns {:>9.1}B",
            t_sum.as_secs_f64() * 1e3,
            t_json.as_secs_f64() * 1e3,
            t_csv.as_secs_f64() * 1e3,
            t_table.as_secs_f64() * 1e3,
            t_med.as_nanos() as f64 / n as f64,
            kept_per_sample
        );
    }
    a_day_at_200ms();
}
