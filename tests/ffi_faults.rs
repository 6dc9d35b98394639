//! Failure paths through the libcurl/OpenSSL boundary, in process, so that a
//! memory checker sees every FFI call they make (see `.ci/memcheck`): each
//! failure kind the rounds can meet, and a transfer aborted by an interrupt.

mod support;

use std::time::{Duration, Instant};

use support::faults::{start_faulty, Fault, FaultOpts};
use support::{ca, start, CertKind, Quiet, ServerOpts};
use tlsping::probe::{self, Cancel, Config, ErrorKind, ModeChoice, ProbeEnv, Sample};

fn config(url: &str, mode: ModeChoice, count: u32) -> Config {
    let mut cfg = Config::new(tlsping::probe::Target::parse(url).unwrap());
    cfg.settings.count = count;
    cfg.settings.interval = Duration::from_millis(10);
    // Generous: under valgrind everything is 20–50 times slower.
    cfg.settings.timeout = Duration::from_secs(4);
    cfg.settings.mode = mode;
    cfg.settings.warmup = 0;
    cfg.ip_version = probe::IpVersion::V4;
    cfg.ca_file = Some(ca().pem_path.clone());
    cfg
}

/// Preflight (served normally) then `count` rounds against a faulty server.
fn rounds(
    fault: Fault,
    mode: ModeChoice,
    count: u32,
    cfg_edit: impl FnOnce(&mut Config),
) -> Vec<Sample> {
    let server = start_faulty(FaultOpts {
        fault,
        ..Default::default()
    });
    let mut cfg = config(&server.url(), mode, count);
    cfg_edit(&mut cfg);
    let env = ProbeEnv::new(&cfg, Cancel::new()).unwrap();
    let pre = probe::preflight(&cfg, &env).expect("the first connection is served normally");
    support::run_rounds(&cfg, &pre.method, pre.addr, &env, &mut Quiet).samples
}

fn kinds(samples: &[Sample]) -> Vec<ErrorKind> {
    samples
        .iter()
        .map(|s| {
            s.error
                .as_ref()
                .map(|e| e.kind)
                .unwrap_or_else(|| panic!("not a failure: {s:?}"))
        })
        .collect()
}

#[test]
fn resets_closes_and_short_bodies_in_the_rounds() {
    let cases = [
        (Fault::ResetInHandshake, ErrorKind::ConnReset),
        (Fault::ResetInResponse, ErrorKind::ConnReset),
        (Fault::CloseAfterRequest, ErrorKind::ConnClosed),
        (Fault::ShortBody, ErrorKind::BodyError),
        (Fault::Plaintext, ErrorKind::TlsError),
    ];
    for (fault, kind) in cases {
        // A HEAD answer legitimately has no body: a short body needs a GET.
        let samples = rounds(fault, ModeChoice::Cold, 2, |c| {
            c.method = Some("GET".into())
        });
        assert_eq!(kinds(&samples), vec![kind; 2], "{fault:?}");
        for s in &samples {
            // Stages reached before the failure stay measured; later ones do not.
            assert!(s.tcp().is_some(), "{fault:?}: the connection was made");
            assert!(s.srv().is_none() || s.status > 0, "{fault:?}");
        }
    }
}

#[test]
fn a_hung_server_times_out() {
    // The configuration's own timeout (4 s): the preflight must finish inside
    // it under valgrind, so it is not shortened here.
    let samples = rounds(Fault::Hang, ModeChoice::Cold, 1, |_| {});
    assert_eq!(kinds(&samples), vec![ErrorKind::Timeout]);
    assert!(
        samples[0].tls().is_some(),
        "the handshake finished before the hang"
    );
    // No response, so no end of headers: the kernel's view was taken as
    // libcurl closed the socket (its close-socket callback).
    let k = samples[0]
        .tcp_info
        .expect("TCP_INFO of a connection that timed out");
    assert!(k.rtt_us > 0, "{k:?}");
}

#[test]
fn certificate_failures_stop_the_preflight() {
    for (cert, kind) in [
        (CertKind::Expired, ErrorKind::CertExpired),
        (CertKind::WrongName, ErrorKind::CertName),
        (CertKind::UnknownCa, ErrorKind::CertUnknownCa),
    ] {
        let server = start(ServerOpts {
            cert,
            ..Default::default()
        });
        let cfg = config(&server.url(), ModeChoice::Both, 1);
        let env = ProbeEnv::new(&cfg, Cancel::new()).unwrap();
        let err = probe::preflight(&cfg, &env)
            .expect_err("an untrusted certificate")
            .error;
        assert_eq!(err.kind, kind, "{cert:?}: {}", err.text);
    }
}

#[test]
fn an_interrupt_aborts_the_transfer_in_flight() {
    let server = start_faulty(FaultOpts {
        fault: Fault::Hang,
        ..Default::default()
    });
    let mut cfg = config(&server.url(), ModeChoice::Cold, 0);
    cfg.settings.timeout = Duration::from_secs(30);
    let cancel = Cancel::new();
    let env = ProbeEnv::new(&cfg, cancel.clone()).unwrap();
    let pre = probe::preflight(&cfg, &env).unwrap();
    let canceler = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            cancel.cancel();
        })
    };
    let started = Instant::now();
    let r = support::run_rounds(&cfg, &pre.method, pre.addr, &env, &mut Quiet);
    canceler.join().unwrap();
    assert_eq!(r.stop, Some(probe::EarlyStop::Interrupted));
    assert_eq!(kinds(&r.samples), vec![ErrorKind::Canceled]);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the hung probe was aborted, not timed out"
    );
}

#[test]
fn a_refused_certificate_name_reads_the_names_libcurl_gathered() {
    // The preflight has libcurl gather the chain (CURLOPT_CERTINFO) and
    // reads the leaf's PEM back from its list after the check refused it.
    let server = start(ServerOpts {
        cert: CertKind::WrongName,
        ..Default::default()
    });
    let cfg = config(&server.url(), ModeChoice::Both, 1);
    let env = ProbeEnv::new(&cfg, Cancel::new()).unwrap();
    let failed = probe::preflight(&cfg, &env).expect_err("the name does not match");
    assert_eq!(failed.error.kind, ErrorKind::CertName, "{failed:?}");
    assert_eq!(
        failed.cert_names,
        Some((vec!["wrong.example".to_string()], 1)),
        "{failed:?}"
    );
    // It connected before the certificate was refused (libcurl's handshake
    // timer stops only at a handshake it accepted).
    assert!(failed.tcp.is_some(), "{failed:?}");
}
