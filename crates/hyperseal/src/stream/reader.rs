//! `Read` (and, on seekable inputs, `Seek`) adapter that decrypts a payload, over any
//! [`ChunkScheme`]: [`StreamReader`] for STREAM payloads, `c2sp::Reader` for C2SP messages.
//!
//! Plaintext is released only from chunks that authenticated. Random access authenticates the
//! final chunk first, so the plaintext length it reports is trusted, then decrypts only the
//! batch of chunks that covers the requested position.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

use super::batch::{read_full, Batch, Dir, Filler, Layout, Opening};
use super::{ChunkCipher, ChunkScheme};
use crate::error::Error;
use crate::exec;
use crate::format::TAG_LEN;

/// Plaintext per batch: the most a seek-and-read decrypts beyond what it returns.
const BATCH_BYTES: usize = 1 << 20;

/// Decrypting reader over the chunks of scheme `S`.
pub(crate) struct ChunkReader<R, S> {
    inner: R,
    cipher: Arc<S>,
    layout: Layout,
    batch: Batch,
    filler: Filler,
    threads: usize,
    /// The next batch, read and being opened by the executor's helpers while `batch` is
    /// returned (see `read`), or what reading it failed with (returned after `batch`).
    ahead: Option<Result<Box<Opening<S>>, io::Error>>,
    /// A batch's buffer, kept for the next batch read ahead (boxed: readers are embedded in
    /// enums of other readers).
    spare: Box<Batch>,
    /// Whether `batch` holds processed chunks.
    loaded: bool,
    /// Plaintext position of the next byte to return.
    pos: u64,
    /// Seekable inputs only: payload start offset and the authenticated plaintext length.
    start: Option<u64>,
    len: Option<u64>,
}

impl<R: Read, S: ChunkScheme + Send + 'static> ChunkReader<R, S> {
    /// Wraps `inner`, positioned at the first payload chunk. `threads > 1` opens the chunks of
    /// a batch in parallel.
    pub(crate) fn new(inner: R, cipher: S, threads: usize) -> Self {
        let layout = Layout::new(Dir::Open, cipher.chunk_size(), BATCH_BYTES);
        ChunkReader {
            inner,
            batch: Batch::default(),
            filler: Filler::starting_at(0),
            threads,
            ahead: None,
            spare: Box::default(),
            cipher: Arc::new(cipher),
            layout,
            loaded: false,
            pos: 0,
            start: None,
            len: None,
        }
    }

    /// Consumes the reader, returning the inner reader.
    pub(crate) fn into_inner(self) -> R {
        self.inner
    }

    #[cfg(not(portable_backend))] // C2SP's alone (native builds only: lib.rs)
    pub(crate) fn set_threads(&mut self, n: usize) {
        self.threads = n.max(1);
    }

    fn chunk_of(&self, pos: u64) -> (u64, usize) {
        let c = self.cipher.chunk_size() as u64;
        (pos / c, (pos % c) as usize)
    }
}

impl<R: Read, S: ChunkScheme + Send + 'static> Read for ChunkReader<R, S> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.loaded {
                let (chunk, off) = self.chunk_of(self.pos);
                let slot = chunk.wrapping_sub(self.batch.first) as usize;
                let len = |slot| self.batch.out_len(slot, &self.layout);
                if chunk >= self.batch.first && slot < self.batch.good_slots() && off < len(slot) {
                    let at = slot * self.layout.cap() + off;
                    let k = (len(slot) - off).min(out.len());
                    out[..k].copy_from_slice(&self.batch.buf[at..at + k]);
                    self.pos += k as u64;
                    return Ok(k);
                }
                if let Some((bad, e)) = &self.batch.failed {
                    if slot >= *bad {
                        // Sticky: the same error on every later read.
                        return Err(clone_err(e).into_io());
                    }
                }
                if self.batch.last {
                    return Ok(0);
                }
            }
            match self.ahead.take() {
                Some(ahead) => {
                    let opened = ahead?.join();
                    *self.spare = std::mem::replace(&mut self.batch, opened);
                }
                None => {
                    self.filler.fill(&mut self.inner, &mut self.batch, &self.layout, &*self.cipher)?;
                    self.batch.process(&*self.cipher, &self.layout, &[], self.threads);
                }
            }
            self.loaded = true;
            self.read_ahead();
        }
    }
}

