//! The native backend: aws-lc (through aws-lc-rs, and aws-lc-sys for the one call aws-lc-rs does
//! not expose). See `mod.rs` for the interface; `portable.rs` is its twin.
//!
//! ML-KEM keys come from their 64-byte seeds with RustCrypto `ml-kem` (FIPS 203
//! `ML-KEM.KeyGen_internal(d, z)`, the form age and hyperseal store), which aws-lc-rs cannot do;
//! aws-lc is 7–8× faster at the per-file operations (ML-KEM-768 on the development machine, one
//! core: encapsulate 12 µs vs 89 µs, decapsulate 15 µs vs 122 µs; most of a 1 KiB hybrid encrypt +
//! decrypt). So a seed is expanded once by `ml-kem` into the FIPS 203 decapsulation key bytes and
//! loaded into aws-lc.
//!
//! Encapsulation draws its 32 random bytes from the OS RNG ([`crate::rng`]) and hands them to
//! aws-lc's deterministic encapsulation (`EVP_PKEY_encapsulate_deterministic`) through
//! `aws-lc-sys`: aws-lc-rs's safe `encapsulate` would use aws-lc's DRBG, whose first use in a
//! process seeds itself from CPU jitter (~35 ms, measured). That call is this file's only unsafe
//! code. X25519 keys are likewise built from OS randomness, never aws-lc's DRBG.

#![allow(unsafe_code)]

use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, CHACHA20_POLY1305};
use aws_lc_rs::agreement::{agree, PrivateKey, UnparsedPublicKey, ECDH_P256, X25519};
use aws_lc_rs::kem::{self, AlgorithmId};
use aws_lc_rs::{hkdf, hmac};
use zeroize::{Zeroize, Zeroizing};

use super::MlkemLevel;
use crate::error::Error;

struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// HKDF-SHA-256 (extract and expand) to 32 bytes.
pub(crate) fn hkdf32(salt: &[u8], ikm: &[u8], info: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut out = Zeroizing::new([0u8; 32]);
    hkdf::Salt::new(hkdf::HKDF_SHA256, salt)
        .extract(ikm)
        .expand(&[info], Len(32))
        .and_then(|okm| okm.fill(&mut out[..]))
        .expect("HKDF-SHA-256 to 32 bytes cannot fail");
    out
}

/// HKDF-Expand only, from a pseudorandom key given as bytes, `info` given in parts.
pub(crate) fn hkdf_expand(prk: &[u8], info: &[&[u8]], out: &mut [u8]) {
    hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, prk)
        .expand(info, Len(out.len()))
        .and_then(|okm| okm.fill(out))
        .expect("HKDF-Expand within 255 blocks cannot fail");
}

/// HMAC-SHA-256 over the concatenation of `parts`.
pub(crate) fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut ctx = hmac::Context::with_key(&hmac::Key::new(hmac::HMAC_SHA256, key));
    for part in parts {
        ctx.update(part);
    }
    ctx.sign().as_ref().try_into().expect("SHA-256 output is 32 bytes")
}

/// Checks an HMAC-SHA-256 tag in constant time.
pub(crate) fn hmac_sha256_verify(key: &[u8], msg: &[u8], tag: &[u8]) -> bool {
    hmac::verify(&hmac::Key::new(hmac::HMAC_SHA256, key), msg, tag).is_ok()
}

fn chacha(key: &[u8; 32]) -> LessSafeKey {
    LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, key).expect("32-byte key"))
}

/// ChaCha20-Poly1305 seal of `buf` in place, no associated data; the tag is appended.
pub(crate) fn chacha_seal(key: &[u8; 32], nonce: [u8; 12], buf: &mut Vec<u8>) {
    chacha(key)
        .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), buf)
        .expect("sealing a short buffer cannot fail");
}

/// ChaCha20-Poly1305 open of `buf` (ciphertext ‖ tag) in place; the plaintext length, or `None`
/// if it does not authenticate.
pub(crate) fn chacha_open(key: &[u8; 32], nonce: [u8; 12], buf: &mut [u8]) -> Option<usize> {
    let pt = chacha(key).open_in_place(Nonce::assume_unique_for_key(nonce), Aad::empty(), buf).ok()?;
    Some(pt.len())
}

