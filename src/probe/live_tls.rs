//! What a callback reads off the live TLS connection once its handshake is
//! done (`curl_ffi::LiveHandle::with_new_handshake` lends it): the facts,
//! the server's certificates as counted references, examined once the
//! transfer is over, and a full handshake's OCSP staple.

use openssl::ssl::SslRef;
use openssl::x509::X509;

use super::curl_ffi;
use super::ocsp::TakenStaple;
use super::types::{Proto, TlsFacts};

/// Names of key-exchange groups, kept for the whole run: there are only a
/// handful, and a `&'static str` keeps `TlsFacts` small and `Copy`.
fn intern(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// What a callback reads off the live TLS connection: the facts, and the
/// server's leaf certificate (a counted reference) to examine after the transfer.
pub(super) struct LiveTls {
    pub facts: TlsFacts,
    pub leaf: Option<X509>,
}

/// The facts of the handshake `ssl` just completed. A full handshake's
/// OCSP staple is taken into `staple`; `chain` receives counted references
/// to the certificates the server sent, as many as fit in the room it
/// already has (none without room), so nothing is allocated here.
pub(super) fn read(ssl: &SslRef, chain: &mut Vec<X509>, staple: &mut TakenStaple) -> LiveTls {
    // Copied (interned) at once: the name is the connection's.
    let group = curl_ffi::group_name(ssl).map(|name| intern(&name.to_string_lossy()));
    let facts = TlsFacts {
        version: ssl.version_str(),
        alpn: ssl.selected_alpn_protocol().and_then(Proto::from_alpn),
        resumed: ssl.session_reused(),
        // A resumed handshake carries no certificates at all: that is 0, not unknown.
        chain_len: match ssl.peer_cert_chain() {
            Some(chain) => Some(chain.len().min(255) as u8),
            None if ssl.session_reused() => Some(0),
            None => None,
        },
        cipher: ssl.current_cipher().map(|c| c.name()).unwrap_or(""),
        group,
        cert_days_left: None,
        cert_expired: false,
        cert_not_after: None,
        ocsp: None,
        ticket_early_data: None,
    };
    if !facts.resumed {
        staple.take_from(ssl);
    }
    if let Some(sent) = ssl.peer_cert_chain() {
        let room = chain.capacity() - chain.len();
        chain.extend(sent.iter().take(room).map(|c| c.to_owned()));
    }
    // A counted reference: examining the certificate waits until the transfer is over.
    LiveTls {
        facts,
        leaf: ssl.peer_certificate(),
    }
}
