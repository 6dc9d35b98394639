//! How an example block of the READMEs is compared with what a run
//! printed: the words and columns of every line, once what legitimately
//! changes from run to run is set aside (see `normalise`).

/// One word of a line, at its columns (characters, not bytes).
#[derive(Clone, Debug)]
struct Token {
    /// The word with every number written `N`.
    text: String,
    start: usize,
    end: usize,
    /// Whether a number was replaced: its width may change from run to run.
    numeric: bool,
}

/// A line as it is compared: where it came from, and its words.
#[derive(Debug)]
pub struct Norm {
    /// The line of the block it comes from, 1-based.
    pub line: usize,
    pub source: String,
    tokens: Vec<Token>,
}

/// `word` with every number written `N`: digits with inner dots (`0.05`,
/// `127.0.0.1`, the `1.3` of `TLS1.3`) and a minus sign that starts a
/// word or follows no letter or digit (`-0.57`; the dash of `-/200` is none).
fn numbers_as_n(word: &str) -> String {
    let c: Vec<char> = word.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        let digit_at = |k: usize| c.get(k).is_some_and(char::is_ascii_digit);
        let sign = c[i] == '-' && digit_at(i + 1) && (i == 0 || !c[i - 1].is_alphanumeric());
        if !(digit_at(i) || sign) {
            out.push(c[i]);
            i += 1;
            continue;
        }
        i += 1;
        loop {
            while digit_at(i) {
                i += 1;
            }
            if c.get(i) == Some(&'.') && digit_at(i + 1) {
                i += 1;
            } else {
                break;
            }
        }
        out.push('N');
    }
    out
}

fn tokens(line: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut start = 0;
    for (col, ch) in line.chars().chain([' ']).enumerate() {
        if ch != ' ' {
            if word.is_empty() {
                start = col;
            }
            word.push(ch);
        } else if !word.is_empty() {
            let text = numbers_as_n(&word);
            out.push(Token {
                numeric: text != word,
                text,
                start,
                end: col,
            });
            word.clear();
        }
    }
    out
}

/// The marks of a distribution row, Unicode and ASCII.
const PLOT: &str = "├─┤[█│]·|-#. ";
/// The columns before a distribution row's axis.
const LABEL: usize = 6;

/// A distribution row: a mode's name, then one unbroken run of marks and
/// perhaps, apart from it, the dot of a maximum beyond p95.
pub fn plot_row(line: &str) -> Option<&str> {
    let (label, plot) = line.split_at_checked(LABEL)?;
    let name = label.trim_end();
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphabetic());
    // Any mark may open the run: where min, p25 and the median share a
    // column, the median's wins.
    let runs: Vec<&str> = plot.split(' ').filter(|r| !r.is_empty()).collect();
    let marks = plot.chars().all(|c| PLOT.contains(c))
        && match runs[..] {
            [_] => true,
            [_, dot] => dot == "·" || dot == ".",
            _ => false,
        };
    (is_name && marks).then_some(name)
}

/// The ends of a scale under distribution rows: one or two `N ms` figures.
fn scale_line(line: &str) -> bool {
    let t = tokens(line);
    line.starts_with(&" ".repeat(LABEL))
        && (1..=2).contains(&t.len())
        && t.iter().all(|t| t.text == "Nms")
}

/// The sentences a `--compare` difference can take, numbers written `N`
/// (the 95 of `95%` too), `{v}` the variant and `{b}` the baseline. Which one a stage gets
/// depends on the measured values (a stage the variants do not change can
/// come out either way), so any of them stands for any other.
const VERDICTS: [&str; 7] = [
    "{v} is Nms faster than {b} (N% CI N .. N)",
    "{v} is Nms slower than {b} (N% CI N .. N)",
    "no difference detectable between {v} and {b} (median Nms, N% CI N .. N)",
    "no difference between {v} and {b} (median Nms, N% CI N .. N)",
    "{v} is Nms faster than {b} (too few rounds for an interval)",
    "{v} is Nms slower than {b} (too few rounds for an interval)",
    "no difference between the medians of {v} and {b} (too few rounds for an interval)",
];

/// The variant and baseline labels when `text` is `template` with one word
/// in place of each of `{v}` and `{b}`.
fn fill(template: &str, text: &str) -> Option<(String, String)> {
    let (head, rest) = template.split_once("{v}")?;
    let (middle, tail) = rest.split_once("{b}")?;
    let rest = text.strip_prefix(head)?;
    let (v, rest) = rest.split_once(middle)?;
    let b = rest.strip_suffix(tail)?;
    let word = |s: &str| !s.is_empty() && !s.contains(' ');
    (word(v) && word(b)).then(|| (v.to_string(), b.to_string()))
}

/// `cold tls: <verdict TLSN TLSN>, N rounds` for a difference line (its
/// sentence one of `VERDICTS`); `None` for any other line. A line shaped
/// like a difference whose sentence is none of them stays as it is, and so
/// differs from the README's.
pub fn difference(line: &str) -> Option<String> {
    let (stage, rest) = line.split_once(": ")?;
    let mut words = stage.split(' ');
    let (Some("cold" | "warm"), Some(_), None) = (words.next(), words.next(), words.next()) else {
        return None;
    };
    let (verdict, rounds) = rest.rsplit_once(", ")?;
    if !(rounds.ends_with(" rounds") || rounds == "1 round") {
        return None;
    }
    let verdict = numbers_as_n(verdict);
    let (v, b) = VERDICTS.iter().find_map(|t| fill(t, &verdict))?;
    Some(format!("{stage}: <verdict {v} {b}>, {rounds}"))
}

