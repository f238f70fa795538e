//! The STREAM payload: fixed-size chunks, each sealed independently under one payload key with
//! nonce = 11-byte big-endian chunk index ‖ last-chunk flag.
//!
//! The flag makes truncation at a chunk boundary detectable (the new last chunk was sealed as
//! "not last"), the index makes reordering, dropping and duplicating detectable, and a final
//! chunk that is missing shows up as a non-final chunk at the end. A nonce is used at most once
//! per key because every (index, last) pair is distinct and every file has a fresh payload key
//! (fresh file key and fresh salt).
//!
//! Layout of this module:
//! - here: [`ChunkScheme`], what the engines need of a chunked construction (sealing and
//!   opening chunk `i` by position, the final-chunk rule), and its STREAM instance
//!   [`ChunkCipher`] with the rule [`ready`] and `check_shape`, in one place (C2SP is the other
//!   instance, in `c2sp`);
//! - `batch`: batches of chunks, the unit of the streaming engines;
//! - `engine`: whole payloads — from a `Read` or a borrowed slice onto a `Write`, or straight
//!   into a buffer;
//! - `push`: [`Sealer`]/[`Opener`]-style push state (feed bytes in any pieces) and the `Write`
//!   adapter built on it;
//! - `reader`: the seekable `Read` adapter.

mod batch;
mod engine;
#[cfg(all(feature = "fs", any(unix, windows)))]
pub(crate) mod positional;
mod push;
mod reader;

pub(crate) use batch::read_full;
pub(crate) use engine::{open_run, seal_run, sealed_len, stream, Dir, Input};
pub use push::StreamWriter;
pub(crate) use push::{PayloadOpener, PayloadSealer};
// C2SP's parts (native builds only: lib.rs).
#[cfg(not(portable_backend))]
pub(crate) use push::{grow, Pending};
#[cfg(any(test, not(portable_backend)))]
pub(crate) use reader::ChunkReader;
pub use reader::StreamReader;

use zeroize::Zeroizing;

use crate::error::Error;
use crate::format::{check_chunk_size, Suite, TAG_LEN};
use crate::suite::ChunkKey;

/// Called with the number of input bytes processed so far.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// A chunked AEAD construction as the engines, the executor's only chunk users, see it: chunk
/// `index` sealed or opened by position (the nonce derives from the index and the last flag;
/// every chunk carries a 16-byte tag), and which chunk is final. Position-explicit and
/// stateless, so every path (one-shot runs, streams, push state, readers) calls the same
/// functions. On failure an open leaves unauthenticated bytes that must not be released.
pub(crate) trait ChunkScheme: Sync {
    /// Plaintext bytes per full chunk.
    fn chunk_size(&self) -> usize;
    /// The final-chunk rule: of `avail` bytes of `stride` (the input has ended iff `end`), how
    /// many chunks can be processed now and whether the last of them is final.
    fn ready(&self, avail: usize, stride: usize, end: bool, next_index: u64) -> (usize, bool);
    /// Seals in place: `buf` holds the plaintext followed by 16 bytes for the tag.
    fn seal(&self, index: u64, last: bool, buf: &mut [u8]) -> Result<(), Error>;
    /// Seals `pt` into `out` (`pt.len() + 16` bytes).
    fn seal_to(&self, index: u64, last: bool, pt: &[u8], out: &mut [u8]) -> Result<(), Error>;
    /// Opens in place (ciphertext ‖ tag); returns the plaintext length.
    fn open(&self, index: u64, last: bool, buf: &mut [u8]) -> Result<usize, Error>;
    /// Opens `ct` (ciphertext ‖ tag) into `out`; returns the plaintext length.
    fn open_to(&self, index: u64, last: bool, ct: &[u8], out: &mut [u8]) -> Result<usize, Error>;
    /// Refuses a chunk index past the scheme's last nonce, before anything is processed. STREAM's
    /// 88-bit index is never reached (a file would be 2^104 bytes).
    fn check_index(&self, _index: u64) -> Result<(), Error> {
        Ok(())
    }
}

