//! One-shot authenticated encryption.
//!
//! Five AEADs run on aws-lc-rs; SM4-CCM runs on the project's constant-time `sm4-simd`
//! through RustCrypto's generic `ccm` crate (aws-lc has no SM4). aws-lc-rs has no
//! XChaCha20-Poly1305, so that one is
//! built the standard way (draft-irtf-cfrg-xchacha §2.3): HChaCha20 (RustCrypto `chacha20`,
//! the only piece not from aws-lc) turns the key and the first 16 nonce bytes into a subkey,
//! and aws-lc-rs ChaCha20-Poly1305 runs with that subkey and nonce `0⁴ ‖ nonce[16..24]`.
//! That keeps the bulk work on aws-lc's assembly and is checked against Wycheproof.
//!
//! [`Key::seal`] draws a fresh random nonce and returns `nonce ‖ ciphertext ‖ tag`.
//! Random 96-bit nonces (AES-GCM, ChaCha20-Poly1305) are safe for up to about 2³² messages
//! per key; prefer XChaCha20-Poly1305 (192-bit nonce) or AES-256-GCM-SIV (nonce-misuse
//! resistant) when one key seals many messages. Sealing under a nonce the caller chooses is
//! [`LessSafeKey`]'s, apart (`aead/less_safe.rs`): for test vectors and framed formats that
//! derive nonces themselves, since reusing a nonce with GCM or ChaCha20 destroys
//! confidentiality and integrity.

use crate::backend::aead::{self as aws, Aad, Nonce, UnboundKey};
use crate::backend::rand::{SecureRandom, SystemRandom};
use sm4_simd::ccm::{AeadInOut, KeyInit};
use sm4_simd::Sm4Ccm;
use zeroize::{Zeroize, Zeroizing};

use crate::{Error, Result};

mod less_safe;
pub use less_safe::LessSafeKey;

/// Every AEAD here has a 16-byte tag.
pub const TAG_LEN: usize = 16;

/// An AEAD algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// AES-128-GCM.
    Aes128Gcm,
    /// AES-256-GCM.
    Aes256Gcm,
    /// ChaCha20-Poly1305 (RFC 8439).
    ChaCha20Poly1305,
    /// XChaCha20-Poly1305 (192-bit nonce; safe with random nonces).
    XChaCha20Poly1305,
    /// AES-256-GCM-SIV (RFC 8452; nonce-misuse resistant).
    Aes256GcmSiv,
    /// SM4-CCM (GB/T 32907 block cipher in RFC 3610 CCM; 12-byte nonce, 16-byte tag, as
    /// RFC 8998), for systems that must use the Chinese national algorithms.
    Sm4Ccm,
}

const NAMES: &str =
    "aes-128-gcm, aes-256-gcm, chacha20-poly1305, xchacha20-poly1305, aes-256-gcm-siv, sm4-ccm";

impl Algorithm {
    /// Every algorithm.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Aes128Gcm,
        Algorithm::Aes256Gcm,
        Algorithm::ChaCha20Poly1305,
        Algorithm::XChaCha20Poly1305,
        Algorithm::Aes256GcmSiv,
        Algorithm::Sm4Ccm,
    ];

    /// Canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Aes128Gcm => "aes-128-gcm",
            Algorithm::Aes256Gcm => "aes-256-gcm",
            Algorithm::ChaCha20Poly1305 => "chacha20-poly1305",
            Algorithm::XChaCha20Poly1305 => "xchacha20-poly1305",
            Algorithm::Aes256GcmSiv => "aes-256-gcm-siv",
            Algorithm::Sm4Ccm => "sm4-ccm",
        }
    }

    /// Parses a canonical name.
    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.to_ascii_lowercase();
        Algorithm::ALL.into_iter().find(|a| a.name() == lower).ok_or_else(|| Error::unknown(name, NAMES))
    }

    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        match self {
            Algorithm::Aes128Gcm | Algorithm::Sm4Ccm => 16,
            _ => 32,
        }
    }

    /// Nonce length in bytes.
    pub fn nonce_len(self) -> usize {
        match self {
            Algorithm::XChaCha20Poly1305 => 24,
            _ => 12,
        }
    }

    /// The aws-lc-rs algorithm, `None` for SM4-CCM.
    fn aws(self) -> Option<&'static aws::Algorithm> {
        Some(match self {
            Algorithm::Aes128Gcm => &aws::AES_128_GCM,
            Algorithm::Aes256Gcm => &aws::AES_256_GCM,
            Algorithm::ChaCha20Poly1305 | Algorithm::XChaCha20Poly1305 => &aws::CHACHA20_POLY1305,
            Algorithm::Aes256GcmSiv => &aws::AES_256_GCM_SIV,
            Algorithm::Sm4Ccm => return None,
        })
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

