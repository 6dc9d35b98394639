//! Pairing probes by round: the interleaving puts the probes a comparison
//! needs into the same round, so their differences are taken round by round,
//! in one pass over records that are already in round order.

use crate::probe::{Mode, Stage};

use super::delta::Delta;
use super::record::Record;

/// Per-round (cold − warm) totals, over rounds where both
/// modes were timed, ascending. A round with several probes of a mode (the
/// variants of `--compare`, in the overall summary) counts once, with the
/// last of each mode.
pub(super) fn paired_differences<'a>(
    records: impl Iterator<Item = &'a Record> + Clone,
) -> Vec<Delta> {
    let totals = |mode: Mode| {
        records
            .clone()
            .filter(move |r| r.mode() == mode && r.timed())
            .filter_map(|r| Some((r.round(), r.stages().get(Stage::Total)?)))
    };
    let mut n = 0;
    join_by_round(totals(Mode::Cold), totals(Mode::Warm), |_, _| n += 1);
    let mut diffs = Vec::with_capacity(n);
    join_by_round(totals(Mode::Cold), totals(Mode::Warm), |c, w| {
        diffs.push(Delta::from_us(i64::from(c) - i64::from(w)))
    });
    diffs.sort_unstable();
    diffs
}

/// The last value of each round of a stream in round order.
fn last_per_round(pairs: impl Iterator<Item = (u32, u32)>) -> impl Iterator<Item = (u32, u32)> {
    let mut pairs = pairs.peekable();
    std::iter::from_fn(move || {
        let (round, mut value) = pairs.next()?;
        while let Some((_, later)) = pairs.next_if(|&(r, _)| r == round) {
            value = later;
        }
        Some((round, value))
    })
}

/// `f(x, y)` for every round that both streams have, each stream in round
/// order (as records are, see `History::push`) and taken at the last value
/// of each round. One pass, nothing held but the two current values.
pub(super) fn join_by_round(
    xs: impl Iterator<Item = (u32, u32)>,
    ys: impl Iterator<Item = (u32, u32)>,
    mut f: impl FnMut(u32, u32),
) {
    let (mut xs, mut ys) = (last_per_round(xs).peekable(), last_per_round(ys).peekable());
    while let (Some(&(rx, x)), Some(&(ry, y))) = (xs.peek(), ys.peek()) {
        match rx.cmp(&ry) {
            std::cmp::Ordering::Less => {
                xs.next();
            }
            std::cmp::Ordering::Greater => {
                ys.next();
            }
            std::cmp::Ordering::Equal => {
                f(x, y);
                xs.next();
                ys.next();
            }
        }
    }
}
