//! The bytes both ends of `backup serve` exchange. Every message is a frame: a 4-byte
//! big-endian length, then that many bytes (the first a request's operation or an answer's
//! status). A length over the bound is refused from the four bytes alone, before any of the
//! body is read or memory is set aside for it, so a peer cannot make the other end allocate
//! what it names.

use std::io::{self, Read, Write};

/// The first bytes of the handshake, both ways.
pub(crate) const MAGIC: &[u8] = b"hyperseal-backup-serve";
/// The protocol's version; a server answers only its own.
pub(crate) const VERSION: u32 = 1;
/// Most bytes of one upload frame or one ranged read: an object larger than this travels in
/// several, so no object size decides either end's memory.
pub(crate) const MAX_DATA: usize = 4 << 20;
/// Most bytes of any frame: a data frame and its few fields (a name is under 64 KiB).
pub(crate) const MAX_FRAME: usize = MAX_DATA + (128 << 10);
/// A listing answer is cut into frames of about this many bytes.
pub(crate) const LIST_BATCH: usize = 1 << 20;

/// Requests.
pub(crate) const HELLO: u8 = 1;
pub(crate) const PUT: u8 = 2;
pub(crate) const DATA: u8 = 3;
pub(crate) const GET: u8 = 4;
pub(crate) const LIST: u8 = 5;
pub(crate) const DELETE: u8 = 6;
pub(crate) const REHEAD: u8 = 7;

/// Answers.
pub(crate) const OK: u8 = 0;
pub(crate) const ERR: u8 = 1;

/// The length of the next frame; `None` at a clean end of input (no byte of a new frame).
/// A length over `max` is an error, its body left unread.
pub(crate) fn read_len(r: &mut dyn Read, max: usize) -> io::Result<Option<usize>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {len} bytes, over the protocol's bound of {max}: refused unread"),
        ));
    }
    Ok(Some(len))
}

/// The next frame's body, `None` at a clean end of input.
pub(crate) fn read_frame(r: &mut dyn Read, max: usize) -> io::Result<Option<Vec<u8>>> {
    let Some(len) = read_len(r, max)? else { return Ok(None) };
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    Ok(Some(body))
}

/// Writes one frame and flushes it.
pub(crate) fn write_frame(w: &mut dyn Write, body: &[u8]) -> io::Result<()> {
    w.write_all(&frame(body))?;
    w.flush()
}

/// A frame's bytes: its length, then `body`.
pub(crate) fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// A message being built.
pub(crate) struct Msg(pub(crate) Vec<u8>);

impl Msg {
    pub(crate) fn new(first: u8) -> Msg {
        Msg(vec![first])
    }
    pub(crate) fn u8(mut self, v: u8) -> Msg {
        self.0.push(v);
        self
    }
    pub(crate) fn u32(mut self, v: u32) -> Msg {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub(crate) fn u64(mut self, v: u64) -> Msg {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// A string: its 2-byte length, then its bytes (names are short; longer is cut, and the
    /// other end then refuses the name it reads).
    pub(crate) fn str(mut self, s: &str) -> Msg {
        let b = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
        self.0.extend_from_slice(&(b.len() as u16).to_be_bytes());
        self.0.extend_from_slice(b);
        self
    }
    pub(crate) fn bytes(mut self, b: &[u8]) -> Msg {
        self.0.extend_from_slice(b);
        self
    }
}

/// A message being read; every short or malformed field is one error.
pub(crate) struct Parse<'a>(pub(crate) &'a [u8]);

fn malformed() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "a malformed message")
}

impl<'a> Parse<'a> {
    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(malformed());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    pub(crate) fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("four bytes")))
    }
    pub(crate) fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().expect("eight bytes")))
    }
    pub(crate) fn str(&mut self) -> io::Result<&'a str> {
        let n = u16::from_be_bytes(self.take(2)?.try_into().expect("two bytes")) as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| malformed())
    }
    /// What is left.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.0)
    }
    /// The message must end here.
    pub(crate) fn end(&self) -> io::Result<()> {
        match self.0.is_empty() {
            true => Ok(()),
            false => Err(malformed()),
        }
    }
}

/// An error as an answer: its kind (so a taken name stays `AlreadyExists` at the client, as
/// prune's lock needs) and its message.
pub(crate) fn error_answer(e: &io::Error) -> Vec<u8> {
    use io::ErrorKind as K;
    let kind = match e.kind() {
        K::NotFound => 1,
        K::AlreadyExists => 2,
        K::PermissionDenied => 3,
        K::InvalidInput => 4,
        K::InvalidData => 5,
        K::Unsupported => 6,
        K::QuotaExceeded => 7,
        _ => 0,
    };
    Msg::new(ERR).u8(kind).str(&e.to_string()).0
}

/// The error an `ERR` answer carries, its message after `prefix`.
pub(crate) fn answer_error(p: &mut Parse<'_>, prefix: &str) -> io::Error {
    use io::ErrorKind as K;
    let kind = match p.u8().unwrap_or(0) {
        1 => K::NotFound,
        2 => K::AlreadyExists,
        3 => K::PermissionDenied,
        4 => K::InvalidInput,
        5 => K::InvalidData,
        6 => K::Unsupported,
        7 => K::QuotaExceeded,
        _ => K::Other,
    };
    let msg = p.str().unwrap_or("(an unreadable error)");
    io::Error::new(kind, format!("{prefix}: {msg}"))
}
