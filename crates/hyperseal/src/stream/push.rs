//! Push-based payload state: feed bytes in pieces of any size, get sealed chunks (or only
//! authenticated plaintext) out. What it holds back is the final-chunk rule: a chunk is
//! processed only once a byte after it has arrived, or at `finish`. Large pieces are sealed or
//! opened straight from the caller's buffer, over all threads.
//!
//! The public `Sealer`/`Opener` (header included) wrap these; so does [`StreamWriter`], and so do
//! the bindings' stream objects.

use std::io::{self, Write};

use zeroize::Zeroizing;

use super::engine::{open_prefix, open_run, seal_run, Dir};
use super::open_other_flag;
use super::{ChunkCipher, ChunkScheme};
use crate::error::Error;
use crate::format::TAG_LEN;

/// Push state over any [`ChunkScheme`]: holds back at most one chunk (what the scheme's
/// final-chunk rule cannot release yet); the rest goes through `seal_run`/`open_run` straight
/// from the caller's piece into the caller's buffer. The `_into` calls write exactly what the
/// `_len` calls say (at most, when opening), which is what buffers of a fixed size (pyca's
/// `update_into`, Python `bytes`) need.
pub(crate) struct Pending<S: ChunkScheme> {
    scheme: S,
    dir: Dir,
    next: u64,
    /// Input of the chunk being collected (plaintext when sealing: zeroized).
    held: Zeroizing<Vec<u8>>,
    threads: usize,
}

impl<S: ChunkScheme> Pending<S> {
    pub(crate) fn new(scheme: S, dir: Dir, threads: usize) -> Self {
        Pending { scheme, dir, next: 0, held: Zeroizing::new(Vec::new()), threads }
    }

    #[cfg(not(portable_backend))] // C2SP's alone (native builds only: lib.rs)
    pub(crate) fn scheme(&self) -> &S {
        &self.scheme
    }

    /// Starts at chunk `index` instead of 0, to test the index limits without sealing 2^38
    /// chunks first.
    #[cfg(all(test, not(portable_backend)))] // C2SP's tests
    pub(crate) fn at_index(mut self, index: u64) -> Self {
        self.next = index;
        self
    }

    /// Worker threads for large pieces (1 = the calling thread only).
    #[cfg(not(portable_backend))] // C2SP's alone (native builds only: lib.rs)
    pub(crate) fn set_threads(&mut self, n: usize) {
        self.threads = n.max(1);
    }

    /// Input and output bytes per full chunk.
    fn strides(&self) -> (usize, usize) {
        let (pt, ct) = (self.scheme.chunk_size(), self.scheme.chunk_size() + TAG_LEN);
        match self.dir {
            Dir::Seal => (pt, ct),
            Dir::Open => (ct, pt),
        }
    }

    /// Non-final chunks that `n` more bytes would complete and release.
    fn releasable(&self, n: usize) -> usize {
        self.scheme.ready(self.held.len() + n, self.strides().0, false, self.next).0
    }

    /// Bytes [`update_into`](Self::update_into) writes for `n` bytes of input.
    pub(crate) fn update_len(&self, n: usize) -> usize {
        self.releasable(n) * self.strides().1
    }

    /// Processes the chunks that `data` completes into `out` (at least `update_len` bytes);
    /// returns the bytes written. When opening, on error `out` holds unauthenticated bytes.
    #[cfg(not(portable_backend))] // C2SP's alone (native builds only: lib.rs)
    pub(crate) fn update_into(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        let (n, r) = self.update_partial(data, out);
        r.map(|()| n)
    }