/// An X25519 secret scalar (aws-lc holds it and clears it when freed).
pub(crate) struct X25519Secret(PrivateKey);

impl X25519Secret {
    pub(crate) fn new(secret: &[u8; 32]) -> Result<Self, Error> {
        PrivateKey::from_private_key(&X25519, secret).map(X25519Secret).map_err(|_| Error::Crypto)
    }

    /// The public key (the scalar times the base point).
    pub(crate) fn public(&self) -> Result<[u8; 32], Error> {
        self.0.compute_public_key()?.as_ref().try_into().map_err(|_| Error::Crypto)
    }

    /// X25519 with a peer's public key; `None` if it is not 32 bytes or the result is all zeros
    /// (a low-order point, which age's spec and Go's `crypto/ecdh` refuse; aws-lc refuses it
    /// already, and the check is repeated so the rule does not depend on the backend).
    pub(crate) fn agree(&self, peer: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
        let shared = agree(&self.0, UnparsedPublicKey::new(&X25519, peer), (), |k| {
            Ok(Zeroizing::new(<[u8; 32]>::try_from(k).map_err(|_| ())?))
        })
        .ok()?;
        (shared.iter().fold(0u8, |acc, &b| acc | b) != 0).then_some(shared)
    }
}

fn nid(level: MlkemLevel) -> i32 {
    match level {
        MlkemLevel::L768 => aws_lc_sys::NID_MLKEM768,
        MlkemLevel::L1024 => aws_lc_sys::NID_MLKEM1024,
    }
}

/// FIPS 203 `ML-KEM.Encaps_internal(ek, m)`: (ciphertext, shared secret). `ek` has passed the
/// §7.2 check; `m` must be fresh uniform randomness, used once.
pub(crate) fn mlkem_encapsulate_derand(
    level: MlkemLevel,
    ek: &[u8],
    m: &[u8; 32],
) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>), Error> {
    use aws_lc_sys::{
        EVP_PKEY_CTX_free, EVP_PKEY_CTX_new, EVP_PKEY_encapsulate_deterministic, EVP_PKEY_free,
        EVP_PKEY_kem_new_raw_public_key,
    };
    let mut ct = vec![0u8; level.ct_len()];
    let mut ss = Zeroizing::new([0u8; 32]);
    let (mut ct_len, mut ss_len, mut m_len) = (ct.len(), ss.len(), m.len());
    // SAFETY: every pointer passed is valid for the length passed with it (the key bytes, and
    // the output buffers sized for this level, whose lengths aws-lc checks and updates); the key
    // and the context are freed exactly once, on every path (the context holds its own reference
    // to the key, so freeing our reference first is allowed and frees nothing early), and a null
    // from either constructor is checked before use.
    let ok = unsafe {
        let pkey = EVP_PKEY_kem_new_raw_public_key(nid(level), ek.as_ptr(), ek.len());
        if pkey.is_null() {
            return Err(Error::Crypto);
        }
        let ctx = EVP_PKEY_CTX_new(pkey, std::ptr::null_mut());
        EVP_PKEY_free(pkey);
        if ctx.is_null() {
            return Err(Error::Crypto);
        }
        let ok = EVP_PKEY_encapsulate_deterministic(
            ctx,
            ct.as_mut_ptr(),
            &mut ct_len,
            ss.as_mut_ptr(),
            &mut ss_len,
            m.as_ptr(),
            &mut m_len,
        );
        EVP_PKEY_CTX_free(ctx);
        ok
    };
    if ok != 1 || ct_len != ct.len() || ss_len != ss.len() {
        return Err(Error::Crypto);
    }
    Ok((ct, ss))
}

/// An ML-KEM decapsulation key, expanded once from its seed. aws-lc frees (and zeroes) its copy
/// on drop; the expanded bytes we pass it are zeroized here.
pub(crate) struct MlkemDecaps {
    dk: kem::DecapsulationKey<AlgorithmId>,
    level: MlkemLevel,
}

