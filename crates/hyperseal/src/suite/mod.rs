//! Keying the payload suites. A [`Suite`] is a plain value named in the header (see
//! `format/params.rs`) and bound into the payload key derivation, so a header edited to name
//! another suite fails its MAC *and* derives a different key. Here each suite becomes a keyed,
//! stateless AEAD that takes its nonce on every call; only `stream` builds nonces.
//!
//! The libraries: natively aws-lc, or ring for AES-256-GCM where it is faster (`aes_gcm.rs`);
//! on the portable backend (WebAssembly, or the `portable` feature; see `crypto/mod.rs`)
//! RustCrypto (`portable.rs`). SM4-GCM is `sm4-simd` everywhere.

#[cfg(not(portable_backend))]
use aws_lc_rs::aead::{self, UnboundKey};
#[cfg(not(target_arch = "wasm32"))]
use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce};
use sm4_simd::aes_gcm::{AeadInOut, KeyInit};
use sm4_simd::Sm4Gcm;

use crate::error::Error;
pub use crate::format::Suite;
use crate::format::TAG_LEN;

mod aes_gcm;
// Built natively too, for the tests that compare it with aws-lc and ring.
#[cfg_attr(not(portable_backend), allow(dead_code))]
mod portable;
pub use aes_gcm::AesGcmBackend;
#[cfg(not(target_arch = "wasm32"))]
use aes_gcm::RingKey;
use portable::PortableKey;

impl Suite {
    /// The library that runs this suite on this CPU (for reports and `inspect`).
    pub fn backend(self) -> &'static str {
        match self {
            Suite::Aes256Gcm | Suite::ChaCha20Poly1305 if cfg!(portable_backend) => "RustCrypto",
            Suite::Aes256Gcm if AesGcmBackend::preferred() == AesGcmBackend::Ring => "ring",
            Suite::Aes256Gcm | Suite::ChaCha20Poly1305 => "aws-lc",
            Suite::Sm4Gcm => "sm4-simd",
        }
    }

    /// Builds the keyed primitive for one payload.
    pub(crate) fn key(self, key: &[u8; 32]) -> Result<ChunkKey, Error> {
        self.key_with(key, AesGcmBackend::preferred())
    }

    /// Like [`key`](Self::key) with the AES-256-GCM library chosen by the caller (natively; the
    /// portable backend has one library).
    #[cfg(portable_backend)]
    pub(crate) fn key_with(self, key: &[u8; 32], _: AesGcmBackend) -> Result<ChunkKey, Error> {
        Ok(match self {
            Suite::Aes256Gcm => ChunkKey::Portable(PortableKey::aes_256_gcm(key)),
            Suite::ChaCha20Poly1305 => ChunkKey::Portable(PortableKey::chacha20_poly1305(key)),
            Suite::Sm4Gcm => sm4(key),
        })
    }

    /// Like [`key`](Self::key) with the AES-256-GCM library chosen by the caller.
    #[cfg(not(portable_backend))]
    pub(crate) fn key_with(self, key: &[u8; 32], aes: AesGcmBackend) -> Result<ChunkKey, Error> {
        let alg = match self {
            Suite::Aes256Gcm if aes == AesGcmBackend::Ring => {
                return Ok(ChunkKey::Ring(Box::new(RingKey::new(key))))
            }
            Suite::Aes256Gcm => &aead::AES_256_GCM,
            Suite::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
            Suite::Sm4Gcm => return Ok(sm4(key)),
        };
        Ok(ChunkKey::Aws(LessSafeKey::new(UnboundKey::new(alg, key)?)))
    }
}

/// SM4 keys are 128 bits: the first half of the derived payload key.
fn sm4(key: &[u8; 32]) -> ChunkKey {
    let k: &[u8; 16] = key[..16].try_into().expect("16 of 32 bytes");
    ChunkKey::Sm4(Box::new(Sm4Gcm::new(k.into())))
}

/// A keyed AEAD. Stateless: every call takes its nonce, so sequential, parallel and random-access
/// paths share one implementation. Only `stream` builds nonces, from unique chunk positions.
pub(crate) enum ChunkKey {
    // With the `portable` feature, natively built but constructed by the cross tests only.
    #[cfg(not(target_arch = "wasm32"))]
    #[cfg_attr(portable_backend, allow(dead_code))]
    Aws(LessSafeKey),
    #[cfg(not(target_arch = "wasm32"))]
    #[cfg_attr(portable_backend, allow(dead_code))]
    Ring(Box<RingKey>),
    // Natively built (and tested against the others) but only used with the `portable` feature.
    #[cfg_attr(not(portable_backend), allow(dead_code))]
    Portable(PortableKey),
    Sm4(Box<Sm4Gcm>),
}

