//! Growth: statistics and every renderer over 10^3 … 10^6 synthetic samples,
//! the memory each retained sample costs, and the running median per sample.
//!
//!     cargo bench --bench growth

#[path = "../tests/support/synthetic.rs"]
mod synthetic;
use std::hint::black_box;
use std::io::sink;
use std::time::{Duration, Instant};

use synthetic::{cold, warm};
use tlsping::probe::{Observer, RunInfo, Sample};
use tlsping::render::csv::CsvStream;
use tlsping::render::{json, Human, Layout, Style};
use tlsping::stats::{summarize, RunningMedian};

fn samples(n: usize) -> Vec<Sample> {
    (0..n)
        .map(|i| {
            let round = (i / 2 + 1) as u32;
            let jitter = ((i as u64 * 7919) % 997) as u32;
            if i % 2 == 0 {
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
        })
        .collect()
}

fn info() -> RunInfo {
    RunInfo {
        count: 0,
        ..synthetic::run_info()
    }
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let v = f();
    (t.elapsed(), v)
}

fn main() {
    println!(
        "size_of::<Sample>() = {} bytes (an ok sample owns no heap memory)",
        std::mem::size_of::<Sample>()
    );
    println!(
        "{:>9} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "samples", "summary", "json", "csv", "table", "median/push"
    );
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let data = samples(n);
        let (t_sum, summary) = time(|| summarize(&data, Duration::from_secs(1)));
        let info = info();
        let (t_json, _) = time(|| {
            json::write_document(std::io::BufWriter::new(sink()), &info, &data, &summary, &[])
        });
        let (t_csv, _) = time(|| {
            let mut w = CsvStream::new(std::io::BufWriter::new(sink())).unwrap();
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
            h.statistics(&info, &summary).unwrap();
        });
        let (t_med, _) = time(|| {
            let mut m = RunningMedian::new();
            for s in &data {
                m.push(s.total().unwrap());
                black_box(m.median());
            }
        });
        println!(
            "{n:>9} {:>9.1}ms {:>9.1}ms {:>9.1}ms {:>9.1}ms {:>10.0}ns",
            t_sum.as_secs_f64() * 1e3,
            t_json.as_secs_f64() * 1e3,
            t_csv.as_secs_f64() * 1e3,
            t_table.as_secs_f64() * 1e3,
            t_med.as_nanos() as f64 / n as f64
        );
    }
}
