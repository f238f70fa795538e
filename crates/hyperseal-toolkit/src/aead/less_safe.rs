//! The escape hatch, named as ring names its own: a [`LessSafeKey`] seals under a nonce the
//! caller chooses. It exists for published test vectors and for framed formats that derive every
//! nonce themselves; everything else uses [`Key`](super::Key), which draws a fresh nonce for
//! each message.
//!
//! The duty it hands over: one key must never seal two messages under one nonce. With AES-GCM
//! and ChaCha20-Poly1305 a repeated nonce reveals the XOR of the two plaintexts and lets anyone
//! forge tags under that key; AES-256-GCM-SIV only reveals that the two messages were equal.

use zeroize::Zeroizing;

use super::{Algorithm, Key, TAG_LEN};
use crate::Result;

/// An AEAD key that seals under caller-chosen nonces. `Debug` never shows key material.
pub struct LessSafeKey(Key);

impl std::fmt::Debug for LessSafeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("aead::LessSafeKey").field("algorithm", &self.0.algorithm()).finish_non_exhaustive()
    }
}

impl LessSafeKey {
    /// Builds a key; `bytes` must be exactly [`Algorithm::key_len`] long.
    pub fn new(algorithm: Algorithm, bytes: &[u8]) -> Result<Self> {
        Key::new(algorithm, bytes).map(Self)
    }

    /// The algorithm this key is for.
    pub fn algorithm(&self) -> Algorithm {
        self.0.algorithm()
    }

    /// Encrypts `buf` in place under `nonce` ([`Algorithm::nonce_len`] bytes) and returns the
    /// tag. Never with a nonce this key has sealed under before.
    pub fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
        self.0.seal_in_place_detached(nonce, aad, buf)
    }

    /// Encrypts under `nonce` and returns `ciphertext ‖ tag`. Never with a nonce this key has
    /// sealed under before.
    pub fn seal_with_nonce(&self, nonce: &[u8], plaintext: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
        self.0.seal_with_nonce(nonce, plaintext, aad)
    }

    /// Decrypts `ciphertext ‖ tag` under `nonce`.
    pub fn open_with_nonce(
        &self,
        nonce: &[u8],
        ciphertext_and_tag: &[u8],
        aad: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>> {
        self.0.open_with_nonce(nonce, ciphertext_and_tag, aad)
    }

    /// Decrypts `buf` in place after checking `tag`; on failure `buf` is wiped.
    pub fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        self.0.open_in_place_detached(nonce, aad, buf, tag)
    }
}
