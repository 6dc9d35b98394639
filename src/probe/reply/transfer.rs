//! What libcurl can still say about a transfer once `perform` has returned:
//! the answers behind curl's `--write-out` variables that a `Sample` does not
//! carry (content type, sizes, speeds, ids, response headers, the server's
//! certificates as text), and what the output asks to have read (`Capture`).
//! Plain data: `sample::transfer_facts` reads them (through
//! `answers::transfer_facts`) on the easy handle before it is dropped, never
//! inside a timed interval.

/// Response headers kept per probe, at most: enough for any real response,
/// small enough that a hostile one cannot make a sample large.
pub const MAX_HEADERS: usize = 100;
/// Bytes of header names and values kept per probe, at most.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Bytes kept of any other text the server chose (content type, redirect URL).
pub const MAX_TEXT: usize = 8 * 1024;
/// Certificates of the server's chain kept as text, at most.
pub const MAX_CERTS: usize = 10;

/// What the output reads of each transfer beyond the sample's own fields.
/// The default reads nothing: a run without `--write-out` pays for none of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    /// libcurl's answers about the transfer (`TransferFacts`).
    pub facts: bool,
    /// Which response headers to copy.
    pub headers: HeaderCapture,
    /// The certificates the server sent, as curl's `%{certs}` prints them.
    pub certs: bool,
}

impl Capture {
    /// Nothing is read.
    pub fn is_empty(&self) -> bool {
        !self.facts && !self.certs && self.headers == HeaderCapture::None
    }
}

/// Response headers a format reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HeaderCapture {
    #[default]
    None,
    /// Only headers of these names (any case).
    Named(Vec<String>),
    All,
}

impl HeaderCapture {
    pub(crate) fn wants(&self, name: &str) -> bool {
        match self {
            HeaderCapture::None => false,
            HeaderCapture::Named(names) => names.iter().any(|n| n.eq_ignore_ascii_case(name)),
            HeaderCapture::All => true,
        }
    }
}

/// libcurl's account of one transfer, as `curl_easy_getinfo` and the header
/// API give it after `perform`. Numbers are libcurl's own (bytes, bytes per
/// second, microseconds); `None` where libcurl has no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferFacts {
    /// libcurl's result code (`CURLcode`): 0 for a response, also one we
    /// stopped reading at `BODY_CAP` on purpose.
    pub exit_code: i32,
    /// libcurl's own words for a failure (its error buffer, else its text for the code).
    pub error_message: Option<String>,
    /// The URL this probe asked for, as handed to libcurl.
    pub url: String,
    pub url_effective: Option<String>,
    pub method: Option<String>,
    pub scheme: Option<String>,
    pub content_type: Option<String>,
    pub redirect_url: Option<String>,
    pub referer: Option<String>,
    pub local_ip: Option<String>,
    pub local_port: i64,
    pub size_download: i64,
    pub size_delivered: i64,
    pub size_upload: i64,
    pub size_header: i64,
    pub size_request: i64,
    pub speed_download: i64,
    pub speed_upload: i64,
    pub ssl_verify_result: i64,
    pub proxy_ssl_verify_result: i64,
    pub http_connect: i64,
    pub num_redirects: i64,
    pub proxy_used: i64,
    /// libcurl's ids of the connection and of the transfer (-1: none).
    pub conn_id: i64,
    pub xfer_id: i64,
    pub queue_us: i64,
    pub redirect_us: i64,
    /// Bytes sent as TLS early data; negative when the server refused them.
    pub early_data_sent: i64,
    /// Headers of the last response (libcurl's count, not only those kept).
    pub num_headers: u32,
    /// The headers `Capture` asked for, in the order they came, within
    /// `MAX_HEADERS` and `MAX_HEADER_BYTES`.
    pub headers: Vec<(String, String)>,
    /// Each certificate the server sent in this probe's own handshake, as
    /// curl's certificate info prints it (at most `MAX_CERTS`).
    pub certs: Vec<String>,
}

impl TransferFacts {
    /// What curl reports for a transfer that never started: no ids, nothing
    /// counted. A probe that failed in our own lookup, before libcurl ran,
    /// has this.
    pub const NOT_STARTED: TransferFacts = TransferFacts {
        exit_code: 0,
        error_message: None,
        url: String::new(),
        url_effective: None,
        method: None,
        scheme: None,
        content_type: None,
        redirect_url: None,
        referer: None,
        local_ip: None,
        local_port: 0,
        size_download: 0,
        size_delivered: 0,
        size_upload: 0,
        size_header: 0,
        size_request: 0,
        speed_download: 0,
        speed_upload: 0,
        ssl_verify_result: 0,
        proxy_ssl_verify_result: 0,
        http_connect: 0,
        num_redirects: 0,
        proxy_used: 0,
        conn_id: -1,
        xfer_id: -1,
        queue_us: 0,
        redirect_us: 0,
        early_data_sent: 0,
        num_headers: 0,
        headers: Vec::new(),
        certs: Vec::new(),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_headers_match_without_regard_to_case() {
        let named = HeaderCapture::Named(vec!["server".into()]);
        assert!(named.wants("Server"));
        assert!(!named.wants("date"));
        assert!(HeaderCapture::All.wants("date"));
        assert!(!HeaderCapture::None.wants("server"));
        assert!(Capture::default().is_empty());
    }
}
