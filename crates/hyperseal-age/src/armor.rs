//! ASCII armor (`armor` feature): age's `Format`, `ArmoredWriter`, `ArmoredReader` and
//! `ArmoredReadError`, over the core's armor codec.
//!
//! The reader is transparent: it de-armors only input that starts with a BEGIN line, and passes
//! anything else through, so one code path reads both forms (as age's does).

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};

use hyperseal::format::armor::{self as core, AGE_LABEL};

use crate::io::{set_seek, In, Out, SeekSlot};

/// The type of output an [`ArmoredWriter`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// age binary format.
    Binary,
    /// ASCII armored age format.
    AsciiArmor,
}

/// Writes age files, armored or not.
pub struct ArmoredWriter<W>(pub(crate) Writer<W>);

pub(crate) enum Writer<W> {
    Binary(Out<W>),
    Armored(core::ArmoredWriter<Out<W>>),
    #[cfg(feature = "async")]
    Async(crate::async_armor::AsyncArmorWriter<W>),
}

#[cfg(feature = "async")]
fn not_sync() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "an asynchronous armored writer")
}

impl<W: Write> ArmoredWriter<W> {
    /// Wraps the given output in an `ArmoredWriter` that will apply the given [`Format`].
    pub fn wrap_output(output: W, format: Format) -> io::Result<Self> {
        Ok(ArmoredWriter(match format {
            Format::Binary => Writer::Binary(Out::new(output)),
            Format::AsciiArmor => Writer::Armored(core::ArmoredWriter::new(Out::new(output), AGE_LABEL)),
        }))
    }

    /// Writes the end marker (when armoring) and returns the underlying writer.
    pub fn finish(self) -> io::Result<W> {
        match self.0 {
            Writer::Binary(w) => Ok(w.into_inner()),
            Writer::Armored(w) => w.finish().map(Out::into_inner),
            #[cfg(feature = "async")]
            Writer::Async(_) => Err(not_sync()),
        }
    }
}

impl<W: Write> Write for ArmoredWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.0 {
            Writer::Binary(w) => w.write(buf),
            Writer::Armored(w) => w.write(buf),
            #[cfg(feature = "async")]
            Writer::Async(_) => Err(not_sync()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.0 {
            Writer::Binary(w) => w.flush(),
            Writer::Armored(w) => w.flush(),
            #[cfg(feature = "async")]
            Writer::Async(_) => Err(not_sync()),
        }
    }
}

/// The ways armor can be malformed, as age names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArmoredReadError {
    /// An error occurred while parsing Base64.
    Base64(base64_022::DecodeSliceError),
    /// The begin marker for the armor is invalid.
    InvalidBeginMarker,
    /// Invalid UTF-8 characters were encountered between the begin and end marker.
    InvalidUtf8,
    /// A line of the armor contains a `\r` character.
    LineContainsCr,
    /// The final Base64 line is non-canonical.
    MissingPadding,
    /// The armor is not wrapped at 64 characters.
    NotWrappedAt64Chars,
    /// There is a short line in the middle of the armor (only the final line may be short).
    ShortLineInMiddle,
    /// There are trailing non-whitespace characters after the end marker.
    TrailingGarbage,
}

impl fmt::Display for ArmoredReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArmoredReadError::Base64(e) => write!(f, "invalid Base64 in the armor: {e}"),
            ArmoredReadError::InvalidBeginMarker => f.write_str("invalid armor begin marker"),
            ArmoredReadError::InvalidUtf8 => f.write_str("stream did not contain valid UTF-8"),
            ArmoredReadError::LineContainsCr => f.write_str("a line contains CR"),
            ArmoredReadError::MissingPadding => f.write_str("invalid armor: the last line is not canonical"),
            ArmoredReadError::NotWrappedAt64Chars => {
                f.write_str("invalid armor: lines are not wrapped at 64 characters")
            }
            ArmoredReadError::ShortLineInMiddle => f.write_str("invalid armor: a short line in the middle"),
            ArmoredReadError::TrailingGarbage => f.write_str("invalid armor: data after the end marker"),
        }
    }
}

impl std::error::Error for ArmoredReadError {}

