//! Standard output as every format writes it. Into a file or a pipe the
//! bytes pass untouched, so a machine output keeps a server's text exactly as
//! sent. On a terminal, the characters a terminal would act on or hide
//! (`text::must_escape`: escape sequences, bidi overrides, zero-width
//! characters) are escaped on their way out, the one place for every
//! machine output (`--csv`, `--json`, `--jsonl`, `--write-out`), so none of
//! them can be turned against the person reading it.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::render::Escape;

use super::signals;

/// The line structure a format writes itself (CSV's and JSON Lines' LF, a
/// `--write-out` format's `\n`, `\r`, `\t`): kept, though they are control
/// characters. A server's text cannot hold them: libcurl ends a header at
/// the line break, and JSON writes them as escapes.
fn is_layout(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\t')
}

/// A writer that escapes per [`Escape`] (which the format on stdout chose). A character split between two
/// writes waits for its other bytes (at most three), so escaping never
/// depends on where a buffer happened to end.
pub(super) struct Sink<W: Write> {
    out: W,
    escape: Escape,
    /// The start of a UTF-8 sequence whose end has not been written yet.
    partial: Vec<u8>,
    /// The escaped form of one write, reused.
    shown: String,
}

impl<W: Write> Sink<W> {
    pub(super) fn new(out: W, escape: Escape) -> Sink<W> {
        Sink {
            out,
            escape,
            partial: Vec::new(),
            shown: String::new(),
        }
    }

    fn push_text(&mut self, text: &str) {
        for c in text.chars() {
            match self.escape {
                _ if !crate::text::must_escape(c) || is_layout(c) => self.shown.push(c),
                Escape::Json => crate::text::push_json_escape(&mut self.shown, c),
                _ => crate::text::push_visible_escape(&mut self.shown, c),
            }
        }
    }

    /// Escapes `bytes` (after any partial character) into `shown`, keeping
    /// an incomplete last character back; a byte that is not UTF-8 at all
    /// is shown as U+FFFD.
    fn escape_into_shown(&mut self, bytes: &[u8]) {
        self.shown.clear();
        let mut joined = std::mem::take(&mut self.partial);
        joined.extend_from_slice(bytes);
        let mut rest = joined.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.push_text(text);
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // The prefix was just checked to be UTF-8.
                    self.push_text(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        None => {
                            self.partial.extend_from_slice(bad);
                            break;
                        }
                        Some(n) => {
                            self.shown.push(char::REPLACEMENT_CHARACTER);
                            rest = &bad[n..];
                        }
                    }
                }
            }
        }
    }
}

impl<W: Write> Write for Sink<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.escape == Escape::Off {
            return self.out.write(bytes);
        }
        self.escape_into_shown(bytes);
        self.out.write_all(self.shown.as_bytes())?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// At most this much waits to be written before a write waits for room.
const ROOM: usize = 64 * 1024;
/// What the writer hands the system at once: a pipe takes a write this
/// size without blocking once `poll` says it has room, so progress shows.
const CHUNK: usize = 4096;
/// Once a signal came, how long stdout may go without taking a byte before
/// the run stops waiting for it.
const STUCK: Duration = Duration::from_millis(500);
/// How often a wait looks at the signals.
const LOOK: Duration = Duration::from_millis(50);

/// Standard output, written by a thread of its own so that no wait of the
/// run is held by a reader that does not read: every write is queued and
/// written in order, and `flush` waits until it is out, as a plain write
/// would. Until a signal comes, the run waits for stdout as long as it
/// takes; once one came, a stdout that takes nothing for `STUCK` (or past
/// the ending's deadline, `signals::Came::deadline`) is given up
/// (`given_up`): the run goes on to its files and its push, and whatever
/// is still queued is written if the reader comes back within the grace
/// (`settle`).
struct Pipe {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<u8>,
    /// When the writer last handed bytes to the system.
    progress: Option<Instant>,
    /// Why stdout cannot be written (its first error): every later write
    /// fails with it.
    error: Option<(io::ErrorKind, String)>,
    given_up: bool,
    /// The writer holds bytes it has taken from `queue` but not written.
    writing: bool,
}

impl State {
    /// Queues `bytes` for the writer. Once stdout is given up, only up to
    /// `ROOM` waits (what a returning reader may still get within the
    /// grace); the rest of the run's output is dropped, so that a long
    /// run's last document cannot grow the queue without a bound.
    fn queue(&mut self, bytes: &[u8]) {
        if !self.given_up || self.queue.len() < ROOM {
            self.queue.extend(bytes);
        }
    }

    fn error(&self) -> Option<io::Error> {
        self.error
            .as_ref()
            .map(|(kind, text)| io::Error::new(*kind, text.clone()))
    }

    fn drained(&self) -> bool {
        self.queue.is_empty() && !self.writing
    }
}

impl Pipe {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes what is queued, in chunks, until stdout fails.
    fn write_out(&self, out: &mut dyn Write) {
        let mut chunk = Vec::with_capacity(CHUNK);
        loop {
            {
                let mut state = self.lock();
                while state.queue.is_empty() {
                    state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
                }
                let n = state.queue.len().min(CHUNK);
                chunk.clear();
                chunk.extend(state.queue.drain(..n));
                state.writing = true;
            }
            let result = out.write_all(&chunk).and_then(|()| out.flush());
            let mut state = self.lock();
            state.writing = false;
            state.progress = Some(Instant::now());
            if let Err(e) = result {
                state.error = Some((e.kind(), e.to_string()));
                state.queue.clear();
            }
            let failed = state.error.is_some();
            drop(state);
            self.changed.notify_all();
            if failed {
                return;
            }
        }
    }

