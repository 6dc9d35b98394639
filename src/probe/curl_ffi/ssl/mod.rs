//! OpenSSL's side of the boundary: the callbacks that stamp a handshake's
//! moments, the OCSP staple asked for and taken off the connection, the
//! run's trust store installed in each SSL_CTX, and a certificate's names
//! and extensions as text. Part of `curl_ffi` (its floor, the lowest of
//! `probe`): it uses libcurl's option setter and clock from there, and
//! nothing outside `curl_ffi`.

pub(super) mod handshake;
pub(super) mod ocsp_staple;
pub(super) mod trust_store;
pub(super) mod x509_text;

// What the files here name as `super::x` from `curl_ffi`.
use super::{monotonic_us, setopt};