impl MlkemDecaps {
    /// FIPS 203 `ML-KEM.KeyGen_internal(d, z)` with `seed` = d ‖ z: the key and its
    /// encapsulation key bytes.
    pub(crate) fn from_seed(level: MlkemLevel, seed: &[u8; 64]) -> Result<(Self, Vec<u8>), Error> {
        use ml_kem::KeyExport;
        // The expanded form (FIPS 203 dk = dk_PKE ‖ ek ‖ H(ek) ‖ z) is exactly what aws-lc loads.
        macro_rules! expand {
            ($m:ident) => {{
                #[allow(deprecated)]
                use ml_kem::ExpandedKeyEncoding;
                let dk = ml_kem::$m::DecapsulationKey::from_seed(ml_kem::Seed::from(*seed));
                #[allow(deprecated)]
                let mut expanded = dk.to_expanded_bytes();
                let bytes = Zeroizing::new(expanded.to_vec());
                expanded.as_mut_slice().zeroize();
                (bytes, dk.encapsulation_key().to_bytes().to_vec())
            }};
        }
        let ((expanded, ek), alg) = match level {
            MlkemLevel::L768 => (expand!(ml_kem_768), &kem::ML_KEM_768),
            MlkemLevel::L1024 => (expand!(ml_kem_1024), &kem::ML_KEM_1024),
        };
        let dk = kem::DecapsulationKey::new(alg, &expanded).map_err(|_| Error::Crypto)?;
        Ok((MlkemDecaps { dk, level }, ek))
    }

    /// Decapsulates a ciphertext of this level's length (checked by the caller). A foreign or
    /// tampered ciphertext yields a pseudorandom secret (implicit rejection).
    pub(crate) fn decapsulate(&self, ct: &[u8]) -> Result<Zeroizing<[u8; 32]>, Error> {
        debug_assert_eq!(ct.len(), self.level.ct_len());
        let ss = self.dk.decapsulate(ct.into()).map_err(|_| Error::Crypto)?;
        let mut out = Zeroizing::new([0u8; 32]);
        out.copy_from_slice(ss.as_ref());
        Ok(out)
    }
}

/// A P-256 secret scalar (aws-lc holds it and clears it when freed).
pub(crate) struct P256Secret(PrivateKey);

impl P256Secret {
    /// The scalar as 32 big-endian bytes; refused unless 1 ≤ scalar < n (the group order), so a
    /// caller drawing random bytes retries, as RFC 9180 `DeriveKeyPair` and Go's `crypto/ecdh` do.
    pub(crate) fn new(scalar: &[u8; 32]) -> Result<Self, Error> {
        PrivateKey::from_private_key(&ECDH_P256, scalar).map(P256Secret).map_err(|_| Error::Crypto)
    }

    /// The public point, uncompressed (0x04 ‖ x ‖ y).
    pub(crate) fn public(&self) -> Result<[u8; 65], Error> {
        self.0.compute_public_key()?.as_ref().try_into().map_err(|_| Error::Crypto)
    }

    /// ECDH with a peer's uncompressed point: the shared x-coordinate (SEC 1 §3.3.1, as RFC 9180
    /// `DH` and Go's `crypto/ecdh` define it). `None` unless `peer` is 65 bytes starting 0x04 and
    /// on the curve (aws-lc checks the curve equation; compressed and hybrid forms are refused
    /// here so each key has one encoding).
    pub(crate) fn agree(&self, peer: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
        if peer.len() != 65 || peer[0] != 4 {
            return None;
        }
        agree(&self.0, UnparsedPublicKey::new(&ECDH_P256, peer), (), |k| {
            Ok(Zeroizing::new(<[u8; 32]>::try_from(k).map_err(|_| ())?))
        })
        .ok()
    }
}

