//! OCSP stapling: every handshake asks the server for its stapled OCSP
//! response (the `status_request` extension), a full handshake's staple is
//! taken off the connection while it is live (OpenSSL's side of both is
//! `curl_ffi::ocsp_staple`), and it is judged for the leaf certificate once
//! the transfer is over, outside every timed interval.
//!
//! libcurl's own check (CURLOPT_SSL_VERIFYSTATUS) is not used: it fails the
//! transfer when nothing is stapled, and a diagnostic reports that instead.

use openssl::hash::MessageDigest;
use openssl::ocsp::{
    OcspCertId, OcspCertStatus, OcspFlag, OcspResponse, OcspResponseRef, OcspResponseStatus,
};
use openssl::ssl::SslRef;
use openssl::stack::Stack;
use openssl::x509::store::{X509StoreBuilder, X509StoreRef};
use openssl::x509::{X509Ref, X509VerifyResult, X509};

use super::curl_ffi;

/// The OCSP response a server stapled to a full handshake, as judged for its
/// leaf certificate. The slugs are part of the JSON/CSV schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OcspStaple {
    /// The server sent no OCSP response.
    NotStapled,
    /// A verified, current response says the leaf is good...
    Good,
    /// ...revoked...
    Revoked,
    /// ...or unknown to its responder.
    Unknown,
    /// Verified and about the leaf, but outside its thisUpdate..nextUpdate window.
    Stale,
    /// Its signature or its signer could not be checked against the trust
    /// anchors (or the leaf's issuer was not at hand to check it with).
    Unverified,
    /// Verified, but about other certificates than the leaf.
    WrongCert,
    /// An OCSP response without an answer: a responder error, or no basic
    /// response. (Bytes that are no OCSP response at all make OpenSSL end
    /// the handshake, so they never get here.)
    Malformed,
}

impl OcspStaple {
    /// Every value, in declaration order.
    pub const ALL: [OcspStaple; 8] = [
        OcspStaple::NotStapled,
        OcspStaple::Good,
        OcspStaple::Revoked,
        OcspStaple::Unknown,
        OcspStaple::Stale,
        OcspStaple::Unverified,
        OcspStaple::WrongCert,
        OcspStaple::Malformed,
    ];

    pub fn stapled(self) -> bool {
        self != OcspStaple::NotStapled
    }

    /// The stable name of what was stapled (`ocsp_status`); `None` when nothing was.
    pub fn status(self) -> Option<&'static str> {
        Some(match self {
            OcspStaple::NotStapled => return None,
            OcspStaple::Good => "good",
            OcspStaple::Revoked => "revoked",
            OcspStaple::Unknown => "unknown",
            OcspStaple::Stale => "stale",
            OcspStaple::Unverified => "unverified",
            OcspStaple::WrongCert => "wrong_cert",
            OcspStaple::Malformed => "malformed",
        })
    }
}

/// Clock difference tolerated at either end of a response's validity
/// window, as OpenSSL's own `ocsp` tool allows by default.
const CLOCK_SKEW_SECS: u32 = 5 * 60;

/// How many certificates that may have issued the leaf are kept: three of
/// the chain the server sent after its leaf, and the verifier's choice.
const ISSUER_CANDIDATES: usize = 4;

/// What a full handshake's server stapled, taken off the live connection:
/// the response itself and the certificates that may have issued the leaf
/// (counted references), which name the leaf in the response and may have
/// signed it. Taking them costs no allocation and no encoding inside the
/// probe's timed interval; everything else waits for `judge`.
#[derive(Default)]
pub struct TakenStaple {
    /// `None`: no full handshake was read on this transfer.
    taken: Option<Option<OcspResponse>>,
    issuers: [Option<X509>; ISSUER_CANDIDATES],
}

impl TakenStaple {
    /// Forgets the previous transfer's staple.
    pub fn clear(&mut self) {
        self.taken = None;
        self.issuers = Default::default();
    }

    /// Takes what the server stapled to the handshake `ssl` just completed.
    /// Called from a libcurl callback while the connection is live.
    pub fn take_from(&mut self, ssl: &SslRef) {
        self.clear();
        let response = curl_ffi::take_first_response(ssl);
        if response.is_some() {
            let [sent @ .., verified] = &mut self.issuers;
            if let Some(chain) = ssl.peer_cert_chain() {
                for (i, slot) in sent.iter_mut().enumerate() {
                    *slot = chain.get(i + 1).map(ToOwned::to_owned);
                }
            }
            *verified = ssl
                .verified_chain()
                .and_then(|v| v.get(1))
                .map(ToOwned::to_owned);
        }
        self.taken = Some(response);
    }

