//! One file sealed or opened in parts, by processes that do not share memory (Dask workers,
//! browser workers): the one API of the library that hands the caller duties (below), which
//! every other API performs itself.
//!
//! The payload's chunks are sealed independently at explicit positions (`docs/FORMAT.md` §5),
//! so a file can be made by many workers: one process writes the header and makes the payload
//! key ([`PartKey::seal_new`]), every worker seals the chunk-aligned ranges of the plaintext it
//! is given ([`PartKey::seal`]), and the sealed parts, concatenated in order after the header,
//! are one ordinary file that every reader opens. Opening works the same way
//! ([`PartKey::open_file`], [`PartKey::open`]): each part authenticates its own chunks, and the
//! part holding the end authenticates the final chunk, so the whole file is authenticated once
//! every part has opened.
//!
//! # The duties this hands over
//! - **The payload key leaves this process.** [`PartKey::to_bytes`] exports it so workers can
//!   seal; whoever holds it can read and forge that one file (no other file: every file has a
//!   fresh key). Send it only over authenticated, encrypted channels (TLS between cluster
//!   nodes), never log it, drop it when the job ends (the bytes and the key zeroize).
//! - **The plaintext must not change while it is sealed.** Chunk `i` is always sealed with the
//!   same nonce (its index, and whether it is the last of the length fixed in
//!   [`PartKey::seal_new`]): sealing a retried part again with the *same* bytes is harmless
//!   (the same ciphertext comes out), but sealing chunk `i` twice with *different* bytes reuses
//!   a nonce under one key, which breaks AES-GCM and ChaCha20-Poly1305. Seal from an immutable
//!   snapshot, and check its size and version before and after.
//! - **An opening key does not seal.** A key from [`PartKey::open_file`] refuses to, so a job
//!   that only reads a file cannot by mistake write chunks under that file's nonces. (This
//!   guards against mistakes, not against a holder of the key, who can do anything with it.)
//!
//! ```
//! use hyperseal::parts::PartKey;
//! use hyperseal::{recipient, Kind, Options};
//! let id = recipient::generate(Kind::X25519)?;
//! let to = [recipient::parse_recipient(&id.public)?];
//! let plaintext = vec![7u8; 300_000];
//! let small = Options { chunk_size: 16 << 10, ..Options::default() };
//! let (mut file, key) = PartKey::seal_new(&to, small, plaintext.len() as u64)?;
//! // Each part could go to another machine, with `key.to_bytes()`.
//! for part in key.plan(64 << 10)? {
//!     let pt = &plaintext[part.plaintext.start as usize..part.plaintext.end as usize];
//!     file.extend_from_slice(&key.seal(part.first_chunk, pt)?);
//! }
//! assert_eq!(hyperseal::decrypt(&recipient::parse_identities(&id.secret)?, &file)?, plaintext);
//! # Ok::<(), hyperseal::Error>(())
//! ```

pub mod claim;

use std::io::Read;
use std::ops::Range;

use zeroize::Zeroizing;

use crate::encrypt::{prepare, Prepared};
use crate::format::armor::{is_armored, looks_like_armor};
use crate::format::{check_chunk_size, Header, Suite, SALT_LEN, TAG_LEN};
use crate::recipient::{Identity, Recipient};
use crate::stream::{open_run, seal_run, ChunkCipher};
use crate::{encrypt::Options, error::Error, keys};

/// What a key may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Seal,
    Open,
}

/// The payload key of one file and the geometry of its payload: everything a worker needs to
/// seal or open its parts. `Debug` shows the geometry, never the key.
pub struct PartKey {
    role: Role,
    suite: Suite,
    /// Bytes before the first chunk (header and salt).
    payload_start: u64,
    /// Sealed payload bytes: for an opening key, what the file holds after the header, which
    /// the parts then authenticate.
    payload_len: u64,
    key: Zeroizing<[u8; 32]>,
    cipher: ChunkCipher,
    threads: usize,
}