enum Inner {
    Aws(aws::LessSafeKey),
    // XChaCha needs the raw key for HChaCha20 on every message.
    XChaCha(Zeroizing<[u8; 32]>),
    // Round keys expanded once; `Sm4` zeroizes them on drop.
    Sm4Ccm(Box<Sm4Ccm>),
}

/// An AEAD key bound to its algorithm. `Debug` never shows key material.
pub struct Key {
    algorithm: Algorithm,
    inner: Inner,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("aead::Key").field("algorithm", &self.algorithm).finish_non_exhaustive()
    }
}

/// Fills a fresh random key of the right length for `algorithm`.
pub fn generate_key(algorithm: Algorithm) -> Zeroizing<Vec<u8>> {
    let mut k = Zeroizing::new(vec![0u8; algorithm.key_len()]);
    fill_random(&mut k);
    k
}

pub(crate) fn fill_random(buf: &mut [u8]) {
    // The system RNG failing is not a recoverable condition for a crypto library.
    SystemRandom::new().fill(buf).expect("system RNG failed");
}

/// XChaCha20 → ChaCha20 reduction: derive the per-nonce subkey and 96-bit nonce.
fn xchacha_subkey(key: &[u8; 32], nonce: &[u8]) -> Result<(aws::LessSafeKey, Nonce)> {
    let nonce: &[u8; 24] = nonce.try_into().map_err(|_| Error::InvalidLength("nonce"))?;
    let mut sub = chacha20::hchacha::<chacha20::R20>(
        &chacha20::Key::from(*key),
        &(*<&[u8; 16]>::try_from(&nonce[..16]).expect("16 bytes")).into(),
    );
    let unbound = UnboundKey::new(&aws::CHACHA20_POLY1305, sub.as_slice());
    sub.as_mut_slice().zeroize();
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&nonce[16..]);
    Ok((aws::LessSafeKey::new(unbound?), Nonce::assume_unique_for_key(n)))
}

/// A 12-byte SM4-CCM nonce (the length was checked against [`Algorithm::nonce_len`]).
fn ccm_nonce(nonce: &[u8]) -> Result<&sm4_simd::cipher::Array<u8, sm4_simd::cipher::consts::U12>> {
    let n: &[u8; 12] = nonce.try_into().map_err(|_| Error::InvalidLength("nonce"))?;
    Ok(n.into())
}

impl Key {
    /// Builds a key; `bytes` must be exactly [`Algorithm::key_len`] long.
    pub fn new(algorithm: Algorithm, bytes: &[u8]) -> Result<Self> {
        if bytes.len() != algorithm.key_len() {
            return Err(Error::InvalidKey("wrong key length for this AEAD"));
        }
        let inner = match algorithm {
            Algorithm::XChaCha20Poly1305 => {
                let mut k = Zeroizing::new([0u8; 32]);
                k.copy_from_slice(bytes);
                Inner::XChaCha(k)
            }
            Algorithm::Sm4Ccm => {
                let key: &[u8; 16] = bytes.try_into().map_err(|_| Error::InvalidKey("wrong key length"))?;
                Inner::Sm4Ccm(Box::new(Sm4Ccm::new(key.into())))
            }
            _ => {
                let alg = algorithm.aws().expect("every other algorithm is aws-lc's");
                Inner::Aws(aws::LessSafeKey::new(UnboundKey::new(alg, bytes)?))
            }
        };
        Ok(Key { algorithm, inner })
    }

