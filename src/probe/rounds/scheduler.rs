//! Decides what runs when: rounds anchored to the run start, the order of the
//! two probes inside a round, warmup marking; the rules that stop a run are
//! `stop_rules`.

use std::time::{Duration, Instant};

use super::cold::ColdRunner;
use super::config::{Config, Method, ModeChoice, Order};
use super::env::ProbeEnv;
use super::stop_rules::{self, AfterProbe, Decision, LeftOut};
use super::types::{ErrorKind, Mode, Proto, Sample};
use super::valve::Valve;
use super::warm::WarmRunner;

pub use super::stop_rules::{EarlyStop, MAX_CONSECUTIVE_FAILURES};

/// Receives results as they happen, for live output.
/// An `Err` (say, stdout closed) ends the run; the error is kept in `Rounds`.
pub trait Observer {
    fn sample(&mut self, _sample: &Sample) -> std::io::Result<()> {
        Ok(())
    }
    fn round(&mut self, _round: u32, _samples: &[Sample]) -> std::io::Result<()> {
        Ok(())
    }
    /// Something a person should be told while the run goes on.
    fn notice(&mut self, _notice: &Notice) {}
    /// A round's samples, handed over for good once `round` has seen them.
    /// What comes back is kept in `Rounds::samples`. The default keeps them
    /// all; the run itself keeps a compact record of each instead (see
    /// `stats::History`), so a long run does not hold every full sample.
    fn keep(&mut self, samples: Vec<Sample>) -> Vec<Sample> {
        samples
    }
}

/// What the rounds noticed, as data; the caller words and prints it. (A
/// safety valve that stops the run is in `Rounds::stop`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A response body ran over `BODY_CAP` bytes (said once per run): it was
    /// not read to the end. Over HTTP/2 only its stream is reset; over
    /// HTTP/1.x its connection cannot be reused.
    BodyCapped { cap_bytes: u64, h2: bool },
    /// A `--compare` variant's probes failed this many times in a row: it
    /// is left out of the rounds that remain; the others go on.
    VariantStopped { variant: u8, failures: u32 },
    /// A `--compare target=` variant's server asked it to back off (`valve`):
    /// that target is left out of the rounds that remain; the others, other
    /// services, go on.
    VariantBackedOff { variant: u8, valve: Valve },
}

pub struct Rounds {
    /// The samples the observer gave back to keep (`Observer::keep`).
    pub samples: Vec<Sample>,
    pub elapsed: Duration,
    pub stop: Option<EarlyStop>,
    /// Rounds whose every probe ran to its end (warmup rounds included).
    pub completed: u32,
    /// The round `stop` cut off after some of its probes ran (or while one
    /// ran: a canceled probe), if it did.
    pub cut: Option<u32>,
}

/// The modes of round `round`, in the order they run.
pub fn round_modes(sel: ModeChoice, order: Order, round: u32) -> Vec<Mode> {
    match sel {
        ModeChoice::Cold => vec![Mode::Cold],
        ModeChoice::Warm => vec![Mode::Warm],
        ModeChoice::Both => {
            let cold_first = match order {
                Order::ColdFirst => true,
                Order::WarmFirst => false,
                Order::Alternate => round % 2 == 1,
            };
            if cold_first {
                vec![Mode::Cold, Mode::Warm]
            } else {
                vec![Mode::Warm, Mode::Cold]
            }
        }
    }
}

/// When rounds start: on a grid anchored to the run start (k × interval),
/// so rounds do not drift by their own length. A round that overran skips
/// the ticks it missed instead of making them up in a burst, and no two
/// rounds ever start less than one interval apart: the floor between round
/// starts is a safety valve, and warm needs its idle time.
pub(crate) struct Ticks {
    start: Instant,
    interval: Duration,
    /// The grid index of the next round, and when the last one started.
    next: u32,
    last: Option<Instant>,
}

impl Ticks {
    pub(crate) fn new(start: Instant, interval: Duration) -> Ticks {
        Ticks {
            start,
            interval,
            next: 0,
            last: None,
        }
    }

