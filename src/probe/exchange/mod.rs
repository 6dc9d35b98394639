mod answers;
pub(super) mod collector;
pub(super) mod env;
mod errors;
pub(super) mod handle;
pub(super) mod push;
pub(super) mod sample;

use super::curl_ffi;
use super::data::types;
use super::reply::{ocsp, retry_after, server_timing, transfer};
use super::settings::{cancel, config};
use super::tls::{anatomy, cert_text, handshake_stamps, live_tls, trust};
