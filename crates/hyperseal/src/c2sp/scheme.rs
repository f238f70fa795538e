//! The C2SP chunked-encryption construction itself: the key derivation (HKDF-Expand with key
//! commitment), the chunk nonces, and sealing and opening one chunk at an explicit position.
//!
//! Everything here is position-explicit and keeps no state: [`ChunkCipher`] is an instance of
//! the engines' `ChunkScheme`, so the push-based Encryptor/Decryptor, the streams on the one
//! executor (`crate::stream`) and the seekable reader all call the same functions.

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use aws_lc_rs::hkdf;
use zeroize::Zeroizing;

use crate::error::Error;
use crate::stream::ChunkScheme;

/// Plaintext bytes in every chunk but the last (16 KiB, the TLS 1.3 record size).
pub const CHUNK: usize = 16 << 10;
/// Bytes of every AEAD tag this module uses.
pub const TAG: usize = 16;
/// A full chunk on the wire.
pub const WIRE_CHUNK: usize = CHUNK + TAG;
/// Random salt at the start of every message.
pub const SALT_LEN: usize = 24;
/// Key commitment after the salt.
pub const COMMITMENT_LEN: usize = 32;
/// Salt ‖ commitment.
pub const HEADER_LEN: usize = SALT_LEN + COMMITMENT_LEN;
/// The spec allows up to 2⁴⁰ chunks and lets implementations stop lower (not below 2³²); pyca
/// stops at 2³⁸ (4 PiB), the older spec text's limit, and so do we: both read each other's
/// messages up to that size.
pub const MAX_CHUNKS: u64 = 1 << 38;

const NONCE_LEN: usize = 12;
const INFO_PREFIX: &[u8] = b"c2sp.org/chunked-encryption@v1+";

/// The hash under HKDF-Expand. pyca's Cobblestone uses SHA-512; the spec recommends SHA-256,
/// which its published vectors use (kept for those vectors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hash {
    // Only the vector test builds it: no public API offers the SHA-256 instantiation (yet).
    #[cfg_attr(not(test), allow(dead_code))]
    Sha256,
    Sha512,
}

/// One instantiation: an AEAD named by its IANA registry name, and the KDF hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    pub(crate) aead: &'static aead::Algorithm,
    pub(crate) iana_name: &'static str,
    pub(crate) hash: Hash,
}

impl Params {
    /// Cobblestone-128: SHA-512 and AES-128-GCM.
    pub(crate) const COBBLESTONE_128: Params =
        Params { aead: &aead::AES_128_GCM, iana_name: "AEAD_AES_128_GCM", hash: Hash::Sha512 };
    /// Cobblestone-256: SHA-512 and AES-256-GCM.
    pub(crate) const COBBLESTONE_256: Params =
        Params { aead: &aead::AES_256_GCM, iana_name: "AEAD_AES_256_GCM", hash: Hash::Sha512 };

    /// The spec's generic instantiation with `hash` and an AEAD named as in the IANA registry
    /// (AES-128/256-GCM, ChaCha20-Poly1305). For the published vectors.
    #[cfg(test)]
    pub(crate) fn generic(iana_name: &str, hash: Hash) -> Option<Params> {
        let (aead, iana_name) = match iana_name {
            "AEAD_AES_128_GCM" => (&aead::AES_128_GCM, "AEAD_AES_128_GCM"),
            "AEAD_AES_256_GCM" => (&aead::AES_256_GCM, "AEAD_AES_256_GCM"),
            "AEAD_CHACHA20_POLY1305" => (&aead::CHACHA20_POLY1305, "AEAD_CHACHA20_POLY1305"),
            _ => return None,
        };
        Some(Params { aead, iana_name, hash })
    }

    /// Input key length: the AEAD's key length, as the spec requires.
    pub(crate) fn key_len(&self) -> usize {
        self.aead.key_len()
    }
}

