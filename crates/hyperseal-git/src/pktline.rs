//! git's pkt-line framing, as the long-running filter protocol (`filter.<driver>.process`,
//! gitprotocol-common(5) and gitattributes(5)) uses it: a 4-digit hex length that counts
//! itself, then the data; `0000` is a flush. Every length is checked before anything is
//! buffered, so a peer that sends too much gets an error, never an allocation.

use std::io::{self, Read, Write};

/// Largest packet git writes or accepts, length prefix included.
pub const MAX_PACKET: usize = 65520;
/// Largest data part of one packet.
pub const MAX_DATA: usize = MAX_PACKET - 4;
/// Most `key=value` lines in one list (a request names a command, a path and a few more keys:
/// anything near this bound is not git).
const MAX_LIST: usize = 64;

/// Reads packets from git.
pub struct PktReader<R: Read> {
    inner: R,
    buf: Vec<u8>,
}

impl<R: Read> PktReader<R> {
    /// Reads from `inner` (git's end of the filter's standard input).
    pub fn new(inner: R) -> Self {
        PktReader { inner, buf: Vec::with_capacity(MAX_DATA) }
    }

    /// What it reads from (nothing is buffered here between packets).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The next packet's data, or `None` for a flush. `Ok(None)` is never returned at the end
    /// of the input: that is `UnexpectedEof`, except through [`Self::read_list_or_end`].
    pub fn read_packet(&mut self) -> io::Result<Option<&[u8]>> {
        match self.read_packet_or_end()? {
            Some(p) => Ok(p),
            None => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "git closed the filter's input")),
        }
    }

    /// As [`Self::read_packet`], with `None` for a clean end of input before a packet.
    fn read_packet_or_end(&mut self) -> io::Result<Option<Option<&[u8]>>> {
        let mut len = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match self.inner.read(&mut len[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "packet cut short")),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let n = std::str::from_utf8(&len)
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or_else(|| invalid("a packet length that is not 4 hex digits"))?;
        match n {
            0 => return Ok(Some(None)),
            1..=4 => return Err(invalid("a packet length below 5")),
            _ if n > MAX_PACKET => return Err(invalid("a packet longer than 65520 bytes")),
            _ => {}
        }
        self.buf.clear();
        self.buf.resize(n - 4, 0);
        self.inner.read_exact(&mut self.buf)?;
        Ok(Some(Some(&self.buf)))
    }

    /// One text packet (its final newline removed), or `None` for a flush.
    pub fn read_text(&mut self) -> io::Result<Option<String>> {
        match self.read_packet()? {
            None => Ok(None),
            Some(p) => text(p).map(Some),
        }
    }

    /// A list of `key=value` text packets up to a flush, or `None` at a clean end of input
    /// (git closes the pipe when its command is done).
    pub fn read_list_or_end(&mut self) -> io::Result<Option<Vec<(String, String)>>> {
        let mut list = Vec::new();
        loop {
            let line = match self.read_packet_or_end()? {
                None if list.is_empty() => return Ok(None),
                None => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "list cut short")),
                Some(None) => return Ok(Some(list)),
                Some(Some(p)) => text(p)?,
            };
            if list.len() == MAX_LIST {
                return Err(invalid("more than 64 lines in one list"));
            }
            let (k, v) = line.split_once('=').ok_or_else(|| invalid("a line that is not key=value"))?;
            list.push((k.to_string(), v.to_string()));
        }
    }

    /// A `Read` of the data packets up to the next flush: a file's content.
    pub fn content(&mut self) -> Content<'_, R> {
        Content { pkt: self, at: 0, len: 0, done: false }
    }
}

/// The data packets up to the next flush, as a `Read`.
pub struct Content<'a, R: Read> {
    pkt: &'a mut PktReader<R>,
    at: usize,
    len: usize,
    done: bool,
}

impl<R: Read> Content<'_, R> {
    /// Reads (and drops) whatever is left up to the flush, so the next request starts in step.
    pub fn drain(&mut self) -> io::Result<()> {
        let mut sink = [0u8; 8192];
        while self.read(&mut sink)? > 0 {}
        hyperseal::wipe(&mut sink);
        Ok(())
    }

    fn refill(&mut self) -> io::Result<()> {
        match self.pkt.read_packet()? {
            None => self.done = true,
            Some(p) => self.len = p.len(),
        }
        self.at = 0;
        Ok(())
    }
}