    /// The algorithm this key is for.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Encrypts `buf` in place under a caller-chosen nonce and returns the tag: the sealing
    /// every other call ends in, public only through [`LessSafeKey`].
    pub(crate) fn seal_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; TAG_LEN]> {
        if nonce.len() != self.algorithm.nonce_len() {
            return Err(Error::InvalidLength("nonce"));
        }
        let tag = match &self.inner {
            Inner::Aws(k) => {
                let n = Nonce::try_assume_unique_for_key(nonce)?;
                k.seal_in_place_separate_tag(n, Aad::from(aad), buf)?
            }
            Inner::XChaCha(raw) => {
                let (k, n) = xchacha_subkey(raw, nonce)?;
                k.seal_in_place_separate_tag(n, Aad::from(aad), buf)?
            }
            Inner::Sm4Ccm(k) => {
                // The only failure is a message over CCM's 2^24 - 1 byte limit (12-byte nonce).
                let t = k
                    .encrypt_inout_detached(ccm_nonce(nonce)?, aad, buf.into())
                    .map_err(|_| Error::InvalidLength("message (SM4-CCM: at most 16 MiB - 1)"))?;
                return Ok(t.into());
            }
        };
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(tag.as_ref());
        Ok(out)
    }

    /// Decrypts `buf` in place after checking `tag`; on failure `buf` is wiped.
    pub fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        if nonce.len() != self.algorithm.nonce_len() || tag.len() != TAG_LEN {
            return Err(Error::Crypto);
        }
        let ok = match &self.inner {
            Inner::Aws(k) => Nonce::try_assume_unique_for_key(nonce)
                .and_then(|n| k.open_in_place_separate_tag(n, Aad::from(aad), tag, buf).map(|_| ()))
                .is_ok(),
            Inner::XChaCha(raw) => {
                let (k, n) = xchacha_subkey(raw, nonce)?;
                k.open_in_place_separate_tag(n, Aad::from(aad), tag, buf).is_ok()
            }
            // CCM decrypts before it can check the tag: the wipe below is what keeps the
            // unauthenticated plaintext from the caller (the `ccm` crate zeroes it too).
            Inner::Sm4Ccm(k) => {
                let tag: &[u8; TAG_LEN] = tag.try_into().map_err(|_| Error::Crypto)?;
                k.decrypt_inout_detached(ccm_nonce(nonce)?, aad, buf.into(), tag.into()).is_ok()
            }
        };
        if !ok {
            // Never hand back unauthenticated plaintext, even partially.
            buf.zeroize();
            return Err(Error::Crypto);
        }
        Ok(())
    }

    /// Encrypts under a caller-chosen nonce; returns `ciphertext ‖ tag` ([`LessSafeKey`]).
    pub(crate) fn seal_with_nonce(&self, nonce: &[u8], plaintext: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(plaintext.len() + TAG_LEN);
        out.extend_from_slice(plaintext);
        let tag = self.seal_in_place_detached(nonce, aad, &mut out)?;
        out.extend_from_slice(&tag);
        Ok(out)
    }

    /// Decrypts `ciphertext ‖ tag` under an explicit nonce.
    pub(crate) fn open_with_nonce(
        &self,
        nonce: &[u8],
        ciphertext_and_tag: &[u8],
        aad: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>> {
        let ct_len = ciphertext_and_tag.len().checked_sub(TAG_LEN).ok_or(Error::Crypto)?;
        let (ct, tag) = ciphertext_and_tag.split_at(ct_len);
        let mut out = Zeroizing::new(ct.to_vec());
        self.open_in_place_detached(nonce, aad, &mut out, tag)?;
        Ok(out)
    }

    /// Encrypts with a fresh random nonce; returns `nonce ‖ ciphertext ‖ tag`.
    pub fn seal(&self, plaintext: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
        let nlen = self.algorithm.nonce_len();
        let mut out = Vec::with_capacity(nlen + plaintext.len() + TAG_LEN);
        out.resize(nlen, 0);
        out.extend_from_slice(plaintext);
        out.resize(nlen + plaintext.len() + TAG_LEN, 0);
        self.seal_in_place(&mut out, aad)?;
        Ok(out)
    }

    /// [`Key::seal`] for a caller who has already put the plaintext where it goes:
    /// `buf` is `nonce_len` bytes (overwritten with a fresh random nonce) ‖ plaintext ‖
    /// [`TAG_LEN`] bytes (overwritten with the tag), and becomes what `seal` returns. Saves
    /// the copy when the plaintext arrives from elsewhere (the browser package copies it
    /// straight out of a JS array into `buf`).
    pub fn seal_in_place(&self, buf: &mut [u8], aad: &[u8]) -> Result<()> {
        let nlen = self.algorithm.nonce_len();
        if buf.len() < nlen + TAG_LEN {
            return Err(Error::InvalidLength("buffer shorter than nonce and tag"));
        }
        let (nonce, rest) = buf.split_at_mut(nlen);
        fill_random(nonce);
        let (body, tag_out) = rest.split_at_mut(rest.len() - TAG_LEN);
        let tag = self.seal_in_place_detached(nonce, aad, body)?;
        tag_out.copy_from_slice(&tag);
        Ok(())
    }

    /// [`Key::seal`] into a buffer the caller owns (a Python `bytes`): `out` must be exactly
    /// `nonce_len + plaintext.len() + TAG_LEN` bytes and becomes `nonce ‖ ciphertext ‖ tag`.
    /// `plaintext` must not overlap `out`. AES-GCM and ChaCha20-Poly1305 encrypt straight
    /// from `plaintext` into `out` (aws-lc's scatter seal), which saves the copy-then-seal
    /// pass of [`Key::seal_in_place`]: measured on AMD EPYC (Zen 4 class), 1 MiB AES-256-GCM,
    /// 108 µs against 131 µs. The other algorithms copy and seal in place.
    pub fn seal_into(&self, plaintext: &[u8], aad: &[u8], out: &mut [u8]) -> Result<()> {
        let nlen = self.algorithm.nonce_len();
        if out.len() != nlen + plaintext.len() + TAG_LEN {
            return Err(Error::InvalidLength("output buffer must be nonce + plaintext + tag"));
        }
        let (nonce, rest) = out.split_at_mut(nlen);
        match (&self.inner, self.algorithm) {
            (Inner::Aws(k), Algorithm::Aes128Gcm | Algorithm::Aes256Gcm | Algorithm::ChaCha20Poly1305) => {
                fill_random(nonce);
                let n = Nonce::try_assume_unique_for_key(nonce)?;
                // Nothing in place: all of the plaintext is the "extra" input, encrypted into
                // `rest` with the tag after it.
                k.seal_in_place_scatter(n, Aad::from(aad), &mut [], plaintext, rest)?;
                Ok(())
            }
            _ => {
                rest[..plaintext.len()].copy_from_slice(plaintext);
                self.seal_in_place(out, aad)
            }
        }
    }

    /// Decrypts the output of [`Key::seal`].
    pub fn open(&self, sealed: &[u8], aad: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
        let (nonce, body, _) = self.split_sealed(sealed)?;
        self.open_with_nonce(nonce, &sealed[nonce.len()..nonce.len() + body.len() + TAG_LEN], aad)
    }

    /// Opens [`Key::seal`]'s output into a buffer the caller owns (a Python `bytes`): `out` must
    /// be exactly the ciphertext's length. AES-GCM and ChaCha20-Poly1305 decrypt straight from
    /// `sealed` into `out` (aws-lc's gather open), the others copy and open in place. On failure
    /// `out` is wiped and the error is [`Error::Crypto`].
    pub fn open_into(&self, sealed: &[u8], aad: &[u8], out: &mut [u8]) -> Result<()> {
        let (nonce, body, tag) = self.split_sealed(sealed)?;
        if out.len() != body.len() {
            return Err(Error::InvalidLength("output buffer must be the ciphertext's length"));
        }
        match (&self.inner, self.algorithm) {
            (Inner::Aws(k), Algorithm::Aes128Gcm | Algorithm::Aes256Gcm | Algorithm::ChaCha20Poly1305) => {
                let opened = Nonce::try_assume_unique_for_key(nonce)
                    .and_then(|n| k.open_separate_gather(n, Aad::from(aad), body, tag, out));
                if opened.is_err() {
                    // Never hand back unauthenticated plaintext, even partially.
                    out.zeroize();
                    return Err(Error::Crypto);
                }
                Ok(())
            }
            _ => {
                out.copy_from_slice(body);
                self.open_in_place_detached(nonce, aad, out, tag)
            }
        }
    }

    /// The parts of [`Key::seal`]'s output, `(nonce, ciphertext, tag)`, for a caller that opens
    /// them where it wants the plaintext ([`Key::open_in_place_detached`]); too short an input is
    /// an authentication failure, as for [`Key::open`].
    pub fn split_sealed<'a>(&self, sealed: &'a [u8]) -> Result<(&'a [u8], &'a [u8], &'a [u8])> {
        let nlen = self.algorithm.nonce_len();
        if sealed.len() < nlen + TAG_LEN {
            return Err(Error::Crypto);
        }
        let (nonce, rest) = sealed.split_at(nlen);
        let (body, tag) = rest.split_at(rest.len() - TAG_LEN);
        Ok((nonce, body, tag))
    }
}