impl std::fmt::Debug for PartKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PartKey({:?}, {}, {} B chunks, {} B payload, key redacted)",
            self.role,
            self.suite,
            self.cipher.chunk_size(),
            self.payload_len
        )
    }
}

/// One part of a plan: chunks `first_chunk..` holding the plaintext bytes `plaintext`, stored
/// at `file` in the encrypted file (absolute offsets, header included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Index of the part's first chunk: what [`PartKey::seal`] and [`PartKey::open`] take.
    pub first_chunk: u64,
    /// Plaintext bytes of the part.
    pub plaintext: Range<u64>,
    /// Where the sealed part sits in the encrypted file.
    pub file: Range<u64>,
}

/// One AEAD call of a part (see [`PartKey::chunk_calls`]): offsets into the part's input and
/// output buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkCall {
    /// The chunk's nonce (its index and final flag, `docs/FORMAT.md` §5.2).
    pub nonce: [u8; 12],
    /// Bytes of the part's input the call reads.
    pub input: Range<usize>,
    /// Where in the part's output its result goes.
    pub output: Range<usize>,
}

/// Magic and version of [`PartKey::to_bytes`]. (Version 1 carried its layout without a MAC
/// and is refused.)
const MAGIC: &[u8; 8] = b"hs-part2";

/// HKDF info of the key that MACs a serialized part key's layout.
const LAYOUT_MAC_INFO: &[u8] = b"hyperseal/v1 part key layout";

impl PartKey {
    /// Begins a file of exactly `plaintext_len` bytes to `recipients`: returns the header and
    /// salt (the file's first bytes) and the key that seals its parts.
    pub fn seal_new(
        recipients: &[Box<dyn Recipient>],
        opts: Options,
        plaintext_len: u64,
    ) -> Result<(Vec<u8>, PartKey), Error> {
        check_chunk_size(opts.chunk_size)?;
        let payload_len = usize::try_from(plaintext_len)
            .ok()
            .and_then(|n| n.checked_add(TAG_LEN * n.div_ceil(opts.chunk_size).max(1)))
            .ok_or_else(|| Error::InvalidArgument("plaintext too large for this platform".into()))?;
        let Prepared { head, payload_key } = prepare(recipients, &opts)?;
        let start = head.len() as u64;
        let key =
            PartKey::build(Role::Seal, opts.suite, opts.chunk_size, start, payload_len as u64, payload_key)?;
        Ok((head, key))
    }

    /// Reads the header of an encrypted file of `file_len` bytes from `input` (positioned at its
    /// start; some bytes past the header may be consumed), unwraps its file key with
    /// `identities`, and returns the key that opens its parts. Binary files only.
    pub fn open_file(
        input: &mut dyn Read,
        file_len: u64,
        identities: &[Box<dyn Identity>],
    ) -> Result<PartKey, Error> {
        let mut buf = Vec::new();
        let (header, header_len) = loop {
            if looks_like_armor(&buf) || is_armored(&buf) {
                return Err(Error::InvalidArgument("an armored file cannot be opened in parts".into()));
            }
            if let Some(found) = Header::parse_prefix(&buf)? {
                break found;
            }
            if read_more(input, &mut buf, 16 << 10)? == 0 {
                return Err(Error::MalformedHeader("file ends inside the header".into()));
            }
        };
        let want = header_len + SALT_LEN;
        if buf.len() < want {
            let missing = want - buf.len();
            read_more(input, &mut buf, missing)?;
        }
        let mut salt = [0u8; SALT_LEN];
        let got = (buf.len() - header_len).min(SALT_LEN);
        salt[..got].copy_from_slice(&buf[header_len..header_len + got]);
        // As `Decryptor`: a file for someone else says so even when it is also cut short.
        let payload_key = keys::open_header_key(&header, identities, &salt)?;
        if got < SALT_LEN {
            return Err(Error::MalformedHeader("file ends before the 16-byte payload nonce".into()));
        }
        let start = (header_len + SALT_LEN) as u64;
        let payload_len = file_len
            .checked_sub(start)
            .ok_or_else(|| Error::InvalidArgument("file_len is shorter than the file's header".into()))?;
        PartKey::build(Role::Open, header.suite, header.chunk_size, start, payload_len, payload_key)
    }

