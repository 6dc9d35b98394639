//! Where the time went: the client's own set-up inside `tls`, the path's
//! round trip as the kernel measured it, the server's own share of `srv`, and
//! what the server said about itself (`Server-Timing`).

use std::time::Duration;

use crate::probe::{Mode, Stages};

use super::descriptive::median_us;
use super::history::History;
use super::record::median_of;

/// One `Server-Timing` metric over the run: the median of its `dur`.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerMetric {
    pub name: String,
    pub median: Duration,
    /// Samples that carried this metric with a duration.
    pub n: usize,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attribution {
    /// Median cold `tls` over the samples whose set-up was measured, and the
    /// median set-up over the same samples.
    pub tls: Option<Duration>,
    pub tls_setup: Option<Duration>,
    /// Median of per-sample `tls − tls_setup`: network, server and our
    /// reading of the server's reply.
    pub tls_after_setup: Option<Duration>,
    /// Median of our processing of the server's last flight, and of what is
    /// left of `tls` for the path and the server.
    pub tls_finish: Option<Duration>,
    pub tls_network_server: Option<Duration>,
    pub tls_setup_n: usize,
    /// Median kernel smoothed RTT and minimum RTT over timed samples.
    pub rtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub rtt_n: usize,
    /// Per mode (cold, warm): the median of the server's time after the
    /// request (`Stages::server`, read from the TLS records), and how many
    /// samples had it. Per mode, since a cold request and a warm one are
    /// not the same work for every server.
    pub server_time: [Option<Duration>; 2],
    pub server_time_n: [usize; 2],
    /// Probes (not warmup) whose connection retransmitted during the probe.
    pub retransmitted: usize,
    /// `Server-Timing` metrics in the order they first appeared.
    pub server_timing: Vec<ServerMetric>,
}

use crate::text::millis as ms;

/// The attribution over the kept records of one variant (`None`: all),
/// one median at a time so that only one value list is held at once.
pub fn attribute(history: &History, variant: Option<u8>) -> Attribution {
    let timed = history.of_variant(variant).filter(|r| r.timed());
    let cold = timed.clone().filter(|r| r.mode() == Mode::Cold);
    // The set-up split is over samples that have the set-up; the finish
    // split over those that also have the finish.
    let with_setup = cold
        .clone()
        .filter(|r| r.stages().tls.is_some() && r.stages().tls_setup.is_some());
    let with_finish =
        cold.filter(|r| r.stages().tls_finish.is_some() && r.stages().tls_after_setup().is_some());
    let (tls, tls_setup_n) = median_of(with_setup.clone(), |st| st.tls);
    let (rtt, rtt_n) = median_of(timed.clone(), |st| st.rtt);
    let server = |mode| {
        median_of(timed.clone().filter(move |r| r.mode() == mode), |st| {
            st.server
        })
    };
    let (cold_server, warm_server) = (server(Mode::Cold), server(Mode::Warm));
    Attribution {
        tls,
        tls_setup: median_of(with_setup.clone(), |st| st.tls_setup).0,
        tls_after_setup: median_of(with_setup, Stages::tls_after_setup).0,
        tls_finish: median_of(with_finish.clone(), |st| st.tls_finish).0,
        tls_network_server: median_of(with_finish, Stages::tls_network_server).0,
        tls_setup_n,
        rtt,
        min_rtt: median_of(timed, |st| st.min_rtt).0,
        rtt_n,
        server_time: [cold_server.0, warm_server.0],
        server_time_n: [cold_server.1, warm_server.1],
        retransmitted: history
            .of_variant(variant)
            .filter(|r| !r.warmup() && r.retransmitted())
            .count(),
        server_timing: history
            .server_timing
            .metrics(variant)
            .into_iter()
            .filter_map(|(name, mut durs)| {
                let n = durs.len();
                durs.sort_unstable();
                median_us(&durs).map(|median| ServerMetric {
                    name: name.to_string(),
                    median,
                    n,
                })
            })
            .collect(),
    }
}

