//! Snapshots of every machine interface on fixed inputs: the JSON document,
//! the JSONL stream, the CSV (both column orders, with a comparison, and the
//! row of a run that ended at its preflight), `--write-out` lines, the SVG,
//! `--help`, the man page and the shell completions. They pin every byte, so
//! a refactor that changes one shows up here; an intended change is reviewed
//! in the snapshot diff (`INSTA_UPDATE=always cargo test --test
//! interface_snapshots`, then read the diff).

#[path = "support/synthetic.rs"]
mod synthetic;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use synthetic::{cold, failed, warm};
use tlsping::probe::{
    Axis, CompareInfo, EarlyData, ErrorKind, HandshakeAnatomy, Mode, Notice, OcspStaple,
    ProbeError, RunInfo, Sample, ServerTiming, TlsExtra, TransferFacts, VariantInfo,
};
use tlsping::render::{Finished, Output};
use tlsping::stats::{compare_variants, summarize, History, Summary, Warning};

/// The wall clock of the fixtures: 2027-01-15T08:00:00Z.
fn epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_800_000_000)
}

fn info() -> RunInfo {
    RunInfo {
        started_at: Some(epoch()),
        ..synthetic::run_info()
    }
}

/// Sets when a sample started, `ms` into the run.
fn at(mut s: Sample, ms: u64) -> Sample {
    s.t = Some(Duration::from_micros(ms * 1000 + 250));
    s.at = Some(epoch() + Duration::from_millis(ms));
    s
}

/// Three rounds that between them use every field: a warmup round that
/// dials warm, Server-Timing with a description that needs quoting, early
/// data, an OCSP staple of each kind, a lookup that overlapped tcp, a
/// failure, a body over the cap, a handshake of three round trips (a
/// HelloRetryRequest and the initial window) and a resumed one.
fn samples() -> Vec<Sample> {
    let mut r1c = at(cold(1, 2100, 31_000, 63_000, 32_000, 300), 0);
    let mut r1w = at(warm(1, 96_000, 32_000, 200, false), 180);
    r1c.warmup = true;
    r1w.warmup = true;
    r1c.server_timing = vec![
        ServerTiming {
            name: "db".into(),
            dur_ms: Some(12.5),
            desc: Some("primary, \"eu\"".into()),
        },
        ServerTiming {
            name: "cache".into(),
            dur_ms: None,
            desc: Some("=HIT".into()),
        },
    ]
    .into_boxed_slice();
    r1c.early_data = Some(EarlyData::NotSent);
    r1c.anatomy = Some(Box::new(HandshakeAnatomy {
        round_trips: Some(3),
        extra: Some(vec![
            TlsExtra::HelloRetry {
                group: Some(0x0018),
                sent: vec![0x11ec, 0x001d],
            },
            TlsExtra::InitialWindow {
                flight_bytes: 21_344,
            },
        ]),
        server_handshake: Some(Duration::from_micros(1_234)),
        transmission: Some(Duration::from_micros(2_468)),
        certs: Vec::new(),
        sig_alg: Some(0x0804),
        server_key: Some("RSA-4096".into()),
        cert_bytes: Some(19_876),
        server_flight_bytes: Some(21_344),
        unreadable: false,
    }));
    let mut r2w = at(warm(2, 40, 32_500, 120, true), 1000);
    r2w.bytes = 65_536;
    r2w.body_overflow = true;
    let mut r2c = at(cold(2, 80, 30_500, 31_000, 33_000, 250), 1160);
    r2c.early_data = Some(EarlyData::Accepted);
    r2c.anatomy = Some(Box::new(HandshakeAnatomy {
        round_trips: Some(2),
        extra: Some(vec![TlsExtra::SplitFlight {
            first_bytes: 133,
            ack_delay: Duration::ZERO,
        }]),
        server_handshake: Some(Duration::from_micros(310)),
        transmission: Some(Duration::ZERO),
        server_flight_bytes: Some(1_344),
        ..Default::default()
    }));
    r2c.socket_open = Some(Duration::from_micros(5));
    if let Some(t) = &mut r2c.tls {
        t.ocsp = Some(OcspStaple::Revoked);
    }
    // An unpinned lookup that ended after the socket opened.
    let mut r3c = at(cold(3, 0, 40_000, 41_000, 40_000, 100), 2000);
    r3c.own_dns = None;
    r3c.timers.namelookup_us = 40_800;
    r3c.socket_open = Some(Duration::from_micros(800));
    r3c.timers.connect_us = 40_800;
    r3c.timers.appconnect_us = 81_800;
    r3c.timers.pretransfer_us = 81_850;
    r3c.timers.posttransfer_us = 81_850;
    r3c.timers.starttransfer_us = 121_850;
    r3c.timers.total_us = 121_900;
    r3c.wall_total = Some(Duration::from_micros(121_900));
    let mut r3w = at(failed(3, Mode::Warm, ErrorKind::ConnReset, 1_200), 2200);
    r3w.error = Some(Box::new(ProbeError {
        kind: ErrorKind::ConnReset,
        text: "Recv failure: Connection reset by peer".into(),
    }));
    vec![r1c, r1w, r2w, r2c, r3c, r3w]
}

