//! The payload streams: [`StreamWriter`] and [`StreamReader`], age's names over the core's
//! writer and reader, which seal and open batches of chunks on every core behind the same
//! `Write`/`Read` calls (an 8 KiB `io::copy` included: the core gathers what it is given).

use std::io::{self, Read, Seek, SeekFrom, Write};

use zeroize::Zeroizing;

use crate::io::{set_seek, In, Out, SeekSlot};

#[cfg(feature = "async")]
pub(crate) use crate::async_io::AsyncHead;

/// Encrypts plaintext written to it into an age payload.
///
/// Call [`StreamWriter::finish`] at the end: without it the file has no final chunk and will
/// not decrypt.
pub struct StreamWriter<W> {
    pub(crate) inner: WriterInner<W>,
    /// Plaintext gathered from small writes (`io::copy` writes 8 KiB at a time). The core seals
    /// a piece's whole chunks on every core, but a piece smaller than a chunk completes at most
    /// one chunk, sealed on the calling thread: gathered, the core sees pieces of many chunks.
    pub(crate) gathered: Zeroizing<Vec<u8>>,
}

/// Plaintext gathered before it goes to the core: 64 chunks, enough for every core to take a
/// share of each piece, and little memory.
const GATHER: usize = 64 * (64 << 10);

pub(crate) enum WriterInner<W> {
    Sync(Option<hyperseal::StreamWriter<Out<W>>>),
    #[cfg(feature = "async")]
    Async(crate::async_io::AsyncWriter<W>),
}

impl<W: Write> StreamWriter<W> {
    pub(crate) fn new(inner: hyperseal::StreamWriter<Out<W>>) -> Self {
        StreamWriter { inner: WriterInner::Sync(Some(inner)), gathered: Zeroizing::new(Vec::new()) }
    }

    /// Hands the gathered plaintext to the core.
    fn push(&mut self) -> io::Result<()> {
        if self.gathered.is_empty() {
            return Ok(());
        }
        let gathered = std::mem::take(&mut self.gathered);
        let r = self.sync()?.write_all(&gathered);
        self.gathered = gathered;
        self.gathered.clear();
        r
    }

    fn sync(&mut self) -> io::Result<&mut hyperseal::StreamWriter<Out<W>>> {
        match &mut self.inner {
            WriterInner::Sync(Some(w)) => Ok(w),
            _ => Err(io::Error::new(io::ErrorKind::Unsupported, "not a synchronous stream writer")),
        }
    }

    /// Writes the final chunk, flushes, and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.push()?;
        let w = match &mut self.inner {
            WriterInner::Sync(w) => w.take(),
            #[cfg(feature = "async")]
            WriterInner::Async(_) => None,
        };
        let w =
            w.ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, "not a synchronous stream writer"))?;
        w.finish().map(Out::into_inner).map_err(hyperseal::Error::into_io)
    }
}

impl<W: Write> Write for StreamWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() >= GATHER {
            self.push()?;
            return self.sync()?.write(buf);
        }
        if self.gathered.len() + buf.len() > GATHER {
            self.push()?;
        }
        if self.gathered.capacity() == 0 {
            self.gathered.reserve_exact(GATHER);
        }
        self.gathered.extend_from_slice(buf);
        Ok(buf.len())
    }

    /// Seals what was gathered (all but the held-back tail of the last chunk, which only
    /// [`finish`](Self::finish) may seal) and flushes the output.
    fn flush(&mut self) -> io::Result<()> {
        self.push()?;
        self.sync()?.flush()
    }
}

/// Decrypts an age payload as it is read: only authenticated plaintext is returned.
///
/// Seekable when the input is (and is not armored).
pub struct StreamReader<R> {
    pub(crate) inner: ReaderInner<R>,
}

pub(crate) enum ReaderInner<R> {
    Sync(hyperseal::StreamReader<hyperseal::Source<In<R>>>, SeekSlot<R>),
    #[cfg(feature = "async")]
    Async(crate::async_io::AsyncReader<R>),
}

impl<R: Read> StreamReader<R> {
    pub(crate) fn new(inner: hyperseal::StreamReader<hyperseal::Source<In<R>>>, seek: SeekSlot<R>) -> Self {
        StreamReader { inner: ReaderInner::Sync(inner, seek) }
    }
}

/// A payload error as age reports it: a chunk that fails to authenticate is
/// `InvalidData`, a payload cut short (no final chunk) is `UnexpectedEof`.
pub(crate) fn payload_error(e: io::Error) -> io::Error {
    let truncated = e.get_ref().and_then(|inner| inner.downcast_ref::<hyperseal::Error>());
    match truncated {
        Some(hyperseal::Error::Truncated(_)) => {
            io::Error::new(io::ErrorKind::UnexpectedEof, e.into_inner().expect("checked"))
        }
        #[cfg(feature = "armor")]
        Some(hyperseal::Error::Armor(_)) => crate::armor::read_error(hyperseal::Error::from(e)),
        _ => e,
    }
}

impl<R: Read> Read for StreamReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.inner {
            ReaderInner::Sync(r, _) => r.read(buf).map_err(payload_error),
            #[cfg(feature = "async")]
            ReaderInner::Async(_) => {
                Err(io::Error::new(io::ErrorKind::Unsupported, "an asynchronous stream reader"))
            }
        }
    }
}

impl<R: Read + Seek> Seek for StreamReader<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match &mut self.inner {
            ReaderInner::Sync(r, slot) => {
                set_seek(slot);
                r.seek(pos).map_err(payload_error)
            }
            #[cfg(feature = "async")]
            ReaderInner::Async(_) => {
                Err(io::Error::new(io::ErrorKind::Unsupported, "an asynchronous stream reader"))
            }
        }
    }
}