    fn build(
        role: Role,
        suite: Suite,
        chunk_size: usize,
        payload_start: u64,
        payload_len: u64,
        key: Zeroizing<[u8; 32]>,
    ) -> Result<PartKey, Error> {
        let cipher = ChunkCipher::new(suite, chunk_size, &key)?;
        // Every offset a plan computes stays below the file's end plus one chunk: bound the
        // geometry once here (it may come from `from_bytes` or a caller's `file_len`), so no
        // offset arithmetic can overflow. A sealing key always has at least one tag of payload.
        let end = payload_start.checked_add(payload_len).and_then(|e| e.checked_add(cipher.full() as u64));
        if end.is_none_or(|e| e > i64::MAX as u64) || (role == Role::Seal && payload_len < TAG_LEN as u64) {
            return Err(Error::InvalidArgument("part key geometry out of range".into()));
        }
        Ok(PartKey { role, suite, payload_start, payload_len, key, cipher, threads: 0 })
    }

    /// Sets the threads [`seal`](Self::seal) and [`open`](Self::open) use: 1 = the calling
    /// thread only, 0 = all cores (the default).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// Plaintext bytes per chunk.
    pub fn chunk_size(&self) -> usize {
        self.cipher.chunk_size()
    }

    /// The payload suite.
    pub fn suite(&self) -> Suite {
        self.suite
    }

    /// Bytes of the whole encrypted file.
    pub fn file_len(&self) -> u64 {
        self.payload_start + self.payload_len
    }

    /// Bytes of plaintext. For an opening key this follows from the file's length and is
    /// trusted only once the part holding the end has opened.
    pub fn plaintext_len(&self) -> u64 {
        let (n, full) = (self.chunks(), self.cipher.full() as u64);
        // Every chunk but the last is full; a last one shorter than a tag (a damaged file, which
        // fails to open) counts as empty.
        let last = self.payload_len - (n - 1) * full;
        (n - 1) * self.cipher.chunk_size() as u64 + last.saturating_sub(TAG_LEN as u64)
    }

    /// Chunks in the payload: at least one (an empty plaintext is one empty final chunk; an
    /// empty payload is a truncated file whose one missing chunk the last part reports).
    fn chunks(&self) -> u64 {
        self.payload_len.div_ceil(self.cipher.full() as u64).max(1)
    }

    /// Splits the file into parts of `part_size` plaintext bytes (a multiple of the chunk
    /// size; the last part holds the rest), in order. Every file has at least one part.
    pub fn plan(&self, part_size: u64) -> Result<Vec<Part>, Error> {
        let chunk = self.cipher.chunk_size() as u64;
        if part_size == 0 || !part_size.is_multiple_of(chunk) {
            return Err(Error::InvalidArgument(format!(
                "part size {part_size} is not a positive multiple of the chunk size {chunk}"
            )));
        }
        let (per, n) = (part_size / chunk, self.chunks());
        Ok((0..n.div_ceil(per)).map(|p| self.part(p * per, (p * per + per).min(n))).collect())
    }

    /// Chunks `a..b` as a part.
    fn part(&self, a: u64, b: u64) -> Part {
        let (chunk, full) = (self.cipher.chunk_size() as u64, self.cipher.full() as u64);
        let end = self.payload_start + self.payload_len;
        Part {
            first_chunk: a,
            plaintext: (a * chunk).min(self.plaintext_len())..(b * chunk).min(self.plaintext_len()),
            file: (self.payload_start + a * full).min(end)..(self.payload_start + b * full).min(end),
        }
    }

    /// Seals the plaintext of the part that starts at chunk `first_chunk`: whole chunks, or the
    /// rest of the file (then its last chunk is the final one). Returns the sealed part, whose
    /// place in the file is given by [`plan`](Self::plan). Sealing a part again with the same
    /// bytes gives the same output; with other bytes it reuses nonces (see the module docs).
    pub fn seal(&self, first_chunk: u64, plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        let mut out = vec![0u8; self.sealed_len(first_chunk, plaintext.len())?];
        self.seal_into(first_chunk, plaintext, &mut out)?;
        Ok(out)
    }

