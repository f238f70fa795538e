//! C2SP chunked encryption ([c2sp.org/chunked-encryption]) as pyca/cryptography instantiates it
//! ("Cobblestone"): a 16-byte key selects Cobblestone-128 (HKDF-SHA-512, AES-128-GCM), a 32-byte
//! key Cobblestone-256 (HKDF-SHA-512, AES-256-GCM). Messages are byte-compatible with
//! `cryptography.cobblestone.Cobblestone128/256Encryptor` (pyca/cryptography ≥ 50) both ways.
//!
//! Layout: `salt (24) ‖ commitment (32) ‖ chunk 0 ‖ chunk 1 ‖ …`, every chunk 16 KiB of plaintext
//! plus a 16-byte tag except the final one, which is always *shorter* (possibly empty): the short
//! chunk marks the end, so a message cut at a chunk boundary is detected. Each message derives a
//! fresh AEAD key and base nonce from the input key, a random salt and the caller's context, and a
//! commitment that a wrong key or context fails before any chunk is opened.
//!
//! This module holds the key derivation, the commitment and the chunk cipher (an instance of the
//! engines' `ChunkScheme`: nonce from the index, the short final chunk); the chunks themselves
//! run on the engines of [`crate::stream`] and its one executor, as STREAM payloads do. The
//! one-shots and the push-based [`Encryptor`]/[`Decryptor`] split large inputs over the cores,
//! [`encrypt_stream`] / [`decrypt_stream`] read, seal or open, and write in order in constant
//! memory, and [`Reader`] gives authenticated random access (final chunk checked first).
//!
//! ```
//! use hyperseal::c2sp::{self, Key, Variant};
//! let key = Key::generate(Variant::Cobblestone256);
//! let sealed = c2sp::encrypt(&key, b"ctx", b"hello")?;
//! assert_eq!(c2sp::decrypt(&key, b"ctx", &sealed)?, b"hello");
//!
//! // push-based, as pyca's update()/finalize()
//! let mut enc = c2sp::Encryptor::new(&key, b"")?;
//! let mut out = Vec::new();
//! enc.update(b"part one, ", &mut out)?;
//! enc.update(b"part two", &mut out)?;
//! enc.finish(&mut out)?;
//! let mut dec = c2sp::Decryptor::new(&key, b"")?;
//! let mut plain = Vec::new();
//! dec.update(&out, &mut plain)?;
//! dec.finish(&mut plain)?;
//! assert_eq!(plain, b"part one, part two");
//! # Ok::<(), hyperseal::Error>(())
//! ```
//!
//! [c2sp.org/chunked-encryption]: https://c2sp.org/chunked-encryption

mod push;
mod reader;
mod scheme;
#[cfg(test)]
mod tests;

use std::io::{Read, Write};

use zeroize::Zeroizing;

pub use push::{Decryptor, Encryptor};
pub use reader::Reader;
pub use scheme::{opened_len, sealed_len, CHUNK, HEADER_LEN, MAX_CHUNKS, TAG, WIRE_CHUNK};

use crate::error::Error;
use crate::stream::{self, read_full, Dir, Input};
use scheme::Params;

/// The two instantiations pyca/cryptography names; the key length picks one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// HKDF-SHA-512 and AES-128-GCM, 16-byte keys (`Cobblestone128Encryptor`).
    Cobblestone128,
    /// HKDF-SHA-512 and AES-256-GCM, 32-byte keys (`Cobblestone256Encryptor`).
    Cobblestone256,
}

impl Variant {
    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        match self {
            Variant::Cobblestone128 => 16,
            Variant::Cobblestone256 => 32,
        }
    }

    /// pyca's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Cobblestone128 => "Cobblestone-128",
            Variant::Cobblestone256 => "Cobblestone-256",
        }
    }

    pub(crate) fn params(self) -> Params {
        match self {
            Variant::Cobblestone128 => Params::COBBLESTONE_128,
            Variant::Cobblestone256 => Params::COBBLESTONE_256,
        }
    }
}

