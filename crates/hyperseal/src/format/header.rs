//! Header codec shared by both profiles: bytes in, [`Header`] out, and back. Pure data: the MAC
//! is computed and checked by the key schedule (`keys.rs`), which gives this codec the bytes.
//!
//! ```text
//! hyperseal/v1                        | age-encryption.org/v1
//! params aes-256-gcm 65536            | (no parameters line: fixed by the spec)
//! -> X25519 <share>                   | -> X25519 <share>
//! <base64 body>                       | <base64 body>
//! --- <base64 HMAC-SHA-256>           | --- <base64 HMAC-SHA-256>
//! ```
//! The MAC covers every byte up to and including `---`.

use std::io::{BufRead, Read};

use super::params::{check_chunk_size, Profile, Suite, AGE_V1, DEFAULT_CHUNK, HYPERSEAL_V1};
use super::stanza::{decode_b64, encode_b64, Stanza};
use crate::{error::Error, limits};

/// A parsed or to-be-written header.
#[derive(Clone, Debug)]
pub struct Header {
    /// Dialect.
    pub profile: Profile,
    /// Payload suite.
    pub suite: Suite,
    /// Plaintext bytes per chunk.
    pub chunk_size: usize,
    /// Recipient stanzas.
    pub stanzas: Vec<Stanza>,
    /// The bytes the MAC covers: version line through `---`.
    mac_input: Vec<u8>,
    mac: [u8; 32],
}

impl Header {
    /// A header ready to be MAC'd and encoded.
    pub fn new(
        profile: Profile,
        suite: Suite,
        chunk_size: usize,
        stanzas: Vec<Stanza>,
    ) -> Result<Self, Error> {
        check_chunk_size(chunk_size)?;
        if profile == Profile::Age && (suite != Suite::ChaCha20Poly1305 || chunk_size != DEFAULT_CHUNK) {
            return Err(Error::InvalidArgument("age files use chacha20-poly1305 and 64 KiB chunks".into()));
        }
        let mut h = Header { profile, suite, chunk_size, stanzas, mac_input: Vec::new(), mac: [0; 32] };
        h.check_readable()?;
        h.mac_input = h.body_without_mac();
        if h.encode_len() > limits::HEADER_BYTES {
            return Err(limits::unwritable(format!(
                "{} recipient stanzas make {} bytes, more than the {} a reader accepts",
                h.stanzas.len(),
                h.encode_len(),
                limits::bytes(limits::HEADER_BYTES)
            )));
        }
        Ok(h)
    }

    /// The reader's rules for stanzas ([`Header::read_from`]), checked before anything is
    /// written: recipients and plugins decide what goes in, and a header its own reader refuses
    /// is a file nobody can open.
    fn check_readable(&self) -> Result<(), Error> {
        let n = self.stanzas.len();
        if n == 0 {
            return Err(Error::InvalidArgument("no recipients".into()));
        }
        if n > limits::STANZAS {
            return Err(limits::unwritable(format!(
                "{n} recipient stanzas, more than the {} a reader accepts",
                limits::STANZAS
            )));
        }
        if n > 1 && self.stanzas.iter().any(|s| matches!(s.tag.as_str(), "argon2id" | "scrypt")) {
            return Err(Error::IncompatibleRecipients("a passphrase must be the only recipient".into()));
        }
        for s in &self.stanzas {
            let line = 3 + s.tag.len() + s.args.iter().map(|a| a.len() + 1).sum::<usize>() + 1;
            if line > limits::HEADER_LINE {
                return Err(limits::unwritable(format!(
                    "a {} stanza line of {line} bytes, more than the {} a reader accepts",
                    s.tag,
                    limits::bytes(limits::HEADER_LINE)
                )));
            }
            if s.body.len() > limits::STANZA_BODY {
                return Err(limits::unwritable(format!(
                    "a {} stanza body of {} bytes, more than the {} a reader accepts",
                    s.tag,
                    s.body.len(),
                    limits::bytes(limits::STANZA_BODY)
                )));
            }
        }
        Ok(())
    }

    fn body_without_mac(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(self.profile.version_line().as_bytes());
        out.push(b'\n');
        if self.profile == Profile::Hyperseal {
            out.extend_from_slice(format!("params {} {}\n", self.suite.name(), self.chunk_size).as_bytes());
        }
        for s in &self.stanzas {
            s.write_to(&mut out);
        }
        out.extend_from_slice(b"---");
        out
    }

    /// The bytes the MAC covers (version line through `---`).
    pub fn mac_input(&self) -> &[u8] {
        &self.mac_input
    }

    /// The MAC of a parsed header (zero for one built with [`Header::new`]).
    pub fn mac(&self) -> &[u8; 32] {
        &self.mac
    }

