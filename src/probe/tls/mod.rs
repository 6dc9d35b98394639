//! The TLS handshake: its messages read from the bytes, our own time in
//! it, its anatomy (why it cost what it did), the live connection's
//! facts, the certificates as curl describes them, and the trust store.
//! Floor 5 of `probe`: imports `curl_ffi`, `reply` and `data`.

pub(super) mod anatomy;
pub(super) mod cert_text;
pub mod handshake_messages;
pub(super) mod handshake_shape;
pub(super) mod handshake_stamps;
pub(super) mod live_tls;
pub(super) mod transfer_stamps;
pub(super) mod trust;

// What the files here name as `super::x` from the floors below.
use super::curl_ffi;
use super::data::{stages, types};
use super::reply::ocsp;
