//! The words of a `--compare` run: how rows name the variants, the header
//! line that lists them, and the sentences that say how each differs from
//! the baseline. Labels come from the command line, so they are made
//! printable before they reach a terminal.

use crate::probe::{CompareInfo, RunInfo};
use crate::stats::{Comparison, Delta, Difference};
use crate::text::printable;

use super::format::{prints_as_zero, signed_ms, Sign};

/// How the rows name each variant: by its label, or by a letter (`A`, `B`,
/// …) when the longest label would push the rows past the width; the
/// header then gives each label its letter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tags {
    /// By variant index; empty without a comparison.
    names: Vec<String>,
    width: usize,
    letters: bool,
}

/// The letter of variant `index` when the labels do not fit.
fn letter(index: usize) -> String {
    char::from(b'A' + (index % 26) as u8).to_string()
}

impl Tags {
    /// The tags of `cmp`'s variants for rows that have `room` columns to
    /// spare (a tag costs its width and a space).
    pub fn new(cmp: &CompareInfo, room: usize) -> Tags {
        let labels: Vec<String> = cmp.variants.iter().map(|v| printable(&v.label)).collect();
        // A variant that could not run has no rows to tag.
        let longest = labels
            .iter()
            .zip(&cmp.variants)
            .filter(|(_, v)| v.unavailable.is_none())
            .map(|(l, _)| l.chars().count())
            .max()
            .unwrap_or(0);
        if longest < room {
            Tags {
                names: labels,
                width: longest,
                letters: false,
            }
        } else {
            Tags {
                names: (0..labels.len()).map(letter).collect(),
                width: 1,
                letters: true,
            }
        }
    }

    /// No comparison: rows carry no tag.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Width of the tag column (0 without a comparison).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether the rows use letters instead of the labels.
    pub fn letters(&self) -> bool {
        self.letters
    }

    /// The tag of `variant`, padded to the column.
    pub fn padded(&self, variant: u8) -> String {
        let name = self
            .names
            .get(usize::from(variant))
            .map_or("?", |n| n.as_str());
        format!("{name:<w$}", w = self.width)
    }

    /// What a row without a tag puts in its place: the column and its space.
    pub fn blank(&self) -> String {
        if self.is_empty() {
            String::new()
        } else {
            " ".repeat(self.width + 1)
        }
    }
}

/// The items of the header's `compare` line: every variant, those that
/// could not run with the reason, then the probes per round.
pub fn header_items(cmp: &CompareInfo, tags: &Tags) -> Vec<String> {
    let mut items: Vec<String> = cmp
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let label = printable(&v.label);
            match &v.unavailable {
                Some(e) => {
                    // The kind is short enough for a header; the full text is
                    // on stderr and in JSON. Our own reasons (another HTTP
                    // version came back) are short and say more.
                    let said = super::reasons::reason(e);
                    let reason =
                        if e.kind() == crate::probe::ErrorKind::Error && !said.trim().is_empty() {
                            printable(&said)
                        } else {
                            e.kind().slug().to_string()
                        };
                    format!("{label} (unavailable: {reason})")
                }
                None if tags.letters() => format!("{label} ({})", letter(i)),
                None => label,
            }
        })
        .collect();
    let last = items.len().saturating_sub(1);
    for item in &mut items[..last] {
        item.push(',');
    }
    let probes = cmp.probes_per_round;
    items.push(format!(
        "· {probes} probe{} per round",
        if probes == 1 { "" } else { "s" }
    ));
    items
}

/// `lead` followed by `items`, wrapped at `width` between items onto lines
/// indented by two spaces (an item longer than a line is cut with the line).
pub fn wrap_items(lead: &str, items: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = lead.to_string();
    for item in items {
        let fits = line.chars().count() + 1 + item.chars().count() <= width;
        if !fits && line.trim() != lead.trim() && !line.trim().is_empty() {
            lines.push(std::mem::replace(&mut line, "  ".to_string()));
        }
        if !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(item);
    }
    if !items.is_empty() {
        lines.push(line);
    }
    lines
}

