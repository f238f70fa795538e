//! Push-based encryption and decryption, the shape of pyca's `update()`/`finalize()`: feed any
//! number of pieces of any size, get back every chunk that is complete. Large pieces run on the
//! one executor (`stream::seal_run`/`open_run`); small ones never pay for threads.

use super::scheme::{self, ChunkCipher, CHUNK, HEADER_LEN, SALT_LEN, TAG, WIRE_CHUNK};
use super::Key;
use crate::error::Error;
use crate::stream::{open_run, seal_run, ChunkScheme};

/// Encrypts a message pushed in pieces.
///
/// `update` returns the salt and commitment on its first call and then every complete chunk;
/// `finish` returns the short final chunk (the whole message when `update` was never called).
pub struct Encryptor {
    cipher: ChunkCipher,
    header: [u8; HEADER_LEN],
    header_sent: bool,
    /// Plaintext of the chunk being filled; always shorter than a chunk between calls.
    buf: Vec<u8>,
    next: u64,
    threads: usize,
}

impl std::fmt::Debug for Encryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "c2sp::Encryptor(chunk {}, key redacted)", self.next)
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
        Ok(Encryptor {
            cipher: d.cipher,
            header,
            header_sent: false,
            buf: Vec::with_capacity(CHUNK),
            next: 0,
            threads: crate::available_threads(),
        })
    }

    /// Worker threads for large `update`s (default: all cores; 1 = the calling thread only).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    pub(crate) fn header(&self) -> &[u8; HEADER_LEN] {
        &self.header
    }

    pub(crate) fn cipher(&self) -> &ChunkCipher {
        &self.cipher
    }

    /// Bytes the next `update` with `n` bytes of input appends.
    pub fn update_len(&self, n: usize) -> usize {
        let header = if self.header_sent { 0 } else { HEADER_LEN };
        header + (self.buf.len() + n) / CHUNK * WIRE_CHUNK
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
    pub fn update_into(&mut self, mut data: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        let need = self.update_len(data.len());
        if out.len() < need {
            return Err(Error::InvalidArgument(format!("output buffer must hold at least {need} bytes")));
        }
        let chunks = ((self.buf.len() + data.len()) / CHUNK) as u64;
        if self.next + chunks >= scheme::MAX_CHUNKS {
            return Err(Error::InvalidArgument("message longer than 2^38 chunks (4 PiB)".into()));
        }
        let mut w = 0;
        if !self.header_sent {
            out[..HEADER_LEN].copy_from_slice(&self.header);
            (w, self.header_sent) = (HEADER_LEN, true);
        }
        if !self.buf.is_empty() {
            let take = (CHUNK - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() < CHUNK {
                return Ok(w);
            }
            self.cipher.seal_to(self.next, false, &self.buf, &mut out[w..w + WIRE_CHUNK])?;
            (w, self.next) = (w + WIRE_CHUNK, self.next + 1);
            self.buf.clear();
        }
        let full = data.len() / CHUNK;
        let (body, rest) = data.split_at(full * CHUNK);
        // Indices were checked against the limit above, so sealing cannot fail.
        seal_run(&self.cipher, self.next, body, false, &mut out[w..w + full * WIRE_CHUNK], self.threads);
        (w, self.next) = (w + full * WIRE_CHUNK, self.next + full as u64);
        self.buf.extend_from_slice(rest);
        Ok(w)
    }

    /// Bytes [`finish`](Self::finish) appends.
    pub fn finish_len(&self) -> usize {
        self.update_len(0) + self.buf.len() + TAG
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
    pub fn finish_into(mut self, out: &mut [u8]) -> Result<usize, Error> {
        let need = self.finish_len();
        if out.len() < need {
            return Err(Error::InvalidArgument(format!("output buffer must hold at least {need} bytes")));
        }
        let w = self.update_into(&[], out)?;
        self.cipher.seal_to(self.next, true, &self.buf, &mut out[w..need])?;
        self.buf.fill(0);
        Ok(need)
    }
}

impl Drop for Encryptor {
    fn drop(&mut self) {
        // Buffered plaintext is the caller's secret too.
        self.buf.fill(0);
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
    cipher: Option<ChunkCipher>,
    /// Ciphertext of the chunk being filled; always shorter than a wire chunk between calls.
    buf: Vec<u8>,
    next: u64,
    threads: usize,
    failed: Option<Error>,
}

impl std::fmt::Debug for Decryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "c2sp::Decryptor(chunk {}, key redacted)", self.next)
    }
}