/// One-shot [`Key::seal`].
pub fn seal(algorithm: Algorithm, key: &[u8], plaintext: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    Key::new(algorithm, key)?.seal(plaintext, aad)
}

/// One-shot [`Key::open`].
pub fn open(algorithm: Algorithm, key: &[u8], sealed: &[u8], aad: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
    Key::new(algorithm, key)?.open(sealed, aad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_tamper_all() {
        for alg in Algorithm::ALL {
            let key = Key::new(alg, &generate_key(alg)).unwrap();
            for len in [0usize, 1, 15, 16, 17, 1000] {
                let pt = vec![0xa5u8; len];
                let sealed = key.seal(&pt, b"aad").unwrap();
                assert_eq!(sealed.len(), alg.nonce_len() + len + TAG_LEN);
                assert_eq!(*key.open(&sealed, b"aad").unwrap(), pt);
                assert!(key.open(&sealed, b"aaD").is_err());
                let mut bad = sealed.clone();
                *bad.last_mut().unwrap() ^= 1;
                assert!(key.open(&bad, b"aad").is_err(), "{alg}");
            }
            assert!(Key::new(alg, &[0u8; 7]).is_err());
        }
    }

    #[test]
    fn seal_into_is_seal_with_its_nonce() {
        // The scatter path (AES-GCM, ChaCha20-Poly1305) and the copy path must frame and seal
        // exactly as `seal_with_nonce` does under the nonce they drew; `open_into` reverses both.
        for alg in Algorithm::ALL {
            let key = Key::new(alg, &generate_key(alg)).unwrap();
            let nlen = alg.nonce_len();
            for len in [0usize, 1, 15, 16, 17, 1000, 70_000] {
                let pt: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let mut out = vec![0u8; nlen + len + TAG_LEN];
                key.seal_into(&pt, b"aad", &mut out).unwrap();
                let expect = key.seal_with_nonce(&out[..nlen], &pt, b"aad").unwrap();
                assert_eq!(&out[nlen..], &expect[..], "{alg} {len}");
                assert_eq!(*key.open(&out, b"aad").unwrap(), pt, "{alg} {len}");
                assert!(key.seal_into(&pt, b"", &mut out[1..]).is_err(), "{alg}: short buffer");
                let mut back = vec![0u8; len];
                key.open_into(&out, b"aad", &mut back).unwrap();
                assert_eq!(back, pt, "{alg} {len}: open_into");
                let mut bad = out.clone();
                *bad.last_mut().unwrap() ^= 1;
                assert!(key.open_into(&bad, b"aad", &mut back).is_err(), "{alg}: a changed tag");
                assert!(back.iter().all(|&b| b == 0), "{alg}: nothing of a failed open is left");
            }
        }
    }

    #[test]
    fn sm4_ccm_length_limit() {
        // A 12-byte nonce leaves a 3-byte counter: CCM caps messages at 2^24 - 1 bytes.
        let key = Key::new(Algorithm::Sm4Ccm, &[7u8; 16]).unwrap();
        let mut big = vec![0u8; 1 << 24];
        let err = key.seal_in_place_detached(&[1u8; 12], b"", &mut big).unwrap_err();
        assert!(matches!(err, Error::InvalidLength(_)), "{err:?}");
        assert!(key.open_in_place_detached(&[1u8; 12], b"", &mut big, &[0u8; 16]).is_err());
        assert!(key.seal_in_place_detached(&[1u8; 13], b"", &mut [0u8; 4]).is_err(), "13-byte nonce");
    }

    #[test]
    fn xchacha_draft_vector() {
        // draft-irtf-cfrg-xchacha-03 §A.3.1.
        let key = hex::decode("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f").unwrap();
        let nonce = hex::decode("404142434445464748494a4b4c4d4e4f5051525354555657").unwrap();
        let aad = hex::decode("50515253c0c1c2c3c4c5c6c7").unwrap();
        let pt = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let out = LessSafeKey::new(Algorithm::XChaCha20Poly1305, &key)
            .unwrap()
            .seal_with_nonce(&nonce, pt, &aad)
            .unwrap();
        assert_eq!(hex::encode(&out[pt.len()..]), "c0875924c1c7987947deafd8780acf49");
        assert_eq!(hex::encode(&out[..8]), "bd6d179d3e83d43b");
    }
}
