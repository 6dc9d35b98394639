//! `contrib/tlsping-alerts.yml` under `promtool test rules`, Prometheus's
//! own rule tester: each alert fires on the series it is written for, and
//! its summary reads as a sentence whether or not the series carries a
//! `variant` (a run without `--compare` has none: no double space then).

mod support;

use std::process::Command;

const RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/tlsping-alerts.yml");

/// Runs `promtool test rules` on `tests` (a rule test file's text).
fn promtool_test(tests: &str) -> (bool, String) {
    let dir = support::TempDir::new("alert-rules");
    let file = dir.path().join("tests.yml");
    std::fs::write(&file, tests).unwrap();
    let out = Command::new("promtool")
        .args(["test", "rules"])
        .arg(&file)
        .output()
        .expect("running promtool");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn alert_summaries_read_the_same_with_and_without_a_variant() {
    if !support::have("promtool") {
        return;
    }
    // Five days after the evaluation time (90 minutes in).
    let five_days_on = 86400 * 5 + 90 * 60;
    let tests = format!(
        r#"rule_files:
  - {RULES}
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'tlsping_cert_not_after_timestamp_seconds{{target="https://a.test/", vantage="fra1"}}'
        values: '{five_days_on}x120'
      - series: 'tlsping_cert_not_after_timestamp_seconds{{target="https://b.test/", variant="tls=1.3", vantage="fra1"}}'
        values: '{five_days_on}x120'
      - series: 'tlsping_preflight_ok{{target="https://c.test/", vantage="fra1"}}'
        values: '0x120'
      - series: 'tlsping_preflight_ok{{target="https://d.test/", variant="h2", vantage="fra1"}}'
        values: '0x120'
    alert_rule_test:
      - eval_time: 90m
        alertname: TlsCertificateExpiresSoon
        exp_alerts:
          - exp_labels: {{severity: warning, target: "https://a.test/", vantage: fra1}}
            exp_annotations:
              summary: "https://a.test/: the certificate expires in 5 days"
          - exp_labels: {{severity: warning, target: "https://b.test/", variant: "tls=1.3", vantage: fra1}}
            exp_annotations:
              summary: "https://b.test/ tls=1.3: the certificate expires in 5 days"
      - eval_time: 90m
        alertname: TlspingCannotConnect
        exp_alerts:
          - exp_labels: {{severity: critical, target: "https://c.test/", vantage: fra1}}
            exp_annotations:
              summary: "https://c.test/ from fra1: no run could connect for 30 minutes"
          - exp_labels: {{severity: critical, target: "https://d.test/", variant: h2, vantage: fra1}}
            exp_annotations:
              summary: "https://d.test/ h2 from fra1: no run could connect for 30 minutes"
"#
    );
    let (ok, said) = promtool_test(&tests);
    assert!(ok, "promtool test rules: {said}");
}