    /// The verdict on the staple for `leaf`: its signature checked against
    /// `anchors` (with `None`, `-k`, only against the signer's own key), then
    /// the leaf's entry and its validity window. `None` when no full
    /// handshake was read.
    pub fn judge(
        &self,
        leaf: Option<&X509Ref>,
        anchors: Option<&X509StoreRef>,
    ) -> Option<OcspStaple> {
        let Some(response) = self.taken.as_ref()? else {
            return Some(OcspStaple::NotStapled);
        };
        let issuer = leaf.and_then(|leaf| {
            self.issuers
                .iter()
                .flatten()
                .find(|c| c.issued(leaf) == X509VerifyResult::OK)
        });
        Some(verdict(response, leaf, issuer.map(|c| &**c), anchors))
    }
}

fn verdict(
    response: &OcspResponseRef,
    leaf: Option<&X509Ref>,
    issuer: Option<&X509Ref>,
    anchors: Option<&X509StoreRef>,
) -> OcspStaple {
    if response.status() != OcspResponseStatus::SUCCESSFUL {
        return OcspStaple::Malformed;
    }
    let Ok(basic) = response.basic() else {
        return OcspStaple::Malformed;
    };
    let (Some(leaf), Some(issuer)) = (leaf, issuer) else {
        return OcspStaple::Unverified;
    };
    if !signature_holds(&basic, issuer, anchors) {
        return OcspStaple::Unverified;
    }
    // Responders name certificates by SHA-1 hashes (RFC 5019) or SHA-256.
    let status = [MessageDigest::sha1(), MessageDigest::sha256()]
        .into_iter()
        .filter_map(|md| OcspCertId::from_cert(md, leaf, issuer).ok())
        .find_map(|id| {
            basic.find_status(&id).map(|s| {
                let current = s.check_validity(CLOCK_SKEW_SECS, None).is_ok();
                (s.status, current)
            })
        });
    match status {
        None => OcspStaple::WrongCert,
        Some((_, false)) => OcspStaple::Stale,
        Some((OcspCertStatus::GOOD, true)) => OcspStaple::Good,
        Some((OcspCertStatus::REVOKED, true)) => OcspStaple::Revoked,
        Some(_) => OcspStaple::Unknown,
    }
}

/// OpenSSL's check of a basic response (`OCSP_basic_verify`): the signer is
/// found among the response's certificates and the leaf's issuer, the
/// signature must verify with its key, and, given anchors, the signer must
/// chain to them and be the issuer or a responder it delegated to.
fn signature_holds(
    basic: &openssl::ocsp::OcspBasicResponseRef,
    issuer: &X509Ref,
    anchors: Option<&X509StoreRef>,
) -> bool {
    let Ok(mut certs) = Stack::new() else {
        return false;
    };
    if certs.push(issuer.to_owned()).is_err() {
        return false;
    }
    match anchors {
        Some(store) => basic.verify(&certs, store, OcspFlag::empty()).is_ok(),
        None => {
            // `-k`: no anchors to chain the signer to; the signature itself
            // is still checked. The store is required but never consulted.
            let Ok(empty) = X509StoreBuilder::new() else {
                return false;
            };
            basic
                .verify(&certs, &empty.build(), OcspFlag::NO_VERIFY)
                .is_ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(der: &[u8]) -> TakenStaple {
        TakenStaple {
            taken: Some(Some(OcspResponse::from_der(der).unwrap())),
            ..TakenStaple::default()
        }
    }

    #[test]
    fn nothing_read_is_no_verdict_and_nothing_stapled_is_said() {
        let mut staple = TakenStaple::default();
        assert_eq!(staple.judge(None, None), None);
        staple.taken = Some(None);
        assert_eq!(staple.judge(None, None), Some(OcspStaple::NotStapled));
        staple.clear();
        assert_eq!(staple.judge(None, None), None);
    }

    #[test]
    fn a_responder_error_or_a_response_without_an_answer_is_malformed() {
        // OCSPResponse { responseStatus tryLater (3) }: an error, no answer.
        let try_later = [0x30, 0x03, 0x0a, 0x01, 0x03];
        // OCSPResponse { responseStatus successful (0) } without responseBytes.
        let empty = [0x30, 0x03, 0x0a, 0x01, 0x00];
        for der in [&try_later, &empty] {
            assert_eq!(
                taken(der).judge(None, None),
                Some(OcspStaple::Malformed),
                "{der:?}"
            );
        }
    }
}