/// A full chunk that failed to open under the final flag its place gave it, opened under the
/// other one (`ct` is its ciphertext ‖ tag, `out` room for its plaintext). Where that
/// authenticates, the chunk is the sender's own, at its own index, and only what surrounds it is
/// wrong: a payload cut at a chunk boundary (a non-final chunk where the input ends), or data
/// after the final chunk. age's readers release such a chunk before reporting that, and so do
/// these engines, as they release every chunk before a later failing one; the returned error is
/// the one to report after it. `None`: it opens under neither flag (or is not full, so its place
/// was never in doubt), and nothing in `out` may be released.
pub(crate) fn open_other_flag(
    scheme: &impl ChunkScheme,
    index: u64,
    last: bool,
    ct: &[u8],
    out: &mut [u8],
) -> Option<Error> {
    if ct.len() != scheme.chunk_size() + TAG_LEN {
        return None;
    }
    scheme.open_to(index, !last, ct, out).ok()?;
    Some(if last { Error::Truncated(index) } else { Error::ChunkAuth(index + 1) })
}

/// The plaintext length of a payload of `payload` bytes, after authenticating its final chunk,
/// which `read(offset in the payload, buf)` fills: the one rule of every seekable path (the
/// reader, random access into a file), so a payload cut short fails whatever range is asked.
pub(crate) fn authenticated_len(
    cipher: &impl ChunkScheme,
    payload: u64,
    read: impl FnOnce(u64, &mut [u8]) -> Result<(), Error>,
) -> Result<u64, Error> {
    let full = (cipher.chunk_size() + TAG_LEN) as u64;
    if payload == 0 {
        return Err(Error::Truncated(0));
    }
    let last = (payload - 1) / full;
    // Plaintext once opened: wiped when dropped.
    let mut buf = Zeroizing::new(vec![0u8; (payload - last * full) as usize]);
    read(last * full, &mut buf)?;
    let pt = cipher.open(last, true, &mut buf)?;
    Ok(last * cipher.chunk_size() as u64 + pt as u64)
}

/// Seals and opens STREAM payload chunks by position. Crate-private: a caller choosing positions could
/// reuse a nonce, so only the engines here build them.
pub(crate) struct ChunkCipher {
    key: ChunkKey,
    chunk_size: usize,
    suite: Suite,
}

impl std::fmt::Debug for ChunkCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChunkCipher({}, {} B chunks, key redacted)", self.suite, self.chunk_size)
    }
}

/// The final-chunk rule for data that arrives over time: of `avail` buffered payload bytes
/// (the input has ended iff `end`), how many chunks of `stride` input bytes can be processed
/// now, and whether the last of them is the final chunk. A full chunk is final only if nothing
/// follows it, so before the end a chunk is released only once a byte after it has arrived; at
/// the end everything goes, and an empty payload is one empty final chunk.
pub(crate) fn ready(avail: usize, stride: usize, end: bool, next_index: u64) -> (usize, bool) {
    match (end, avail) {
        (false, _) => (avail.saturating_sub(1) / stride, false),
        (true, 0) => (usize::from(next_index == 0), true),
        (true, _) => (avail.div_ceil(stride), true),
    }
}

impl ChunkCipher {
    /// Keys `suite` with a payload key derived by the key schedule.
    pub(crate) fn new(
        suite: Suite,
        chunk_size: usize,
        payload_key: &Zeroizing<[u8; 32]>,
    ) -> Result<Self, Error> {
        check_chunk_size(chunk_size)?;
        Ok(ChunkCipher { key: suite.key(payload_key)?, chunk_size, suite })
    }

    /// Plaintext bytes per full chunk.
    pub(crate) fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// Sealed bytes per full chunk.
    pub(crate) fn full(&self) -> usize {
        self.chunk_size + TAG_LEN
    }

