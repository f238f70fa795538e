//! Strict PEM-style ASCII armor, streaming in both directions (constant memory):
//!
//! ```text
//! -----BEGIN HYPERSEAL ENCRYPTED FILE-----
//! <padded standard base64, 64 columns, last line shorter or equal>
//! -----END HYPERSEAL ENCRYPTED FILE-----
//! ```
//! The age profile uses the label `AGE ENCRYPTED FILE`. The reader accepts exactly one encoding
//! per file: canonical base64, full lines except the last, no blank lines, LF or CRLF line ends,
//! and only whitespace (at most 1 KiB) before the BEGIN line and after the END line, whose own
//! newline is optional — the rules of age's armor reader (checked by the C2SP testkit).

use std::io::{self, BufRead, Read, Write};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::error::Error;
use crate::limits::{self, ARMOR_LINE};

// The push-based decoder (pieces arriving over time: the browser's streams).
mod push;
pub use push::{starts_armor, ArmorDecoder};

/// Armor label of hyperseal files.
pub const HYPERSEAL_LABEL: &str = "HYPERSEAL ENCRYPTED FILE";
/// Armor label of age files.
pub const AGE_LABEL: &str = "AGE ENCRYPTED FILE";

const COLUMNS: usize = 64;
const BYTES_PER_LINE: usize = COLUMNS / 4 * 3;

/// Most whitespace accepted before the BEGIN line and after the END line (as age).
const MAX_WHITESPACE: usize = 1 << 10;

/// Whether `prefix` (the first bytes of an input) starts an armored file.
pub fn is_armored(prefix: &[u8]) -> bool {
    prefix.trim_ascii_start().starts_with(b"-----BEGIN ")
}

/// Whether `prefix` looks like armor that [`is_armored`] refused (garbage before the BEGIN line,
/// a mangled BEGIN line): such input gets an armor error rather than "unknown format".
pub fn looks_like_armor(prefix: &[u8]) -> bool {
    let head = &prefix[..prefix.len().min(MAX_WHITESPACE + 64)];
    !is_armored(prefix)
        && !prefix.starts_with(b"age-encryption.org/")
        && !prefix.starts_with(b"hyperseal/")
        && (head.trim_ascii_start().starts_with(b"-----") || head.windows(10).any(|w| w == b"-----BEGIN"))
}

/// Armoring writer; must be [`finish`](ArmoredWriter::finish)ed to write the last line.
pub struct ArmoredWriter<W: Write> {
    inner: W,
    label: &'static str,
    pending: Vec<u8>,
    started: bool,
}

impl<W: Write> ArmoredWriter<W> {
    /// Wraps `inner` with the given label.
    pub fn new(inner: W, label: &'static str) -> Self {
        ArmoredWriter { inner, label, pending: Vec::with_capacity(BYTES_PER_LINE * 64), started: false }
    }

    fn emit(&mut self, all: bool) -> io::Result<()> {
        if !self.started {
            writeln!(self.inner, "-----BEGIN {}-----", self.label)?;
            self.started = true;
        }
        let whole =
            if all { self.pending.len() } else { self.pending.len() / BYTES_PER_LINE * BYTES_PER_LINE };
        let mut text = String::with_capacity(whole / 3 * 4 + whole / BYTES_PER_LINE + 8);
        for line in self.pending[..whole].chunks(BYTES_PER_LINE) {
            STANDARD.encode_string(line, &mut text);
            text.push('\n');
        }
        self.inner.write_all(text.as_bytes())?;
        self.pending.drain(..whole);
        Ok(())
    }

    /// The inner writer. What was written to it so far is the armor's whole lines: a caller
    /// armoring into memory (an asynchronous writer's buffer) takes them from here as they come.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Writes the remaining bytes and the end line; returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.emit(true)?;
        writeln!(self.inner, "-----END {}-----", self.label)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for ArmoredWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(data);
        if self.pending.len() >= BYTES_PER_LINE * 64 {
            self.emit(false)?;
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// De-armoring reader.
pub struct ArmoredReader<R: BufRead> {
    inner: R,
    label: Option<String>,
    decoded: Vec<u8>,
    at: usize,
    done: bool,
}

impl<R: BufRead> ArmoredReader<R> {
    /// Wraps `inner`, which must start with a BEGIN line.
    pub fn new(inner: R) -> Self {
        ArmoredReader { inner, label: None, decoded: Vec::new(), at: 0, done: false }
    }

    /// The label of the BEGIN line, once read.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    fn line(&mut self) -> Result<Option<String>, Error> {
        let mut buf = Vec::new();
        let n = (&mut self.inner).take(ARMOR_LINE as u64).read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(None);
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        } else if n == ARMOR_LINE {
            return Err(limits::too_long("an armor line", ARMOR_LINE));
        }
        // (An unterminated line can only be the last one; whatever it is, the checks of the
        // caller still apply.)
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        String::from_utf8(buf).map(Some).map_err(|_| bad("non-ASCII bytes"))
    }

