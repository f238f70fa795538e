//! Push-based armor decoding, for bytes that arrive over time (the browser's Web Streams, where no
//! thread can block in a `Read`): [`ArmorDecoder`] takes pieces of any size and appends the
//! decoded binary file to a buffer, accepting exactly what [`ArmoredReader`](super::ArmoredReader)
//! accepts (the tests below feed both the same inputs, split at every size). Memory: one line.
//!
//! ```
//! use hyperseal::format::armor::{ArmorDecoder, ArmoredWriter, HYPERSEAL_LABEL};
//! use std::io::Write;
//!
//! let mut w = ArmoredWriter::new(Vec::new(), HYPERSEAL_LABEL);
//! w.write_all(b"binary file bytes")?;
//! let text = w.finish()?;
//! let mut dec = ArmorDecoder::new();
//! let mut out = Vec::new();
//! for piece in text.chunks(5) {
//!     dec.update(piece, &mut out)?;
//! }
//! dec.finish()?;
//! assert_eq!(out, b"binary file bytes");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::{bad, is_space, AGE_LABEL, COLUMNS, HYPERSEAL_LABEL, MAX_WHITESPACE};
use crate::error::Error;
use crate::limits::{self, ARMOR_LINE};

/// Whether a file whose first byte is `first` must go through [`ArmorDecoder`]: armor starts
/// with a BEGIN line, possibly after whitespace; binary files start with their version line.
pub fn starts_armor(first: u8) -> bool {
    first == b'-' || is_space(first)
}

/// Whether `line`, a line read so far before the BEGIN line, can still be whitespace or the start
/// of a BEGIN line.
fn could_begin(line: &[u8]) -> bool {
    const BEGIN: &[u8] = b"-----BEGIN ";
    line.iter().copied().all(is_space) || BEGIN.starts_with(line) || line.starts_with(BEGIN)
}

enum State {
    /// Before the BEGIN line: whitespace seen so far.
    Begin { skipped: usize },
    /// Inside the body; `end` is the END line for the label.
    Body { end: String },
    /// After a short (or padded) base64 line: only the END line may follow.
    Last { end: String },
    /// After the END line: whitespace seen so far.
    Trailer { seen: usize },
}

/// Decodes armor pushed in pieces; errors are final (the decoder refuses further input).
pub struct ArmorDecoder {
    state: Option<State>,
    line: Vec<u8>,
}

impl Default for ArmorDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ArmorDecoder {
    /// A decoder expecting a BEGIN line (after at most 1 KiB of whitespace).
    pub fn new() -> Self {
        ArmorDecoder { state: Some(State::Begin { skipped: 0 }), line: Vec::with_capacity(COLUMNS + 2) }
    }

    /// Feeds `data`; appends the bytes of every complete line to `out`.
    pub fn update(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let mut rest = data;
        while !rest.is_empty() {
            if let Some(State::Trailer { seen }) = &mut self.state {
                // After the END line: only whitespace, and less than 1 KiB of it.
                *seen += rest.len();
                if !rest.iter().copied().all(is_space) || *seen >= MAX_WHITESPACE {
                    self.state = None;
                    return Err(bad("data after the END line"));
                }
                return Ok(());
            }
            let nl = rest.iter().position(|&b| b == b'\n');
            let take = nl.map_or(rest.len(), |i| i + 1);
            self.line.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if matches!(self.state, Some(State::Begin { .. })) && !could_begin(&self.line) {
                // Decided as soon as the line cannot become one: binary that happens to start
                // with `-` or whitespace is "not armor" (as the pull path says), never "too long".
                self.state = None;
                return Err(bad("unknown BEGIN line"));
            }
            if self.line.len() > ARMOR_LINE || (nl.is_none() && self.line.len() == ARMOR_LINE) {
                self.state = None;
                return Err(limits::too_long("an armor line", ARMOR_LINE));
            }
            if nl.is_some() {
                self.line.pop();
                let r = self.take_line(out);
                if r.is_err() {
                    self.state = None;
                }
                r?;
            }
        }
        Ok(())
    }

    /// Ends the input: the END line must have been seen (its newline is optional).
    pub fn finish(mut self) -> Result<(), Error> {
        if !self.line.is_empty() {
            // An unterminated last line: fine if it is the END line (its newline is optional);
            // anything else leaves the state short of the trailer.
            self.take_line(&mut Vec::new())?;
        }
        match self.state {
            Some(State::Trailer { .. }) => Ok(()),
            Some(State::Begin { .. }) => Err(bad("no BEGIN line")),
            _ => Err(bad("missing END line")),
        }
    }