/// The core's armor error (its message says what was wrong) as an `io::Error` that carries
/// age's [`ArmoredReadError`], which callers of age test for; any other error is kept.
pub(crate) fn read_error(e: hyperseal::Error) -> io::Error {
    let m = match &e {
        hyperseal::Error::Armor(msg) => msg.to_ascii_lowercase(),
        // The armor reader's only budget is the line length.
        hyperseal::Error::Limit(_) => {
            return io::Error::new(io::ErrorKind::InvalidData, ArmoredReadError::NotWrappedAt64Chars)
        }
        _ => return e.into_io(),
    };
    let kind = if m.contains("after the end") || m.contains("trailing") {
        ArmoredReadError::TrailingGarbage
    } else if m.contains("\\r") || m.contains(" cr") {
        ArmoredReadError::LineContainsCr
    } else if m.contains("padding") || m.contains("canonical") {
        ArmoredReadError::MissingPadding
    } else if m.contains("short") {
        ArmoredReadError::ShortLineInMiddle
    } else if m.contains("begin") {
        ArmoredReadError::InvalidBeginMarker
    } else if m.contains("utf") {
        ArmoredReadError::InvalidUtf8
    } else {
        ArmoredReadError::NotWrappedAt64Chars
    };
    io::Error::new(io::ErrorKind::InvalidData, kind)
}

/// An `io::Error` from the core's armor reader, with age's error inside.
fn map_io(e: io::Error) -> io::Error {
    match e.get_ref().and_then(|i| i.downcast_ref::<hyperseal::Error>()) {
        Some(hyperseal::Error::Armor(_) | hyperseal::Error::Limit(_)) => {
            read_error(hyperseal::Error::from(e))
        }
        _ => e,
    }
}

/// What decides that an input is armored, after leading whitespace.
const BEGIN: &[u8] = b"-----BEGIN ";
/// The most bytes looked at to decide: far more whitespace than the core's reader takes.
const DECIDE_MAX: usize = 4 << 10;

/// Whether `r` starts as armor, peeking only as far as it takes to tell.
fn armored<R>(r: &mut In<R>) -> io::Result<bool> {
    let mut want = BEGIN.len();
    loop {
        let head = r.peek(want)?;
        let rest = head.trim_ascii_start();
        let told = rest.len() >= BEGIN.len() || !BEGIN.starts_with(rest);
        if told || head.len() < want || want >= DECIDE_MAX {
            return Ok(core::is_armored(head));
        }
        want = (head.len() - rest.len() + BEGIN.len()).min(DECIDE_MAX);
    }
}

/// Reads age files, armored or not.
pub struct ArmoredReader<R>(pub(crate) Reader<R>);

pub(crate) enum Reader<R> {
    /// Not yet looked at (the first read decides).
    Unknown(Option<In<R>>, SeekSlot<R>),
    Plain(In<R>, SeekSlot<R>),
    Armored(core::ArmoredReader<In<R>>),
    #[cfg(feature = "async")]
    Async(crate::async_armor::AsyncArmor<R>),
}

impl<R: Read> ArmoredReader<BufReader<R>> {
    /// Wraps a reader that may contain an armored age file.
    pub fn new(reader: R) -> Self {
        let input = In::buffered(BufReader::new(reader));
        let slot = input.seek_slot();
        ArmoredReader(Reader::Unknown(Some(input), slot))
    }
}

impl<R> ArmoredReader<R> {
    /// Decides on the first bytes whether the input is armored: on as many as the BEGIN line
    /// needs (after any leading whitespace), however few each read returns, as age does.
    fn decided(&mut self) -> io::Result<&mut Reader<R>> {
        if let Reader::Unknown(r, slot) = &mut self.0 {
            let mut r = r.take().expect("decided once");
            let armored = armored(&mut r)?;
            let slot = slot.clone();
            self.0 = match armored {
                true => Reader::Armored(core::ArmoredReader::new(r)),
                false => Reader::Plain(r, slot),
            };
        }
        Ok(&mut self.0)
    }
}

impl<R: BufRead> Read for ArmoredReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.decided()? {
            Reader::Plain(r, _) => r.read(buf),
            Reader::Armored(r) => r.read(buf).map_err(map_io),
            _ => Err(io::Error::new(io::ErrorKind::Unsupported, "an asynchronous armored reader")),
        }
    }
}

impl<R: BufRead> BufRead for ArmoredReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self.decided()? {
            Reader::Plain(r, _) => r.fill_buf(),
            Reader::Armored(r) => r.fill_buf().map_err(map_io),
            _ => Err(io::Error::new(io::ErrorKind::Unsupported, "an asynchronous armored reader")),
        }
    }

    fn consume(&mut self, amt: usize) {
        match &mut self.0 {
            Reader::Plain(r, _) => r.consume(amt),
            Reader::Armored(r) => r.consume(amt),
            _ => {}
        }
    }
}

impl<R: BufRead + Seek> Seek for ArmoredReader<R> {
    /// Seeks in a binary input; an armored one cannot seek (the core's decryptor reads it
    /// forward only).
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self.decided()? {
            Reader::Plain(r, slot) => {
                set_seek(slot);
                r.seek(pos)
            }
            _ => Err(io::Error::new(io::ErrorKind::Unsupported, "cannot seek in an armored age file")),
        }
    }
}