    /// When the next round starts, asked at `now`. A tick that passed only
    /// moments ago (the first round, ordinary jitter) is still served; one
    /// that passed more than a twentieth of an interval ago was missed.
    pub(crate) fn next(&mut self, now: Instant) -> Instant {
        let mut at = self.start + self.interval * self.next;
        let slack = self.interval / 20;
        if at + slack < now && !self.interval.is_zero() {
            // Skip to the first tick that is not in the past.
            let late = now - self.start;
            let k = late.as_nanos().div_ceil(self.interval.as_nanos());
            self.next = u32::try_from(k).unwrap_or(u32::MAX);
            at = self.start + self.interval * self.next;
        }
        if let Some(last) = self.last {
            at = at.max(last + self.interval);
        }
        self.next = self.next.saturating_add(1);
        // The floor counts from when the round really starts (a round served
        // moments late starts now, not at its tick).
        self.last = Some(at.max(now));
        at
    }
}

/// When the rounds start, on both clocks: every sample's `t` counts from
/// `mono`, and `wall` is the run's `started_at`.
#[derive(Clone, Copy, Debug)]
pub struct RunStart {
    pub mono: Instant,
    pub wall: std::time::SystemTime,
}

impl RunStart {
    pub fn now() -> RunStart {
        RunStart {
            mono: Instant::now(),
            wall: std::time::SystemTime::now(),
        }
    }
}

/// What one variant's probes run with: its configuration (the run's, with
/// the compared thing changed), the method and address its preflight
/// settled. A run without a comparison has one, variant 0.
pub struct VariantSetup {
    /// The variant's index (`Sample::variant`); 0 without a comparison.
    pub variant: u8,
    pub config: Config,
    pub method: Method,
    /// The address every probe connects to when pinned (`None`: libcurl resolves).
    pub dial: Option<std::net::SocketAddr>,
}

/// A variant with its runners and its own failure count.
struct VariantRunners {
    variant: u8,
    cold: Option<ColdRunner>,
    warm: Option<WarmRunner>,
    consecutive_failures: u32,
    stopped: bool,
}

/// Waits until `until` (false when interrupted first). While it waits, each
/// variant's cold runner lets its last connection finish closing, so a server's
/// late session tickets are read outside every probe.
fn wait_until(variants: &[VariantRunners], until: Instant, cancel: &super::cancel::Cancel) -> bool {
    for cold in variants.iter().filter_map(|v| v.cold.as_ref()) {
        cold.settle(until, cancel);
    }
    cancel.sleep_until(until)
}

/// Each variant's runners: cold, warm or both, as `base.mode` asks.
fn runners_of(base: &Config, variants: &[VariantSetup], env: &ProbeEnv) -> Vec<VariantRunners> {
    variants
        .iter()
        .map(|setup| VariantRunners {
            variant: setup.variant,
            cold: (base.settings.mode != ModeChoice::Warm)
                .then(|| ColdRunner::new(&setup.config, env, setup.method.clone(), setup.dial)),
            warm: (base.settings.mode != ModeChoice::Cold)
                .then(|| WarmRunner::new(&setup.config, env, setup.method.clone(), setup.dial)),
            consecutive_failures: 0,
            stopped: false,
        })
        .collect()
}

/// The state of the rounds as they go.
struct Rounding<'a> {
    base: &'a Config,
    variants: &'a [VariantSetup],
    env: &'a ProbeEnv,
    started: RunStart,
    running: Vec<VariantRunners>,
    /// Every variant probes the same URL (see `AfterProbe::one_url`).
    one_url: bool,
    backed_off: bool,
    warned_body_cap: bool,
    request_seq: u64,
}

