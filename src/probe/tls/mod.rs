pub(super) mod anatomy;
pub(super) mod cert_text;
pub mod handshake_messages;
pub(super) mod handshake_stamps;
pub(super) mod live_tls;
pub(super) mod trust;

use super::curl_ffi;
use super::data::{stages, types};
use super::reply::ocsp;
