//! `Read`/`Write` for any type, through function pointers taken where the bound is known.
//!
//! age's `Decryptor<R>`, `StreamReader<R>`, `StreamWriter<W>` and `ArmoredReader<R>` carry no
//! bound, because one type serves both `std::io` and `futures::io`; the core's types require
//! `R: Read` (or `BufRead`, `Write`) on the type itself. So the synchronous constructors, where
//! the bound holds, wrap the value with the trait's own methods, and the core holds the
//! wrapper, which implements the traits for every `R`.

use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, OnceLock};

type ReadFn<R> = fn(&mut R, &mut [u8]) -> io::Result<usize>;
type FillFn<R> = for<'a> fn(&'a mut R) -> io::Result<&'a [u8]>;
type ConsumeFn<R> = fn(&mut R, usize);
type SeekFn<R> = fn(&mut R, SeekFrom) -> io::Result<u64>;

/// Where `Seek` is learnt late: the impl that knows `R: Seek` (the reader's own `Seek`) sets it.
pub(crate) type SeekSlot<R> = Arc<OnceLock<SeekFn<R>>>;

/// A reader whose `Read` (and `BufRead`, and `Seek` once known) are its own type's.
pub(crate) struct In<R> {
    inner: R,
    read: ReadFn<R>,
    buffered: Option<(FillFn<R>, ConsumeFn<R>)>,
    seek: SeekSlot<R>,
}

impl<R: Read> In<R> {
    pub(crate) fn new(inner: R) -> Self {
        In { inner, read: R::read, buffered: None, seek: Arc::default() }
    }
}

#[cfg(feature = "armor")]
impl<R: BufRead> In<R> {
    pub(crate) fn buffered(inner: R) -> Self {
        In { inner, read: R::read, buffered: Some((R::fill_buf, R::consume)), seek: Arc::default() }
    }
}

impl<R> In<R> {
    /// The slot that [`set_seek`] fills.
    pub(crate) fn seek_slot(&self) -> SeekSlot<R> {
        self.seek.clone()
    }
}

/// Makes `R`'s `Seek` available to the reader that holds `slot`.
pub(crate) fn set_seek<R: Seek>(slot: &SeekSlot<R>) {
    let _ = slot.set(R::seek);
}

impl<R> Read for In<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (self.read)(&mut self.inner, buf)
    }
}

impl<R> BufRead for In<R> {
    // Only `buffered` readers are handed to code that calls these (the armor reader).
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self.buffered {
            Some((fill, _)) => fill(&mut self.inner),
            None => Err(io::Error::new(io::ErrorKind::Unsupported, "not a buffered reader")),
        }
    }

    fn consume(&mut self, amt: usize) {
        if let Some((_, consume)) = self.buffered {
            consume(&mut self.inner, amt)
        }
    }
}

impl<R> Seek for In<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self.seek.get() {
            Some(seek) => seek(&mut self.inner, pos),
            None => Err(io::Error::new(io::ErrorKind::Unsupported, "the input cannot seek")),
        }
    }
}

/// A writer whose `Write` is its own type's.
pub(crate) struct Out<W> {
    inner: W,
    write: fn(&mut W, &[u8]) -> io::Result<usize>,
    flush: fn(&mut W) -> io::Result<()>,
}

impl<W: Write> Out<W> {
    pub(crate) fn new(inner: W) -> Self {
        Out { inner, write: W::write, flush: W::flush }
    }
}

impl<W> Out<W> {
    pub(crate) fn into_inner(self) -> W {
        self.inner
    }
}

impl<W> Write for Out<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (self.write)(&mut self.inner, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        (self.flush)(&mut self.inner)
    }
}

#[cfg(feature = "async")]
/// Writes `out[at..]` to `output` (the asynchronous writers' bytes made but not yet taken), then
/// empties `out`.
pub(crate) fn poll_drain<W: futures::AsyncWrite + Unpin>(
    output: &mut W,
    out: &mut Vec<u8>,
    at: &mut usize,
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<io::Result<()>> {
    while *at < out.len() {
        let n = std::task::ready!(std::pin::Pin::new(&mut *output).poll_write(cx, &out[*at..]))?;
        if n == 0 {
            return std::task::Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        *at += n;
    }
    out.clear();
    *at = 0;
    std::task::Poll::Ready(Ok(()))
}
