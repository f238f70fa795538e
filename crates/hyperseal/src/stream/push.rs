//! Push-based payload state: feed bytes in pieces of any size, get sealed chunks (or only
//! authenticated plaintext) out. What it holds back is the final-chunk rule: a chunk is
//! processed only once a byte after it has arrived, or at `finish`. Large pieces are sealed or
//! opened straight from the caller's buffer, over all threads.
//!
//! The public `Sealer`/`Opener` (header included) wrap these; so does [`StreamWriter`], and so do
//! the bindings' stream objects.

use std::io::{self, Write};

use zeroize::Zeroizing;

use super::engine::{open_run, seal_run, Dir};
use super::{ready, ChunkCipher};
use crate::error::Error;

/// Holds back at most one chunk; the rest goes through `seal_run`/`open_run` in place.
struct Pending {
    cipher: ChunkCipher,
    dir: Dir,
    next: u64,
    /// Input of the chunk being collected (plaintext when sealing: zeroized).
    held: Zeroizing<Vec<u8>>,
    threads: usize,
}

impl Pending {
    fn new(cipher: ChunkCipher, dir: Dir, threads: usize) -> Self {
        Pending { cipher, dir, next: 0, held: Zeroizing::new(Vec::new()), threads }
    }

    fn stride(&self) -> usize {
        match self.dir {
            Dir::Seal => self.cipher.chunk_size(),
            Dir::Open => self.cipher.full(),
        }
    }

    /// Processes `input` (whole chunks, the final one among them iff `ends`), appending to `out`.
    fn process(&mut self, input: &[u8], ends: bool, out: &mut Vec<u8>) -> Result<(), Error> {
        if input.is_empty() && !ends {
            return Ok(());
        }
        let start = out.len();
        let room = match self.dir {
            Dir::Seal => super::sealed_len(self.cipher.chunk_size(), input.len()),
            Dir::Open => input.len(),
        };
        out.resize(start + room, 0);
        let n = match self.dir {
            Dir::Seal => {
                seal_run(&self.cipher, self.next, input, ends, &mut out[start..], self.threads);
                room
            }
            Dir::Open => open_run(&self.cipher, self.next, input, ends, &mut out[start..], self.threads)
                .inspect_err(|_| out.truncate(start))?,
        };
        out.truncate(start + n);
        // Chunks are counted exactly as `seal_run`/`open_run` frame them: whole strides, plus
        // the final chunk's framing when the run ends. The index must move past every chunk
        // used, or the next one would reuse its nonce (`tests::every_path_gives_the_same_bytes`).
        let chunks = if ends {
            ready(input.len(), self.stride(), true, self.next).0
        } else {
            input.len() / self.stride()
        };
        self.next += chunks as u64;
        Ok(())
    }

    fn update(&mut self, mut data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let stride = self.stride();
        if !self.held.is_empty() {
            let k = (stride - self.held.len()).min(data.len());
            self.held.extend_from_slice(&data[..k]);
            data = &data[k..];
            if data.is_empty() {
                return Ok(());
            }
            // A whole held chunk with more after it: not the final one.
            let held = std::mem::take(&mut self.held);
            self.process(&held, false, out)?;
            self.held = held;
            self.held.clear();
        }
        let (n, _) = ready(data.len(), stride, false, self.next);
        self.process(&data[..n * stride], false, out)?;
        self.held.extend_from_slice(&data[n * stride..]);
        Ok(())
    }

    fn finish(mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        let held = std::mem::take(&mut self.held);
        self.process(&held, true, out)
    }
}

/// Seals a payload pushed in pieces.
pub(crate) struct PayloadSealer(Pending);

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
pub(crate) struct PayloadOpener(Pending);

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