impl<R: Read> Read for Content<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while !self.done && self.at == self.len {
            self.refill()?;
        }
        if self.done || out.is_empty() {
            return Ok(0);
        }
        let n = out.len().min(self.len - self.at);
        out[..n].copy_from_slice(&self.pkt.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Writes packets to git.
pub struct PktWriter<W: Write> {
    inner: W,
    /// [`Framed`]'s packet, kept for the process so a file costs no allocation; wiped after
    /// every packet it held.
    frame: Vec<u8>,
}

impl<W: Write> PktWriter<W> {
    /// Writes to `inner` (git's end of the filter's standard output).
    pub fn new(inner: W) -> Self {
        PktWriter { inner, frame: Vec::with_capacity(MAX_DATA) }
    }

    /// One packet of at most [`MAX_DATA`] bytes.
    fn packet(&mut self, data: &[u8]) -> io::Result<()> {
        debug_assert!(!data.is_empty() && data.len() <= MAX_DATA);
        write!(self.inner, "{:04x}", data.len() + 4)?;
        self.inner.write_all(data)
    }

    /// One text packet: `line` and a newline.
    pub fn text(&mut self, line: &str) -> io::Result<()> {
        let mut p = Vec::with_capacity(line.len() + 1);
        p.extend_from_slice(line.as_bytes());
        p.push(b'\n');
        if p.len() > MAX_DATA {
            return Err(invalid("a text line longer than a packet"));
        }
        self.packet(&p)
    }

    /// A flush packet. It stays in `inner` until [`Self::flush`]: git reads a whole answer
    /// before it writes again, so one push per answer is enough.
    pub fn flush_packet(&mut self) -> io::Result<()> {
        self.inner.write_all(b"0000")
    }

    /// Pushes what was written out to git (the end of an answer, or of a handshake step).
    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// A `Write` that frames content into full packets (the caller ends it with
    /// [`Framed::finish`], then a flush).
    pub fn framed(&mut self) -> Framed<'_, W> {
        self.frame.clear();
        Framed { w: self }
    }

    /// Writes the packet in `frame` and wipes it (the smudge side frames plaintext).
    fn send_frame(&mut self) -> io::Result<()> {
        let mut frame = std::mem::take(&mut self.frame);
        let sent = self.packet(&frame);
        hyperseal::wipe(&mut frame);
        frame.clear();
        self.frame = frame;
        sent
    }
}

/// Content framed into packets of [`MAX_DATA`] bytes.
pub struct Framed<'a, W: Write> {
    w: &'a mut PktWriter<W>,
}

impl<W: Write> Framed<'_, W> {
    /// Writes the last, partial packet.
    pub fn finish(self) -> io::Result<()> {
        match self.w.frame.is_empty() {
            true => Ok(()),
            false => self.w.send_frame(),
        }
    }
}

impl<W: Write> Write for Framed<'_, W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = data.len().min(MAX_DATA - self.w.frame.len());
        self.w.frame.extend_from_slice(&data[..n]);
        if self.w.frame.len() == MAX_DATA {
            self.w.send_frame()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Drop for Framed<'_, W> {
    // The smudge side frames plaintext: none may stay behind in the buffer once the content
    // is abandoned (a failed chunk) or done.
    fn drop(&mut self) {
        hyperseal::wipe(&mut self.w.frame);
        self.w.frame.clear();
    }
}

fn text(p: &[u8]) -> io::Result<String> {
    let p = p.strip_suffix(b"\n").unwrap_or(p);
    String::from_utf8(p.to_vec()).map_err(|_| invalid("a text packet that is not UTF-8"))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("git's filter protocol: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_of_content_across_packets() {
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let mut wire = Vec::new();
        let mut w = PktWriter::new(&mut wire);
        w.text("command=clean").unwrap();
        w.flush_packet().unwrap();
        let mut f = w.framed();
        f.write_all(&data).unwrap();
        f.finish().unwrap();
        w.flush_packet().unwrap();
        let mut r = PktReader::new(&wire[..]);
        let list = r.read_list_or_end().unwrap().unwrap();
        assert_eq!(list, vec![("command".to_string(), "clean".to_string())]);
        let mut got = Vec::new();
        r.content().read_to_end(&mut got).unwrap();
        assert_eq!(got, data);
        assert!(r.read_list_or_end().unwrap().is_none());
    }

    #[test]
    fn lengths_are_checked_before_reading() {
        for bad in [&b"fff0xxxx"[..], b"0003", b"zzzz", b"0002"] {
            assert!(PktReader::new(bad).read_packet().is_err(), "{bad:?}");
        }
        // A packet cut short, and a list that ends without its flush.
        assert!(PktReader::new(&b"0009ab"[..]).read_packet().is_err());
        assert!(PktReader::new(&b"000ak=v\n"[..]).read_list_or_end().is_err());
    }

    #[test]
    fn drain_skips_to_the_flush() {
        let wire = b"0007abc0007def00000008k=v\n0000";
        let mut r = PktReader::new(&wire[..]);
        let mut c = r.content();
        let mut one = [0u8; 1];
        c.read_exact(&mut one).unwrap();
        c.drain().unwrap();
        assert_eq!(r.read_list_or_end().unwrap().unwrap()[0].0, "k");
    }
}
