//! AEAD suites: values with static descriptors, named in the header and bound into the payload
//! key derivation (so a header edited to name another suite fails its MAC *and* derives a
//! different key).

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};

use crate::Error;

/// Bytes of every suite's authentication tag.
pub const TAG_LEN: usize = 16;

/// An AEAD suite for the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Suite {
    /// AES-256-GCM (aws-lc-rs). The default on CPUs with AES instructions.
    Aes256Gcm,
    /// ChaCha20-Poly1305 (aws-lc-rs). The default elsewhere, and age's payload cipher.
    ChaCha20Poly1305,
    /// SM4-GCM (GB/T 32907 block cipher in GCM). Reserved: needs the `sm4-simd` backend.
    Sm4Gcm,
}

impl Suite {
    /// Every suite, in documentation order.
    pub const ALL: [Suite; 3] = [Suite::Aes256Gcm, Suite::ChaCha20Poly1305, Suite::Sm4Gcm];

    /// The name used in headers and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Aes256Gcm => "aes-256-gcm",
            Suite::ChaCha20Poly1305 => "chacha20-poly1305",
            Suite::Sm4Gcm => "sm4-gcm",
        }
    }

    /// Parses a header or CLI name.
    pub fn from_name(s: &str) -> Option<Suite> {
        Suite::ALL.into_iter().find(|x| x.name() == s)
    }

    /// Whether this build can run the suite.
    pub fn is_available(self) -> bool {
        !matches!(self, Suite::Sm4Gcm)
    }

    /// AES-256-GCM where the CPU has AES and carry-less multiply instructions (where it is
    /// several times faster than ChaCha20-Poly1305), ChaCha20-Poly1305 elsewhere.
    pub fn default_for_cpu() -> Suite {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("pclmulqdq")
            {
                return Suite::Aes256Gcm;
            }
            Suite::ChaCha20Poly1305
        }
        #[cfg(target_arch = "aarch64")]
        {
            if std::arch::is_aarch64_feature_detected!("aes")
                && std::arch::is_aarch64_feature_detected!("pmull")
            {
                return Suite::Aes256Gcm;
            }
            Suite::ChaCha20Poly1305
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        Suite::ChaCha20Poly1305
    }

    /// Builds the keyed primitive for one payload.
    pub(crate) fn key(self, key: &[u8; 32]) -> Result<ChunkKey, Error> {
        let alg = match self {
            Suite::Aes256Gcm => &aead::AES_256_GCM,
            Suite::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
            Suite::Sm4Gcm => {
                return Err(Error::InvalidArgument("suite sm4-gcm is not available in this build".into()))
            }
        };
        Ok(ChunkKey(LessSafeKey::new(UnboundKey::new(alg, key)?)))
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A keyed AEAD. Stateless: every call takes its nonce, so sequential, parallel and random-access
/// paths share one implementation. Only `stream` builds nonces, from unique chunk positions.
pub(crate) struct ChunkKey(LessSafeKey);

impl ChunkKey {
    /// Seals `buf[..len-16]` in place and writes the tag into the last 16 bytes.
    pub(crate) fn seal(&self, nonce: [u8; 12], buf: &mut [u8]) {
        let (pt, tag_out) = buf.split_at_mut(buf.len() - TAG_LEN);
        let tag = self
            .0
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), pt)
            .expect("AEAD seal cannot fail for chunk-sized inputs");
        tag_out.copy_from_slice(tag.as_ref());
    }

    /// Opens `buf` (ciphertext ‖ tag) in place; on success the plaintext is `buf[..len-16]`.
    /// On failure the buffer content is unspecified and must not be released.
    pub(crate) fn open(&self, nonce: [u8; 12], buf: &mut [u8]) -> Result<(), ()> {
        self.0
            .open_in_place(Nonce::assume_unique_for_key(nonce), Aad::empty(), buf)
            .map(|_| ())
            .map_err(|_| ())
    }

    /// Seals `pt` into `out` (`pt.len() + 16` bytes: ciphertext ‖ tag) without touching `pt`, so
    /// a memory-mapped or borrowed input needs no copy.
    pub(crate) fn seal_to(&self, nonce: [u8; 12], pt: &[u8], out: &mut [u8]) {
        let (ct, tag) = out.split_at_mut(pt.len());
        self.0
            .seal_out_of_place_scatter(Nonce::assume_unique_for_key(nonce), Aad::empty(), pt, ct, &[], tag)
            .expect("AEAD seal cannot fail for chunk-sized inputs");
    }

    /// Opens `input` (ciphertext ‖ tag) into `out` (`input.len() - 16` bytes).
    pub(crate) fn open_to(&self, nonce: [u8; 12], input: &[u8], out: &mut [u8]) -> Result<(), ()> {
        let (ct, tag) = input.split_at(input.len() - TAG_LEN);
        self.0
            .open_separate_gather(Nonce::assume_unique_for_key(nonce), Aad::empty(), ct, tag, out)
            .map_err(|_| ())
    }
}