/// A warning the rounds gave (the words are the outputs' own).
fn warnings() -> Vec<Warning> {
    vec![Warning::Rounds {
        notice: Notice::BodyCapped {
            cap_bytes: 64 * 1024,
            h2: true,
        },
        variant: None,
    }]
}

#[test]
fn json_document() {
    let samples = samples();
    let summary = summarize(&History::of(&samples), Duration::from_millis(2400));
    let mut out = Vec::new();
    let (info, warnings) = (info(), warnings());
    let run = Finished {
        samples: &samples,
        ..finished(&info, &summary, &warnings)
    };
    tlsping::render::json::write_document(&mut out, &run).unwrap();
    let text = String::from_utf8(out).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    synthetic::assert_valid_document(&doc);
    insta::assert_snapshot!("json_document", text);
}

/// The end of a run of `info` for the outputs: its summary and warnings
/// (no full samples: the streaming outputs have written theirs).
fn finished<'a>(info: &'a RunInfo, summary: &'a Summary, warnings: &'a [Warning]) -> Finished<'a> {
    Finished {
        info,
        samples: &[],
        summary,
        comparison: None,
        warnings,
        history: &tlsping::stats::NO_RECORDS,
        exit_code: 0,
        ending: tlsping::render::Ending::complete(info.settings.count),
    }
}

#[test]
fn jsonl_stream() {
    let samples = samples();
    let summary = summarize(&History::of(&samples), Duration::from_millis(2400));
    let mut out = Vec::new();
    {
        let mut stream = tlsping::render::jsonl::JsonlStream::new(&mut out);
        stream.start(&info()).unwrap();
        for s in &samples {
            stream.sample(s).unwrap();
        }
        stream
            .end(&finished(&info(), &summary, &warnings()))
            .unwrap();
    }
    insta::assert_snapshot!("jsonl_stream", String::from_utf8(out).unwrap());
}