/// A block's lines as they are compared, and the notes of its pictures.
///
/// What legitimately changes from run to run is set aside here, the same
/// way for the README and for the run:
/// - every number is `N`, and may grow or shrink (see `column_problem`);
/// - a `retrans` row note and the `retransmissions` statistics line: the
///   kernel retransmits when it must, rarely on loopback;
/// - the distribution rows: their marks become `<plot>` (the figures draw
///   them); whether rows share a scale depends on how far apart the
///   figures lie, so the scale lines and the "separate scales" note are
///   checked for their place, not their number (`picture`); the legend's
///   `max beyond p95` item comes with an outlier;
/// - the sentence of a `--compare` difference (`VERDICTS`).
///
/// Everything else (every line, word, column and round mark) is compared.
fn normalise(block: &[String]) -> (Vec<Norm>, Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut problems = Vec::new();
    let mut i = 0;
    while i < block.len() {
        let source = block[i].as_str();
        if source.starts_with("retransmissions ") {
            i += 1;
            continue;
        }
        if plot_row(source).is_some() {
            let (lines, used) = picture(&block[i..], i, &mut notes, &mut problems);
            out.extend(lines);
            i += used;
            continue;
        }
        let line = difference(source).unwrap_or_else(|| {
            let line = source.replace("·retrans", "");
            line.strip_suffix(" retrans").unwrap_or(&line).to_string()
        });
        out.push(Norm {
            line: i + 1,
            source: source.to_string(),
            tokens: tokens(&line),
        });
        i += 1;
    }
    (out, notes, problems)
}

/// One distribution picture from the start of `lines`: runs of rows, each
/// closed by the ends of its scale, then indented text, of which the last
/// line is the legend and any before it the note. Returns the rows as
/// `name <plot>` and the legend, and how many lines the picture took;
/// `offset` is where `lines` start in their block.
pub fn picture(
    lines: &[String],
    offset: usize,
    notes: &mut Vec<String>,
    problems: &mut Vec<String>,
) -> (Vec<Norm>, usize) {
    let mut out = Vec::new();
    let mut i = 0;
    let mut last_was_scale = false;
    while let Some(line) = lines.get(i) {
        if let Some(name) = plot_row(line) {
            out.push(Norm {
                line: offset + i + 1,
                source: line.clone(),
                tokens: tokens(&format!("{name:<LABEL$}<plot>")),
            });
            last_was_scale = false;
        } else if scale_line(line) {
            last_was_scale = true;
        } else {
            break;
        }
        i += 1;
    }
    if !last_was_scale {
        problems.push(format!(
            "line {}: a distribution picture without its scale: {:?}",
            offset + 1,
            &lines[..i]
        ));
    }
    let text = lines[i..]
        .iter()
        .take_while(|l| l.starts_with(&" ".repeat(LABEL)))
        .count();
    let Some((legend, note)) = lines[i..i + text].split_last() else {
        problems.push(format!(
            "line {}: a distribution picture without a legend: {:?}",
            offset + 1,
            &lines[..i]
        ));
        return (out, i);
    };
    notes.extend(note.iter().map(|n| n.trim().to_string()));
    let legend = [", · max beyond p95", ", . max beyond p95"]
        .iter()
        .fold(legend.clone(), |l, item| l.replace(item, ""));
    out.push(Norm {
        line: offset + i + text,
        source: lines[i + text - 1].clone(),
        tokens: tokens(&legend),
    });
    (out, i + text)
}

// -------------------------------------------------------------- comparing

/// Where `got`'s words stand against `want`'s, the same words in both.
/// A word without a number must sit where the README has it, shifted only
/// by numbers that grew or shrank before it on the same line. A number may
/// keep its start (text that flows on after it) or its end (a right-aligned
/// column); either way what follows it shifts with its end.
fn column_problem(want: &[Token], got: &[Token]) -> Option<String> {
    let mut drift: isize = 0;
    for (w, g) in want.iter().zip(got) {
        let at = |a: usize, b: usize| a as isize - b as isize;
        let in_place = at(g.start, w.start) == drift || (w.numeric && at(g.end, w.end) == drift);
        if !in_place {
            return Some(format!(
                "`{}` is at column {}, the README has it at {}",
                g.text, g.start, w.start
            ));
        }
        drift = at(g.end, w.end);
    }
    None
}

/// What differs between the README's block and the run's output: lines
/// added, removed or reworded, words moved to other columns.
pub fn compare(want: &[String], got: &[String]) -> Vec<String> {
    let (w, w_notes, mut problems) = normalise(want);
    let (g, g_notes, g_problems) = normalise(got);
    problems.extend(g_problems.into_iter().map(|p| format!("the run: {p}")));
    for note in &g_notes {
        if !w_notes.is_empty() && !w_notes.contains(note) {
            problems.push(format!(
                "the run's note {note:?} is not the README's {w_notes:?}"
            ));
        }
    }
    let text = |n: &Norm| -> Vec<String> { n.tokens.iter().map(|t| t.text.clone()).collect() };
    for (wl, gl) in w.iter().zip(&g) {
        if text(wl) != text(gl) {
            problems.push(format!(
                "line {} of the block, line {} of the run, differ:\n  README: {}\n  run:    {}",
                wl.line, gl.line, wl.source, gl.source
            ));
            // Later lines are all off by one after a line added or removed.
            break;
        }
        if let Some(p) = column_problem(&wl.tokens, &gl.tokens) {
            problems.push(format!(
                "line {} of the block: {p}\n  README: {}\n  run:    {}",
                wl.line, wl.source, gl.source
            ));
        }
    }
    if w.len() != g.len() {
        problems.push(format!(
            "the README shows {} lines where the run printed {} (after setting aside what varies)",
            w.len(),
            g.len()
        ));
    }
    problems
}