/// One difference in words: `cold tls: TLS1.3 is 40.2ms faster than TLS1.2
/// (95% CI 39.8 .. 40.9), 12 rounds`. "No difference detectable", with the
/// median beside the interval, when the interval holds 0; "no difference"
/// when the median prints as zero, since "0.00ms faster" would claim a
/// direction the figure does not show. Without an interval there is no
/// conclusion yet, and the line draws none. `None` when there is no median.
pub fn difference_line(d: &Difference, cmp: &CompareInfo) -> Option<String> {
    let median = d.median?;
    let (v, base) = (
        printable(cmp.label(d.variant)),
        printable(cmp.label(d.against)),
    );
    let stage = format!("{} {}", d.mode.as_str(), d.stage.as_str());
    let rounds = match d.rounds {
        1 => "1 round".to_string(),
        n => format!("{n} rounds"),
    };
    let signed = |d: Delta| signed_ms(d, Sign::Minus);
    let faster = |m: Delta| format!("{v} is {}ms faster than {base}", signed(-m));
    let slower = |m: Delta| format!("{v} is {}ms slower than {base}", signed(m));
    let beside = |(lo, hi): (Delta, Delta)| {
        format!(
            "(median {}ms, 95% CI {} .. {})",
            signed(median),
            signed(lo),
            signed(hi)
        )
    };
    let text = match d.ci {
        Some((lo, hi)) if lo <= Delta::ZERO && hi >= Delta::ZERO => format!(
            "no difference detectable between {v} and {base} {}",
            beside((lo, hi))
        ),
        Some(ci) if prints_as_zero(median) => {
            format!("no difference between {v} and {base} {}", beside(ci))
        }
        Some((lo, hi)) if hi < Delta::ZERO => format!(
            "{} (95% CI {} .. {})",
            faster(median),
            signed(-hi),
            signed(-lo)
        ),
        Some((lo, hi)) => format!(
            "{} (95% CI {} .. {})",
            slower(median),
            signed(lo),
            signed(hi)
        ),
        // Below the minimum a median alone decides nothing: no direction.
        None => format!(
            "no conclusion yet on {v} against {base}: an interval needs {} rounds \
             (medians {}ms apart)",
            crate::stats::ci::min_n(),
            crate::render::format::ms(median.abs())
        ),
    };
    Some(format!("{stage}: {text}, {rounds}"))
}

/// The title of one variant's statistics block.
pub fn variant_title(info: &RunInfo, label: &str) -> String {
    let label = printable(label);
    let own_targets = info
        .compare
        .as_ref()
        .is_some_and(|c| c.axis.own_endpoints());
    if own_targets {
        // The label names the target; the run's host is only the first one.
        format!("--- {label} statistics ---")
    } else if info.settings.calibrate {
        format!(
            "--- {} statistics: {label} (calibration: the client floor) ---",
            info.host
        )
    } else {
        format!("--- {} statistics: {label} ---", info.host)
    }
}

