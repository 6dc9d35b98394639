pub(super) mod ocsp;
pub(super) mod retry_after;
pub mod server_timing;
pub(super) mod transfer;
pub(super) mod valve;

use super::curl_ffi;