impl Rounding<'_> {
    /// Runs one probe of variant `index` in `mode`, stamped and marked.
    fn probe(&mut self, index: usize, mode: Mode, round: u32) -> Sample {
        self.request_seq += 1;
        let runners = &mut self.running[index];
        // Each variant's own target (`--compare target=`).
        let target = &self.variants[index].config.target;
        let url = self
            .base
            .cache_bust
            .then(|| target.request_url(Some(self.request_seq)));
        // When it started, outside every timed interval.
        let (t, at) = (self.started.mono.elapsed(), std::time::SystemTime::now());
        let mut sample = match (mode, runners.cold.as_mut(), runners.warm.as_mut()) {
            (Mode::Cold, Some(c), _) => c.probe(round, url.as_deref().unwrap_or(&target.url())),
            (Mode::Warm, _, Some(w)) => w.probe(round, url.as_deref()),
            _ => unreachable!("round_modes yields only the modes of base.mode"),
        };
        sample.warmup = round <= self.base.settings.warmup;
        sample.variant = runners.variant;
        sample.t = Some(t);
        sample.at = Some(at);
        sample
    }

    /// Tells `observer` of a probe just run and applies the stop rules:
    /// `Some` stops the run; a variant left out is marked and told.
    fn judge(
        &mut self,
        index: usize,
        sample: &Sample,
        written: std::io::Result<()>,
        observer: &mut dyn Observer,
    ) -> Option<EarlyStop> {
        let canceled = sample
            .error
            .as_ref()
            .is_some_and(|e| e.kind == ErrorKind::Canceled);
        let runners = &mut self.running[index];
        if sample.ok() {
            runners.consecutive_failures = 0;
        } else if !canceled {
            runners.consecutive_failures += 1;
        }
        if sample.body_overflow && !self.warned_body_cap {
            self.warned_body_cap = true;
            observer.notice(&Notice::BodyCapped {
                cap_bytes: super::collector::BODY_CAP,
                h2: sample.proto == Some(Proto::H2),
            });
        }
        let decision = stop_rules::after_probe(&AfterProbe {
            output_failed: written.err().map(|e| e.to_string()),
            interrupted: canceled || self.env.cancel.is_canceled(),
            valve: sample.valve(),
            failures_in_a_row: runners.consecutive_failures,
            one_url: self.one_url,
            single: self.variants.len() == 1,
        });
        match decision {
            Decision::GoOn => None,
            Decision::Stop(stop) => Some(stop),
            Decision::LeaveOut(why) => {
                runners.stopped = true;
                let variant = runners.variant;
                observer.notice(&match why {
                    LeftOut::BackedOff(valve) => {
                        self.backed_off = true;
                        Notice::VariantBackedOff { variant, valve }
                    }
                    LeftOut::Failing => Notice::VariantStopped {
                        variant,
                        failures: MAX_CONSECUTIVE_FAILURES,
                    },
                });
                None
            }
        }
    }

    /// The probes of round `round`, in the order they run: each variant's
    /// (in an order rotated by one each round), each in the round's modes.
    fn planned(&self, round: u32) -> Vec<(usize, Mode)> {
        // The cold/warm order flips once per full rotation of the variants,
        // not every round: with an even number of variants, flipping every
        // round would give the same variant's cold probe the first slot
        // every time.
        let variant_count = self.running.len() as u32;
        let modes_round = (round - 1) / variant_count.max(1) + 1;
        let modes = round_modes(
            self.base.settings.mode,
            self.base.settings.order,
            modes_round,
        );
        super::compare::variant_order(self.running.len(), round)
            .into_iter()
            .flat_map(|index| modes.iter().map(move |&mode| (index, mode)))
            .collect()
    }

    /// Every probe of round `round`, into `this_round`; `Some` stops the
    /// run, and says whether it cut the round off (see `Rounds::cut`).
    fn round(
        &mut self,
        round: u32,
        this_round: &mut Vec<Sample>,
        observer: &mut dyn Observer,
    ) -> Option<(EarlyStop, bool)> {
        let mut probe_ended: Option<Instant> = None;
        let planned = self.planned(round);
        for (k, &(index, mode)) in planned.iter().enumerate() {
            // A variant left out meanwhile runs no more probes.
            if self.running[index].stopped {
                continue;
            }
            // Each probe starts a quarter interval after the previous one
            // ended (not after our output of it).
            if let Some(ended) = probe_ended {
                let next = ended + self.base.settings.interval / 4;
                if !wait_until(&self.running, next, &self.env.cancel) {
                    return Some((EarlyStop::Interrupted, true));
                }
            }
            let sample = self.probe(index, mode, round);
            probe_ended = Some(Instant::now());
            let written = observer.sample(&sample);
            let stop = self.judge(index, &sample, written, observer);
            let canceled = sample
                .error
                .as_ref()
                .is_some_and(|e| e.kind == ErrorKind::Canceled);
            this_round.push(sample);
            if let Some(stop) = stop {
                let more = planned[k + 1..]
                    .iter()
                    .any(|&(i, _)| !self.running[i].stopped);
                return Some((stop, canceled || more));
            }
        }
        let all_left_out = self.running.iter().all(|l| l.stopped);
        stop_rules::after_round(all_left_out, self.backed_off).map(|stop| (stop, false))
    }
}

