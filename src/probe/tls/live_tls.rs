//! What a callback reads off the live TLS connection once its handshake is
//! done (`curl_ffi::LiveHandle::with_new_handshake` lends it): the facts,
//! the server's certificates as counted references, examined once the
//! transfer is over, and a full handshake's OCSP staple.

use openssl::ssl::SslRef;
use openssl::x509::X509;

use super::curl_ffi;
use super::ocsp::TakenStaple;
use super::types::{Proto, TlsFacts};

/// Every key-exchange group the OpenSSL built in can negotiate, as
/// `group_spelling` spells it: the TLS groups of its default provider
/// (`providers/common/capabilities.c`), aliases included. A fixed table,
/// so a negotiated group is named by a `&'static str` of its own and
/// `TlsFacts` stays small and `Copy` without keeping a copy of any name.
const OPENSSL_GROUPS: &[&str] = &[
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "SecP384r1MLKEM1024",
    "MLKEM512",
    "MLKEM768",
    "MLKEM1024",
    "X25519",
    "X448",
    "P-256",
    "P-384",
    "P-521",
    "ffdhe2048",
    "ffdhe3072",
    "ffdhe4096",
    "ffdhe6144",
    "ffdhe8192",
    "brainpoolP256r1",
    "brainpoolP384r1",
    "brainpoolP512r1",
    "brainpoolP256r1tls13",
    "brainpoolP384r1tls13",
    "brainpoolP512r1tls13",
    "sect163k1",
    "K-163",
    "sect163r1",
    "sect163r2",
    "B-163",
    "sect193r1",
    "sect193r2",
    "sect233k1",
    "K-233",
    "sect233r1",
    "B-233",
    "sect239k1",
    "sect283k1",
    "K-283",
    "sect283r1",
    "B-283",
    "sect409k1",
    "K-409",
    "sect409r1",
    "B-409",
    "sect571k1",
    "K-571",
    "sect571r1",
    "B-571",
    "secp160k1",
    "secp160r1",
    "secp160r2",
    "secp192k1",
    "secp192r1",
    "P-192",
    "secp224k1",
    "secp224r1",
    "P-224",
    "secp256k1",
];

/// The negotiated group OpenSSL calls `name`, as the table spells it;
/// `None` for a group outside it (only a provider loaded from outside the
/// binary, through an OpenSSL configuration file, could add one).
fn known_group(name: &str) -> Option<&'static str> {
    let spelled = group_spelling(name);
    OPENSSL_GROUPS.iter().copied().find(|&g| g == spelled)
}

/// A negotiated group's name as `--curves` documents it (and the help,
/// `--compare group=`'s labels, and the anatomy's names of the groups a
/// server asks for, `handshake_messages::group_name`): OpenSSL names the
/// two Edwards curves in lower case and the NIST curves by their SEC names,
/// and every other group as `--curves` spells it already. So `tls_group`,
/// the metrics' `group` label and `-v` say `P-256` where `--curves P-256`
/// asked for it.
pub(super) fn group_spelling(name: &str) -> &str {
    match name {
        "x25519" => "X25519",
        "x448" => "X448",
        "secp256r1" | "prime256v1" => "P-256",
        "secp384r1" => "P-384",
        "secp521r1" => "P-521",
        other => other,
    }
}

/// What a callback reads off the live TLS connection: the facts, and the
/// server's leaf certificate (a counted reference) to examine after the transfer.
pub(crate) struct LiveTls {
    pub facts: TlsFacts,
    pub leaf: Option<X509>,
}

/// The facts of the handshake `ssl` just completed. A full handshake's
/// OCSP staple is taken into `staple`; `chain` receives counted references
/// to the certificates the server sent, as many as fit in the room it
/// already has (none without room), so nothing is allocated here.
pub(crate) fn read(ssl: &SslRef, chain: &mut Vec<X509>, staple: &mut TakenStaple) -> LiveTls {
    // Looked up at once: the name is the connection's.
    let group = curl_ffi::group_name(ssl).and_then(|name| known_group(&name.to_string_lossy()));
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

#[cfg(test)]
mod spelling_tests {
    use super::group_spelling;
    use crate::probe::handshake_messages::group_name;

    #[test]
    fn a_negotiated_group_is_spelt_as_the_groups_a_server_asks_for() {
        // OpenSSL's name of each group (SSL_get0_group_name), and its code
        // point: both sources of a group's name say it alike.
        let openssl = [
            ("secp256r1", 0x0017),
            ("secp384r1", 0x0018),
            ("secp521r1", 0x0019),
            ("x25519", 0x001d),
            ("x448", 0x001e),
            ("ffdhe2048", 0x0100),
            ("X25519MLKEM768", 0x11ec),
            ("SecP256r1MLKEM768", 0x11eb),
            ("MLKEM768", 0x0201),
        ];
        for (name, code) in openssl {
            assert_eq!(Some(group_spelling(name)), group_name(code), "{name}");
        }
        assert_eq!(group_spelling("secp256r1"), "P-256");
    }

    #[test]
    fn every_group_openssl_names_is_in_the_table() {
        use super::{known_group, OPENSSL_GROUPS};
        // Each TLS group this build's OpenSSL knows (as `--curves` checks a
        // name, by setting it on a context) is in the table, under the name
        // OpenSSL gives it, or under its spelling.
        let mut ctx =
            openssl::ssl::SslContextBuilder::new(openssl::ssl::SslMethod::tls_client()).unwrap();
        for name in OPENSSL_GROUPS {
            assert!(ctx.set_groups_list(name).is_ok(), "{name} is no group");
            assert_eq!(known_group(name), Some(*name));
        }
        for (openssl, spelled) in [("x25519", "X25519"), ("secp384r1", "P-384")] {
            assert_eq!(known_group(openssl), Some(spelled));
        }
        assert_eq!(known_group("no-such-group"), None);
    }
}
