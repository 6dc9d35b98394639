//! One exchange on libcurl: the probe handle and its handler watching a
//! transfer, what libcurl answers after it, its error kinds, the `Sample`
//! made of it, what every probe of a run shares; and the push, one PUT of
//! its own. Floor 6 of `probe`: imports every floor below it, none above.

mod answers;
pub(super) mod collector;
pub(super) mod env;
mod errors;
pub(super) mod handle;
pub(super) mod push;
pub(super) mod sample;

// What the files here name as `super::x` from the floors below.
use super::curl_ffi;
use super::data::types;
use super::reply::{ocsp, retry_after, server_timing, transfer};
use super::settings::{cancel, config};
use super::tls::{anatomy, cert_text, handshake_shape, live_tls, transfer_stamps, trust};
