//! Authenticated random access: a `Read + Seek` view of the plaintext of a seekable message.
//!
//! Opening checks the commitment, then the message length (from the input's size: not every
//! length is valid) and then opens the final chunk, as the spec requires before a seek relative
//! to the end: after that, [`Reader::len`] is authenticated. Reads decrypt a batch of chunks
//! (1 MiB) around the position with the stream engine's reader and executor, and return bytes
//! only from chunks that authenticated.

use std::io::{self, Read, Seek, SeekFrom};

use super::push::open_header;
use super::scheme::{self, ChunkCipher, HEADER_LEN};
use super::Key;
use crate::error::Error;
use crate::stream::{read_full, ChunkReader};

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
    chunks: ChunkReader<R, ChunkCipher>,
    /// The plaintext length, authenticated by the final chunk.
    len: u64,
}

impl<R> std::fmt::Debug for Reader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "c2sp::Reader({} bytes, key redacted)", self.len)
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
        // Lengths no message has are refused as the spec says, before any chunk is read.
        scheme::opened_len(inner.seek(SeekFrom::End(0))? - base)?;
        inner.seek(SeekFrom::Start(base + HEADER_LEN as u64))?;
        let mut chunks = ChunkReader::new(inner, cipher, crate::available_threads());
        // The final chunk first: it authenticates the length.
        let len = chunks.plaintext_len()?;
        Ok(Reader { chunks, len })
    }

    /// Worker threads for each window (default: all cores).
    pub fn threads(mut self, n: usize) -> Self {
        self.chunks.set_threads(n);
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
        self.chunks.into_inner()
    }
}

impl<R: Read + Seek> Read for Reader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.chunks.read(out)
    }
}

impl<R: Read + Seek> Seek for Reader<R> {
    /// Positions are plaintext offsets; `End` is relative to the authenticated length.
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.chunks.seek(to)
    }
}