/// A message's derived key: the AEAD keyed with *key*, the *base nonce*, and the *commitment*
/// that goes on the wire after the salt.
pub(crate) struct Derived {
    pub(crate) cipher: ChunkCipher,
    pub(crate) commitment: [u8; COMMITMENT_LEN],
}

/// key ‖ base nonce ‖ commitment = HKDF-Expand(input key,
///     "c2sp.org/chunked-encryption@v1+" ‖ aead ‖ 0x00 ‖ salt ‖ context).
pub(crate) fn derive(
    p: Params,
    input_key: &[u8],
    salt: &[u8; SALT_LEN],
    context: &[u8],
) -> Result<Derived, Error> {
    debug_assert_eq!(input_key.len(), p.key_len());
    let alg = match p.hash {
        Hash::Sha256 => hkdf::HKDF_SHA256,
        Hash::Sha512 => hkdf::HKDF_SHA512,
    };
    let klen = p.key_len();
    let mut okm = Zeroizing::new([0u8; 32 + NONCE_LEN + COMMITMENT_LEN]);
    let okm = &mut okm[..klen + NONCE_LEN + COMMITMENT_LEN];
    // Expand only: the input key is uniformly random already (spec: "without the Extract step").
    let prk = hkdf::Prk::new_less_safe(alg, input_key);
    let info: [&[u8]; 5] = [INFO_PREFIX, p.iana_name.as_bytes(), &[0], salt, context];
    prk.expand(&info, OkmLen(okm.len()))?.fill(okm)?;
    let key = LessSafeKey::new(UnboundKey::new(p.aead, &okm[..klen])?);
    let mut base = [0u8; NONCE_LEN];
    base.copy_from_slice(&okm[klen..klen + NONCE_LEN]);
    let mut commitment = [0u8; COMMITMENT_LEN];
    commitment.copy_from_slice(&okm[klen + NONCE_LEN..]);
    Ok(Derived { cipher: ChunkCipher { key, base: Zeroizing::new(base) }, commitment })
}

struct OkmLen(usize);

impl hkdf::KeyType for OkmLen {
    fn len(&self) -> usize {
        self.0
    }
}

/// Seals and opens chunks by index under one message key.
pub(crate) struct ChunkCipher {
    key: LessSafeKey,
    base: Zeroizing<[u8; NONCE_LEN]>,
}

impl ChunkCipher {
    /// nonce = base nonce XOR the index as a big-endian integer as wide as the nonce. Refuses
    /// indices past [`MAX_CHUNKS`], so a nonce is never reused within a message.
    fn nonce(&self, index: u64) -> Result<Nonce, Error> {
        self.check_index(index)?;
        let mut n = *self.base;
        for (b, i) in n[NONCE_LEN - 8..].iter_mut().zip(index.to_be_bytes()) {
            *b ^= i;
        }
        Ok(Nonce::assume_unique_for_key(n))
    }

    /// The spec's shapes: every chunk but the last is full, and the last is always shorter
    /// (possibly empty). A missing or sub-tag final piece: the message ends after the previous
    /// chunk.
    fn check_shape(index: u64, last: bool, len: usize) -> Result<(), Error> {
        match (last, len) {
            (true, n) if (TAG..WIRE_CHUNK).contains(&n) => Ok(()),
            (true, _) => Err(Error::Truncated(index.saturating_sub(1))),
            (false, WIRE_CHUNK) => Ok(()),
            (false, _) => Err(Error::ChunkAuth(index)),
        }
    }
}

impl ChunkScheme for ChunkCipher {
    fn chunk_size(&self) -> usize {
        CHUNK
    }

    /// The final chunk is the short one, so every full chunk can go as soon as it is complete;
    /// at the end, what is left (possibly nothing) is the final chunk.
    fn ready(&self, avail: usize, stride: usize, end: bool, _next_index: u64) -> (usize, bool) {
        (avail / stride + usize::from(end), end)
    }