    /// The encoded header with `mac`, including the final newline.
    pub fn encode(&self, mac: &[u8; 32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.mac_input.len() + 45);
        out.extend_from_slice(&self.mac_input);
        out.push(b' ');
        out.extend_from_slice(encode_b64(mac).as_bytes());
        out.push(b'\n');
        out
    }

    /// The chunk count and plaintext length of a payload of `payload_len` bytes (what follows
    /// the header and the 16-byte salt), or `None` when no file of this header has that length
    /// (it was cut short, or grown). Every chunk but the last is full; the last holds at least
    /// its tag, and more than that unless it is the only one. Unauthenticated: only decryption
    /// proves the sizes.
    pub fn payload_shape(&self, payload_len: u64) -> Option<(u64, u64)> {
        let tag = super::TAG_LEN as u64;
        let full = self.chunk_size as u64 + tag;
        let chunks = payload_len.div_ceil(full).max(1);
        let last = payload_len - (chunks - 1) * full;
        let valid = last >= tag && (chunks == 1 || last > tag);
        valid.then(|| (chunks, payload_len - chunks * tag))
    }

    /// Bytes of the header on disk (version line through the MAC line).
    pub fn encode_len(&self) -> usize {
        // mac_input ends with "---"; then " " + 43 base64 characters + "\n".
        self.mac_input.len() + 45
    }

    /// Whether this is a passphrase file (a lone passphrase stanza).
    pub fn is_passphrase(&self) -> bool {
        self.stanzas.len() == 1 && matches!(self.stanzas[0].tag.as_str(), "argon2id" | "scrypt")
    }

    /// Reads a header, leaving `r` at the first payload byte. Whatever the input, this reads at
    /// most [`limits::HEADER_BYTES`] bytes (one line at most [`limits::HEADER_LINE`], at most
    /// [`limits::STANZAS`] stanzas of at most [`limits::STANZA_BODY`] bytes each) and then fails
    /// with [`Error::Limit`]: an endless stanza or line from a pipe costs a bounded amount of
    /// memory and time.
    pub fn read_from(r: &mut impl BufRead) -> Result<Header, Error> {
        Header::read_with(r, HeaderRules::default())
    }

    /// [`Header::read_from`] under `rules`.
    pub fn read_with(r: &mut impl BufRead, rules: HeaderRules) -> Result<Header, Error> {
        let mut lines = Lines { r, raw: Vec::with_capacity(512) };
        let version = lines.next()?.ok_or(Error::EmptyInput)?;
        let profile = match version.as_slice() {
            v if v == HYPERSEAL_V1.as_bytes() => Profile::Hyperseal,
            v if v == AGE_V1.as_bytes() => Profile::Age,
            v if v.starts_with(b"hyperseal/") || v.starts_with(b"age-encryption.org/") => {
                return Err(bad(&format!("unsupported version {:?}", String::from_utf8_lossy(v))))
            }
            _ => return Err(Error::UnknownFormat),
        };
        let (suite, chunk_size) = match profile {
            Profile::Age => (Suite::ChaCha20Poly1305, DEFAULT_CHUNK),
            Profile::Hyperseal => {
                let line = lines.next()?.ok_or_else(|| bad("missing parameters line"))?;
                parse_params(&line)?
            }
        };
        let mut stanzas = Vec::new();
        let mut line = lines.next()?.ok_or_else(|| bad("header ends before its MAC"))?;
        loop {
            // A line the stanza before read past its end (`HeaderRules::legacy_stanza_end`).
            let mut next = None;
            if let Some(args) = line.strip_prefix(b"-> ") {
                if stanzas.len() == limits::STANZAS {
                    return Err(limits::too_many("recipient stanzas in the header", limits::STANZAS));
                }
                let (tag, args) = Stanza::parse_args(args)?;
                let mut body = Vec::new();
                loop {
                    let l = lines.next()?.ok_or_else(|| bad("header ends inside a stanza"))?;
                    // Only where every body line so far was full: a short line ends the body.
                    if rules.legacy_stanza_end && (l.starts_with(b"-> ") || l.starts_with(b"---")) {
                        next = Some(l);
                        break;
                    }
                    let (bytes, last) = Stanza::parse_body_line(&l)?;
                    if body.len() + bytes.len() > limits::STANZA_BODY {
                        return Err(limits::too_long("a stanza body", limits::STANZA_BODY));
                    }
                    body.extend(bytes);
                    if last {
                        break;
                    }
                }
                stanzas.push(Stanza { tag, args, body });
            } else if line.starts_with(b"---") {
                let mac_b64 = line.strip_prefix(b"--- ").ok_or_else(|| bad("malformed MAC line"))?;
                let mac: [u8; 32] =
                    decode_b64(mac_b64)?.try_into().map_err(|_| bad("MAC is not 32 bytes"))?;
                // The MAC covers the header up to and including "---", not the space after it.
                let mut raw = lines.raw;
                let covered = raw.len() - line.len() - 1 + 3;
                raw.truncate(covered);
                if stanzas.is_empty() {
                    return Err(bad("no recipient stanzas"));
                }
                // A passphrase must stand alone (age spec: "an scrypt stanza must be the only
                // one"): checked here so no identity, passphrase or not, ever opens such a file.
                if stanzas.len() > 1
                    && stanzas.iter().any(|s| matches!(s.tag.as_str(), "argon2id" | "scrypt"))
                {
                    return Err(bad("a passphrase stanza must be the only stanza"));
                }
                return Ok(Header { profile, suite, chunk_size, stanzas, mac_input: raw, mac });
            } else {
                return Err(bad("expected a stanza (->) or the MAC line (---)"));
            }
            line = match next {
                Some(l) => l,
                None => lines.next()?.ok_or_else(|| bad("header ends before its MAC"))?,
            };
        }
    }
}