    /// Waits until `done`, stdout fails, or a signal gives it up (see
    /// `Pipe`). `Ok` once done or given up.
    fn wait(&self, done: impl Fn(&State) -> bool) -> io::Result<()> {
        let mut state = self.lock();
        loop {
            if let Some(e) = state.error() {
                return Err(e);
            }
            if state.given_up || done(&state) {
                return Ok(());
            }
            let came = signals::came();
            if let Some(at) = came.at() {
                let now = Instant::now();
                let quiet_since = state.progress.map_or(at, |p| p.max(at));
                let past_deadline = came.deadline().is_some_and(|d| now >= d);
                if now >= quiet_since + STUCK || past_deadline {
                    state.given_up = true;
                    return Ok(());
                }
            }
            state = match self.changed.wait_timeout(state, LOOK) {
                Ok((s, _)) => s,
                Err(e) => e.into_inner().0,
            };
        }
    }
}

/// The one standard output of the process (see `pipe`).
static PIPE: OnceLock<Arc<Pipe>> = OnceLock::new();

/// Standard output's pipe, its writer started on first use.
fn pipe() -> &'static Pipe {
    PIPE.get_or_init(|| {
        let pipe = Arc::new(Pipe {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let writer = pipe.clone();
        std::thread::spawn(move || writer.write_out(&mut io::stdout()));
        pipe
    })
}

/// Standard output through its writer thread (see `Pipe`).
pub(super) struct Stdout;

impl Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let pipe = pipe();
        pipe.wait(|s| s.queue.len() < ROOM)?;
        pipe.lock().queue(bytes);
        pipe.changed.notify_all();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        pipe().wait(State::drained)
    }
}

/// Whether a signal made the run stop waiting for stdout (see `Pipe`).
pub(super) fn given_up() -> bool {
    pipe().lock().given_up
}

/// After a run that gave stdout up: waits for what is still queued to be
/// written, until the signal's grace ends the process (`signals::GRACE`).
pub fn settle() {
    let Some(pipe) = PIPE.get() else {
        return;
    };
    let mut state = pipe.lock();
    while state.given_up && !state.drained() && state.error.is_none() {
        state = pipe.changed.wait(state).unwrap_or_else(|e| e.into_inner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(escape: Escape, writes: &[&[u8]]) -> String {
        let mut sink = Sink::new(Vec::new(), escape);
        for w in writes {
            sink.write_all(w).unwrap();
        }
        String::from_utf8(sink.out).unwrap()
    }

    #[test]
    fn a_stdout_given_up_queues_no_more_than_its_room() {
        let mut state = State::default();
        let piece = [b'x'; 1000];
        // Before a signal: the writer's wait bounds the queue, not this.
        for _ in 0..100 {
            state.queue(&piece);
        }
        assert_eq!(state.queue.len(), 100_000);
        // Given up: a run's last document of any size stays within ROOM
        // (and one write past it).
        let mut state = State {
            given_up: true,
            ..State::default()
        };
        for _ in 0..10_000 {
            state.queue(&piece);
        }
        assert!(
            state.queue.len() < ROOM + piece.len(),
            "{}",
            state.queue.len()
        );
        assert!(state.queue.len() >= ROOM, "{}", state.queue.len());
    }

    const HOSTILE: &str = "db;desc=\"\u{1b}]0;owned\u{7}\u{202e}lmth.exe\"\r\n";

    #[test]
    fn off_passes_every_byte_through() {
        assert_eq!(through(Escape::Off, &[HOSTILE.as_bytes()]), HOSTILE);
    }

    #[test]
    fn visible_escapes_all_but_the_line_structure() {
        assert_eq!(
            through(Escape::Visible, &[HOSTILE.as_bytes()]),
            "db;desc=\"\\x{1b}]0;owned\\x{07}\\x{202e}lmth.exe\"\r\n"
        );
    }

    #[test]
    fn json_escapes_keep_the_document_valid_and_its_text_intact() {
        let doc = serde_json::to_string_pretty(&serde_json::json!({ "desc": HOSTILE })).unwrap();
        let shown = through(Escape::Json, &[doc.as_bytes()]);
        assert!(
            !shown
                .chars()
                .any(|c| crate::text::must_escape(c) && c != '\n'),
            "{shown:?}"
        );
        assert!(shown.contains("\\u202e"), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["desc"], HOSTILE);
    }

    #[test]
    fn a_character_split_between_writes_is_escaped_whole() {
        let bytes = "a\u{202e}b\u{e0041}".as_bytes();
        for cut in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(cut);
            assert_eq!(
                through(Escape::Visible, &[head, tail]),
                "a\\x{202e}b\\x{e0041}",
                "cut at {cut}"
            );
        }
        assert_eq!(through(Escape::Visible, &[b"a\xffb"]), "a\u{fffd}b");
    }
}
