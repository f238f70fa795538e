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
    /// Bytes [`In::peek`] took out of `inner` to look at, not yet read (from `at` on): a
    /// buffered reader's one `fill_buf` may hold fewer bytes than a decision needs.
    ahead: Vec<u8>,
    at: usize,
}

impl<R: Read> In<R> {
    pub(crate) fn new(inner: R) -> Self {
        In { inner, read: R::read, buffered: None, seek: Arc::default(), ahead: Vec::new(), at: 0 }
    }
}

#[cfg(feature = "armor")]
impl<R: BufRead> In<R> {
    pub(crate) fn buffered(inner: R) -> Self {
        let buffered = Some((R::fill_buf as FillFn<R>, R::consume as ConsumeFn<R>));
        In { inner, read: R::read, buffered, seek: Arc::default(), ahead: Vec::new(), at: 0 }
    }
}

impl<R> In<R> {
    /// The slot that [`set_seek`] fills.
    pub(crate) fn seek_slot(&self) -> SeekSlot<R> {
        self.seek.clone()
    }

    /// The next bytes without consuming them: at least `n` unless the input ends first, however
    /// few each read of a pipe or socket returns. Only buffered readers peek.
    #[cfg(feature = "armor")]
    pub(crate) fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        let (fill, consume) = self.buffered.ok_or_else(not_buffered)?;
        if self.at == self.ahead.len() {
            self.ahead.clear();
            self.at = 0;
            // Mostly the buffer holds enough already: nothing is copied then.
            let len = fill(&mut self.inner)?.len();
            if len >= n || len == 0 {
                return fill(&mut self.inner);
            }
        }
        while self.ahead.len() - self.at < n {
            let buf = fill(&mut self.inner)?;
            if buf.is_empty() {
                break;
            }
            let take = buf.len().min(n - (self.ahead.len() - self.at));
            self.ahead.extend_from_slice(&buf[..take]);
            consume(&mut self.inner, take);
        }
        Ok(&self.ahead[self.at..])
    }

    /// How many peeked bytes are still to be read.
    fn pending(&self) -> usize {
        self.ahead.len() - self.at
    }
}

fn not_buffered() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "not a buffered reader")
}

/// Makes `R`'s `Seek` available to the reader that holds `slot`.
pub(crate) fn set_seek<R: Seek>(slot: &SeekSlot<R>) {
    let _ = slot.set(R::seek);
}

impl<R> Read for In<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending() > 0 {
            let n = self.pending().min(buf.len());
            buf[..n].copy_from_slice(&self.ahead[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        (self.read)(&mut self.inner, buf)
    }
}

impl<R> BufRead for In<R> {
    // Only `buffered` readers are handed to code that calls these (the armor reader).
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pending() > 0 {
            return Ok(&self.ahead[self.at..]);
        }
        match self.buffered {
            Some((fill, _)) => fill(&mut self.inner),
            None => Err(not_buffered()),
        }
    }

    fn consume(&mut self, amt: usize) {
        if self.pending() > 0 {
            self.at += amt.min(self.pending());
            return;
        }
        if let Some((_, consume)) = self.buffered {
            consume(&mut self.inner, amt)
        }
    }
}

impl<R> Seek for In<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let Some(seek) = self.seek.get() else {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "the input cannot seek"));
        };
        // `inner` stands past the peeked bytes not read yet: a relative seek counts from here.
        let pos = match pos {
            SeekFrom::Current(d) => SeekFrom::Current(d - self.pending() as i64),
            other => other,
        };
        let done = seek(&mut self.inner, pos)?;
        self.ahead.clear();
        self.at = 0;
        Ok(done)
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