impl ChunkKey {
    /// Seals `buf[..len-16]` in place and writes the tag into the last 16 bytes.
    pub(crate) fn seal(&self, nonce: [u8; 12], buf: &mut [u8]) {
        let (pt, tag_out) = buf.split_at_mut(buf.len() - TAG_LEN);
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            ChunkKey::Aws(k) => {
                let tag = k
                    .seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), pt)
                    .expect("AEAD seal cannot fail for chunk-sized inputs");
                tag_out.copy_from_slice(tag.as_ref());
            }
            #[cfg(not(target_arch = "wasm32"))]
            ChunkKey::Ring(k) => k.seal(nonce, buf),
            ChunkKey::Portable(k) => k.seal(nonce, buf),
            ChunkKey::Sm4(k) => {
                let tag = k
                    .encrypt_inout_detached(&nonce.into(), &[], pt.into())
                    .expect("SM4-GCM seal cannot fail for chunk-sized inputs");
                tag_out.copy_from_slice(&tag);
            }
        }
    }

    /// Opens `buf` (ciphertext ‖ tag) in place; on success the plaintext is `buf[..len-16]`.
    /// On failure the buffer content is unspecified and must not be released.
    pub(crate) fn open(&self, nonce: [u8; 12], buf: &mut [u8]) -> Result<(), ()> {
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            ChunkKey::Aws(k) => k
                .open_in_place(Nonce::assume_unique_for_key(nonce), Aad::empty(), buf)
                .map(|_| ())
                .map_err(|_| ()),
            #[cfg(not(target_arch = "wasm32"))]
            ChunkKey::Ring(k) => k.open(nonce, buf),
            ChunkKey::Portable(k) => k.open(nonce, buf),
            ChunkKey::Sm4(k) => {
                let (ct, tag) = buf.split_at_mut(buf.len() - TAG_LEN);
                let tag: [u8; TAG_LEN] = (&*tag).try_into().expect("16 bytes");
                k.decrypt_inout_detached(&nonce.into(), &[], ct.into(), &tag.into()).map_err(|_| ())
            }
        }
    }

    /// Seals `pt` into `out` (`pt.len() + 16` bytes: ciphertext ‖ tag) without touching `pt`, so
    /// a memory-mapped or borrowed input needs no copy.
    pub(crate) fn seal_to(&self, nonce: [u8; 12], pt: &[u8], out: &mut [u8]) {
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            ChunkKey::Aws(k) => {
                let (ct, tag) = out.split_at_mut(pt.len());
                k.seal_out_of_place_scatter(
                    Nonce::assume_unique_for_key(nonce),
                    Aad::empty(),
                    pt,
                    ct,
                    &[],
                    tag,
                )
                .expect("AEAD seal cannot fail for chunk-sized inputs");
            }
            #[cfg(not(target_arch = "wasm32"))]
            ChunkKey::Ring(k) => k.seal_to(nonce, pt, out),
            ChunkKey::Portable(k) => k.seal_to(nonce, pt, out),
            ChunkKey::Sm4(_) => {
                out[..pt.len()].copy_from_slice(pt);
                self.seal(nonce, out);
            }
        }
    }

    /// Opens `input` (ciphertext ‖ tag) into `out` (`input.len() - 16` bytes).
    pub(crate) fn open_to(&self, nonce: [u8; 12], input: &[u8], out: &mut [u8]) -> Result<(), ()> {
        let (ct, tag) = input.split_at(input.len() - TAG_LEN);
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            ChunkKey::Aws(k) => k
                .open_separate_gather(Nonce::assume_unique_for_key(nonce), Aad::empty(), ct, tag, out)
                .map_err(|_| ()),
            #[cfg(not(target_arch = "wasm32"))]
            ChunkKey::Ring(k) => k.open_to(nonce, input, out),
            ChunkKey::Portable(k) => k.open_to(nonce, input, out),
            ChunkKey::Sm4(k) => {
                out.copy_from_slice(ct);
                let tag: [u8; TAG_LEN] = tag.try_into().expect("16 bytes");
                k.decrypt_inout_detached(&nonce.into(), &[], out.into(), &tag.into()).map_err(|_| ())
            }
        }
    }
}