/// How strictly a header is read. The default is the age specification's (C2SP) and age v1.3's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderRules {
    /// Also reads a stanza whose body ends without its final short line, when every body line
    /// was full (or there was none) and the next line starts a stanza (`-> `) or the MAC line
    /// (`---`). Early rage versions wrote stanzas so, and the Rust age crate still reads them,
    /// so `hyperseal-age` (its drop-in) does too; age v1.3 and the specification refuse them, and
    /// so does everything else here. The header MAC covers the bytes as they are.
    pub legacy_stanza_end: bool,
}

impl Header {
    /// Parses a header from the start of `buf` as bytes arrive (push-based readers): `Ok(None)`
    /// while `buf` ends before the header does, else the header and its length in bytes.
    pub fn parse_prefix(buf: &[u8]) -> Result<Option<(Header, usize)>, Error> {
        Header::parse_prefix_with(buf, HeaderRules::default())
    }

    /// [`Header::parse_prefix`] under `rules`.
    pub fn parse_prefix_with(buf: &[u8], rules: HeaderRules) -> Result<Option<(Header, usize)>, Error> {
        let mut r = EndAware { rest: buf, ended: false };
        match Header::read_with(&mut r, rules) {
            Ok(h) => Ok(Some((h, buf.len() - r.rest.len()))),
            Err(_) if r.ended => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// A slice reader that remembers whether the parser ran into its end (then more bytes may
/// still complete the header).
struct EndAware<'a> {
    rest: &'a [u8],
    ended: bool,
}

impl Read for EndAware<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.fill_buf()?.len().min(buf.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for EndAware<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.ended |= self.rest.is_empty();
        Ok(self.rest)
    }
    fn consume(&mut self, n: usize) {
        self.rest = &self.rest[n..];
    }
}

fn parse_params(line: &[u8]) -> Result<(Suite, usize), Error> {
    let text = std::str::from_utf8(line).map_err(|_| bad("parameters line is not ASCII"))?;
    let mut it = text.split(' ');
    if it.next() != Some("params") {
        return Err(bad("expected the parameters line"));
    }
    let suite_name = it.next().unwrap_or("");
    let suite = Suite::from_name(suite_name).ok_or_else(|| bad(&format!("unknown suite {suite_name:?}")))?;
    let chunk_text = it.next().unwrap_or("");
    // Canonical decimal only: the MAC covers the text, so one value must have one spelling.
    if chunk_text.is_empty() || chunk_text.starts_with('0') || !chunk_text.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad("chunk size is not a canonical decimal"));
    }
    let chunk: usize = chunk_text.parse().map_err(|_| bad("chunk size out of range"))?;
    check_chunk_size(chunk).map_err(|_| bad("chunk size out of range"))?;
    if it.next().is_some() {
        return Err(bad("unexpected field in the parameters line"));
    }
    Ok((suite, chunk))
}

/// The header's lines, read within the budget: every byte read is kept in `raw` (the MAC input),
/// and no read goes past [`limits::HEADER_BYTES`] in all or [`limits::HEADER_LINE`] in a line.
struct Lines<'a, R: BufRead> {
    r: &'a mut R,
    raw: Vec<u8>,
}

impl<R: BufRead> Lines<'_, R> {
    /// One LF-terminated line (without the LF); `Ok(None)` at end of input; an unterminated
    /// final line is an error.
    fn next(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let left = limits::HEADER_BYTES - self.raw.len();
        let cap = left.min(limits::HEADER_LINE);
        let mut line = Vec::new();
        let n = Read::take(&mut *self.r, cap as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        if n > cap {
            return Err(match cap == left {
                true => limits::too_long("the header", limits::HEADER_BYTES),
                false => limits::too_long("a header line", limits::HEADER_LINE),
            });
        }
        if line.last() != Some(&b'\n') {
            return Err(bad("header ends without a newline"));
        }
        self.raw.extend_from_slice(&line);
        line.pop();
        Ok(Some(line))
    }
}

fn bad(msg: &str) -> Error {
    Error::MalformedHeader(msg.to_string())
}
