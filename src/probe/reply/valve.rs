//! The safety valves: why a run stops before its count, as data. The
//! scheduler and the preflight decide; `render::warnings` words them.

use super::retry_after::RetryAfter;

/// A reason to stop probing a server that the run itself cannot overrule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Valve {
    /// The server answered 429 Too Many Requests: it rate-limits us (and
    /// said for how long, when it sent a `Retry-After`).
    TooManyRequests(Option<RetryAfter>),
    /// The server answered 503 with a `Retry-After`: it asked clients to
    /// back off (for this long, when the value could be read).
    BackOff(RetryAfter),
    /// This many probes of a run without a comparison failed in a row.
    ConsecutiveFailures(u32),
    /// Every variant of a comparison had this many probes fail in a row.
    EveryVariantFailing(u32),
    /// Every variant of a comparison was left out of the rounds, some of
    /// them because their own server asked to back off (`--compare
    /// target=`, where each target is a service of its own).
    EveryVariantLeftOut,
}

impl Valve {
    /// The valve an answer trips: the server asked clients to slow down
    /// (429) or to back off (503 with `Retry-After`).
    pub fn tripped_by(status: u16, retry_after: Option<RetryAfter>) -> Option<Valve> {
        match (status, retry_after) {
            (429, asked) => Some(Valve::TooManyRequests(asked)),
            (503, Some(asked)) => Some(Valve::BackOff(asked)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_429_and_a_503_that_asks_for_a_pause_trip_a_valve() {
        let seconds = Some(RetryAfter::Seconds(30));
        assert_eq!(
            Valve::tripped_by(429, None),
            Some(Valve::TooManyRequests(None))
        );
        assert_eq!(
            Valve::tripped_by(429, seconds),
            Some(Valve::TooManyRequests(seconds))
        );
        assert_eq!(
            Valve::tripped_by(503, seconds),
            Some(Valve::BackOff(RetryAfter::Seconds(30)))
        );
        assert_eq!(
            Valve::tripped_by(503, Some(RetryAfter::Unreadable)),
            Some(Valve::BackOff(RetryAfter::Unreadable))
        );
        assert_eq!(Valve::tripped_by(503, None), None);
        assert_eq!(Valve::tripped_by(200, seconds), None);
    }
}
