//! Push-based encryption and decryption, the shape of pyca's `update()`/`finalize()`: feed any
//! number of pieces of any size, get back every chunk that is complete. The chunks go through
//! the stream engine's push state ([`Pending`] over this scheme); what is C2SP's own here is the
//! header (salt and commitment) and, when opening, refusing every call after a failure.

use super::scheme::{self, ChunkCipher, HEADER_LEN, SALT_LEN};
use super::Key;
use crate::error::Error;
use crate::stream::{grow, Dir, Pending};

/// Encrypts a message pushed in pieces.
///
/// `update` returns the salt and commitment on its first call and then every complete chunk;
/// `finish` returns the short final chunk (the whole message when `update` was never called).
pub struct Encryptor {
    header: [u8; HEADER_LEN],
    header_sent: bool,
    chunks: Pending<ChunkCipher>,
}

impl std::fmt::Debug for Encryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("c2sp::Encryptor(key redacted)")
    }
}

impl Encryptor {
    /// Starts a message under `key`, bound to `context` (may be empty; the decryptor must give
    /// the same bytes). Draws a fresh random salt, so the same key can seal many messages.
    pub fn new(key: &Key, context: &[u8]) -> Result<Encryptor, Error> {
        let mut salt = [0u8; SALT_LEN];
        crate::rng::fill(&mut salt)?;
        let d = scheme::derive(key.variant().params(), key.expose(), &salt, context)?;
        let mut header = [0u8; HEADER_LEN];
        header[..SALT_LEN].copy_from_slice(&salt);
        header[SALT_LEN..].copy_from_slice(&d.commitment);
        let chunks = Pending::new(d.cipher, Dir::Seal, crate::available_threads());
        Ok(Encryptor { header, header_sent: false, chunks })
    }

    /// Worker threads for large `update`s (default: all cores; 1 = the calling thread only).
    pub fn threads(mut self, n: usize) -> Self {
        self.chunks.set_threads(n);
        self
    }

    pub(crate) fn header(&self) -> &[u8; HEADER_LEN] {
        &self.header
    }

    pub(crate) fn cipher(&self) -> &ChunkCipher {
        self.chunks.scheme()
    }

    fn header_len(&self) -> usize {
        if self.header_sent {
            0
        } else {
            HEADER_LEN
        }
    }

    /// Bytes the next `update` with `n` bytes of input appends.
    pub fn update_len(&self, n: usize) -> usize {
        self.header_len() + self.chunks.update_len(n)
    }

    /// Encrypts `data`, appending the output to `out`.
    pub fn update(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let at = grow(out, self.update_len(data.len()));
        let n = self.update_into(data, &mut out[at..])?;
        out.truncate(at + n);
        Ok(())
    }

    /// Encrypts `data` into `out`, which must hold at least [`update_len`](Self::update_len)
    /// bytes; returns the bytes written. Nothing changes if `out` is too small.
    pub fn update_into(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        room(out, self.update_len(data.len()))?;
        let h = self.header_len();
        // Chunks first: a message past the last index is refused with nothing changed.
        let n = self.chunks.update_into(data, &mut out[h..])?;
        out[..h].copy_from_slice(&self.header[..h]);
        self.header_sent = true;
        Ok(h + n)
    }

    /// Bytes [`finish`](Self::finish) appends.
    pub fn finish_len(&self) -> usize {
        self.header_len() + self.chunks.finish_len()
    }

    /// Seals the final chunk (short, possibly empty) and appends it to `out`.
    pub fn finish(self, out: &mut Vec<u8>) -> Result<(), Error> {
        let at = grow(out, self.finish_len());
        let n = self.finish_into(&mut out[at..])?;
        out.truncate(at + n);
        Ok(())
    }

    /// Like [`finish`](Self::finish) into a buffer of at least
    /// [`finish_len`](Self::finish_len) bytes; returns the bytes written.
    pub fn finish_into(self, out: &mut [u8]) -> Result<usize, Error> {
        room(out, self.finish_len())?;
        let h = self.header_len();
        out[..h].copy_from_slice(&self.header[..h]);
        Ok(h + self.chunks.finish_into(&mut out[h..])?)
    }
}

/// Decrypts a message pushed in pieces.
///
/// `update` returns plaintext only from chunks that authenticated; `finish` opens the final
/// chunk and fails if the message was truncated. After any error every later call fails too.
pub struct Decryptor {
    key: Key,
    context: Vec<u8>,
    /// Salt and commitment until they are complete and checked.
    header: Vec<u8>,
    chunks: Option<Pending<ChunkCipher>>,
    threads: usize,
    failed: Option<Error>,
}

