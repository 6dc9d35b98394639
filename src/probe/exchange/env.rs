//! What every probe of a run shares, set up once before the first one.

use std::sync::Arc;

use super::cancel::Cancel;
use super::config::Config;
use super::trust::TrustStore;

/// What every probe of a run shares: the interrupt flag and the trust store.
#[derive(Clone)]
pub struct ProbeEnv {
    pub cancel: Cancel,
    /// `None` with `-k`, where nothing is verified.
    pub trust: Option<Arc<TrustStore>>,
}

impl ProbeEnv {
    /// Loads the trust store once; `Err` names the CA source that failed.
    pub fn new(cfg: &Config, cancel: Cancel) -> Result<ProbeEnv, String> {
        ProbeEnv::for_targets(cfg, cfg.target.https, cancel)
    }

    /// As `new`, for a run some of whose targets are https (`https`) even
    /// when the run's own one is not (`--compare target=`).
    pub fn for_targets(cfg: &Config, https: bool, cancel: Cancel) -> Result<ProbeEnv, String> {
        let trust = if cfg.insecure || !https {
            None
        } else {
            Some(Arc::new(TrustStore::load(cfg.ca_file.as_deref())?))
        };
        Ok(ProbeEnv { cancel, trust })
    }

    /// An environment whose anchors are given rather than loaded (`-k` still
    /// wins: nothing is verified then).
    pub fn with_trust(cfg: &Config, cancel: Cancel, store: TrustStore) -> ProbeEnv {
        let trust = (!cfg.insecure && cfg.target.https).then(|| Arc::new(store));
        ProbeEnv { cancel, trust }
    }
}
