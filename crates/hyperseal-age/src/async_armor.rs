//! The asynchronous side of [`ArmoredReader`] and [`ArmoredWriter`] (`armor` and `async`
//! features): the reader on the core's push-based armor decoder (the first bytes decide whether
//! the input is armored, as in the synchronous reader), the writer on the core's armor encoder
//! writing into memory, whose whole lines go to the output as it takes them.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use futures::io::BufReader as AsyncBufReader;
use futures::{AsyncBufRead, AsyncRead, AsyncWrite};
use hyperseal::format::armor::{is_armored, ArmorDecoder, ArmoredWriter as Encoder, AGE_LABEL};

use crate::armor::{read_error, ArmoredReader, ArmoredWriter, Format, Reader, Writer}; // import-cycle: ArmoredReader and ArmoredWriter are one type each, their async side here

/// Bytes asked of the input at a time.
const READ_SIZE: usize = 16 << 10;

/// The asynchronous reader's state: input read but not yet decided or decoded, and decoded
/// bytes not yet returned.
pub(crate) struct AsyncArmor<R> {
    input: R,
    /// `None` until the first bytes are in; then whether the input is armored.
    armored: Option<bool>,
    decoder: Option<ArmorDecoder>,
    held: Vec<u8>,
    out: Vec<u8>,
    at: usize,
    piece: Vec<u8>,
}

impl<R: AsyncRead + Unpin> ArmoredReader<AsyncBufReader<R>> {
    /// Wraps an asynchronous reader that may contain an armored age file.
    pub fn from_async_reader(inner: R) -> Self {
        let input = AsyncBufReader::new(inner);
        let state = AsyncArmor {
            input,
            armored: None,
            decoder: Some(ArmorDecoder::new()),
            held: vec![],
            out: vec![],
            at: 0,
            piece: vec![0; READ_SIZE],
        };
        ArmoredReader(Reader::Async(state))
    }
}

impl<R: AsyncRead + Unpin> AsyncArmor<R> {
    /// Makes `out[at..]` non-empty, unless the input has ended (then it stays empty).
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.at == self.out.len() {
            self.out.clear();
            self.at = 0;
            let n = ready!(Pin::new(&mut self.input).poll_read(cx, &mut self.piece))?;
            let eof = n == 0;
            match self.armored {
                None => {
                    self.held.extend_from_slice(&self.piece[..n]);
                    // The BEGIN line decides, and 64 bytes hold it.
                    if self.held.len() < 64 && !eof {
                        continue;
                    }
                    let armored = is_armored(&self.held);
                    self.armored = Some(armored);
                    let held = std::mem::take(&mut self.held);
                    match armored {
                        true => self.decode(&held, eof)?,
                        false => self.out = held,
                    }
                }
                Some(true) => {
                    let piece = std::mem::take(&mut self.piece);
                    let r = self.decode(&piece[..n], eof);
                    self.piece = piece;
                    r?;
                }
                Some(false) => self.out.extend_from_slice(&self.piece[..n]),
            }
            if eof {
                break;
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Decodes `data`; at the end of the input, checks the END line and what follows it.
    fn decode(&mut self, data: &[u8], eof: bool) -> io::Result<()> {
        let Some(decoder) = self.decoder.as_mut() else { return Ok(()) };
        decoder.update(data, &mut self.out).map_err(read_error)?;
        if eof {
            self.decoder.take().expect("checked above").finish().map_err(read_error)?;
        }
        Ok(())
    }
}

fn state<R: Unpin>(r: Pin<&mut ArmoredReader<R>>) -> io::Result<&mut AsyncArmor<R>> {
    match &mut r.get_mut().0 {
        Reader::Async(s) => Ok(s),
        _ => Err(io::Error::new(io::ErrorKind::Unsupported, "a synchronous armored reader")),
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for ArmoredReader<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let s = state(self)?;
        ready!(s.poll_fill(cx))?;
        let n = buf.len().min(s.out.len() - s.at);
        buf[..n].copy_from_slice(&s.out[s.at..s.at + n]);
        s.at += n;
        Poll::Ready(Ok(n))
    }
}

impl<R: AsyncRead + Unpin> AsyncBufRead for ArmoredReader<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let s = state(self)?;
        ready!(s.poll_fill(cx))?;
        Poll::Ready(Ok(&s.out[s.at..]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        if let Ok(s) = state(self) {
            s.at = (s.at + amt).min(s.out.len());
        }
    }
}

/// The asynchronous writer's state: armor text made but not yet taken by the output.
pub(crate) struct AsyncArmorWriter<W> {
    output: W,
    /// `None`: binary, written straight through. Taken when the end line is written.
    encoder: Option<Encoder<Vec<u8>>>,
    armored: bool,
    out: Vec<u8>,
    at: usize,
}

impl<W: AsyncWrite + Unpin> ArmoredWriter<W> {
    /// Wraps the given asynchronous output in an `ArmoredWriter` that will apply the given
    /// [`Format`]. Closing it (`poll_close`) writes the end marker when armoring.
    pub fn wrap_async_output(output: W, format: Format) -> Self {
        let armored = format == Format::AsciiArmor;
        let encoder = armored.then(|| Encoder::new(Vec::new(), AGE_LABEL));
        ArmoredWriter(Writer::Async(AsyncArmorWriter { output, encoder, armored, out: vec![], at: 0 }))
    }
}

impl<W: AsyncWrite + Unpin> AsyncArmorWriter<W> {
    /// Gives the output every byte of armor made so far.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        crate::io::poll_drain(&mut self.output, &mut self.out, &mut self.at, cx)
    }

    /// Moves the encoder's whole lines (and, with `end`, the rest and the end line) to `out`.
    fn take_lines(&mut self, end: bool) -> io::Result<()> {
        let lines = match (end, &mut self.encoder) {
            (true, encoder) => match encoder.take() {
                Some(e) => e.finish()?,
                None => return Ok(()),
            },
            (false, Some(e)) => std::mem::take(e.get_mut()),
            (false, None) => return Ok(()),
        };
        self.out.extend_from_slice(&lines);
        Ok(())
    }
}

fn not_async() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "a synchronous armored writer")
}

impl<W: AsyncWrite + Unpin> AsyncWrite for ArmoredWriter<W> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let Writer::Async(w) = &mut self.get_mut().0 else { return Poll::Ready(Err(not_async())) };
        if !w.armored {
            return Pin::new(&mut w.output).poll_write(cx, buf);
        }
        // What was made before goes out first: memory holds at most one write's worth.
        ready!(w.poll_drain(cx))?;
        let Some(encoder) = w.encoder.as_mut() else {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the armored writer is closed",
            )));
        };
        io::Write::write_all(encoder, buf)?;
        w.take_lines(false)?;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Writer::Async(w) = &mut self.get_mut().0 else { return Poll::Ready(Err(not_async())) };
        ready!(w.poll_drain(cx))?;
        Pin::new(&mut w.output).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Writer::Async(w) = &mut self.get_mut().0 else { return Poll::Ready(Err(not_async())) };
        w.take_lines(true)?;
        ready!(w.poll_drain(cx))?;
        Pin::new(&mut w.output).poll_close(cx)
    }
}