/// Runs the rounds of `base` (count, interval, modes, order, warm-up and
/// cache busting come from it) over every variant: each round runs every
/// variant's probes, in an order rotated by one each round, a quarter
/// interval between one probe's end and the next one's start. With one
/// variant this is a plain run; with several (`--compare`), a variant whose
/// probes fail `MAX_CONSECUTIVE_FAILURES` times in a row is left out of the
/// rounds that remain and the others go on, as is a target whose server
/// asks it to back off when the variants probe several URLs
/// (`stop_rules`).
pub fn run_variants(
    base: &Config,
    variants: &[VariantSetup],
    env: &ProbeEnv,
    started: RunStart,
    observer: &mut dyn Observer,
) -> Rounds {
    let mut rounding = Rounding {
        base,
        variants,
        env,
        started,
        running: runners_of(base, variants, env),
        one_url: variants
            .windows(2)
            .all(|w| w[0].config.target == w[1].config.target),
        backed_off: false,
        warned_body_cap: false,
        request_seq: 0,
    };
    let mut samples = Vec::new();
    let mut stop = None;
    let (mut completed, mut cut) = (0, None);
    let mut round: u32 = 1;
    let mut ticks = Ticks::new(started.mono, base.settings.interval);
    while base.settings.count == 0 || round <= base.settings.count {
        let anchor = ticks.next(Instant::now());
        if !wait_until(&rounding.running, anchor, &env.cancel) {
            stop = Some(EarlyStop::Interrupted);
            break;
        }
        let mut this_round = Vec::new();
        let ended = rounding.round(round, &mut this_round, observer);
        match ended {
            Some((_, true)) => cut = Some(round),
            _ => completed += 1,
        }
        stop = ended.map(|(stop, _)| stop);
        if let Err(e) = observer.round(round, &this_round) {
            stop.get_or_insert(EarlyStop::Output(e.to_string()));
        }
        samples.extend(observer.keep(this_round));
        if stop.is_some() {
            break;
        }
        round = round.saturating_add(1);
    }
    Rounds {
        samples,
        elapsed: started.mono.elapsed(),
        stop,
        completed,
        cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::Cancel;

    #[test]
    fn alternate_order_puts_cold_first_on_odd_rounds() {
        assert_eq!(
            round_modes(ModeChoice::Both, Order::Alternate, 1),
            vec![Mode::Cold, Mode::Warm]
        );
        assert_eq!(
            round_modes(ModeChoice::Both, Order::Alternate, 2),
            vec![Mode::Warm, Mode::Cold]
        );
        assert_eq!(
            round_modes(ModeChoice::Both, Order::WarmFirst, 1),
            vec![Mode::Warm, Mode::Cold]
        );
        assert_eq!(
            round_modes(ModeChoice::Both, Order::ColdFirst, 2),
            vec![Mode::Cold, Mode::Warm]
        );
        assert_eq!(
            round_modes(ModeChoice::Warm, Order::Alternate, 1),
            vec![Mode::Warm]
        );
    }

    #[test]
    fn sleep_returns_false_once_canceled_and_wakes_at_once() {
        let cancel = Cancel::new();
        let t = Instant::now();
        assert!(
            cancel.sleep_until(t + Duration::from_millis(30)),
            "the time came"
        );
        assert!(t.elapsed() >= Duration::from_millis(30));
        let waker = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                cancel.cancel();
            })
        };
        let t = Instant::now();
        assert!(!cancel.sleep_until(t + Duration::from_secs(30)));
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "woken by the cancel, not the deadline"
        );
        waker.join().unwrap();
    }
}

#[cfg(test)]
mod tick_tests {
    use super::*;

    #[test]
    fn on_time_rounds_follow_the_grid_and_late_ones_skip_missed_ticks() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut ticks = Ticks::new(t0, ms(200));
        assert_eq!(ticks.next(t0), t0);
        assert_eq!(ticks.next(t0 + ms(50)), t0 + ms(200));
        // Round 2 overran until 1 130 ms: ticks 400…1 000 are gone.
        assert_eq!(ticks.next(t0 + ms(1_130)), t0 + ms(1_200));
        assert_eq!(ticks.next(t0 + ms(1_250)), t0 + ms(1_400));
        // Exactly on a tick: that tick.
        assert_eq!(ticks.next(t0 + ms(1_600)), t0 + ms(1_600));
        // Moments late (within a twentieth of the interval): served, not skipped,
        // and the next round keeps a whole interval from this late start.
        assert_eq!(ticks.next(t0 + ms(1_805)), t0 + ms(1_800));
        assert_eq!(ticks.next(t0 + ms(1_900)), t0 + ms(2_005));
    }

    #[test]
    fn the_first_round_starts_at_once() {
        let t0 = Instant::now();
        let mut ticks = Ticks::new(t0, Duration::from_secs(3));
        assert_eq!(ticks.next(t0 + Duration::from_micros(40)), t0);
    }
}
