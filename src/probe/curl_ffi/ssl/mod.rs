pub(super) mod handshake;
pub(super) mod ocsp_staple;
pub(super) mod trust_store;
pub(super) mod x509_text;

use super::setopt;

use super::monotonic_us;
