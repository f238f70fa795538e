//! The STREAM payload: fixed-size chunks, each sealed independently under one payload key with
//! nonce = 11-byte big-endian chunk index ‖ last-chunk flag.
//!
//! The flag makes truncation at a chunk boundary detectable (the new last chunk was sealed as
//! "not last"), the index makes reordering, dropping and duplicating detectable, and a final
//! chunk that is missing shows up as a non-final chunk at the end. A nonce is used at most once
//! per key because every (index, last) pair is distinct and every file has a fresh payload key
//! (fresh file key and fresh salt).
//!
//! [`ChunkCipher`] is position-explicit and keeps no state, so the sequential writer/reader, the
//! parallel pipeline and random access all call the same two functions.

mod batch;
mod pipeline;
mod reader;
mod slice;
mod writer;

pub(crate) use batch::read_full;
pub use pipeline::{decrypt_pipeline, encrypt_pipeline, Progress};
pub use reader::StreamReader;
pub(crate) use slice::stream_slice;
pub use slice::{encrypt_slice, open_into, seal_into, sealed_len};
pub use writer::StreamWriter;

use zeroize::Zeroizing;

use crate::suite::{ChunkKey, Suite, TAG_LEN};
use crate::Error;

/// Smallest selectable chunk size (16 KiB).
pub const MIN_CHUNK: usize = 16 << 10;
/// Largest selectable chunk size (16 MiB).
pub const MAX_CHUNK: usize = 16 << 20;
/// Default chunk size (64 KiB, as age).
pub const DEFAULT_CHUNK: usize = 64 << 10;

/// Checks that a chunk size is a power of two in [`MIN_CHUNK`, `MAX_CHUNK`].
pub fn check_chunk_size(n: usize) -> Result<(), Error> {
    if n.is_power_of_two() && (MIN_CHUNK..=MAX_CHUNK).contains(&n) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!("chunk size {n} must be a power of two from 16 KiB to 16 MiB")))
    }
}

/// Seals and opens payload chunks by position.
pub struct ChunkCipher {
    key: ChunkKey,
    chunk_size: usize,
    suite: Suite,
}

impl std::fmt::Debug for ChunkCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChunkCipher({}, {} B chunks, key redacted)", self.suite, self.chunk_size)
    }
}

impl ChunkCipher {
    /// Keys `suite` with a payload key derived by the header profile.
    pub fn new(suite: Suite, chunk_size: usize, payload_key: &Zeroizing<[u8; 32]>) -> Result<Self, Error> {
        check_chunk_size(chunk_size)?;
        Ok(ChunkCipher { key: suite.key(payload_key)?, chunk_size, suite })
    }

    /// Plaintext bytes per full chunk.
    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// The suite.
    pub fn suite(&self) -> Suite {
        self.suite
    }

    /// Seals chunk `index` in place: `buf` holds the plaintext followed by 16 bytes for the tag.
    pub fn seal(&self, index: u64, last: bool, buf: &mut [u8]) {
        debug_assert!(buf.len() >= TAG_LEN && buf.len() - TAG_LEN <= self.chunk_size);
        self.key.seal(nonce(index, last), buf)
    }

    /// Opens chunk `index` in place (ciphertext ‖ tag); returns the plaintext length.
    pub fn open(&self, index: u64, last: bool, buf: &mut [u8]) -> Result<usize, Error> {
        self.check_shape(index, last, buf.len())?;
        self.key.open(nonce(index, last), buf).map_err(|()| Error::ChunkAuth(index))?;
        Ok(buf.len() - TAG_LEN)
    }

    /// Seals chunk `index` from `pt` into `out` (`pt.len() + 16` bytes), leaving `pt` untouched.
    pub fn seal_to(&self, index: u64, last: bool, pt: &[u8], out: &mut [u8]) {
        debug_assert!(pt.len() <= self.chunk_size && out.len() == pt.len() + TAG_LEN);
        self.key.seal_to(nonce(index, last), pt, out)
    }

    /// Opens chunk `index` from `ct` (ciphertext ‖ tag) into `out`; returns the plaintext length.
    /// `out` is left unspecified on failure and must not be released.
    pub fn open_to(&self, index: u64, last: bool, ct: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        self.check_shape(index, last, ct.len())?;
        let n = ct.len() - TAG_LEN;
        self.key.open_to(nonce(index, last), ct, &mut out[..n]).map_err(|()| Error::ChunkAuth(index))?;
        Ok(n)
    }

    fn check_shape(&self, index: u64, last: bool, len: usize) -> Result<(), Error> {
        // Sizes first: a non-final chunk is always full, and only the sole chunk of an empty file
        // may be empty (one encoding per plaintext).
        let full = self.chunk_size + TAG_LEN;
        if len < TAG_LEN || len > full || (!last && len != full) || (last && index > 0 && len == TAG_LEN) {
            return Err(Error::ChunkAuth(index));
        }
        Ok(())
    }

    /// Explains a final chunk that failed: if it opens as a *non*-final chunk, the file was cut
    /// at a chunk boundary. Called only on the failure path.
    pub(crate) fn diagnose_last(&self, index: u64, ciphertext: &[u8]) -> Error {
        if ciphertext.len() == self.chunk_size + TAG_LEN {
            let mut copy = ciphertext.to_vec();
            if self.key.open(nonce(index, false), &mut copy).is_ok() {
                return Error::Truncated(index);
            }
        }
        Error::ChunkAuth(index)
    }
}

/// Nonce = 11-byte big-endian index ‖ last flag. `u64` indices cannot overflow 88 bits.
fn nonce(index: u64, last: bool) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[3..11].copy_from_slice(&index.to_be_bytes());
    n[11] = last as u8;
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_layout() {
        assert_eq!(nonce(1, true), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
        assert_eq!(nonce(0x0102, false)[9..], [1, 2, 0]);
    }

    #[test]
    fn chunk_sizes() {
        assert!(check_chunk_size(64 << 10).is_ok());
        assert!(check_chunk_size(16 << 10).is_ok());
        assert!(check_chunk_size(16 << 20).is_ok());
        for bad in [0, 1000, 8 << 10, 32 << 20, (64 << 10) + 1] {
            assert!(check_chunk_size(bad).is_err());
        }
    }
}