    /// Sizes first: a non-final chunk is always full, only the sole chunk of an empty payload may
    /// be empty (one encoding per plaintext), and no chunk at all where the final one must be is
    /// a truncation.
    pub(crate) fn check_shape(&self, index: u64, last: bool, len: usize) -> Result<(), Error> {
        if last && len == 0 {
            return Err(Error::Truncated(index.saturating_sub(1)));
        }
        let full = self.full();
        if len < TAG_LEN || len > full || (!last && len != full) || (last && index > 0 && len == TAG_LEN) {
            return Err(Error::ChunkAuth(index));
        }
        Ok(())
    }

    /// The error for a chunk that did not authenticate: a final chunk that opens as a
    /// *non*-final one means the payload was cut at a chunk boundary.
    fn failed(&self, index: u64, last: bool, ciphertext: Option<&[u8]>) -> Error {
        if let Some(ct) = ciphertext.filter(|c| last && c.len() == self.full()) {
            let mut copy = Zeroizing::new(ct.to_vec());
            if self.key.open(nonce(index, false), &mut copy).is_ok() {
                return Error::Truncated(index);
            }
        }
        Error::ChunkAuth(index)
    }
}

impl ChunkScheme for ChunkCipher {
    fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    fn ready(&self, avail: usize, stride: usize, end: bool, next_index: u64) -> (usize, bool) {
        ready(avail, stride, end, next_index)
    }

    /// Seals chunk `index` in place: `buf` holds the plaintext followed by 16 bytes for the tag.
    fn seal(&self, index: u64, last: bool, buf: &mut [u8]) -> Result<(), Error> {
        debug_assert!(buf.len() >= TAG_LEN && buf.len() - TAG_LEN <= self.chunk_size);
        self.key.seal(nonce(index, last), buf);
        Ok(())
    }

    /// Seals chunk `index` from `pt` into `out` (`pt.len() + 16` bytes), leaving `pt` untouched.
    fn seal_to(&self, index: u64, last: bool, pt: &[u8], out: &mut [u8]) -> Result<(), Error> {
        debug_assert!(pt.len() <= self.chunk_size && out.len() == pt.len() + TAG_LEN);
        self.key.seal_to(nonce(index, last), pt, out);
        Ok(())
    }

    /// Opens chunk `index` in place (ciphertext ‖ tag); returns the plaintext length. On failure
    /// the buffer holds unauthenticated bytes and must not be released.
    fn open(&self, index: u64, last: bool, buf: &mut [u8]) -> Result<usize, Error> {
        self.check_shape(index, last, buf.len())?;
        // A full final chunk that fails may be a non-final one (a cut at a chunk boundary): keep
        // the ciphertext to tell. One chunk per payload, so the copy costs nothing measurable.
        let original = (last && buf.len() == self.full()).then(|| Zeroizing::new(buf.to_vec()));
        match self.key.open(nonce(index, last), buf) {
            Ok(()) => Ok(buf.len() - TAG_LEN),
            Err(()) => Err(self.failed(index, last, original.as_deref().map(|v| &v[..]))),
        }
    }

    /// Opens chunk `index` from `ct` (ciphertext ‖ tag) into `out`; returns the plaintext length.
    /// On failure `out` holds unauthenticated bytes and must not be released.
    fn open_to(&self, index: u64, last: bool, ct: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        self.check_shape(index, last, ct.len())?;
        let n = ct.len() - TAG_LEN;
        match self.key.open_to(nonce(index, last), ct, &mut out[..n]) {
            Ok(()) => Ok(n),
            Err(()) => Err(self.failed(index, last, Some(ct))),
        }
    }
}

/// Nonce = 11-byte big-endian index ‖ last flag. `u64` indices cannot overflow 88 bits.
pub(crate) fn nonce(index: u64, last: bool) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[3..11].copy_from_slice(&index.to_be_bytes());
    n[11] = last as u8;
    n
}

#[cfg(test)]
mod ahead_tests;
#[cfg(test)]
mod tail_tests;
#[cfg(test)]
mod tests;
