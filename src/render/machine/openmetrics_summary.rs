//! `tlsping_stage_seconds`, the exposition's one summary, written by us:
//! `prometheus-client` 0.26 has no summary type. The same text the client
//! writes for its families (HELP, TYPE, UNIT, then the series), the same
//! label escaping, and `quantile` 0.5 always, 0.95 where the statistics
//! give a p95 (20 values or more).

use std::fmt::Write;

use crate::probe::Mode;
use crate::stats::stage_figures;

use super::openmetrics_scope::{Labels, Scope};
use super::output::Finished;

/// A label value as the text format wants it: backslash, double quote and
/// line feed escaped, as `prometheus-client` escapes its own.
pub fn escape_label_value(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

fn series(out: &mut String, name: &str, labels: &[&Labels], extra: &[(&str, &str)], value: f64) {
    out.push_str(name);
    let mut first = true;
    let pairs = labels
        .iter()
        .flat_map(|l| l.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .chain(extra.iter().copied());
    for (key, value) in pairs {
        out.push(if first { '{' } else { ',' });
        first = false;
        out.push_str(key);
        out.push_str("=\"");
        escape_label_value(out, value);
        out.push('"');
    }
    if !first {
        out.push('}');
    }
    // `{}` of an f64 is its shortest exact form, which every parser reads.
    let _ = writeln!(out, " {value}");
}

/// The summary family, after the client's families; nothing when no stage
/// of any scope was timed.
pub(super) fn stage_summaries(
    out: &mut String,
    run: &Finished,
    run_labels: &Labels,
    scopes: &[Scope],
) {
    let name = "tlsping_stage_seconds";
    let mut header = false;
    for scope in scopes {
        for f in stage_figures(run.history, scope.variant) {
            if !header {
                out.push_str(
                    "# HELP tlsping_stage_seconds Each stage of the timed probes, per mode.\n\
                     # TYPE tlsping_stage_seconds summary\n\
                     # UNIT tlsping_stage_seconds seconds\n",
                );
                header = true;
            }
            let mode = match f.mode {
                Mode::Cold => "cold",
                Mode::Warm => "warm",
            };
            let labels = [run_labels, &scope.labels];
            let stage = [("stage", f.stage), ("mode", mode)];
            let quantiles = [("0.5", f.description.median), ("0.95", f.description.p95)];
            for (q, value) in quantiles {
                if let Some(v) = value {
                    let mut with_q = stage.to_vec();
                    with_q.push(("quantile", q));
                    series(out, name, &labels, &with_q, v.as_secs_f64());
                }
            }
            series(
                out,
                &format!("{name}_sum"),
                &labels,
                &stage,
                f.sum.as_secs_f64(),
            );
            series(
                out,
                &format!("{name}_count"),
                &labels,
                &stage,
                f.description.n as f64,
            );
        }
    }
}