/// A share of `tls` as a whole percentage, for the statistics line.
pub fn share_percent(part: Duration, whole: Duration) -> Option<u32> {
    (!whole.is_zero()).then(|| (ms(part) / ms(whole) * 100.0).round() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Sample, ServerTiming, TcpFacts};
    use crate::stats::synthetic;

    fn with_timing(mut s: Sample, metrics: &[(&str, Option<f64>)]) -> Sample {
        s.server_timing = metrics
            .iter()
            .map(|(name, dur)| ServerTiming {
                name: name.to_string(),
                dur_ms: *dur,
                desc: None,
            })
            .collect();
        s
    }

    #[test]
    fn medians_of_setup_rtt_and_server_time() {
        // Three cold probes: tls 3, 4, 50 ms; set-up fixed at 0.9 ms by the fixture.
        let mut samples = vec![
            synthetic::cold(1, 40, 100, 3000, 1000, 50),
            synthetic::cold(2, 40, 100, 4000, 2000, 50),
            synthetic::cold(3, 40, 100, 50000, 3000, 50),
        ];
        samples[0].tcp_info = Some(TcpFacts {
            rtt_us: 400,
            min_rtt_us: Some(300),
            retrans: 0,
        });
        samples[1].tcp_info = Some(TcpFacts {
            rtt_us: 500,
            min_rtt_us: None,
            retrans: 2,
        });
        samples[2].tcp_info = Some(TcpFacts {
            rtt_us: 2500,
            min_rtt_us: Some(200),
            retrans: 0,
        });
        let a = attribute(&History::of(&samples), None);
        assert_eq!(a.tls_setup_n, 3);
        assert_eq!(a.tls, Some(Duration::from_millis(4)));
        assert_eq!(a.tls_setup, Some(Duration::from_micros(900)));
        assert_eq!(a.tls_after_setup, Some(Duration::from_micros(3100)));
        // The fixture's finish is 0.5 ms: the path and server keep the rest.
        assert_eq!(a.tls_finish, Some(Duration::from_micros(500)));
        assert_eq!(a.tls_network_server, Some(Duration::from_micros(2600)));
        assert_eq!(a.rtt, Some(Duration::from_micros(500)));
        assert_eq!(a.min_rtt, Some(Duration::from_micros(250)));
        // The records' wait (19/20 of srv) less the min RTT, where the
        // kernel gave one: 950 − 300, 2850 − 200 → 0.65, 2.65 ms.
        assert_eq!(a.server_time, [Some(Duration::from_micros(1_650)), None]);
        assert_eq!(a.server_time_n, [2, 0]);
        assert_eq!(a.retransmitted, 1);
    }

    #[test]
    fn server_time_is_per_mode_and_subtracts_a_round_trip_the_server_cannot_inflate() {
        // A 100 ms upstream behind a 40.3 ms path: the server's slow answer
        // delays the ACKs, so the kernel smooths its RTT up to 44.7 ms while
        // the connection's minimum stays at the path's 40.1 ms.
        let warm = |round| {
            let mut s = synthetic::warm(round, 100, 141_900, 10, true);
            s.tcp_info = Some(TcpFacts {
                rtt_us: 44_700,
                min_rtt_us: Some(40_100),
                retrans: 0,
            });
            s.reply_wait = Some(Duration::from_micros(141_000));
            s
        };
        // One cold probe whose server took 43 ms: never mixed with the warm ones.
        let mut cold = synthetic::cold(1, 40, 100, 3000, 83_100, 50);
        cold.reply_wait = Some(Duration::from_micros(83_000));
        cold.tcp_info = warm(1).tcp_info;
        let a = attribute(&History::of(&[cold, warm(1), warm(2), warm(3)]), None);
        // Kept to four significant figures (`Record`).
        let near = |d: Option<Duration>, us: u64| {
            d.is_some_and(|d| (d.as_micros() as u64).abs_diff(us) * 4096 <= us)
        };
        assert!(
            near(a.server_time[0], 42_900) && near(a.server_time[1], 100_900),
            "the records' wait − min rtt, not − srtt, per mode: {:?}",
            a.server_time
        );
        assert_eq!(a.server_time_n, [1, 3]);
        // Without a minimum from the kernel a warm probe has no round trip
        // to subtract (its handshake is long gone): no figure, rather than a
        // smoothed RTT biased by the very delay it should isolate.
        let mut no_min = warm(4);
        no_min.tcp_info.as_mut().unwrap().min_rtt_us = None;
        let a = attribute(&History::of(&[no_min]), None);
        assert_eq!((a.server_time, a.server_time_n), ([None, None], [0, 0]));
    }

    #[test]
    fn server_timing_medians_per_metric_in_first_seen_order() {
        let samples = vec![
            with_timing(
                synthetic::warm(1, 100, 1000, 10, true),
                &[("db", Some(2.0)), ("cache", None), ("app", Some(10.0))],
            ),
            with_timing(
                synthetic::warm(2, 100, 1000, 10, true),
                &[("app", Some(20.0)), ("db", Some(4.0))],
            ),
            with_timing(
                synthetic::warm(3, 100, 1000, 10, true),
                &[("db", Some(9.0))],
            ),
        ];
        let a = attribute(&History::of(&samples), None);
        let got: Vec<(&str, Duration, usize)> = a
            .server_timing
            .iter()
            .map(|m| (m.name.as_str(), m.median, m.n))
            .collect();
        let ms = Duration::from_millis;
        assert_eq!(got, vec![("db", ms(4), 3), ("app", ms(15), 2)]);
    }

    #[test]
    fn warmup_and_failures_stay_out() {
        let mut warm_up = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        warm_up.warmup = true;
        let failed = synthetic::failed(2, Mode::Cold, crate::probe::ErrorKind::Timeout, 5000);
        let a = attribute(&History::of(&[warm_up, failed]), None);
        assert_eq!(a.tls_setup, None);
        assert_eq!(a.rtt, None);
        assert_eq!(a.server_time, [None, None]);
        assert_eq!(a.tls_setup_n, 0);
    }
}
