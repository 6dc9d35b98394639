//! Who each series of the exposition is about: the run's labels, and
//! under `--compare` each variant's. A leaf of the exposition, shared by
//! the gauges (`openmetrics`) and the one summary (`openmetrics_summary`).

use crate::stats::Summary;

use super::output::Finished;

/// A series' labels, in order: the family's own, after the run's.
pub type Labels = Vec<(String, String)>;

/// The labels that name variant `index` of a comparison: `variant`, and
/// where each variant asks a server of its own (`--compare target=`) that
/// server's URL, its value, in `variant_target`. A series carries one
/// `target`, the run's (the push's group, which a Pushgateway writes over
/// any `target` a series brings), so each endpoint's URL has a label of
/// its own.
pub(super) fn variant_labels(cmp: &crate::probe::CompareInfo, index: u8) -> Labels {
    let mut labels = vec![("variant".to_string(), cmp.label(index).to_string())];
    if cmp.axis.own_endpoints() {
        if let Some(v) = cmp.variants.get(usize::from(index)) {
            labels.push(("variant_target".to_string(), v.value.clone()));
        }
    }
    labels
}

/// The statistics one set of series is about: the whole run, or under
/// `--compare` each variant (its `variant`, and `variant_target` under
/// `--compare target=`, in `labels`).
pub(super) struct Scope<'a> {
    pub labels: Labels,
    pub summary: &'a Summary,
    /// The variant's index (`None`: every record).
    pub variant: Option<u8>,
}

impl<'a> Scope<'a> {
    pub fn of(run: &Finished<'a>) -> Vec<Scope<'a>> {
        match (run.comparison, run.info.compare.as_ref()) {
            (Some(comparison), Some(info)) => comparison
                .summaries
                .iter()
                .map(|(v, summary)| Scope {
                    labels: variant_labels(info, *v),
                    summary,
                    variant: Some(*v),
                })
                .collect(),
            _ => vec![Scope {
                labels: Vec::new(),
                summary: run.summary,
                variant: None,
            }],
        }
    }
}