impl<R: Read, S: ChunkScheme + Send + 'static> ChunkReader<R, S> {
    /// Reads the batch after the one just loaded and starts opening it on the executor's
    /// helpers, so they work while the caller is handed this one in small reads (`io::copy`'s
    /// 8 KiB): the caller's copying and reading then overlap the opening instead of alternating
    /// with it, and it joins the opening for what is left when it needs the batch. Only when the
    /// input had its last batch ready (`Filler::ready`: memory, a file): reading ahead from a
    /// pipe or a socket would hold back plaintext already opened until more input arrives.
    fn read_ahead(&mut self) {
        let more = !self.batch.last && self.batch.failed.is_none() && self.filler.ready;
        if !more || exec::resolve(self.threads) <= 1 {
            return;
        }
        let mut next = std::mem::take(&mut *self.spare);
        let filled = self.filler.fill(&mut self.inner, &mut next, &self.layout, &*self.cipher);
        self.ahead =
            Some(filled.map(|_| Box::new(next.start_open(&self.cipher, &self.layout, self.threads))));
    }
}

impl<R: Read + Seek, S: ChunkScheme + Send + 'static> ChunkReader<R, S> {
    /// The plaintext length, after authenticating the final chunk. Seekable inputs only.
    pub(crate) fn plaintext_len(&mut self) -> Result<u64, Error> {
        if let Some(len) = self.len {
            return Ok(len);
        }
        // The payload start is where we are now, minus what the sequential path has consumed.
        let start = match self.start {
            Some(s) => s,
            None if self.filler.next == 0 => self.inner.stream_position()?,
            None => return Err(Error::InvalidArgument("seek after a sequential read".into())),
        };
        let end = self.inner.seek(SeekFrom::End(0))?;
        let inner = &mut self.inner;
        let len = super::authenticated_len(&*self.cipher, end.saturating_sub(start), |at, buf| {
            inner.seek(SeekFrom::Start(start + at))?;
            read_full(inner, buf)?;
            Ok(())
        })?;
        self.start = Some(start);
        self.len = Some(len);
        // Force a reposition on the next read.
        self.loaded = false;
        self.reposition(self.pos)?;
        Ok(len)
    }

    fn reposition(&mut self, pos: u64) -> io::Result<()> {
        let start = self.start.expect("set by plaintext_len");
        let (chunk, _) = self.chunk_of(pos.min(self.len.unwrap_or(0)));
        let full = (self.cipher.chunk_size() + TAG_LEN) as u64;
        self.inner.seek(SeekFrom::Start(start + chunk * full))?;
        self.filler = Filler::starting_at(chunk);
        self.ahead = None;
        self.loaded = false;
        Ok(())
    }
}

impl<R: Read + Seek, S: ChunkScheme + Send + 'static> Seek for ChunkReader<R, S> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let len = self.plaintext_len().map_err(Error::into_io)?;
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        }
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        // Kept only when the target is in the loaded batch's authenticated chunks: a seek past a
        // damaged chunk loads a batch from the target on, so what follows the damage reads.
        let in_batch = self.loaded && {
            let (chunk, _) = self.chunk_of(target);
            chunk >= self.batch.first && chunk < self.batch.first + self.batch.good_slots() as u64
        };
        if !in_batch {
            self.reposition(target)?;
        }
        self.pos = target;
        Ok(target)
    }
}

/// Decrypting reader over a STREAM payload (from [`Decryptor::into_reader`]): `Read`, and on a
/// seekable input `Seek` with an authenticated [`plaintext_len`](StreamReader::plaintext_len).
///
/// [`Decryptor::into_reader`]: crate::Decryptor::into_reader
pub struct StreamReader<R>(ChunkReader<R, ChunkCipher>);

impl<R: Read> StreamReader<R> {
    pub(crate) fn new(inner: R, cipher: ChunkCipher, threads: usize) -> Self {
        StreamReader(ChunkReader::new(inner, cipher, threads))
    }

    /// Consumes the reader, returning the inner reader.
    pub fn into_inner(self) -> R {
        self.0.into_inner()
    }
}

impl<R: Read + Seek> StreamReader<R> {
    /// The plaintext length, after authenticating the final chunk. Seekable inputs only.
    pub fn plaintext_len(&mut self) -> Result<u64, Error> {
        self.0.plaintext_len()
    }
}

impl<R: Read> Read for StreamReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.0.read(out)
    }
}

impl<R: Read + Seek> Seek for StreamReader<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.0.seek(to)
    }
}

/// Library errors are not `Clone` (they may hold an `io::Error`); payload errors are plain data.
fn clone_err(e: &Error) -> Error {
    match e {
        Error::ChunkAuth(i) => Error::ChunkAuth(*i),
        Error::Truncated(i) => Error::Truncated(*i),
        other => Error::Io(io::Error::other(other.to_string())),
    }
}