    /// [`update_into`](Self::update_into), saying on error how much of `out` was released: the
    /// plaintext of every chunk that authenticated before the failing one.
    fn update_partial(&mut self, mut data: &[u8], out: &mut [u8]) -> (usize, Result<(), Error>) {
        let ((stride, out_stride), total) = (self.strides(), self.releasable(data.len()));
        if total == 0 {
            self.held.extend_from_slice(data);
            return (0, Ok(()));
        }
        // Refused before anything changes: past the scheme's last index a nonce would repeat,
        // and the final chunk still needs an index after these.
        if let Err(e) = self.scheme.check_index(self.next + total as u64) {
            return (0, Err(e));
        }
        let mut w = 0;
        let mut run = total;
        if !self.held.is_empty() {
            // Releasing anything means the held chunk is complete and something follows it.
            let k = stride - self.held.len();
            self.held.extend_from_slice(&data[..k]);
            data = &data[k..];
            w = match self.dir {
                Dir::Seal => {
                    match self.scheme.seal_to(self.next, false, &self.held, &mut out[..out_stride]) {
                        Ok(()) => out_stride,
                        Err(e) => return (0, Err(e)),
                    }
                }
                Dir::Open => {
                    match self.scheme.open_to(self.next, false, &self.held, &mut out[..out_stride]) {
                        Ok(n) => n,
                        Err(e) => {
                            return match open_other_flag(&self.scheme, self.next, false, &self.held, out) {
                                Some(after) => (out_stride, Err(after)),
                                None => (0, Err(e)),
                            }
                        }
                    }
                }
            };
            (self.next, run) = (self.next + 1, run - 1);
            self.held.clear();
        }
        let (body, rest) = data.split_at(run * stride);
        let to = &mut out[w..w + run * out_stride];
        w += match self.dir {
            Dir::Seal => {
                seal_run(&self.scheme, self.next, body, false, to, self.threads);
                to.len()
            }
            Dir::Open => match open_run(&self.scheme, self.next, body, false, to, self.threads) {
                Ok(n) => n,
                Err(e) => {
                    let (good, e) = open_prefix(&self.scheme, self.next, body, false, to, e);
                    return (w + good, Err(e));
                }
            },
        };
        // The index moves past every chunk used, or the next one would reuse its nonce
        // (`tests::every_path_gives_the_same_bytes`).
        self.next += run as u64;
        self.held.extend_from_slice(rest);
        (w, Ok(()))
    }

    /// Bytes [`finish_into`](Self::finish_into) writes (at most, when opening).
    pub(crate) fn finish_len(&self) -> usize {
        let (chunks, _) = self.scheme.ready(self.held.len(), self.strides().0, true, self.next);
        match self.dir {
            Dir::Seal => self.held.len() + chunks * TAG_LEN,
            Dir::Open => self.held.len().saturating_sub(chunks * TAG_LEN),
        }
    }

    /// Processes what is held as the end of the payload, into `out` (at least `finish_len`
    /// bytes); returns the bytes written. Opening fails if the payload was cut short.
    #[cfg(not(portable_backend))] // C2SP's alone (native builds only: lib.rs)
    pub(crate) fn finish_into(self, out: &mut [u8]) -> Result<usize, Error> {
        let (n, r) = self.finish_partial(out);
        r.map(|()| n)
    }

    /// [`finish_into`](Self::finish_into), saying on error how much of `out` was released.
    fn finish_partial(self, out: &mut [u8]) -> (usize, Result<(), Error>) {
        let n = self.finish_len();
        let (chunks, _) = self.scheme.ready(self.held.len(), self.strides().0, true, self.next);
        if let Some(last) = (self.next + chunks as u64).checked_sub(1) {
            if let Err(e) = self.scheme.check_index(last) {
                return (0, Err(e));
            }
        }
        match self.dir {
            Dir::Seal => {
                seal_run(&self.scheme, self.next, &self.held, true, &mut out[..n], self.threads);
                (n, Ok(()))
            }
            Dir::Open => match open_run(&self.scheme, self.next, &self.held, true, out, self.threads) {
                Ok(n) => (n, Ok(())),
                Err(e) => {
                    let (good, e) = open_prefix(&self.scheme, self.next, &self.held, true, out, e);
                    (good, Err(e))
                }
            },
        }
    }

