//! AES-256-GCM and ChaCha20-Poly1305 for the payload from RustCrypto (`aes-gcm`,
//! `chacha20poly1305`): the portable build's chunk AEADs (see `crypto/mod.rs` for how a build
//! picks its backend). The same standard algorithms as aws-lc and ring, so the same bytes: the
//! tests in `aes_gcm.rs` and `crypto/tests.rs` seal and open across the libraries, and Wycheproof
//! runs through this one too.
//!
//! Both crates take an in/out buffer pair (`InOutBuf`), so the out-of-place calls read the input
//! and write the output in the cipher's one pass, with no copy of the chunk first (one pass
//! over memory less per chunk).

use aes_gcm::aead::inout::InOutBuf;
use aes_gcm::aead::{AeadInOut, KeyInit};
use aes_gcm::Aes256Gcm;
// On wasm32 with simd128 its ChaCha20 runs four blocks at once; elsewhere it is RustCrypto's.
use chacha20_simd128::ChaCha20Poly1305;

use super::TAG_LEN;

/// A keyed RustCrypto AEAD.
pub(crate) enum PortableKey {
    Aes(Box<Aes256Gcm>),
    ChaCha(Box<ChaCha20Poly1305>),
}

impl PortableKey {
    pub(crate) fn aes_256_gcm(key: &[u8; 32]) -> PortableKey {
        PortableKey::Aes(Box::new(Aes256Gcm::new(key.into())))
    }

    pub(crate) fn chacha20_poly1305(key: &[u8; 32]) -> PortableKey {
        PortableKey::ChaCha(Box::new(ChaCha20Poly1305::new(key.into())))
    }

    /// Seals `buf[..len-16]` in place and writes the tag into the last 16 bytes.
    pub(crate) fn seal(&self, nonce: [u8; 12], buf: &mut [u8]) {
        let (pt, tag_out) = buf.split_at_mut(buf.len() - TAG_LEN);
        let tag = match self {
            PortableKey::Aes(k) => k.encrypt_inout_detached(&nonce.into(), &[], pt.into()),
            PortableKey::ChaCha(k) => k.encrypt_inout_detached(&nonce.into(), &[], pt.into()),
        };
        tag_out.copy_from_slice(&tag.expect("AEAD seal cannot fail for chunk-sized inputs"));
    }

    /// Opens `buf` (ciphertext ‖ tag) in place; on success the plaintext is `buf[..len-16]`.
    pub(crate) fn open(&self, nonce: [u8; 12], buf: &mut [u8]) -> Result<(), ()> {
        let (ct, tag) = buf.split_at_mut(buf.len() - TAG_LEN);
        let tag: [u8; TAG_LEN] = (&*tag).try_into().map_err(|_| ())?;
        match self {
            PortableKey::Aes(k) => k.decrypt_inout_detached(&nonce.into(), &[], ct.into(), &tag.into()),
            PortableKey::ChaCha(k) => k.decrypt_inout_detached(&nonce.into(), &[], ct.into(), &tag.into()),
        }
        .map_err(|_| ())
    }

    /// Seals `pt` into `out` (`pt.len() + 16` bytes).
    pub(crate) fn seal_to(&self, nonce: [u8; 12], pt: &[u8], out: &mut [u8]) {
        let (ct, tag_out) = out.split_at_mut(pt.len());
        let buf = InOutBuf::new(pt, ct).expect("the caller sizes `out` as the plaintext + tag");
        let tag = match self {
            PortableKey::Aes(k) => k.encrypt_inout_detached(&nonce.into(), &[], buf),
            PortableKey::ChaCha(k) => k.encrypt_inout_detached(&nonce.into(), &[], buf),
        };
        tag_out[..TAG_LEN].copy_from_slice(&tag.expect("AEAD seal cannot fail for chunk-sized inputs"));
    }

    /// Opens `input` (ciphertext ‖ tag) into `out` (`input.len() - 16` bytes).
    pub(crate) fn open_to(&self, nonce: [u8; 12], input: &[u8], out: &mut [u8]) -> Result<(), ()> {
        let (ct, tag) = input.split_at(input.len() - TAG_LEN);
        let tag: [u8; TAG_LEN] = tag.try_into().map_err(|_| ())?;
        let buf = InOutBuf::new(ct, out).map_err(|_| ())?;
        match self {
            PortableKey::Aes(k) => k.decrypt_inout_detached(&nonce.into(), &[], buf, &tag.into()),
            PortableKey::ChaCha(k) => k.decrypt_inout_detached(&nonce.into(), &[], buf, &tag.into()),
        }
        .map_err(|_| ())
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use aws_lc_rs::aead::{LessSafeKey, UnboundKey, CHACHA20_POLY1305};

    use super::super::ChunkKey;
    use super::*;

    /// ChaCha20-Poly1305 chunks: aws-lc and RustCrypto give the same bytes on every path and
    /// open each other's. (AES-256-GCM has the same test, with ring, in `aes_gcm.rs`.)
    #[test]
    fn chacha_chunks_agree_with_aws_lc() {
        for len in [0usize, 1, 63, 64, 65, 4096, 65_536, 100_003] {
            let mut k = [0u8; 32];
            crate::rng::fill(&mut k).unwrap();
            let aws = ChunkKey::Aws(LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &k).unwrap()));
            let rc = ChunkKey::Portable(PortableKey::chacha20_poly1305(&k));
            let mut pt = vec![0u8; len];
            crate::rng::fill(&mut pt).unwrap();
            let nonce = [len as u8; 12];
            let (mut a, mut b) = (vec![0u8; len + TAG_LEN], vec![0u8; len + TAG_LEN]);
            aws.seal_to(nonce, &pt, &mut a);
            rc.seal_to(nonce, &pt, &mut b);
            assert_eq!(a, b, "len {len}");
            let mut c = pt.clone();
            c.extend_from_slice(&[0; TAG_LEN]);
            rc.seal(nonce, &mut c);
            assert_eq!(a, c);
            for (opener, sealed) in [(&aws, &b), (&rc, &a)] {
                let mut out = vec![0u8; len];
                opener.open_to(nonce, sealed, &mut out).unwrap();
                assert_eq!(out, pt);
                let mut bad = sealed.clone();
                bad[len / 2] ^= 4;
                assert!(opener.open_to(nonce, &bad, &mut out).is_err());
                assert!(opener.open(nonce, &mut bad).is_err());
            }
        }
    }
}