    /// [`seal`](Self::seal) into `out`, which must be exactly
    /// [`sealed_len`](Self::sealed_len)`(first_chunk, plaintext.len())` bytes (a buffer the
    /// caller owns: a Python `bytes`, a mapped file).
    pub fn seal_into(&self, first_chunk: u64, plaintext: &[u8], out: &mut [u8]) -> Result<(), Error> {
        let need = self.sealed_len(first_chunk, plaintext.len())?;
        if out.len() != need {
            return Err(Error::InvalidArgument(format!(
                "output buffer is {} bytes, the part is {need}",
                out.len()
            )));
        }
        seal_run(
            &self.cipher,
            first_chunk,
            plaintext,
            self.ends_at(first_chunk, plaintext.len()),
            out,
            self.threads,
        );
        Ok(())
    }

    /// Bytes of the sealed part at chunk `first_chunk` with `len` plaintext bytes; an error if
    /// no such part fits this file (see [`seal`](Self::seal)).
    pub fn sealed_len(&self, first_chunk: u64, len: usize) -> Result<usize, Error> {
        if self.role != Role::Seal {
            return Err(Error::InvalidArgument("this part key opens a file; it cannot seal".into()));
        }
        let chunk = self.cipher.chunk_size() as u64;
        let (start, total) = (first_chunk.checked_mul(chunk), self.plaintext_len());
        let end = start.and_then(|s| s.checked_add(len as u64));
        let ends = end == Some(total);
        let fits = start.is_some_and(|s| s < total) || (start == Some(0) && total == 0);
        let whole = len > 0 && (len as u64).is_multiple_of(chunk) && end.is_some_and(|e| e <= total);
        if !fits || !(ends || whole) {
            return Err(Error::InvalidArgument(format!(
                "a part at chunk {first_chunk} with {len} bytes does not fit a {total}-byte plaintext in {chunk}-byte chunks"
            )));
        }
        let chunks = if ends { len.div_ceil(chunk as usize).max(1) } else { len / chunk as usize };
        Ok(len + TAG_LEN * chunks)
    }

    /// Whether `len` plaintext bytes at chunk `first_chunk` reach the end of the plaintext.
    fn ends_at(&self, first_chunk: u64, len: usize) -> bool {
        let start = first_chunk.saturating_mul(self.cipher.chunk_size() as u64);
        start.checked_add(len as u64) == Some(self.plaintext_len())
    }

