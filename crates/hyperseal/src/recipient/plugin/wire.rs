//! What comes out of a plugin, read as untrusted input: its stdout as age stanzas under a byte
//! budget, its stderr as a bounded last line, and every text of it made safe to print.
//!
//! The budget is checked as bytes arrive, before they are kept: one message may not pass
//! [`limits::PLUGIN_MESSAGE`] bytes and all of them [`limits::PLUGIN_BYTES`], so a plugin that
//! sends an endless line or an endless stream costs a bounded buffer, never our memory.

use std::io::{BufRead, Read};

use super::unicode_table;
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

/// A plugin's text, made safe to print on a terminal: tabs and line feeds become spaces (a
/// plugin cannot forge a line of ours), and every other character that is not shown as itself
/// becomes `?`: controls (ESC and every C0/C1 code, so no colour, cursor, title or clear-screen
/// sequence), format characters, line and paragraph separators, bidirectional controls (which
/// reorder what is shown) and default-ignorable code points (drawn as nothing, so they hide
/// text or make two texts look alike). The set is [`hidden`]. At most 2000 characters.
pub(super) fn printable(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .chars()
        .take(SHOWN)
        .map(|c| match c {
            '\n' | '\t' => ' ',
            c if hidden(c) => '?',
            c => c,
        })
        .collect()
}

/// Whether `c` is in General_Category Cc, Cf, Zl or Zp, or has Bidi_Control or
/// Default_Ignorable_Code_Point: [`unicode_table::HIDDEN`], generated from the Unicode
/// Character Database.
pub(super) fn hidden(c: char) -> bool {
    let c = u32::from(c);
    unicode_table::HIDDEN
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
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

    /// The code points of one of the table's properties, as a set over the whole code space.
    fn set(ranges: &[(u32, u32)]) -> Vec<bool> {
        let mut s = vec![false; 0x11_0000];
        for &(lo, hi) in ranges {
            s[lo as usize..=hi as usize].iter_mut().for_each(|b| *b = true);
        }
        s
    }

    /// Every code point: the filter hides exactly the union of the table's six properties, and
    /// shows every other character as itself.
    #[test]
    fn filter_agrees_with_the_table_everywhere() {
        use unicode_table::{BIDI_CONTROL, CC, CF, DEFAULT_IGNORABLE, ZL, ZP};
        let props = [CC, CF, ZL, ZP, BIDI_CONTROL, DEFAULT_IGNORABLE].map(set);
        let mut buf = [0u8; 4];
        for cp in 0..=0x10_FFFFu32 {
            let Some(c) = char::from_u32(cp) else { continue };
            let want = props.iter().any(|p| p[cp as usize]);
            assert_eq!(hidden(c), want, "U+{cp:04X}");
            let shown = printable(c.encode_utf8(&mut buf).as_bytes());
            let expected = match c {
                '\n' | '\t' => " ".to_string(),
                _ if want => "?".to_string(),
                _ => c.to_string(),
            };
            assert_eq!(shown, expected, "U+{cp:04X}");
        }
    }

    /// The generated table against regex-syntax's tables (made by ucd-generate from the same
    /// database, not by our script), property by property.
    #[test]
    fn table_matches_another_reading_of_the_ucd() {
        use regex_syntax::hir::{Class, HirKind};
        let theirs = |p: &str| -> Vec<(u32, u32)> {
            let hir = regex_syntax::Parser::new().parse(&format!(r"\p{{{p}}}")).unwrap();
            match hir.kind() {
                HirKind::Class(Class::Unicode(c)) => {
                    c.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect()
                }
                HirKind::Literal(l) => {
                    let c = std::str::from_utf8(&l.0).unwrap().chars().next().unwrap();
                    vec![(u32::from(c), u32::from(c))]
                }
                other => panic!("{p}: {other:?}"),
            }
        };
        for (name, ours, p) in [
            ("Cc", unicode_table::CC, "Cc"),
            ("Cf", unicode_table::CF, "Cf"),
            ("Zl", unicode_table::ZL, "Zl"),
            ("Zp", unicode_table::ZP, "Zp"),
            ("Bidi_Control", unicode_table::BIDI_CONTROL, "Bidi_Control"),
            (
                "Default_Ignorable_Code_Point",
                unicode_table::DEFAULT_IGNORABLE,
                "Default_Ignorable_Code_Point",
            ),
        ] {
            let (a, b) = (set(ours), set(&theirs(p)));
            let differ: Vec<String> =
                (0..0x11_0000).filter(|&i| a[i] != b[i]).take(10).map(|i| format!("U+{i:04X}")).collect();
            assert!(
                differ.is_empty(),
                "{name} (ours: Unicode {:?}): {differ:?}",
                unicode_table::UNICODE_VERSION
            );
        }
    }

    /// Characters a plugin could use to hide or reorder text, named one by one.
    #[test]
    fn named_invisibles_are_hidden() {
        let named = [
            '\u{061C}', // ARABIC LETTER MARK (Bidi_Control)
            '\u{2028}', // LINE SEPARATOR (Zl)
            '\u{2029}', // PARAGRAPH SEPARATOR (Zp)
            '\u{00AD}', // SOFT HYPHEN (Cf)
            '\u{180E}', // MONGOLIAN VOWEL SEPARATOR (Cf)
            '\u{115F}', // HANGUL CHOSEONG FILLER (Default_Ignorable)
            '\u{3164}', // HANGUL FILLER (Default_Ignorable)
            '\u{034F}', // COMBINING GRAPHEME JOINER (Default_Ignorable)
            '\u{FE0F}', // VARIATION SELECTOR-16 (Default_Ignorable)
            '\u{202E}', // RIGHT-TO-LEFT OVERRIDE
            '\u{2066}', // LEFT-TO-RIGHT ISOLATE
            '\u{200B}', // ZERO WIDTH SPACE
            '\u{FEFF}', // ZERO WIDTH NO-BREAK SPACE
            '\u{0085}', // NEXT LINE (C1)
            '\u{001B}', // ESCAPE
            '\r',
        ];
        let ranges = ['\u{206A}'..='\u{206F}', '\u{E0000}'..='\u{E007F}', '\u{E0100}'..='\u{E01EF}'];
        for c in named.into_iter().chain(ranges.into_iter().flatten()) {
            assert!(hidden(c), "U+{:04X}", u32::from(c));
            assert_eq!(printable(format!("a{c}b").as_bytes()), "a?b", "U+{:04X}", u32::from(c));
        }
        // Text that shows as itself stays: letters of any script, spaces, symbols.
        let plain = "Touch your YubiKey \u{00A0}é 中文 العربية ✓ 🔑";
        assert_eq!(printable(plain.as_bytes()), plain);
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