    /// Decodes the next batch of lines into `decoded`.
    fn refill(&mut self) -> Result<(), Error> {
        self.decoded.clear();
        self.at = 0;
        if self.label.is_none() {
            let mut skipped = 0;
            let begin = loop {
                let line = self.line()?.ok_or_else(|| bad("no BEGIN line"))?;
                if !line.bytes().all(is_space) {
                    break line;
                }
                skipped += line.len() + 1;
                if skipped > MAX_WHITESPACE {
                    return Err(bad("too much whitespace before the BEGIN line"));
                }
            };
            let label = begin
                .strip_prefix("-----BEGIN ")
                .and_then(|l| l.strip_suffix("-----"))
                .filter(|l| *l == HYPERSEAL_LABEL || *l == AGE_LABEL)
                .ok_or_else(|| bad("unknown BEGIN line"))?;
            self.label = Some(label.to_string());
        }
        let end_line = format!("-----END {}-----", self.label.as_deref().unwrap_or(""));
        while self.decoded.len() < 64 * BYTES_PER_LINE {
            let line = self.line()?.ok_or_else(|| bad("missing END line"))?;
            if line == end_line {
                self.finish_trailer()?;
                return Ok(());
            }
            if line.is_empty() || line.len() > COLUMNS {
                return Err(bad("base64 line has the wrong length"));
            }
            STANDARD.decode_vec(line.as_bytes(), &mut self.decoded).map_err(|_| bad("invalid base64"))?;
            if line.len() < COLUMNS || line.ends_with('=') {
                // A short (or padded) line is the last one: only the END line may follow.
                let next = self.line()?.ok_or_else(|| bad("missing END line"))?;
                if next != end_line {
                    return Err(bad("short base64 line before the end"));
                }
                self.finish_trailer()?;
                return Ok(());
            }
        }
        Ok(())
    }

    fn finish_trailer(&mut self) -> Result<(), Error> {
        self.done = true;
        let mut rest = Vec::new();
        (&mut self.inner).take(MAX_WHITESPACE as u64).read_to_end(&mut rest)?;
        if rest.iter().copied().all(is_space) && rest.len() < MAX_WHITESPACE {
            Ok(())
        } else {
            Err(bad("data after the END line"))
        }
    }
}

impl<R: BufRead> Read for ArmoredReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let k = avail.len().min(out.len());
        out[..k].copy_from_slice(&avail[..k]);
        self.consume(k);
        Ok(k)
    }
}

impl<R: BufRead> BufRead for ArmoredReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.at == self.decoded.len() && !self.done {
            self.refill().map_err(Error::into_io)?;
        }
        Ok(&self.decoded[self.at..])
    }
    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.decoded.len());
    }
}

/// ASCII whitespace as Go's `bytes.TrimSpace` sees it (which includes vertical tab).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn bad(msg: &str) -> Error {
    Error::Armor(msg.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(n: usize) {
        let data: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
        let mut w = ArmoredWriter::new(Vec::new(), HYPERSEAL_LABEL);
        w.write_all(&data).unwrap();
        let text = w.finish().unwrap();
        let mut back = Vec::new();
        ArmoredReader::new(&text[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, data, "length {n}");
    }

    #[test]
    fn round_trips_around_line_boundaries() {
        for n in [0, 1, 47, 48, 49, 96, 3071, 3072, 3073, 100_000] {
            round_trip(n);
        }
    }

    #[test]
    fn rejects_damage() {
        let mut w = ArmoredWriter::new(Vec::new(), HYPERSEAL_LABEL);
        w.write_all(&[1u8; 100]).unwrap();
        let good = String::from_utf8(w.finish().unwrap()).unwrap();
        let cases = [
            good.replace("-----END HYPERSEAL ENCRYPTED FILE-----\n", ""),
            good.clone() + "garbage",
            good.replacen("AQEB", "AQE=", 1),
            good.replacen("\n", "\n\n", 2),
            good.replace("BEGIN HYPERSEAL", "BEGIN SOMETHING"),
        ];
        for c in cases {
            let mut out = Vec::new();
            assert!(ArmoredReader::new(c.as_bytes()).read_to_end(&mut out).is_err(), "{c}");
        }
    }
}