impl Decryptor {
    /// Prepares to open a message sealed under `key` and `context`.
    pub fn new(key: &Key, context: &[u8]) -> Result<Decryptor, Error> {
        Ok(Decryptor {
            key: key.clone(),
            context: context.to_vec(),
            header: Vec::with_capacity(HEADER_LEN),
            cipher: None,
            buf: Vec::new(),
            next: 0,
            threads: crate::available_threads(),
            failed: None,
        })
    }

    /// Worker threads for large `update`s (default: all cores; 1 = the calling thread only).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// Bytes the next `update` with `n` bytes of input appends (at most).
    pub fn update_len(&self, n: usize) -> usize {
        let body = if self.cipher.is_some() {
            self.buf.len() + n
        } else {
            n.saturating_sub(HEADER_LEN - self.header.len())
        };
        body / WIRE_CHUNK * CHUNK
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
        let need = self.update_len(data.len());
        if out.len() < need {
            return Err(Error::InvalidArgument(format!("output buffer must hold at least {need} bytes")));
        }
        let r = self.update_inner(data, out);
        if let Err(e) = &r {
            self.failed = Some(scheme::repeat(e));
        }
        r
    }

    fn update_inner(&mut self, mut data: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        if self.cipher.is_none() {
            let take = (HEADER_LEN - self.header.len()).min(data.len());
            self.header.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.header.len() < HEADER_LEN {
                return Ok(0);
            }
            let header: &[u8; HEADER_LEN] = self.header[..].try_into().expect("header is complete");
            self.cipher = Some(open_header(&self.key, &self.context, header)?);
        }
        let cipher = self.cipher.as_ref().expect("keyed above");
        let chunks = ((self.buf.len() + data.len()) / WIRE_CHUNK) as u64;
        if self.next + chunks >= scheme::MAX_CHUNKS {
            return Err(Error::InvalidArgument("message longer than 2^38 chunks (4 PiB)".into()));
        }
        // A complete wire chunk is never the final one (that one is always shorter), so it can
        // be opened and released now; a message ending on a boundary fails in `finish`.
        let mut w = 0;
        if !self.buf.is_empty() {
            let take = (WIRE_CHUNK - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() < WIRE_CHUNK {
                return Ok(0);
            }
            cipher.open_to(self.next, false, &self.buf, &mut out[..CHUNK])?;
            (w, self.next) = (CHUNK, self.next + 1);
            self.buf.clear();
        }
        let full = data.len() / WIRE_CHUNK;
        let (body, rest) = data.split_at(full * WIRE_CHUNK);
        open_run(cipher, self.next, body, false, &mut out[w..w + full * CHUNK], self.threads)?;
        (w, self.next) = (w + full * CHUNK, self.next + full as u64);
        self.buf.extend_from_slice(rest);
        Ok(w)
    }

    /// Bytes [`finish`](Self::finish) appends (at most).
    pub fn finish_len(&self) -> usize {
        self.buf.len().saturating_sub(TAG)
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
        let Some(cipher) = &self.cipher else {
            return Err(scheme::short_header());
        };
        let n = self.finish_len();
        if out.len() < n {
            return Err(Error::InvalidArgument(format!("output buffer must hold at least {n} bytes")));
        }
        // `open` rejects a final piece shorter than a tag (or absent) as truncation.
        cipher.open_to(self.next, true, &self.buf, &mut out[..n])
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

/// Appends `n` bytes of room to `out` and returns where they start. An empty vector gets a
/// fresh zeroed allocation (huge-page backed when large) instead of a memset.
fn grow(out: &mut Vec<u8>, n: usize) -> usize {
    if out.is_empty() && out.capacity() < n {
        *out = crate::mem::output_buffer(n);
        return 0;
    }
    let at = out.len();
    out.resize(at + n, 0);
    at
}