/// A P-256 point given compressed (0x02/0x03 ‖ x), checked to be on the curve, uncompressed.
pub(crate) fn p256_decompress(compressed: &[u8]) -> Option<[u8; 65]> {
    use aws_lc_rs::encoding::{AsDer, PublicKeyX509Der};
    use aws_lc_rs::signature::{ParsedPublicKey, ECDSA_P256_SHA256_ASN1};
    if compressed.len() != 33 || !matches!(compressed[0], 2 | 3) {
        return None;
    }
    // aws-lc parses (and checks) the point; its SubjectPublicKeyInfo carries it uncompressed,
    // after a fixed 26-byte prefix (id-ecPublicKey, prime256v1, the BIT STRING header).
    let key = ParsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, compressed).ok()?;
    let der: PublicKeyX509Der = key.as_der().ok()?;
    let der = der.as_ref();
    (der.len() == 91 && der[26] == 4).then(|| der[26..].try_into().expect("65 bytes"))
}

/// A P-256 point given uncompressed, compressed (0x02 + parity of y ‖ x); `None` if not on the
/// curve.
pub(crate) fn p256_compress(uncompressed: &[u8]) -> Option<[u8; 33]> {
    if uncompressed.len() != 65 || uncompressed[0] != 4 {
        return None;
    }
    let mut out = [0u8; 33];
    out[0] = 2 | (uncompressed[64] & 1);
    out[1..].copy_from_slice(&uncompressed[1..33]);
    // Decompressing again checks the curve equation and that y was the matching root.
    (p256_decompress(&out)? == *uncompressed).then_some(out)
}

/// AES-256-CTR over `buf` in place, the counter block starting at `iv` (an OpenSSH key file's
/// aes256-ctr).
pub(crate) fn aes256_ctr(key: &[u8; 32], iv: [u8; 16], buf: &mut [u8]) -> Result<(), Error> {
    use aws_lc_rs::cipher::{DecryptingKey, DecryptionContext, UnboundCipherKey, AES_256};
    let k = DecryptingKey::ctr(UnboundCipherKey::new(&AES_256, key).map_err(|_| Error::Crypto)?)
        .map_err(|_| Error::Crypto)?;
    k.decrypt(buf, DecryptionContext::Iv128(iv.into())).map_err(|_| Error::Crypto)?;
    Ok(())
}

/// AES-256-GCM open of `buf` in place with its detached `tag`, no associated data (an OpenSSH
/// key file's aes256-gcm@openssh.com); false if it does not authenticate.
pub(crate) fn aes256_gcm_open(key: &[u8; 32], nonce: [u8; 12], buf: &mut [u8], tag: &[u8; 16]) -> bool {
    let Ok(k) = UnboundKey::new(&AES_256_GCM, key) else { return false };
    LessSafeKey::new(k)
        .open_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), tag, buf)
        .is_ok()
}

/// An RSA public key for RSA-OAEP with SHA-256 and MGF1-SHA-256 (age's `ssh-rsa` stanzas).
pub(crate) struct RsaOaepPublic(aws_lc_rs::rsa::OaepPublicEncryptingKey);

impl RsaOaepPublic {
    /// From the modulus and public exponent, big-endian; `None` if aws-lc refuses them (the
    /// caller has already checked the size and the exponent, with its own words).
    pub(crate) fn new(n: &[u8], e: &[u8]) -> Option<Self> {
        use aws_lc_rs::rsa::{OaepPublicEncryptingKey, PublicEncryptingKey, PublicKeyComponents};
        let key: PublicEncryptingKey = PublicKeyComponents { n, e }.try_into().ok()?;
        OaepPublicEncryptingKey::new(key).ok().map(RsaOaepPublic)
    }

    /// `msg` encrypted under `label`: as many bytes as the modulus.
    pub(crate) fn encrypt(&self, msg: &[u8], label: &[u8]) -> Result<Vec<u8>, Error> {
        use aws_lc_rs::rsa::OAEP_SHA256_MGF1SHA256;
        let mut ct = vec![0u8; self.0.ciphertext_size()];
        let n = self.0.encrypt(&OAEP_SHA256_MGF1SHA256, msg, &mut ct, Some(label))?.len();
        ct.truncate(n);
        Ok(ct)
    }
}
