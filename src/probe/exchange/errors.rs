//! Turning libcurl's result code, the OS errno and the certificate check's
//! verdict into one stable `ErrorKind`.

use super::curl_ffi::codes;
use super::types::ErrorKind;

// errno values (Linux; the same on the BSDs for these).
const ECONNREFUSED: i32 = libc_errno::ECONNREFUSED;
const ECONNRESET: i32 = libc_errno::ECONNRESET;
const ENETUNREACH: i32 = libc_errno::ENETUNREACH;
const EHOSTUNREACH: i32 = libc_errno::EHOSTUNREACH;
const EPIPE: i32 = libc_errno::EPIPE;

#[cfg(target_os = "linux")]
mod libc_errno {
    pub const EPIPE: i32 = 32;
    pub const ENETUNREACH: i32 = 101;
    pub const ECONNRESET: i32 = 104;
    pub const ECONNREFUSED: i32 = 111;
    pub const EHOSTUNREACH: i32 = 113;
}

#[cfg(not(target_os = "linux"))]
mod libc_errno {
    pub const EPIPE: i32 = 32;
    pub const ENETUNREACH: i32 = 51;
    pub const ECONNRESET: i32 = 54;
    pub const ECONNREFUSED: i32 = 61;
    pub const EHOSTUNREACH: i32 = 65;
}

// X509_V_ERR_* from OpenSSL's x509_vfy.h.
const X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT: i64 = 2;
const X509_V_ERR_CERT_NOT_YET_VALID: i64 = 9;
const X509_V_ERR_CERT_HAS_EXPIRED: i64 = 10;
const X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: i64 = 18;
const X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN: i64 = 19;
const X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY: i64 = 20;
const X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE: i64 = 21;
const X509_V_ERR_HOSTNAME_MISMATCH: i64 = 62;

/// Everything the classification looks at, separated from libcurl so it can be unit-tested.
#[derive(Clone, Copy, Debug)]
pub struct Evidence<'a> {
    pub code: codes::CURLcode,
    pub os_errno: i32,
    pub verify_result: i64,
    pub status: u16,
    pub text: &'a str,
    /// A connection was established (libcurl's connect timer is set). The
    /// OS errno libcurl reports is the last one any socket of the transfer
    /// set: once connected, a refusal or an unreachable route in it belongs
    /// to an earlier address that failed, not to what failed in the end.
    pub connected: bool,
}