impl std::fmt::Debug for Decryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("c2sp::Decryptor(key redacted)")
    }
}

impl Decryptor {
    /// Prepares to open a message sealed under `key` and `context`.
    pub fn new(key: &Key, context: &[u8]) -> Result<Decryptor, Error> {
        Ok(Decryptor {
            key: key.clone(),
            context: context.to_vec(),
            header: Vec::with_capacity(HEADER_LEN),
            chunks: None,
            threads: crate::available_threads(),
            failed: None,
        })
    }

    /// Worker threads for large `update`s (default: all cores; 1 = the calling thread only).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        if let Some(c) = &mut self.chunks {
            c.set_threads(n);
        }
        self
    }

    /// Bytes the next `update` with `n` bytes of input appends (at most).
    pub fn update_len(&self, n: usize) -> usize {
        match &self.chunks {
            Some(c) => c.update_len(n),
            // As if the rest of the header had come and the chunks started empty.
            None => n.saturating_sub(HEADER_LEN - self.header.len()) / scheme::WIRE_CHUNK * scheme::CHUNK,
        }
    }

    /// Decrypts `data`, appending the plaintext of every chunk it completes to `out`.
    pub fn update(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let at = grow(out, self.update_len(data.len()));
        let r = self.update_into(data, &mut out[at..]);
        // Never leave unauthenticated bytes in the caller's vector.
        out.truncate(at + *r.as_ref().unwrap_or(&0));
        r.map(|_| ())
    }

    /// Decrypts `data` into `out`, which must hold [`update_len`](Self::update_len) bytes;
    /// returns the bytes written. On error `out` holds garbage and must not be used.
    pub fn update_into(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        if let Some(e) = &self.failed {
            return Err(scheme::repeat(e));
        }
        room(out, self.update_len(data.len()))?;
        let r = self.update_inner(data, out);
        if let Err(e) = &r {
            self.failed = Some(scheme::repeat(e));
        }
        r
    }

    fn update_inner(&mut self, mut data: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        if self.chunks.is_none() {
            let take = (HEADER_LEN - self.header.len()).min(data.len());
            self.header.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.header.len() < HEADER_LEN {
                return Ok(0);
            }
            let header: &[u8; HEADER_LEN] = self.header[..].try_into().expect("header is complete");
            let cipher = open_header(&self.key, &self.context, header)?;
            self.chunks = Some(Pending::new(cipher, Dir::Open, self.threads));
        }
        // A complete wire chunk is never the final one (that one is always shorter), so it is
        // opened and released at once; a message ending on a boundary fails in `finish`.
        self.chunks.as_mut().expect("keyed above").update_into(data, out)
    }

    /// Bytes [`finish`](Self::finish) appends (at most).
    pub fn finish_len(&self) -> usize {
        self.chunks.as_ref().map_or(0, Pending::finish_len)
    }

    /// Opens the final chunk and appends its plaintext to `out`. Fails if the message ended
    /// early (in the header, on a chunk boundary, or inside a tag) or the chunk is forged.
    pub fn finish(self, out: &mut Vec<u8>) -> Result<(), Error> {
        let at = grow(out, self.finish_len());
        let r = self.finish_into(&mut out[at..]);
        out.truncate(at + *r.as_ref().unwrap_or(&0));
        r.map(|_| ())
    }

    /// Like [`finish`](Self::finish) into a buffer of at least
    /// [`finish_len`](Self::finish_len) bytes; returns the bytes written.
    pub fn finish_into(self, out: &mut [u8]) -> Result<usize, Error> {
        if let Some(e) = &self.failed {
            return Err(scheme::repeat(e));
        }
        let Some(chunks) = self.chunks else {
            return Err(scheme::short_header());
        };
        room(out, chunks.finish_len())?;
        // The scheme rejects a final piece shorter than a tag (or absent) as truncation.
        chunks.finish_into(out)
    }
}

/// Derives the message key from a received salt and checks the commitment before any chunk.
pub(crate) fn open_header(
    key: &Key,
    context: &[u8],
    header: &[u8; HEADER_LEN],
) -> Result<ChunkCipher, Error> {
    let salt: &[u8; SALT_LEN] = header[..SALT_LEN].try_into().expect("24 bytes");
    let d = scheme::derive(key.variant().params(), key.expose(), salt, context)?;
    scheme::check_commitment(&d, &header[SALT_LEN..])?;
    Ok(d.cipher)
}

/// Refuses an output buffer shorter than `need`, before anything changes.
fn room(out: &[u8], need: usize) -> Result<(), Error> {
    if out.len() < need {
        return Err(Error::InvalidArgument(format!("output buffer must hold at least {need} bytes")));
    }
    Ok(())
}