fn csv(info: &RunInfo, time_first: bool, samples: &[Sample]) -> String {
    let mut out = Vec::new();
    {
        let mut stream = tlsping::render::csv::CsvStream::new(&mut out, time_first);
        stream.start(info).unwrap();
        for s in samples {
            stream.sample(s).unwrap();
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn csv_in_both_orders() {
    insta::assert_snapshot!("csv_default", csv(&info(), false, &samples()));
    insta::assert_snapshot!("csv_time_first", csv(&info(), true, &samples()));
}

/// Two variants of one axis, each with the first rounds of `samples`.
fn compared() -> (RunInfo, Vec<Sample>) {
    let mut cmp_info = info();
    cmp_info.compare = Some(CompareInfo {
        axis: Axis::Tls,
        variants: vec![
            VariantInfo {
                addr: Some("192.0.2.10:443".parse().unwrap()),
                ..VariantInfo::new("TLS1.2", "1.2")
            },
            VariantInfo {
                addr: Some("192.0.2.10:443".parse().unwrap()),
                ..VariantInfo::new("TLS1.3", "1.3")
            },
        ],
        probes_per_round: 4,
    });
    let mut all = Vec::new();
    for s in samples().into_iter().take(4) {
        for variant in 0..2u8 {
            let mut v = s.clone();
            v.variant = variant;
            all.push(v);
        }
    }
    (cmp_info, all)
}

#[test]
fn csv_and_json_of_a_comparison() {
    let (info, samples) = compared();
    insta::assert_snapshot!("csv_compare", csv(&info, false, &samples));
    let history = History::of(&samples);
    let elapsed = Duration::from_millis(2400);
    let summary = summarize(&history, elapsed);
    let comparison = compare_variants(&history, elapsed, 2);
    let run = Finished {
        samples: &samples,
        comparison: Some(&comparison),
        ..finished(&info, &summary, &[])
    };
    let mut out = Vec::new();
    tlsping::render::json::write_document(&mut out, &run).unwrap();
    insta::assert_snapshot!("json_compare", String::from_utf8(out).unwrap());
}

#[test]
fn csv_and_json_of_a_run_that_ended_at_its_preflight() {
    let mut info = info();
    info.started_at = None;
    info.preflight_status = 0;
    info.preflight_error = Some(synthetic::preflight_failed(
        ErrorKind::CertExpired,
        "SSL certificate problem: certificate has expired",
    ));
    // What the run hands its outputs when it ends before round 1.
    let summary = summarize(&History::new(), Duration::ZERO);
    let run = Finished {
        exit_code: 2,
        ending: tlsping::render::Ending {
            completed: 0,
            asked: info.settings.count,
            cut: None,
            stopped_by: Some(tlsping::render::StoppedBy::Preflight),
        },
        ..finished(&info, &summary, &[])
    };
    let mut out = Vec::new();
    tlsping::render::csv::CsvStream::new(&mut out, false)
        .ended_before_rounds(&run)
        .unwrap();
    insta::assert_snapshot!("csv_preflight", String::from_utf8(out).unwrap());
    let mut out = Vec::new();
    tlsping::render::json::JsonDocument::new(&mut out)
        .ended_before_rounds(&run)
        .unwrap();
    insta::assert_snapshot!("json_preflight", String::from_utf8(out).unwrap());
}

#[test]
fn write_out_lines() {
    let mut samples = samples();
    // What libcurl would have answered, for the variables that read it.
    for s in &mut samples {
        s.transfer = Some(Box::new(TransferFacts {
            url: "https://example.test/".into(),
            url_effective: Some("https://example.test/".into()),
            method: Some("HEAD".into()),
            scheme: Some("https".into()),
            content_type: Some("text/html".into()),
            local_ip: Some("192.0.2.99".into()),
            local_port: 50_000 + i64::from(s.round),
            size_header: 120,
            size_request: 80,
            num_headers: 2,
            conn_id: i64::from(s.round),
            xfer_id: i64::from(s.round),
            headers: vec![
                ("server".into(), "test".into()),
                ("content-type".into(), "text/html".into()),
            ],
            ..TransferFacts::NOT_STARTED
        }));
    }
    let formats = [
        "%{mode} %{round} %{warmup} %{time_namelookup} %{time_connect} %{time_appconnect} \
         %{time_pretransfer} %{time_posttransfer} %{time_starttransfer} %{time_total}\\n",
        "%{http_code} %{http_version} %{remote_ip}:%{remote_port} %{num_connects} \
         %{local_ip}:%{local_port} %{size_header} %header{server}\\n",
        "%{json}\\n",
        "%{tlsping_json}\\n",
        "%{header_json}\\n",
    ];
    let mut text = String::new();
    for f in formats {
        let w = match tlsping::render::write_out::parse_format(f) {
            Ok(w) => w,
            Err(e) => {
                text.push_str(&format!("{f} -> error: {e}\n"));
                continue;
            }
        };
        text.push_str(&format!("format {f}\n"));
        for s in &samples {
            text.push_str(&w.render(s, None));
        }
    }
    insta::assert_snapshot!("write_out_lines", text);
}

#[test]
fn svg_picture() {
    let samples = samples();
    let summary = summarize(&History::of(&samples), Duration::from_millis(2400));
    let info = info();
    let run = Finished {
        samples: &samples,
        ..finished(&info, &summary, &[])
    };
    let mut out = Vec::new();
    tlsping::render::svg::write_svg(&mut out, &run).unwrap();
    insta::assert_snapshot!("svg", String::from_utf8(out).unwrap());
}

#[test]
fn help_man_page_and_completions() {
    use tlsping::cli::docs::{generate, Generate};
    let mut cmd = tlsping::cli::docs::command();
    insta::assert_snapshot!("help", cmd.render_long_help().to_string());
    // What `tlsping --generate KIND` prints.
    insta::assert_snapshot!("man_page", generate(Generate::Man));
    for (name, kind) in [
        ("bash", Generate::Bash),
        ("zsh", Generate::Zsh),
        ("fish", Generate::Fish),
    ] {
        insta::assert_snapshot!(format!("completions_{name}"), generate(kind));
    }
}
