//! What a server's reply carries, read into plain data: the
//! `Server-Timing` and `Retry-After` headers, the stapled OCSP response
//! judged, the facts behind `--write-out`, and the safety valve an answer
//! trips. Floor 2 of `probe`: imports only `curl_ffi`.

pub(super) mod ocsp;
pub(super) mod retry_after;
pub mod server_timing;
pub(super) mod transfer;
pub(super) mod valve;

// What the files here name as `super::x` from the floors below.
use super::curl_ffi;