pub fn kind_of(e: &Evidence) -> ErrorKind {
    use codes as c;
    let by_errno = || match e.os_errno {
        ECONNREFUSED if !e.connected => Some(ErrorKind::ConnRefused),
        ECONNRESET => Some(ErrorKind::ConnReset),
        ENETUNREACH | EHOSTUNREACH if !e.connected => Some(ErrorKind::Unreachable),
        EPIPE => Some(ErrorKind::ConnClosed),
        _ => None,
    };
    let lower = e.text.to_ascii_lowercase();
    match e.code {
        c::CURLE_OPERATION_TIMEDOUT => ErrorKind::Timeout,
        c::CURLE_ABORTED_BY_CALLBACK => ErrorKind::Canceled,
        c::CURLE_COULDNT_RESOLVE_HOST => ErrorKind::DnsFail,
        c::CURLE_COULDNT_CONNECT => by_errno().unwrap_or(ErrorKind::ConnRefused),
        c::CURLE_PEER_FAILED_VERIFICATION => match e.verify_result {
            X509_V_ERR_CERT_HAS_EXPIRED => ErrorKind::CertExpired,
            X509_V_ERR_HOSTNAME_MISMATCH => ErrorKind::CertName,
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
            | X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
            | X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
            | X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
            | X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE => ErrorKind::CertUnknownCa,
            X509_V_ERR_CERT_NOT_YET_VALID => ErrorKind::CertInvalid,
            // libcurl checks the host name itself, after OpenSSL accepted the
            // chain; the verdict then still reads 0, or 1 (X509_V_ERR_UNSPECIFIED,
            // libcurl's initial value, which curl 8.22 leaves in place).
            _ if lower.contains("subject name") || lower.contains("does not match") => {
                ErrorKind::CertName
            }
            _ => ErrorKind::CertInvalid,
        },
        c::CURLE_SSL_CONNECT_ERROR => match by_errno() {
            // The peer went away mid-handshake: a reset, or a write after its
            // close ("Send failure: Broken pipe").
            Some(kind @ (ErrorKind::ConnReset | ErrorKind::ConnClosed)) => kind,
            _ if lower.contains("unexpected eof")
                || lower.contains("syscall")
                || lower.contains("broken pipe") =>
            {
                ErrorKind::ConnClosed
            }
            _ => ErrorKind::TlsError,
        },
        c::CURLE_SSL_CACERT_BADFILE
        | c::CURLE_SSL_CERTPROBLEM
        | c::CURLE_SSL_CIPHER
        | c::CURLE_SSL_ENGINE_NOTFOUND => ErrorKind::TlsError,
        c::CURLE_GOT_NOTHING => ErrorKind::ConnClosed,
        c::CURLE_PARTIAL_FILE | c::CURLE_BAD_CONTENT_ENCODING => ErrorKind::BodyError,
        c::CURLE_RECV_ERROR | c::CURLE_SEND_ERROR | c::CURLE_HTTP2 | c::CURLE_HTTP2_STREAM => {
            match by_errno() {
                Some(kind) => kind,
                None if lower.contains("unexpected eof") => {
                    if e.status > 0 {
                        ErrorKind::BodyError
                    } else {
                        ErrorKind::ConnClosed
                    }
                }
                // A TLS alert after the handshake, e.g. TLS 1.3's "certificate
                // required" from a server that wants a client certificate:
                // OpenSSL's reason is in the text, the socket itself is fine.
                None if lower.contains(" alert ") || lower.contains("ssl routines::") => {
                    ErrorKind::TlsError
                }
                None if e.status > 0 => ErrorKind::BodyError,
                None => ErrorKind::ConnClosed,
            }
        }
        _ if e.status > 0 => ErrorKind::BodyError,
        _ => ErrorKind::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: codes::CURLcode, errno: i32, verify: i64, status: u16, text: &str) -> ErrorKind {
        kind_of(&Evidence {
            code,
            os_errno: errno,
            verify_result: verify,
            status,
            text,
            connected: false,
        })
    }

    #[test]
    fn a_refusal_of_an_earlier_address_is_not_what_failed_once_connected() {
        // ::1 refused, 127.0.0.1 connected, then the headers ran over
        // libcurl's limit: the errno still says ECONNREFUSED.
        let text = "Failure when receiving data from the peer: Too large response headers";
        let after = |code, errno, status| {
            kind_of(&Evidence {
                code,
                os_errno: errno,
                verify_result: 0,
                status,
                text,
                connected: true,
            })
        };
        use codes as c;
        assert_eq!(
            after(c::CURLE_RECV_ERROR, ECONNREFUSED, 200),
            ErrorKind::BodyError
        );
        assert_eq!(
            after(c::CURLE_RECV_ERROR, ECONNREFUSED, 0),
            ErrorKind::ConnClosed
        );
        assert_eq!(
            after(c::CURLE_HTTP2_STREAM, EHOSTUNREACH, 0),
            ErrorKind::ConnClosed
        );
        assert_eq!(
            after(c::CURLE_SEND_ERROR, ENETUNREACH, 0),
            ErrorKind::ConnClosed
        );
        // What the established connection itself says still counts.
        assert_eq!(
            after(c::CURLE_RECV_ERROR, ECONNRESET, 0),
            ErrorKind::ConnReset
        );
        // Before any connection, a refusal is the refusal.
        assert_eq!(
            ev(c::CURLE_COULDNT_CONNECT, ECONNREFUSED, 0, 0, ""),
            ErrorKind::ConnRefused
        );
    }

    #[test]
    fn connect_failures_follow_errno() {
        assert_eq!(
            ev(codes::CURLE_COULDNT_CONNECT, ECONNREFUSED, 0, 0, ""),
            ErrorKind::ConnRefused
        );
        assert_eq!(
            ev(codes::CURLE_COULDNT_CONNECT, ENETUNREACH, 0, 0, ""),
            ErrorKind::Unreachable
        );
        assert_eq!(
            ev(codes::CURLE_COULDNT_CONNECT, EHOSTUNREACH, 0, 0, ""),
            ErrorKind::Unreachable
        );
    }

    #[test]
    fn certificate_verdicts_map_to_their_kinds() {
        let c = codes::CURLE_PEER_FAILED_VERIFICATION;
        assert_eq!(
            ev(c, 0, X509_V_ERR_CERT_HAS_EXPIRED, 0, ""),
            ErrorKind::CertExpired
        );
        assert_eq!(
            ev(c, 0, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, 0, ""),
            ErrorKind::CertUnknownCa
        );
        assert_eq!(
            ev(c, 0, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, 0, ""),
            ErrorKind::CertUnknownCa
        );
        assert_eq!(
            ev(
                c,
                0,
                0,
                0,
                "SSL: no alternative certificate subject name matches target host name 'x'"
            ),
            ErrorKind::CertName
        );
        assert_eq!(ev(c, 0, 7, 0, "signature failure"), ErrorKind::CertInvalid);
        // curl 8.22 leaves the verdict at X509_V_ERR_UNSPECIFIED (1) when its own
        // host name check fails (seen against a wrong-name test server).
        assert_eq!(
            ev(
                c,
                0,
                1,
                0,
                "SSL peer certificate or SSH remote key was not OK: SSL: no alternative \
                 certificate subject name matches target hostname 'localhost'"
            ),
            ErrorKind::CertName
        );
        assert_eq!(
            ev(
                c,
                0,
                1,
                0,
                "SSL: certificate subject name 'a' does not match target hostname 'b'"
            ),
            ErrorKind::CertName
        );
        assert_eq!(
            ev(c, 0, X509_V_ERR_CERT_NOT_YET_VALID, 0, ""),
            ErrorKind::CertInvalid
        );
    }

    #[test]
    fn handshake_failures_tell_a_vanished_peer_from_a_tls_error() {
        let c = codes::CURLE_SSL_CONNECT_ERROR;
        // Server closed at once; the ClientHello write hit EPIPE.
        assert_eq!(
            ev(
                c,
                EPIPE,
                1,
                0,
                "SSL connect error: Send failure: Broken pipe"
            ),
            ErrorKind::ConnClosed
        );
        assert_eq!(
            ev(c, 0, 1, 0, "SSL connect error: Send failure: Broken pipe"),
            ErrorKind::ConnClosed
        );
        assert_eq!(
            ev(
                c,
                ECONNRESET,
                1,
                0,
                "SSL connect error: Connection reset by peer"
            ),
            ErrorKind::ConnReset
        );
        assert_eq!(
            ev(
                c,
                0,
                1,
                0,
                "TLS connect error: error:0A000126:SSL routines::unexpected eof while reading"
            ),
            ErrorKind::ConnClosed
        );
        // A plaintext answer to the ClientHello, and a TLS 1.2 client-certificate refusal.
        assert_eq!(
            ev(
                c,
                0,
                1,
                0,
                "TLS connect error: error:0A00010B:SSL routines::wrong version number"
            ),
            ErrorKind::TlsError
        );
        assert_eq!(
            ev(
                c,
                0,
                1,
                0,
                "TLS connect error: error:0A000410:SSL routines::ssl/tls alert handshake failure"
            ),
            ErrorKind::TlsError
        );
    }

    #[test]
    fn a_tls_alert_after_the_handshake_is_a_tls_error() {
        // TLS 1.3: the client finishes first; the server's refusal of the
        // missing client certificate arrives as an alert on the first read.
        let text = "Failure when receiving data from the peer: OpenSSL SSL_read: OpenSSL/3.6.3: \
                    error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0";
        assert_eq!(
            ev(codes::CURLE_RECV_ERROR, 0, 0, 0, text),
            ErrorKind::TlsError
        );
        // A plain close stays a close, and after the headers a body error.
        let eof = "OpenSSL SSL_read: error:0A000126:SSL routines::unexpected eof while reading";
        assert_eq!(
            ev(codes::CURLE_RECV_ERROR, 0, 0, 0, eof),
            ErrorKind::ConnClosed
        );
        assert_eq!(
            ev(codes::CURLE_RECV_ERROR, 0, 0, 200, eof),
            ErrorKind::BodyError
        );
    }

    #[test]
    fn transport_errors_distinguish_reset_close_and_body() {
        use codes as c;
        let cases = [
            (c::CURLE_RECV_ERROR, ECONNRESET, 0, ErrorKind::ConnReset),
            (c::CURLE_GOT_NOTHING, 0, 0, ErrorKind::ConnClosed),
            (c::CURLE_PARTIAL_FILE, 0, 200, ErrorKind::BodyError),
            (c::CURLE_RECV_ERROR, 0, 200, ErrorKind::BodyError),
            (c::CURLE_OPERATION_TIMEDOUT, 0, 0, ErrorKind::Timeout),
            (c::CURLE_ABORTED_BY_CALLBACK, 0, 0, ErrorKind::Canceled),
            (c::CURLE_COULDNT_RESOLVE_HOST, 0, 0, ErrorKind::DnsFail),
            (c::CURLE_URL_MALFORMAT, 0, 0, ErrorKind::Error),
        ];
        for (code, errno, status, want) in cases {
            assert_eq!(
                ev(code, errno, 0, status, ""),
                want,
                "code {code}, errno {errno}, status {status}"
            );
        }
    }
}
