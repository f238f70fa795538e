//! The asynchronous reader and writer (`async` feature), on the core's push-based
//! [`Opener`](hyperseal::Opener) and [`Sealer`](hyperseal::Sealer): bytes are moved between the
//! future's I/O and the core here; sealing and opening are the core's.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use futures::{AsyncRead, AsyncWrite};

use crate::bridge::{self, KnownKey};
use crate::stream::{payload_error, ReaderInner, StreamReader, StreamWriter, WriterInner}; // import-cycle: one type each, async side here
use crate::DecryptError;

/// Bytes asked of the input at a time.
const READ_SIZE: usize = 64 << 10;

/// An age header read from an asynchronous input, and every byte read so far (the header, and
/// what came after it), which the opener is fed first.
pub(crate) struct AsyncHead<R> {
    pub(crate) header: hyperseal::format::Header,
    read: Vec<u8>,
    /// Whether the 16-byte payload nonce after the header is in `read`.
    nonce: bool,
    eof: bool,
    input: R,
}

impl<R: AsyncRead + Unpin> AsyncHead<R> {
    /// Reads until the header and the payload nonce after it are in (or the input ends).
    pub(crate) async fn read(mut input: R) -> Result<Self, DecryptError> {
        use futures::AsyncReadExt;
        let mut read = vec![];
        let mut piece = vec![0u8; 4096];
        let mut eof = false;
        loop {
            // Armor that the armored reader did not take (garbage before the BEGIN line, a
            // mangled BEGIN line) is an armor error, as in the synchronous decryptor.
            if hyperseal::format::armor::looks_like_armor(&read) {
                return Err(bridge::decrypt_error(hyperseal::Error::Armor("not a valid BEGIN line".into())));
            }
            if let Some((header, len)) =
                hyperseal::format::Header::parse_prefix_with(&read, bridge::HEADER_RULES)
                    .map_err(bridge::decrypt_error)?
            {
                if read.len() >= len + 16 || eof {
                    if header.profile != hyperseal::Profile::Age {
                        return Err(DecryptError::UnknownFormat);
                    }
                    let nonce = read.len() >= len + 16;
                    return Ok(AsyncHead { header, read, nonce, eof, input });
                }
            } else if eof {
                return Err(match read.is_empty() {
                    true => DecryptError::Io(io::ErrorKind::UnexpectedEof.into()),
                    false => DecryptError::InvalidHeader,
                });
            }
            let n = input.read(&mut piece).await?;
            eof = n == 0;
            read.extend_from_slice(&piece[..n]);
        }
    }

    /// Feeds what was read to an opener under the unwrapped file key: the header MAC is
    /// checked here, before any plaintext is asked for.
    pub(crate) fn open(self, key: hyperseal::FileKey) -> Result<StreamReader<R>, DecryptError> {
        // The nonce is part of the header (age's spec): a file that ends inside it is malformed.
        if !self.nonce {
            return Err(DecryptError::InvalidHeader);
        }
        let ids: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(KnownKey(key))];
        let mut opener = hyperseal::Opener::new(Arc::new(ids)).header_rules(bridge::HEADER_RULES);
        let mut out = vec![];
        opener.update(&self.read, &mut out).map_err(bridge::decrypt_error)?;
        let reader = AsyncReader {
            input: self.input,
            opener: Some(opener),
            out,
            at: 0,
            eof: self.eof,
            piece: vec![],
            failed: None,
        };
        Ok(StreamReader { inner: ReaderInner::Async(reader) })
    }
}

/// The asynchronous payload reader's state.
pub(crate) struct AsyncReader<R> {
    input: R,
    opener: Option<hyperseal::Opener>,
    /// Authenticated plaintext not yet returned, from `at`.
    out: Vec<u8>,
    at: usize,
    eof: bool,
    piece: Vec<u8>,
    /// The payload error, returned once the plaintext released before it has been read (the
    /// chunks that authenticated before the failing one, as age's reader releases them).
    failed: Option<io::Error>,
}

impl<R: AsyncRead + Unpin> AsyncRead for StreamReader<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let ReaderInner::Async(r) = &mut self.get_mut().inner else {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a synchronous stream reader",
            )));
        };
        loop {
            if r.at < r.out.len() {
                let n = buf.len().min(r.out.len() - r.at);
                buf[..n].copy_from_slice(&r.out[r.at..r.at + n]);
                r.at += n;
                return Poll::Ready(Ok(n));
            }
            r.out.clear();
            r.at = 0;
            if let Some(e) = r.failed.take() {
                return Poll::Ready(Err(e));
            }
            let Some(opener) = r.opener.as_mut() else { return Poll::Ready(Ok(0)) };
            let done = if r.eof {
                r.opener.take().expect("checked above").finish(&mut r.out)
            } else {
                r.piece.resize(READ_SIZE, 0);
                let n = ready!(Pin::new(&mut r.input).poll_read(cx, &mut r.piece))?;
                r.eof = n == 0;
                opener.update(&r.piece[..n], &mut r.out)
            };
            if let Err(e) = done {
                r.opener = None;
                r.failed = Some(payload_error(e.into_io()));
            }
        }
    }
}

/// The asynchronous payload writer's state: sealed bytes wait in `out` until the output
/// takes them.
pub(crate) struct AsyncWriter<W> {
    output: W,
    sealer: Option<hyperseal::Sealer>,
    out: Vec<u8>,
    at: usize,
}

impl<W: AsyncWrite + Unpin> StreamWriter<W> {
    pub(crate) fn new_async(sealer: hyperseal::Sealer, output: W) -> Self {
        let mut out = vec![];
        let mut sealer = sealer;
        // The header comes out of the first update.
        sealer.update(&[], &mut out);
        StreamWriter {
            inner: WriterInner::Async(AsyncWriter { output, sealer: Some(sealer), out, at: 0 }),
            gathered: Default::default(),
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWriter<W> {
    /// Writes out what is waiting.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        crate::io::poll_drain(&mut self.output, &mut self.out, &mut self.at, cx)
    }
}

fn async_writer<W>(w: Pin<&mut StreamWriter<W>>) -> io::Result<&mut AsyncWriter<W>>
where
    W: Unpin,
{
    match &mut w.get_mut().inner {
        WriterInner::Async(a) => Ok(a),
        _ => Err(io::Error::new(io::ErrorKind::Unsupported, "a synchronous stream writer")),
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for StreamWriter<W> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let w = async_writer(self)?;
        ready!(w.poll_drain(cx))?;
        let sealer = w.sealer.as_mut().ok_or_else(|| io::Error::other("the stream writer is closed"))?;
        sealer.update(buf, &mut w.out);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let w = async_writer(self)?;
        ready!(w.poll_drain(cx))?;
        Pin::new(&mut w.output).poll_flush(cx)
    }

    /// Seals the final chunk, writes it and closes the output.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let w = async_writer(self)?;
        ready!(w.poll_drain(cx))?;
        if let Some(sealer) = w.sealer.take() {
            sealer.finish(&mut w.out);
            ready!(w.poll_drain(cx))?;
        }
        Pin::new(&mut w.output).poll_close(cx)
    }
}
