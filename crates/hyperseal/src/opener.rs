//! Push-based decryption of a whole file, header included: feed the file's bytes in pieces of
//! any size, get back only plaintext that authenticated. The Node and browser streams and
//! Python's file objects wrap this; none of them parses a header or frames a chunk itself.

use std::sync::Arc;

use crate::format::{Header, HeaderRules, SALT_LEN};
use crate::recipient::Identity;
use crate::stream::PayloadOpener;
use crate::{error::Error, keys};

/// The start of a file, until its header and salt are in.
#[derive(Default)]
struct Pending {
    buf: Vec<u8>,
    /// Bytes already searched for the MAC line.
    scanned: usize,
    /// Where the MAC line (`---`) starts, once seen.
    mac_at: Option<usize>,
    /// Length of `buf` at the last parse.
    looked: usize,
}

enum State {
    /// Collecting the header and the salt.
    Header(Pending),
    Payload(PayloadOpener),
    /// Finished, or failed: errors are sticky.
    Done,
}

/// Push-based decryption: `update` with the file's bytes as they arrive, then `finish`.
///
/// ```
/// use hyperseal::{recipient, Kind, Opener};
/// let key = recipient::generate(Kind::X25519)?;
/// let file = hyperseal::encrypt(&[recipient::parse_recipient(&key.public)?], b"hello")?;
/// let mut opener = Opener::new(recipient::parse_identities(&key.secret)?.into());
/// let mut plain = Vec::new();
/// for piece in file.chunks(100) {
///     opener.update(piece, &mut plain)?;
/// }
/// opener.finish(&mut plain)?;
/// assert_eq!(plain, b"hello");
/// # Ok::<(), hyperseal::Error>(())
/// ```
pub struct Opener {
    identities: Arc<Vec<Box<dyn Identity>>>,
    state: State,
    header: Option<Header>,
    threads: usize,
    rules: HeaderRules,
}

impl Opener {
    /// Prepares to decrypt a binary (not armored) file with `identities`.
    pub fn new(identities: Arc<Vec<Box<dyn Identity>>>) -> Self {
        Opener {
            identities,
            state: State::Header(Pending::default()),
            header: None,
            threads: 0,
            rules: HeaderRules::default(),
        }
    }

    /// Reads the header under `rules` instead of the specification's.
    pub fn header_rules(mut self, rules: HeaderRules) -> Self {
        self.rules = rules;
        self
    }

    /// Sets the threads for large pieces: 1 = this thread only, 0 = all cores (the default).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// The header, once it has been read and authenticated.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The sizes of this file (see [`FileSizes`](crate::FileSizes)), once its header
    /// is in.
    pub fn sizes(&self) -> Option<crate::encrypt::FileSizes> {
        let h = self.header.as_ref()?;
        Some(crate::encrypt::FileSizes::new(h.encode_len() + SALT_LEN, h.chunk_size))
    }

    /// Feeds file bytes; appends to `out` the plaintext of every chunk now known not to be the
    /// last that authenticated. After an error every call fails.
    pub fn update(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let r = self.step(data, out);
        if r.is_err() {
            self.state = State::Done;
        }
        r
    }

    /// Ends the input: opens the final chunk, or fails if the file was cut short.
    pub fn finish(mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Payload(p) => p.finish(out),
            // The whole file was shorter than its header: say what the stream reader would.
            State::Header(Pending { buf, .. }) => Err(match Header::read_with(&mut &buf[..], self.rules) {
                Err(e) => e,
                Ok(_) => Error::MalformedHeader("file ends before the 16-byte payload nonce".into()),
            }),
            State::Done => Err(finished()),
        }
    }

    fn step(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let mut pending = match &mut self.state {
            State::Payload(p) => return p.update(data, out),
            State::Done => return Err(finished()),
            State::Header(p) => {
                p.buf.extend_from_slice(data);
                std::mem::take(p)
            }
        };
        let buf = &pending.buf;
        if buf.starts_with(b"-----BEGIN") {
            return Err(Error::Armor("push-based decryption reads binary files; de-armor first".into()));
        }
        // Fail at once on input that cannot become a header.
        let plausible = [crate::format::HYPERSEAL_V1, crate::format::AGE_V1].iter().any(|v| {
            v.as_bytes().starts_with(&buf[..buf.len().min(v.len())]) || buf.starts_with(v.as_bytes())
        });
        if !plausible {
            return Err(Error::UnknownFormat);
        }
        // Parse once the MAC line and the salt are in, or when the buffer has doubled since the
        // last look (so malformed input still fails early) — never at every piece, which would
        // cost time quadratic in the header for input that arrives a byte at a time. The parser
        // itself stops at the header budget (`limits::HEADER_BYTES`).
        if pending.mac_at.is_none() {
            let from = pending.scanned.saturating_sub(3);
            pending.mac_at = buf[from..].windows(4).position(|w| w == b"\n---").map(|i| from + i + 1);
            pending.scanned = buf.len();
        }
        let complete = match pending.mac_at {
            Some(at) => match buf[at..].iter().position(|&b| b == b'\n') {
                Some(nl) => buf.len() >= at + nl + 1 + SALT_LEN,
                // "--- " and 43 base64 characters: a longer MAC line is not one.
                None if buf.len() - at > 64 => {
                    Header::parse_prefix_with(buf, self.rules)?;
                    return Err(Error::MalformedHeader("malformed MAC line".into()));
                }
                None => false,
            },
            None => false,
        };
        if !complete && buf.len() < 2 * pending.looked.max(256) {
            self.state = State::Header(pending);
            return Ok(());
        }
        let parsed =
            Header::parse_prefix_with(buf, self.rules)?.filter(|(_, len)| buf.len() >= len + SALT_LEN);
        let Some((header, len)) = parsed else {
            pending.looked = pending.buf.len();
            self.state = State::Header(pending);
            return Ok(());
        };
        let salt: &[u8; SALT_LEN] = buf[len..len + SALT_LEN].try_into().expect("checked above");
        let cipher = keys::open_header(&header, &self.identities, salt)?;
        let mut payload = PayloadOpener::new(cipher, self.threads);
        payload.update(&buf[len + SALT_LEN..], out)?;
        self.header = Some(header);
        self.state = State::Payload(payload);
        Ok(())
    }
}

fn finished() -> Error {
    Error::InvalidArgument("the stream is already finished or failed".into())
}
