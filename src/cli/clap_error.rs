//! A usage error clap found, as the one line we print: clap's sentence,
//! then what its error context holds that clap would put on lines of
//! their own (the arguments missing or in conflict, the values a flag
//! takes, its guess at what was meant).

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The one line for `e` (without `error: `).
pub(super) fn one_line(e: &clap::Error) -> String {
    // clap's sentence is the first line of its rendering (the lines after
    // it say again what the context holds, read below).
    let rendered = e.render().to_string();
    let sentence = rendered
        .lines()
        .next()
        .unwrap_or("invalid usage")
        .trim_start_matches("error: ");
    let mut line = sentence.to_string();
    // A flag that needs another (`--key`, `--csv-time-first`), or that
    // cannot go with several others: the sentence ends in a colon, and the
    // one line has to name them.
    let named = match e.kind() {
        ErrorKind::MissingRequiredArgument => strings(e, ContextKind::InvalidArg),
        ErrorKind::ArgumentConflict => strings(e, ContextKind::PriorArg),
        _ => &[],
    };
    if !named.is_empty() {
        line = format!("{line} {}", named.join(", "));
    }
    // A value not among a flag's values (`-m`, `--order`, `--resume`,
    // `--generate`): the one line names them.
    let values = strings(e, ContextKind::ValidValue);
    if !values.is_empty() {
        line = format!("{line}: not one of {}", values.join(", "));
    }
    // A misspelt flag or value: clap's guess, when it has one.
    match guess(e) {
        Some(guess) => format!("{line} ({guess})"),
        None => line,
    }
}

/// A list in `e`'s context (none when it holds no list of that kind).
fn strings(e: &clap::Error, kind: ContextKind) -> &[String] {
    match e.get(kind) {
        Some(ContextValue::Strings(list)) => list,
        _ => &[],
    }
}

/// clap's one guess at the argument or value meant, in its words (`a
/// similar argument exists: '--interval'`); none when it has several or none.
fn guess(e: &clap::Error) -> Option<String> {
    [
        (ContextKind::SuggestedArg, "argument"),
        (ContextKind::SuggestedValue, "value"),
    ]
    .into_iter()
    .find_map(|(kind, what)| {
        let one = match e.get(kind)? {
            ContextValue::String(one) => one,
            ContextValue::Strings(list) if list.len() == 1 => &list[0],
            _ => return None,
        };
        Some(format!("a similar {what} exists: '{one}'"))
    })
}