/// The differences section: its title, then one sentence per difference.
pub fn differences(cmp: &CompareInfo, comparison: &Comparison) -> Vec<String> {
    let Some((baseline, _)) = comparison.summaries.first() else {
        return Vec::new();
    };
    let base = printable(cmp.label(*baseline));
    let mut out = vec![format!(
        "--- {} compared with {base}, round by round ---",
        cmp.axis.as_str()
    )];
    if comparison.summaries.len() < 2 {
        out.push(format!("nothing to compare: only {base} has samples"));
        return out;
    }
    let lines: Vec<String> = comparison
        .differences
        .iter()
        .filter_map(|d| difference_line(d, cmp))
        .collect();
    if lines.is_empty() {
        out.push("no round in which both variants were timed".into());
    }
    out.extend(lines);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Axis, ErrorKind, Mode, VariantInfo};

    fn tls_compare() -> CompareInfo {
        let variant = VariantInfo::new;
        CompareInfo {
            axis: Axis::Tls,
            variants: vec![variant("TLS1.2", "1.2"), variant("TLS1.3", "1.3")],
            probes_per_round: 4,
        }
    }

    /// A difference given in milliseconds, as the sentences print them.
    fn diff(median: f64, ci: Option<(f64, f64)>, rounds: usize) -> Difference {
        let d = |ms: f64| Delta::from_nanos((ms * 1e6).round() as i64);
        Difference {
            variant: 1,
            against: 0,
            mode: Mode::Cold,
            stage: crate::probe::Stage::Tls,
            median: Some(d(median)),
            ci: ci.map(|(lo, hi)| (d(lo), d(hi))),
            rounds,
        }
    }

    #[test]
    fn faster_slower_and_no_difference() {
        let cmp = tls_compare();
        let line = |d| difference_line(&d, &cmp).unwrap();
        assert_eq!(
            line(diff(-40.2, Some((-40.9, -39.8)), 12)),
            "cold tls: TLS1.3 is 40.2ms faster than TLS1.2 (95% CI 39.8 .. 40.9), 12 rounds"
        );
        assert_eq!(
            line(diff(3.5, Some((1.25, 4.0)), 9)),
            "cold tls: TLS1.3 is 3.50ms slower than TLS1.2 (95% CI 1.25 .. 4.00), 9 rounds"
        );
        assert_eq!(
            line(diff(0.1, Some((-0.3, 0.5)), 12)),
            "cold tls: no difference detectable between TLS1.3 and TLS1.2 \
             (median 0.10ms, 95% CI -0.30 .. 0.50), 12 rounds"
        );
        assert_eq!(
            line(diff(-40.2, None, 3)),
            "cold tls: no conclusion yet on TLS1.3 against TLS1.2: an interval needs 6 rounds \
             (medians 40.2ms apart), 3 rounds"
        );
        assert_eq!(
            line(diff(0.0, None, 1)),
            "cold tls: no conclusion yet on TLS1.3 against TLS1.2: an interval needs 6 rounds \
             (medians 0.00ms apart), 1 round"
        );
    }

    #[test]
    fn a_median_that_prints_as_zero_is_no_difference() {
        let cmp = tls_compare();
        let line = |d| difference_line(&d, &cmp).unwrap();
        // An interval clear of 0, but a median below the printed precision.
        assert_eq!(
            line(diff(-0.004, Some((-0.012, -0.001)), 12)),
            "cold tls: no difference between TLS1.3 and TLS1.2 \
             (median 0.00ms, 95% CI -0.01 .. 0.00), 12 rounds"
        );
        assert_eq!(
            line(diff(0.003, Some((0.001, 0.004)), 12)),
            "cold tls: no difference between TLS1.3 and TLS1.2 \
             (median 0.00ms, 95% CI 0.00 .. 0.00), 12 rounds"
        );
        // Without an interval, no direction whatever the median.
        for median in [-0.004, 0.0049, -0.006, 12.0] {
            let text = line(diff(median, None, 3));
            assert!(
                text.contains("no conclusion yet on TLS1.3 against TLS1.2"),
                "{text}"
            );
            assert!(
                !text.contains("faster") && !text.contains("slower"),
                "{text}"
            );
        }
    }

    #[test]
    fn no_difference_detectable_shows_the_median_beside_the_interval() {
        let cmp = tls_compare();
        let line = |d| difference_line(&d, &cmp).unwrap();
        assert_eq!(
            line(diff(-1.25, Some((-3.5, 0.75)), 8)),
            "cold tls: no difference detectable between TLS1.3 and TLS1.2 \
             (median -1.25ms, 95% CI -3.50 .. 0.75), 8 rounds"
        );
        assert_eq!(
            line(diff(0.0, Some((0.0, 0.0)), 10)),
            "cold tls: no difference detectable between TLS1.3 and TLS1.2 \
             (median 0.00ms, 95% CI 0.00 .. 0.00), 10 rounds"
        );
    }

    #[test]
    fn labels_are_shown_not_obeyed() {
        let mut cmp = tls_compare();
        cmp.variants[1].label = "x\u{1b}[2J".into();
        let line = difference_line(&diff(-1.0, None, 2), &cmp).unwrap();
        assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
        let tags = Tags::new(&cmp, 100);
        assert!(!tags.padded(1).chars().any(|c| c.is_control()));
    }

    #[test]
    fn letters_replace_labels_that_do_not_fit() {
        let cmp = tls_compare();
        let wide = Tags::new(&cmp, 20);
        assert_eq!(
            (wide.padded(0), wide.width(), wide.letters()),
            ("TLS1.2".into(), 6, false)
        );
        let narrow = Tags::new(&cmp, 6);
        assert_eq!((narrow.padded(1), narrow.width()), ("B".into(), 1));
        assert_eq!(
            header_items(&cmp, &narrow),
            ["TLS1.2 (A),", "TLS1.3 (B)", "· 4 probes per round"]
        );
    }

    #[test]
    fn unavailable_variants_say_why() {
        let mut cmp = tls_compare();
        cmp.variants[0].unavailable = Some(crate::stats::synthetic::preflight_failed(
            ErrorKind::TlsError,
            "no protocols available",
        ));
        cmp.probes_per_round = 2;
        let items = header_items(&cmp, &Tags::new(&cmp, 100));
        assert_eq!(
            wrap_items("compare tls:", &items, 200),
            ["compare tls: TLS1.2 (unavailable: tls_error), TLS1.3 · 2 probes per round"]
        );
        assert_eq!(
            wrap_items("compare tls:", &items, 48),
            [
                "compare tls: TLS1.2 (unavailable: tls_error),",
                "  TLS1.3 · 2 probes per round"
            ]
        );
    }

    #[test]
    fn words_wrap_under_the_width() {
        let text = "cold tls: TLS1.3 is 40.2ms faster than TLS1.2 (95% CI 39.8 .. 40.9), 12 rounds";
        let lines = super::super::format::wrap(text, 40);
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:#?}");
        assert_eq!(
            lines
                .join(" ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            text
        );
        assert_eq!(super::super::format::wrap(text, 200), [text]);
    }
}
