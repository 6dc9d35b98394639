//! `Retry-After` (RFC 9110: delay-seconds or an HTTP-date), read by us:
//! libcurl's `CURLINFO_RETRY_AFTER` gives 0 both for "now" and for a value
//! it could not read, and a warning must not call the second "0s".

use std::time::SystemTime;

/// The most of a value kept while the transfer runs (in place, no
/// allocation): an HTTP-date is 29 bytes, so anything longer is unreadable.
pub(super) const VALUE_MAX: usize = 40;

/// A `Retry-After` header's value (RFC 9110: delay-seconds or an HTTP-date).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// Seconds to wait; 0 for "now" and for a date already past.
    Seconds(u32),
    /// Neither a number of seconds that fits nor an HTTP-date. libcurl
    /// reports 0 for such a value, which would read as "now".
    Unreadable,
}

impl RetryAfter {
    /// Reads a header value (surrounding blanks already trimmed) as of `now`.
    pub fn parse(value: &[u8], now: std::time::SystemTime) -> RetryAfter {
        if !value.is_empty() && value.iter().all(u8::is_ascii_digit) {
            return std::str::from_utf8(value)
                .ok()
                .and_then(|digits| digits.parse::<u32>().ok())
                .map_or(RetryAfter::Unreadable, RetryAfter::Seconds);
        }
        let date = std::str::from_utf8(value)
            .ok()
            .and_then(|text| httpdate::parse_http_date(text).ok());
        match date {
            Some(date) => {
                let wait = date.duration_since(now).map_or(0, |d| d.as_secs());
                RetryAfter::Seconds(u32::try_from(wait).unwrap_or(u32::MAX))
            }
            None => RetryAfter::Unreadable,
        }
    }
}

/// A header's value as received, held in place during the transfer and
/// read once it is over.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawValue {
    bytes: [u8; VALUE_MAX],
    /// `None`: longer than `VALUE_MAX`.
    len: Option<u8>,
}

impl RawValue {
    /// The value of a `Retry-After:` line without its name, blanks trimmed.
    pub(crate) fn of(value: &[u8]) -> RawValue {
        let value = value.trim_ascii();
        let mut bytes = [0u8; VALUE_MAX];
        let len = (value.len() <= VALUE_MAX).then(|| {
            bytes[..value.len()].copy_from_slice(value);
            value.len() as u8
        });
        RawValue { bytes, len }
    }

    pub(crate) fn read(&self, now: SystemTime) -> RetryAfter {
        match self.len {
            Some(len) => RetryAfter::parse(&self.bytes[..usize::from(len)], now),
            None => RetryAfter::Unreadable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn read(value: &str) -> RetryAfter {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_000);
        RawValue::of(value.as_bytes()).read(now)
    }

    #[test]
    fn seconds_and_dates_are_read_and_the_rest_is_unreadable() {
        assert_eq!(read(" 120\r\n"), RetryAfter::Seconds(120));
        assert_eq!(read("0"), RetryAfter::Seconds(0));
        // 2015-10-21 07:28:00 is 480 s after `now`; a past date means now.
        assert_eq!(
            read("Wed, 21 Oct 2015 07:28:00 GMT"),
            RetryAfter::Seconds(480)
        );
        assert_eq!(
            read("Wed, 21 Oct 2015 07:00:00 GMT"),
            RetryAfter::Seconds(0)
        );
        for bad in [
            "",
            "soon",
            "-5",
            "1.5",
            "99999999999999999999999",
            "4294967296",
            "Wed, 21 Oct 2015 07:28:00 GMT and then some more text",
        ] {
            assert_eq!(read(bad), RetryAfter::Unreadable, "{bad:?}");
        }
    }
}