    fn seal(&self, index: u64, _last: bool, buf: &mut [u8]) -> Result<(), Error> {
        let n = buf.len() - TAG;
        debug_assert!(n <= CHUNK);
        let tag = self.key.seal_in_place_separate_tag(self.nonce(index)?, Aad::empty(), &mut buf[..n])?;
        buf[n..].copy_from_slice(tag.as_ref());
        Ok(())
    }

    fn seal_to(&self, index: u64, _last: bool, pt: &[u8], out: &mut [u8]) -> Result<(), Error> {
        debug_assert!(pt.len() <= CHUNK && out.len() == pt.len() + TAG);
        let nonce = self.nonce(index)?;
        let (ct, tag) = out.split_at_mut(pt.len());
        self.key.seal_out_of_place_scatter(nonce, Aad::empty(), pt, ct, &[], tag)?;
        Ok(())
    }

    fn open(&self, index: u64, last: bool, buf: &mut [u8]) -> Result<usize, Error> {
        Self::check_shape(index, last, buf.len())?;
        let nonce = self.nonce(index)?;
        match self.key.open_in_place(nonce, Aad::empty(), buf) {
            Ok(pt) => Ok(pt.len()),
            Err(_) => Err(Error::ChunkAuth(index)),
        }
    }

    fn open_to(&self, index: u64, last: bool, ct: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        Self::check_shape(index, last, ct.len())?;
        let nonce = self.nonce(index)?;
        let (body, tag) = ct.split_at(ct.len() - TAG);
        self.key
            .open_separate_gather(nonce, Aad::empty(), body, tag, &mut out[..body.len()])
            .map_err(|_| Error::ChunkAuth(index))?;
        Ok(body.len())
    }

    fn check_index(&self, index: u64) -> Result<(), Error> {
        if index >= MAX_CHUNKS {
            return Err(Error::InvalidArgument("message longer than 2^38 chunks (4 PiB)".into()));
        }
        Ok(())
    }
}

/// Ciphertext length of a `len`-byte message: header, every full chunk, the short final chunk.
pub fn sealed_len(len: u64) -> u64 {
    HEADER_LEN as u64 + len + (len / CHUNK as u64 + 1) * TAG as u64
}

/// Plaintext length and chunk count of a `len`-byte ciphertext, or the error the spec asks for
/// when no message has that length (a body ending on a chunk boundary, or a final piece shorter
/// than a tag, is a truncated message).
pub fn opened_len(len: u64) -> Result<(u64, u64), Error> {
    let body = len.checked_sub(HEADER_LEN as u64).ok_or_else(short_header)?;
    let (full, rest) = (body / WIRE_CHUNK as u64, body % WIRE_CHUNK as u64);
    if rest < TAG as u64 {
        return Err(Error::Truncated(full.saturating_sub(1)));
    }
    if full + 1 > MAX_CHUNKS {
        return Err(Error::InvalidArgument("message longer than 2^38 chunks (4 PiB)".into()));
    }
    Ok((full * CHUNK as u64 + rest - TAG as u64, full + 1))
}

pub(crate) fn short_header() -> Error {
    Error::MalformedHeader("c2sp-chunked data shorter than its 56-byte salt and commitment".into())
}

/// Checks a received commitment against the derived one in constant time.
pub(crate) fn check_commitment(derived: &Derived, received: &[u8]) -> Result<(), Error> {
    use subtle::ConstantTimeEq;
    if bool::from(derived.commitment.ct_eq(received)) {
        Ok(())
    } else {
        Err(Error::WrongKey)
    }
}

/// The same error again, for a decryptor or reader that already failed (errors are sticky;
/// `Error` is not `Clone` because of its I/O variant).
pub(crate) fn repeat(e: &Error) -> Error {
    match e {
        Error::ChunkAuth(i) => Error::ChunkAuth(*i),
        Error::Truncated(i) => Error::Truncated(*i),
        Error::WrongKey => Error::WrongKey,
        Error::MalformedHeader(m) => Error::MalformedHeader(m.clone()),
        Error::InvalidArgument(m) => Error::InvalidArgument(m.clone()),
        _ => Error::Crypto,
    }
}