    /// Handles one complete line (without its `\n`), then clears it.
    fn take_line(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        let line = std::str::from_utf8(&self.line).map_err(|_| bad("non-ASCII bytes"))?;
        let next = match self.state.take().ok_or_else(|| bad("the armor already failed"))? {
            State::Begin { skipped } => {
                if line.bytes().all(is_space) {
                    let skipped = skipped + line.len() + 1;
                    if skipped > MAX_WHITESPACE {
                        return Err(bad("too much whitespace before the BEGIN line"));
                    }
                    State::Begin { skipped }
                } else {
                    let label = line
                        .strip_prefix("-----BEGIN ")
                        .and_then(|l| l.strip_suffix("-----"))
                        .filter(|l| *l == HYPERSEAL_LABEL || *l == AGE_LABEL)
                        .ok_or_else(|| bad("unknown BEGIN line"))?;
                    State::Body { end: format!("-----END {label}-----") }
                }
            }
            State::Body { end } => {
                if line == end {
                    State::Trailer { seen: 0 }
                } else {
                    if line.is_empty() || line.len() > COLUMNS {
                        return Err(bad("base64 line has the wrong length"));
                    }
                    STANDARD.decode_vec(line.as_bytes(), out).map_err(|_| bad("invalid base64"))?;
                    if line.len() < COLUMNS || line.ends_with('=') {
                        State::Last { end }
                    } else {
                        State::Body { end }
                    }
                }
            }
            State::Last { end } => {
                if line != end {
                    return Err(bad("short base64 line before the end"));
                }
                State::Trailer { seen: 0 }
            }
            State::Trailer { .. } => unreachable!("the trailer is handled in update"),
        };
        self.state = Some(next);
        self.line.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::super::{ArmoredReader, ArmoredWriter};
    use super::*;

    /// What the pull reader makes of `text`, and what the push decoder makes of it in pieces of
    /// `piece` bytes: both `Ok` with the same bytes (returns true), or both errors.
    fn same(text: &[u8], piece: usize) -> bool {
        let mut pulled = Vec::new();
        let pull = ArmoredReader::new(text).read_to_end(&mut pulled).map(|_| pulled);
        let mut dec = ArmorDecoder::new();
        let mut pushed = Vec::new();
        let push = text
            .chunks(piece.max(1))
            .try_for_each(|p| dec.update(p, &mut pushed))
            .and_then(|()| dec.finish())
            .map(|()| pushed);
        match (&pull, &push) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{:?}", String::from_utf8_lossy(text)),
            (Err(_), Err(_)) => return false,
            _ => panic!(
                "pull {:?} vs push {:?} on {:?} in pieces of {piece}",
                pull.is_ok(),
                push.is_ok(),
                String::from_utf8_lossy(text)
            ),
        }
        true
    }

    fn armored(n: usize, label: &'static str) -> Vec<u8> {
        let mut w = ArmoredWriter::new(Vec::new(), label);
        w.write_all(&(0..n).map(|i| (i * 13) as u8).collect::<Vec<_>>()).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn agrees_with_the_reader_on_good_files_in_every_piece_size() {
        for n in [0, 1, 47, 48, 49, 3072, 3073, 10_000] {
            let text = armored(n, if n % 2 == 0 { HYPERSEAL_LABEL } else { AGE_LABEL });
            for piece in [1, 2, 3, 63, 64, 65, 4096, text.len()] {
                assert!(same(&text, piece));
            }
            let crlf = String::from_utf8(text.clone()).unwrap().replace('\n', "\r\n");
            assert!(same(crlf.as_bytes(), 7));
            let mut spaced = b"  \n\t\n".to_vec();
            spaced.extend_from_slice(&text);
            spaced.extend_from_slice(b"\n \n");
            assert!(same(&spaced, 5));
            assert!(same(&text[..text.len() - 1], 11)); // no newline after the END line
        }
    }

    #[test]
    fn agrees_with_the_reader_on_damage() {
        let good = String::from_utf8(armored(200, HYPERSEAL_LABEL)).unwrap();
        let cases = [
            good.replace("-----END HYPERSEAL ENCRYPTED FILE-----\n", ""),
            good.clone() + "garbage",
            good.clone() + &" ".repeat(MAX_WHITESPACE + 1),
            " ".repeat(MAX_WHITESPACE + 1) + "\n" + &good,
            good.replacen("\n", "\n\n", 2),
            good.replace("BEGIN HYPERSEAL", "BEGIN SOMETHING"),
            good.replace("END HYPERSEAL", "END AGE"),
            good[..good.len() / 2].to_string(),
            good.replacen('A', "é", 1),
            good.replacen("\n", &"A".repeat(200), 2),
            String::new(),
            "x".into(),
        ];
        for c in &cases {
            for piece in [1, 3, 64, c.len()] {
                assert!(!same(c.as_bytes(), piece), "{c}");
            }
        }
        // Every one of those really fails (so `same` compared two errors, not two successes).
        for c in &cases {
            let mut d = ArmorDecoder::new();
            let mut out = Vec::new();
            assert!(d.update(c.as_bytes(), &mut out).and_then(|()| d.finish()).is_err(), "{c}");
        }
    }

    #[test]
    fn binary_starting_like_armor_is_not_armor_not_too_long() {
        // A binary file's first byte may be `-` or whitespace (`starts_armor` then sends it here):
        // the error must say "not armor", as the pull path does, however long its first line.
        let mut long = vec![b'-'];
        long.extend((0u8..=255).filter(|&b| b != b'\n').cycle().take(300));
        for (input, piece) in [(long.clone(), 1), (long.clone(), 300), ([&b" "[..], &long[1..]].concat(), 7)]
        {
            let mut d = ArmorDecoder::new();
            let r = input.chunks(piece).try_for_each(|p| d.update(p, &mut Vec::new()));
            assert!(matches!(r, Err(Error::Armor(_))), "{r:?}");
        }
        let mut d = ArmorDecoder::new();
        assert!(d.update(b"  \t\n-----BEG", &mut Vec::new()).is_ok(), "a BEGIN line may still come");
    }

    #[test]
    fn errors_are_final() {
        let mut d = ArmorDecoder::new();
        let mut out = Vec::new();
        assert!(d.update(b"-----BEGIN NOPE-----\n", &mut out).is_err());
        assert!(d.update(b"-----BEGIN HYPERSEAL ENCRYPTED FILE-----\n", &mut out).is_err());
    }

    #[test]
    fn the_first_byte_decides() {
        assert!(starts_armor(b'-') && starts_armor(b' ') && starts_armor(b'\n'));
        assert!(!starts_armor(b'h') && !starts_armor(b'a'));
    }
}