/// An input key: 16 or 32 uniformly random bytes. Zeroized on drop; `Debug` never shows it.
#[derive(Clone)]
pub struct Key {
    bytes: Zeroizing<[u8; 32]>,
    variant: Variant,
}

impl Key {
    /// A fresh key from the system CSPRNG.
    pub fn generate(variant: Variant) -> Key {
        let mut bytes = Zeroizing::new([0u8; 32]);
        crate::rng::fill(&mut bytes[..variant.key_len()]).expect("system RNG failed");
        Key { bytes, variant }
    }

    /// Wraps existing key bytes: 16 selects Cobblestone-128, 32 Cobblestone-256. The spec
    /// requires them to be uniformly random (a CSPRNG or KDF output), never a password.
    pub fn from_bytes(b: &[u8]) -> Result<Key, Error> {
        let variant = match b.len() {
            16 => Variant::Cobblestone128,
            32 => Variant::Cobblestone256,
            n => return Err(Error::InvalidKey(format!("a c2sp-chunked key is 16 or 32 bytes, not {n}"))),
        };
        let mut bytes = Zeroizing::new([0u8; 32]);
        bytes[..b.len()].copy_from_slice(b);
        Ok(Key { bytes, variant })
    }

    /// Which instantiation this key selects.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The key bytes.
    pub fn expose(&self) -> &[u8] {
        &self.bytes[..self.variant.key_len()]
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "c2sp::Key({}, redacted)", self.variant.name())
    }
}

/// Encrypts `plaintext` in one call on every core.
pub fn encrypt(key: &Key, context: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
    let mut enc = Encryptor::new(key, context)?;
    let mut out = crate::mem::output_buffer(sealed_len(plaintext.len() as u64) as usize);
    let n = enc.update_into(plaintext, &mut out)?;
    let m = enc.finish_into(&mut out[n..])?;
    debug_assert_eq!(n + m, out.len());
    Ok(out)
}

/// Decrypts and authenticates a whole message in one call on every core. Checks the commitment
/// and the length first; returns nothing unless every chunk authenticates.
pub fn decrypt(key: &Key, context: &[u8], ciphertext: &[u8]) -> Result<Vec<u8>, Error> {
    let (len, _) = opened_len(ciphertext.len() as u64)?;
    let mut dec = Decryptor::new(key, context)?;
    let mut out = crate::mem::output_buffer(len as usize);
    let n = dec.update_into(ciphertext, &mut out)?;
    let m = dec.finish_into(&mut out[n..])?;
    debug_assert_eq!(n + m, out.len());
    Ok(out)
}

/// Encrypts everything `input` yields onto `output` on up to `threads` threads (1 = on the
/// calling thread), in constant memory (a bounded number of 512 KiB batches in flight).
/// Returns the plaintext length.
pub fn encrypt_stream(
    key: &Key,
    context: &[u8],
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
    threads: usize,
) -> Result<u64, Error> {
    let enc = Encryptor::new(key, context)?;
    output.write_all(enc.header())?;
    stream::stream(enc.cipher(), Dir::Seal, Input::Reader(input), output, threads.max(1), None)
}

/// Decrypts a message from `input` onto `output` on up to `threads` threads, in constant memory.
/// Plaintext is written only after its chunk authenticates, and in order; at the first bad
/// chunk the error names it and nothing after it is written. A wrong key or context fails
/// before any output. Returns the plaintext length.
pub fn decrypt_stream(
    key: &Key,
    context: &[u8],
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
    threads: usize,
) -> Result<u64, Error> {
    let mut header = [0u8; HEADER_LEN];
    let got = read_full(input, &mut header)?;
    if got < HEADER_LEN {
        return Err(scheme::short_header());
    }
    let cipher = push::open_header(key, context, &header)?;
    stream::stream(&cipher, Dir::Open, Input::Reader(input), output, threads.max(1), None)
}
