//! Authenticated random access: a `Read + Seek` view of the plaintext of a seekable message.
//!
//! Opening checks the commitment, then the message length (from the input's size: not every
//! length is valid) and then opens the final chunk, as the spec requires before a seek relative
//! to the end: after that, [`Reader::len`] is authenticated. Reads decrypt a window of up to 64
//! chunks (1 MiB) around the position on the one executor (`stream::open_run`), and return bytes
//! only from chunks that authenticated.

use std::io::{self, Read, Seek, SeekFrom};

use super::push::open_header;
use super::scheme::{self, ChunkCipher, CHUNK, HEADER_LEN, TAG, WIRE_CHUNK};
use super::Key;
use crate::error::Error;
use crate::stream::{open_run, read_full};

/// Chunks decrypted per window.
const WINDOW: usize = 64;

/// Decrypting, seekable reader over a c2sp-chunked message.
///
/// ```
/// use std::io::{Cursor, Read, Seek, SeekFrom};
/// use hyperseal::c2sp::{self, Key, Reader, Variant};
/// let key = Key::generate(Variant::Cobblestone128);
/// let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
/// let sealed = c2sp::encrypt(&key, b"", &data)?;
/// let mut r = Reader::new(&key, b"", Cursor::new(sealed))?;
/// assert_eq!(r.len(), 100_000);
/// r.seek(SeekFrom::End(-10))?;
/// let mut tail = Vec::new();
/// r.read_to_end(&mut tail)?;
/// assert_eq!(tail, &data[99_990..]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Reader<R> {
    inner: R,
    cipher: ChunkCipher,
    /// Input offset of chunk 0.
    start: u64,
    /// Authenticated plaintext length and chunk count (including the final chunk).
    len: u64,
    chunks: u64,
    pos: u64,
    threads: usize,
    /// Decrypted window: chunks `first..first + good` authenticated; `failed` is the chunk
    /// after them when it did not.
    first: u64,
    good: usize,
    failed: Option<(u64, Error)>,
    plain: Vec<u8>,
    wire: Vec<u8>,
}

impl<R> std::fmt::Debug for Reader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "c2sp::Reader({} bytes at {}, key redacted)", self.len, self.pos)
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Opens the message that starts at `inner`'s current position and runs to its end.
    /// Fails on a wrong key or context, an impossible length, or a forged final chunk.
    pub fn new(key: &Key, context: &[u8], mut inner: R) -> Result<Reader<R>, Error> {
        let base = inner.stream_position()?;
        let mut header = [0u8; HEADER_LEN];
        if read_full(&mut inner, &mut header)? < HEADER_LEN {
            return Err(scheme::short_header());
        }
        let cipher = open_header(key, context, &header)?;
        let total = inner.seek(SeekFrom::End(0))? - base;
        let (len, chunks) = scheme::opened_len(total)?;
        let mut r = Reader {
            inner,
            cipher,
            start: base + HEADER_LEN as u64,
            len,
            chunks,
            pos: 0,
            threads: crate::available_threads(),
            first: 0,
            good: 0,
            failed: None,
            plain: vec![0; WINDOW * CHUNK],
            wire: vec![0; WINDOW * WIRE_CHUNK],
        };
        // The final chunk first: it authenticates the length.
        r.load(chunks - 1)?;
        if let Some((_, e)) = r.failed.take() {
            return Err(e);
        }
        Ok(r)
    }

    /// Worker threads for each window (default: all cores).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// The plaintext length (authenticated when the reader was opened).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Gives back the input.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Decrypts the window starting at chunk `first`. I/O errors are returned; authentication
    /// failures are kept in `failed` so the chunks before them stay readable.
    fn load(&mut self, first: u64) -> Result<(), Error> {
        let k = (WINDOW as u64).min(self.chunks - first) as usize;
        let has_final = first + k as u64 == self.chunks;
        let full = if has_final { k - 1 } else { k };
        let final_len =
            if has_final { (self.len - (self.chunks - 1) * CHUNK as u64) as usize + TAG } else { 0 };
        let wire_len = full * WIRE_CHUNK + final_len;
        (self.first, self.good, self.failed) = (first, 0, None);
        self.inner.seek(SeekFrom::Start(self.start + first * WIRE_CHUNK as u64))?;
        if read_full(&mut self.inner, &mut self.wire[..wire_len])? < wire_len {
            // The input shrank after its length was authenticated.
            self.failed = Some((first, Error::Truncated(self.chunks - 1)));
            return Ok(());
        }
        // The final chunk is opened as such, so a window that holds it also authenticates it.
        let wire = &self.wire[..wire_len];
        match open_run(&self.cipher, first, wire, has_final, &mut self.plain, self.threads) {
            Ok(_) => self.good = k,
            Err(e) => {
                // Runs report the lowest failing chunk; those before it authenticated.
                let bad = match e {
                    Error::ChunkAuth(i) if i >= first => i,
                    _ => first,
                };
                self.good = (bad - first) as usize;
                self.failed = Some((bad, e));
            }
        }
        Ok(())
    }
}

impl<R: Read + Seek> Read for Reader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() || self.pos >= self.len {
            return Ok(0);
        }
        let chunk = self.pos / CHUNK as u64;
        let in_window = chunk >= self.first && chunk - self.first < WINDOW as u64;
        let slot = chunk.wrapping_sub(self.first) as usize;
        let is_bad = matches!(&self.failed, Some((bad, _)) if *bad == chunk);
        if !in_window || (slot >= self.good && !is_bad) {
            self.load(chunk).map_err(Error::into_io)?;
        }
        let slot = (chunk - self.first) as usize;
        if slot >= self.good {
            let (_, e) = self.failed.as_ref().expect("a chunk that is not good failed");
            return Err(scheme::repeat(e).into_io());
        }
        // Everything authenticated from the position to the end of the good chunks.
        let at = (self.pos - self.first * CHUNK as u64) as usize;
        let end = (self.good * CHUNK).min((self.len - self.first * CHUNK as u64) as usize);
        let n = (end - at).min(out.len());
        out[..n].copy_from_slice(&self.plain[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: Read + Seek> Seek for Reader<R> {
    /// Positions are plaintext offsets; `End` is relative to the authenticated length.
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos =
            target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}
