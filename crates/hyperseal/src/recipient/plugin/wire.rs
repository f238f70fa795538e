//! What comes out of a plugin, read as untrusted input: its stdout as age stanzas under a byte
//! budget, its stderr as a bounded last line, and every text of it made safe to print.
//!
//! The budget is checked as bytes arrive, before they are kept: one message may not pass
//! [`limits::PLUGIN_MESSAGE`] bytes and all of them [`limits::PLUGIN_BYTES`], so a plugin that
//! sends an endless line or an endless stream costs a bounded buffer, never our memory.

use std::io::{BufRead, Read};

use crate::format::Stanza;
use crate::{error::Error, limits};

/// Why reading from the plugin stopped: a broken or oversized message, or the end of its output.
#[derive(Debug)]
pub(super) enum ReadError {
    /// Not the protocol: what it sent, in words ("sent something that is not a stanza").
    Protocol(&'static str),
    /// Over a budget: the [`Error::Limit`] to report.
    Limit(Error),
    /// Its output closed (cleanly between messages, or an I/O error).
    Closed,
}

/// Reads the plugin's messages one by one, counting every byte against [`limits::PLUGIN_BYTES`].
pub(super) struct StanzaReader<R> {
    inner: R,
    /// Bytes read so far in this exchange.
    total: usize,
    /// The exchange budget (a parameter so tests can use a small one).
    budget: usize,
    /// The plugin's name, for the errors.
    name: String,
}

impl<R: BufRead> StanzaReader<R> {
    pub(super) fn new(inner: R, name: &str) -> Self {
        Self::with_budget(inner, limits::PLUGIN_BYTES, name)
    }

    pub(super) fn with_budget(inner: R, budget: usize, name: &str) -> Self {
        StanzaReader { inner, total: 0, budget, name: name.to_string() }
    }

    /// One line without its newline, into `line`; `Ok(false)` at a clean end of input. At most
    /// [`limits::PLUGIN_MESSAGE`] bytes are read for the whole message (`in_message` so far).
    fn line(&mut self, line: &mut Vec<u8>, in_message: &mut usize) -> Result<bool, ReadError> {
        line.clear();
        let room = (limits::PLUGIN_MESSAGE - *in_message).min(self.budget - self.total) + 1;
        let n = (&mut self.inner).take(room as u64).read_until(b'\n', line).map_err(|_| ReadError::Closed)?;
        *in_message += n;
        self.total += n;
        if *in_message > limits::PLUGIN_MESSAGE {
            let what = format!("a message from age-plugin-{}", self.name);
            return Err(ReadError::Limit(limits::too_long(&what, limits::PLUGIN_MESSAGE)));
        }
        if self.total > self.budget {
            let what = format!("what age-plugin-{} sent", self.name);
            return Err(ReadError::Limit(limits::too_long(&what, self.budget)));
        }
        if n == 0 {
            return Ok(false);
        }
        if line.pop() != Some(b'\n') {
            return Err(ReadError::Protocol("sent a truncated line"));
        }
        Ok(true)
    }