    /// Opens the part that starts at chunk `first_chunk` (its bytes as [`plan`](Self::plan)
    /// places them in the file) and returns its plaintext, all of it authenticated. The part
    /// holding the end of the file also proves the file was not cut short.
    pub fn open(&self, first_chunk: u64, sealed: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        // Unauthenticated bytes are wiped whatever happens; only a part that opened is returned.
        let mut out = Zeroizing::new(vec![0u8; sealed.len()]);
        let n = self.open_into(first_chunk, sealed, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Plaintext bytes in a part of `sealed_len` bytes (exact for a part that opens).
    pub fn opened_len(&self, sealed_len: usize) -> usize {
        // Every chunk but the last is full; a last one shorter than a tag (a damaged part, which
        // fails to open) holds no plaintext — the engine's own count, so a buffer of this size
        // always reaches the authentication check.
        let (full, n) = (self.cipher.full(), sealed_len.div_ceil(self.cipher.full()));
        match n {
            0 => 0,
            n => (n - 1) * self.cipher.chunk_size() + (sealed_len - (n - 1) * full).saturating_sub(TAG_LEN),
        }
    }

    /// [`open`](Self::open) into `out` ([`opened_len`](Self::opened_len) bytes suffice, as does
    /// `sealed.len()`); returns the plaintext length. On error `out` holds unauthenticated bytes and must be discarded.
    pub fn open_into(&self, first_chunk: u64, sealed: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        let ends = self.open_fits(first_chunk, sealed.len())?;
        open_run(&self.cipher, first_chunk, sealed, ends, out, self.threads)
    }

    /// The one bounds check of every opening path ([`open`](Self::open),
    /// [`open_into`](Self::open_into), [`chunk_calls`](Self::chunk_calls)): a part of `len`
    /// sealed bytes at chunk `first_chunk` either reaches exactly the end of the payload or is a
    /// positive number of whole chunks inside it, and starts inside it (only a file whose payload
    /// is empty — a truncated one, which then fails to open — has a part at its end). Returns
    /// whether the part holds the end. Overflow-safe for any input.
    fn open_fits(&self, first_chunk: u64, len: usize) -> Result<bool, Error> {
        let full = self.cipher.full() as u64;
        let start = first_chunk.checked_mul(full);
        let end = start.and_then(|s| s.checked_add(len as u64));
        let ends = end == Some(self.payload_len);
        let starts_inside = start.is_some_and(|s| s < self.payload_len) || start == Some(0);
        let whole =
            len > 0 && (len as u64).is_multiple_of(full) && end.is_some_and(|e| e <= self.payload_len);
        if !starts_inside || !(ends || whole) {
            return Err(Error::InvalidArgument(format!(
                "a part at chunk {first_chunk} with {len} bytes does not fit this file's payload"
            )));
        }
        Ok(ends)
    }

    /// The AEAD calls that seal (`sealing`) or open the part at chunk `first_chunk` whose input
    /// is `input_len` bytes, for a caller that runs the cipher itself — a page handing
    /// AES-256-GCM to WebCrypto, which runs it off the main thread several times faster than
    /// WebAssembly. Each call is `AEAD(raw_aead_key, nonce, aad = empty, input[input])` and its
    /// result (ciphertext ‖ tag, or the plaintext) goes to `output[output]` of a buffer of
    /// [`sealed_len`](Self::sealed_len) (or [`opened_len`](Self::opened_len)) bytes. The shape
    /// checks are the library's: a part that does not fit, or a final chunk too short to be
    /// one, is an error here, before any call. A caller opening MUST NOT release any output of a
    /// part unless every call of it succeeded, and reports a failed call as `ChunkAuth`.
    pub fn chunk_calls(
        &self,
        first_chunk: u64,
        input_len: usize,
        sealing: bool,
    ) -> Result<Vec<ChunkCall>, Error> {
        let (chunk, full) = (self.cipher.chunk_size(), self.cipher.full());
        let (stride, ends) = match sealing {
            true => {
                self.sealed_len(first_chunk, input_len)?;
                (chunk, self.ends_at(first_chunk, input_len))
            }
            false => (full, self.open_fits(first_chunk, input_len)?),
        };
        let count = if ends {
            crate::stream::ready(input_len, stride, true, first_chunk).0
        } else {
            input_len / stride
        };
        // An opening part always has a chunk to check (the bounds above guarantee it; this
        // keeps "no call, so nothing failed" from ever passing as authenticated).
        if count == 0 {
            return Err(Error::InvalidArgument("a part must hold at least one chunk".into()));
        }
        let mut calls = Vec::with_capacity(count);
        let mut at = 0;
        for i in 0..count {
            let (index, last) = (first_chunk + i as u64, ends && i + 1 == count);
            let len = (input_len - i * stride).min(stride);
            if !sealing {
                self.cipher.check_shape(index, last, len)?;
            }
            let out = if sealing { len + TAG_LEN } else { len - TAG_LEN };
            calls.push(ChunkCall {
                nonce: crate::stream::nonce(index, last),
                input: i * stride..i * stride + len,
                output: at..at + out,
            });
            at += out;
        }
        Ok(calls)
    }

    /// The payload's raw AEAD key, for [`chunk_calls`](Self::chunk_calls): AES-256-GCM and
    /// ChaCha20-Poly1305 files only (their key is the whole payload key).
    pub fn raw_aead_key(&self) -> Result<Zeroizing<[u8; 32]>, Error> {
        match self.suite {
            Suite::Aes256Gcm | Suite::ChaCha20Poly1305 => Ok(self.key.clone()),
            other => Err(Error::InvalidArgument(format!("no raw key export for {other} payloads"))),
        }
    }

    /// The key and geometry as bytes, to send to a worker (see the module docs for what that
    /// worker learns). [`from_bytes`](Self::from_bytes) reads them back. The geometry (role,
    /// suite, chunk size, offsets) is MACed under a key derived from the payload key, so a copy
    /// whose layout was edited — another chunk size would put other plaintext under each
    /// chunk's nonce — is refused.
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let name = self.suite.name().as_bytes();
        let mut out = Zeroizing::new(Vec::with_capacity(MAGIC.len() + 2 + name.len() + 4 + 16 + 64));
        out.extend_from_slice(MAGIC);
        out.push(matches!(self.role, Role::Open) as u8);
        out.push(name.len() as u8);
        out.extend_from_slice(name);
        out.extend_from_slice(&(self.cipher.chunk_size() as u32).to_be_bytes());
        out.extend_from_slice(&self.payload_start.to_be_bytes());
        out.extend_from_slice(&self.payload_len.to_be_bytes());
        let mac = crate::crypto::hmac_sha256(&layout_mac_key(&self.key)[..], &[&out[..]]);
        out.extend_from_slice(&self.key[..]);
        out.extend_from_slice(&mac);
        out
    }

    /// Reads [`to_bytes`](Self::to_bytes)' output; refuses any byte changed.
    pub fn from_bytes(bytes: &[u8]) -> Result<PartKey, Error> {
        let bad = || Error::InvalidKey("not a hyperseal part key, or one that was modified".into());
        let layout_len = bytes.len().checked_sub(64).ok_or_else(bad)?;
        let (layout, secret) = bytes.split_at(layout_len);
        let (key, mac) = secret.split_at(32);
        let key = Zeroizing::new(<[u8; 32]>::try_from(key).expect("split at 32"));
        if !crate::crypto::hmac_sha256_verify(&layout_mac_key(&key)[..], layout, mac) {
            return Err(bad());
        }
        let rest = layout.strip_prefix(MAGIC).ok_or_else(bad)?;
        let (&[role, name_len], rest) = rest.split_first_chunk::<2>().ok_or_else(bad)?;
        let (name, rest) = rest.split_at_checked(name_len.into()).ok_or_else(bad)?;
        let suite = std::str::from_utf8(name).ok().and_then(Suite::from_name).ok_or_else(bad)?;
        let (chunk, rest) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
        let (start, rest) = rest.split_first_chunk::<8>().ok_or_else(bad)?;
        let (len, rest) = rest.split_first_chunk::<8>().ok_or_else(bad)?;
        let role = match (role, rest.is_empty()) {
            (0, true) => Role::Seal,
            (1, true) => Role::Open,
            _ => return Err(bad()),
        };
        let chunk_size = u32::from_be_bytes(*chunk) as usize;
        let (start, len) = (u64::from_be_bytes(*start), u64::from_be_bytes(*len));
        PartKey::build(role, suite, chunk_size, start, len, key)
    }
}

/// The key that MACs a serialized part key's layout: bound to the payload key, used for nothing
/// else.
fn layout_mac_key(payload_key: &[u8; 32]) -> Zeroizing<[u8; 32]> {
    crate::crypto::hkdf32(&[], payload_key, LAYOUT_MAC_INFO)
}

/// Appends up to `n` bytes read from `input` to `buf`; returns how many came.
fn read_more(input: &mut dyn Read, buf: &mut Vec<u8>, n: usize) -> Result<usize, Error> {
    let had = buf.len();
    buf.resize(had + n, 0);
    let got = crate::stream::read_full(input, &mut buf[had..])?;
    buf.truncate(had + got);
    Ok(got)
}

#[cfg(test)]
mod tests;