    /// [`update_into`](Self::update_into), appending to `out`. On error `out` keeps the
    /// plaintext of the chunks that authenticated before the failing one, and nothing else.
    pub(crate) fn update(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let at = grow(out, self.update_len(data.len()));
        let (n, r) = self.update_partial(data, &mut out[at..]);
        out.truncate(at + n);
        r
    }

    /// [`finish_into`](Self::finish_into), appending to `out` (on error, as [`Self::update`]).
    pub(crate) fn finish(self, out: &mut Vec<u8>) -> Result<(), Error> {
        let at = grow(out, self.finish_len());
        let (n, r) = self.finish_partial(&mut out[at..]);
        out.truncate(at + n);
        r
    }
}

/// Appends `n` bytes of room to `out` and returns where they start. An empty vector gets a
/// fresh zeroed allocation (huge-page backed when large) instead of a memset.
pub(crate) fn grow(out: &mut Vec<u8>, n: usize) -> usize {
    if out.is_empty() && out.capacity() < n {
        *out = crate::mem::output_buffer(n);
        return 0;
    }
    let at = out.len();
    out.resize(at + n, 0);
    at
}

/// Seals a payload pushed in pieces.
pub(crate) struct PayloadSealer(Pending<ChunkCipher>);

impl PayloadSealer {
    pub(crate) fn new(cipher: ChunkCipher, threads: usize) -> Self {
        PayloadSealer(Pending::new(cipher, Dir::Seal, threads))
    }
    /// Appends the chunks that `data` completes to `out`.
    pub(crate) fn update(&mut self, data: &[u8], out: &mut Vec<u8>) {
        self.0.update(data, out).expect("sealing cannot fail")
    }
    /// Appends the final chunk.
    pub(crate) fn finish(self, out: &mut Vec<u8>) {
        self.0.finish(out).expect("sealing cannot fail")
    }
}

/// Opens a payload pushed in pieces; releases only authenticated plaintext.
pub(crate) struct PayloadOpener(Pending<ChunkCipher>);

impl PayloadOpener {
    pub(crate) fn new(cipher: ChunkCipher, threads: usize) -> Self {
        PayloadOpener(Pending::new(cipher, Dir::Open, threads))
    }
    /// Appends the plaintext of the chunks that `data` completes (and that authenticate) to `out`.
    pub(crate) fn update(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        self.0.update(data, out)
    }
    /// Opens the final chunk; fails if the payload was cut short.
    pub(crate) fn finish(self, out: &mut Vec<u8>) -> Result<(), Error> {
        self.0.finish(out)
    }
}

/// `Write` adapter that encrypts into a payload (after the header [`Encryptor::wrap_output`]
/// wrote). Must be [`finish`](StreamWriter::finish)ed: dropping it unfinished loses the held-back
/// tail, and the output then fails to decrypt (as a truncated file).
///
/// [`Encryptor::wrap_output`]: crate::Encryptor::wrap_output
pub struct StreamWriter<W: Write> {
    inner: W,
    sealer: PayloadSealer,
    buf: Vec<u8>,
    poisoned: bool,
}

impl<W: Write> StreamWriter<W> {
    pub(crate) fn new(inner: W, sealer: PayloadSealer) -> Self {
        StreamWriter { inner, sealer, buf: Vec::new(), poisoned: false }
    }

    /// Seals the final chunk, flushes, and returns the inner writer.
    pub fn finish(mut self) -> Result<W, Error> {
        if self.poisoned {
            return Err(Error::Io(io::Error::other("an earlier write failed")));
        }
        self.buf.clear();
        self.sealer.finish(&mut self.buf);
        self.inner.write_all(&self.buf)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for StreamWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.poisoned {
            return Err(io::Error::other("an earlier write failed"));
        }
        self.buf.clear();
        self.sealer.update(data, &mut self.buf);
        // Sealed chunks are gone from the sealer: if they cannot be written, the stream is broken.
        self.inner.write_all(&self.buf).inspect_err(|_| self.poisoned = true)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        // Sealed chunks are written as soon as they are sealed; the tail waits for `finish`.
        self.inner.flush()
    }
}