    /// The next stanza: `-> TAG ARGS`, then base64 body lines ending with a short line.
    pub(super) fn next(&mut self) -> Result<Stanza, ReadError> {
        let (mut line, mut size) = (Vec::new(), 0);
        if !self.line(&mut line, &mut size)? {
            return Err(ReadError::Closed);
        }
        let args =
            line.strip_prefix(b"-> ").ok_or(ReadError::Protocol("sent something that is not a stanza"))?;
        let (tag, args) =
            Stanza::parse_args(args).map_err(|_| ReadError::Protocol("sent a malformed stanza line"))?;
        let mut body = Vec::new();
        loop {
            if !self.line(&mut line, &mut size)? {
                return Err(ReadError::Protocol("ended in the middle of a stanza"));
            }
            let (b, last) = Stanza::parse_body_line(&line)
                .map_err(|_| ReadError::Protocol("sent a malformed stanza body"))?;
            body.extend(b);
            if last {
                return Ok(Stanza { tag, args, body });
            }
        }
    }
}

/// Characters of a plugin's text shown at most (a message, a prompt, its stderr line).
const SHOWN: usize = 2000;

/// A plugin's text, made safe to print on a terminal: control characters (ESC and every other
/// C0/C1 code, so no colour, cursor, title or clear-screen sequence), bidirectional overrides
/// and zero-width characters (which can reorder or hide what is shown) become `?`, and line
/// breaks become spaces, so a plugin cannot forge a line of ours. At most 2000 characters.
pub(super) fn printable(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .chars()
        .take(SHOWN)
        .map(|c| match c {
            '\n' | '\t' => ' ',
            c if c.is_control() || invisible(c) => '?',
            c => c,
        })
        .collect()
}

/// Format characters that change how text around them is displayed.
fn invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Bytes of a stderr line kept (longer lines are cut: only the start explains anything).
const STDERR_LINE: usize = 400;

/// Reads a plugin's stderr to its end, calling `last` with each non-blank line (printable, at
/// most 400 bytes of it). Memory stays at one small buffer however much it writes; reading on
/// keeps a chatty plugin from blocking on a full pipe.
pub(super) fn tail_lines(mut r: impl Read, mut last: impl FnMut(String)) {
    let (mut buf, mut line) = ([0u8; 4096], Vec::with_capacity(STDERR_LINE));
    let mut flush = |line: &mut Vec<u8>| {
        if line.iter().any(|b| !b.is_ascii_whitespace()) {
            last(printable(line).trim().to_string());
        }
        line.clear();
    };
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                flush(&mut line);
            } else if line.len() < STDERR_LINE {
                line.push(b);
            }
        }
    }
    flush(&mut line);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Stanza, ReadError> {
        StanzaReader::new(bytes, "t").next()
    }

    fn protocol(r: Result<Stanza, ReadError>) -> &'static str {
        match r {
            Err(ReadError::Protocol(why)) => why,
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    #[test]
    fn stanza_reader() {
        let s = read(b"-> file-key 0\nAAECAwQFBgcICQoLDA0ODw\n").unwrap();
        assert_eq!(
            (s.tag.as_str(), s.args.as_slice(), s.body.len()),
            ("file-key", &["0".to_string()][..], 16)
        );
        let s = read(b"-> done\n\n").unwrap();
        assert!(s.tag == "done" && s.args.is_empty() && s.body.is_empty());
        assert!(matches!(read(b""), Err(ReadError::Closed)), "clean end");
        for (bad, why) in [
            (&b"hello\n"[..], "not a stanza"),
            (b"-> done\n", "ended in the middle"),
            (b"-> done", "truncated"),
            (b"-> ok\nAA=\n", "malformed stanza body"),
            (b"->  two  spaces\n\n", "malformed stanza line"),
        ] {
            let why_got = protocol(read(bad));
            assert!(why_got.contains(why), "{bad:?}: {why_got}");
        }
    }

    fn limit(r: Result<Stanza, ReadError>) -> String {
        match r {
            Err(ReadError::Limit(e)) => {
                assert_eq!(e.code(), crate::error::ErrorCode::Limit);
                e.to_string()
            }
            other => panic!("expected a limit, got {other:?}"),
        }
    }

    /// One message of more than PLUGIN_MESSAGE bytes, as body lines or as one endless line, is
    /// refused after reading just past the limit.
    #[test]
    fn one_message_is_capped() {
        let mut huge = b"-> msg\n".to_vec();
        while huge.len() <= limits::PLUGIN_MESSAGE + 100 {
            huge.extend_from_slice(&[b'A'; 64]);
            huge.push(b'\n');
        }
        let err = limit(read(&huge));
        assert!(err.contains("a message from age-plugin-t is longer than 1 MiB"), "{err}");
        let mut endless = std::io::BufReader::new(std::io::repeat(b'x'));
        let mut r = StanzaReader::new(&mut endless, "t");
        assert!(limit(r.next()).contains("longer than 1 MiB"));
        assert!(r.total <= limits::PLUGIN_MESSAGE + 1, "read {} bytes", r.total);
    }

    /// Many small messages stop at the exchange budget.
    #[test]
    fn all_messages_are_capped() {
        let one = b"-> msg\naGk\n";
        let stream = one.repeat(40);
        let mut r = StanzaReader::with_budget(&stream[..], one.len() * 10 + 3, "t");
        for _ in 0..10 {
            r.next().unwrap();
        }
        assert!(limit(r.next()).contains("what age-plugin-t sent is longer than"));
        // The production budget is PLUGIN_BYTES.
        assert_eq!(StanzaReader::new(&b""[..], "t").budget, limits::PLUGIN_BYTES);
    }

    #[test]
    fn printable_filter() {
        let evil = "\x1b[31mRED \x1b]0;pwned\x07 \u{9b}2J \u{202e}txt.exe\u{200b}\nhyperseal: error: fake\r";
        let shown = printable(evil.as_bytes());
        assert_eq!(shown, "?[31mRED ?]0;pwned? ?2J ?txt.exe? hyperseal: error: fake?");
        assert!(!shown.chars().any(|c| c.is_control()));
        assert_eq!(printable(&[0xff, b'a']), "\u{fffd}a");
        assert_eq!(printable(&[b'x'; 5000]).len(), SHOWN);
    }

    #[test]
    fn stderr_tail_is_bounded_and_printable() {
        let mut lines = Vec::new();
        let mut input = b"first\n\n  \n\x1b[2Jsecond\x1b]0;t\x07\n".to_vec();
        input.extend(std::iter::repeat_n(b'z', 100_000));
        tail_lines(&input[..], |l| lines.push(l));
        assert_eq!(lines[..2], ["first", "?[2Jsecond?]0;t?"]);
        assert_eq!(lines[2], "z".repeat(STDERR_LINE), "a long last line is cut");
    }
}
