//! The portable backend: RustCrypto, pure Rust, so it builds for `wasm32-unknown-unknown`. See
//! `mod.rs` for the interface; `native.rs` is its twin and `tests.rs` checks they agree.
//!
//! Every primitive here is constant-time in the RustCrypto sense (no secret-dependent branches
//! or table lookups): `x25519-dalek`'s Montgomery ladder, `ml-kem`'s implicit rejection with a
//! constant-time select, `hmac`'s `verify_slice` (via `subtle`), Poly1305's tag compare, `aes`'s
//! fixsliced software AES, and `rsa`'s public-key operation (its exponentiation is constant
//! time in the message; only the public exponent's length shows). `rsa`'s private-key operation
//! is not (RUSTSEC-2023-0071), which is why this backend offers RSA encryption and no decryption.

use chacha20poly1305::aead::{AeadInOut, KeyInit};
// On wasm32 with simd128 its ChaCha20 runs four blocks at once; elsewhere it is RustCrypto's.
use chacha20_simd128::ChaCha20Poly1305;
use hmac::{Hmac, Mac};
use ml_kem::{Decapsulate, KeyExport};
use sha2::Sha256;
use zeroize::Zeroizing;

use super::{MlkemLevel, P256_UNAVAILABLE};
use crate::error::Error;

type HmacSha256 = Hmac<Sha256>;

/// HKDF-SHA-256 (extract and expand) to 32 bytes.
pub(crate) fn hkdf32(salt: &[u8], ikm: &[u8], info: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut out = Zeroizing::new([0u8; 32]);
    hkdf::Hkdf::<Sha256>::new(Some(salt), ikm)
        .expand(info, &mut out[..])
        .expect("HKDF-SHA-256 to 32 bytes cannot fail");
    out
}

/// HKDF-Expand only, from a pseudorandom key given as bytes, `info` given in parts.
pub(crate) fn hkdf_expand(prk: &[u8], info: &[&[u8]], out: &mut [u8]) {
    hkdf::Hkdf::<Sha256>::from_prk(prk)
        .expect("a PRK of at least 32 bytes")
        .expand_multi_info(info, out)
        .expect("HKDF-Expand within 255 blocks cannot fail");
}

fn hmac(key: &[u8]) -> HmacSha256 {
    <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes keys of any length")
}

/// HMAC-SHA-256 over the concatenation of `parts`.
pub(crate) fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = hmac(key);
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// Checks an HMAC-SHA-256 tag in constant time.
pub(crate) fn hmac_sha256_verify(key: &[u8], msg: &[u8], tag: &[u8]) -> bool {
    let mut mac = hmac(key);
    mac.update(msg);
    mac.verify_slice(tag).is_ok()
}

/// ChaCha20-Poly1305 seal of `buf` in place, no associated data; the tag is appended.
pub(crate) fn chacha_seal(key: &[u8; 32], nonce: [u8; 12], buf: &mut Vec<u8>) {
    let tag = ChaCha20Poly1305::new(key.into())
        .encrypt_inout_detached(&nonce.into(), &[], buf.as_mut_slice().into())
        .expect("sealing a short buffer cannot fail");
    buf.extend_from_slice(&tag);
}

/// ChaCha20-Poly1305 open of `buf` (ciphertext ‖ tag) in place; the plaintext length, or `None`
/// if it does not authenticate.
pub(crate) fn chacha_open(key: &[u8; 32], nonce: [u8; 12], buf: &mut [u8]) -> Option<usize> {
    let n = buf.len().checked_sub(16)?;
    let (ct, tag) = buf.split_at_mut(n);
    let tag: [u8; 16] = (&*tag).try_into().ok()?;
    ChaCha20Poly1305::new(key.into())
        .decrypt_inout_detached(&nonce.into(), &[], ct.into(), &tag.into())
        .ok()?;
    Some(n)
}

/// An X25519 secret scalar, zeroized on drop (`x25519-dalek`'s `zeroize` feature).
pub(crate) struct X25519Secret(x25519_dalek::StaticSecret);

impl X25519Secret {
    pub(crate) fn new(secret: &[u8; 32]) -> Result<Self, Error> {
        Ok(X25519Secret(x25519_dalek::StaticSecret::from(*secret)))
    }

    /// The public key (the clamped scalar times the base point).
    pub(crate) fn public(&self) -> Result<[u8; 32], Error> {
        Ok(x25519_dalek::PublicKey::from(&self.0).to_bytes())
    }

    /// X25519 with a peer's public key; `None` if it is not 32 bytes or the result is all zeros
    /// (a low-order point, which age's spec and Go's `crypto/ecdh` refuse).
    pub(crate) fn agree(&self, peer: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
        let peer: [u8; 32] = peer.try_into().ok()?;
        let shared = self.0.diffie_hellman(&x25519_dalek::PublicKey::from(peer));
        let shared = Zeroizing::new(*shared.as_bytes());
        (shared.iter().fold(0u8, |acc, &b| acc | b) != 0).then_some(shared)
    }
}

/// FIPS 203 `ML-KEM.Encaps_internal(ek, m)`: (ciphertext, shared secret). `ek` has passed the
/// §7.2 check; `m` must be fresh uniform randomness, used once.
pub(crate) fn mlkem_encapsulate_derand(
    level: MlkemLevel,
    ek: &[u8],
    m: &[u8; 32],
) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>), Error> {
    use ml_kem::TryKeyInit;
    macro_rules! encaps {
        ($m:ident) => {{
            let ek = ml_kem::$m::EncapsulationKey::new_from_slice(ek).map_err(|_| Error::Crypto)?;
            let (ct, ss) = ek.encapsulate_deterministic(&ml_kem::B32::from(*m));
            (ct.to_vec(), Zeroizing::new(<[u8; 32]>::from(ss)))
        }};
    }
    Ok(match level {
        MlkemLevel::L768 => encaps!(ml_kem_768),
        MlkemLevel::L1024 => encaps!(ml_kem_1024),
    })
}

/// An ML-KEM decapsulation key, expanded once from its seed (zeroized on drop by `ml-kem`'s
/// `zeroize` feature).
pub(crate) enum MlkemDecaps {
    L768(Box<ml_kem::ml_kem_768::DecapsulationKey>),
    L1024(Box<ml_kem::ml_kem_1024::DecapsulationKey>),
}

impl MlkemDecaps {
    /// FIPS 203 `ML-KEM.KeyGen_internal(d, z)` with `seed` = d ‖ z: the key and its
    /// encapsulation key bytes.
    pub(crate) fn from_seed(level: MlkemLevel, seed: &[u8; 64]) -> Result<(Self, Vec<u8>), Error> {
        let seed = ml_kem::Seed::from(*seed);
        Ok(match level {
            MlkemLevel::L768 => {
                let dk = ml_kem::ml_kem_768::DecapsulationKey::from_seed(seed);
                let ek = dk.encapsulation_key().to_bytes().to_vec();
                (MlkemDecaps::L768(Box::new(dk)), ek)
            }
            MlkemLevel::L1024 => {
                let dk = ml_kem::ml_kem_1024::DecapsulationKey::from_seed(seed);
                let ek = dk.encapsulation_key().to_bytes().to_vec();
                (MlkemDecaps::L1024(Box::new(dk)), ek)
            }
        })
    }

    /// Decapsulates a ciphertext of this level's length (checked by the caller). A foreign or
    /// tampered ciphertext yields a pseudorandom secret (implicit rejection).
    pub(crate) fn decapsulate(&self, ct: &[u8]) -> Result<Zeroizing<[u8; 32]>, Error> {
        let ss = match self {
            MlkemDecaps::L768(dk) => {
                dk.decapsulate(&ml_kem::ml_kem_768::Ciphertext::try_from(ct).map_err(|_| Error::Crypto)?)
            }
            MlkemDecaps::L1024(dk) => {
                dk.decapsulate(&ml_kem::ml_kem_1024::Ciphertext::try_from(ct).map_err(|_| Error::Crypto)?)
            }
        };
        Ok(Zeroizing::new(ss.into()))
    }
}

/// Never built: the portable build has no P-256 (RustCrypto's `p256` is not among its
/// dependencies); every constructor fails with [`P256_UNAVAILABLE`].
pub(crate) struct P256Secret(());

impl P256Secret {
    pub(crate) fn new(_: &[u8; 32]) -> Result<Self, Error> {
        Err(Error::InvalidKey(P256_UNAVAILABLE.into()))
    }

    pub(crate) fn public(&self) -> Result<[u8; 65], Error> {
        Err(Error::InvalidKey(P256_UNAVAILABLE.into()))
    }

    pub(crate) fn agree(&self, _: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
        None
    }
}

pub(crate) fn p256_decompress(_: &[u8]) -> Option<[u8; 65]> {
    None
}

pub(crate) fn p256_compress(_: &[u8]) -> Option<[u8; 33]> {
    None
}

/// AES-256-CTR over `buf` in place, the counter block starting at `iv` (an OpenSSH key file's
/// aes256-ctr: a 128-bit big-endian counter, as OpenSSH increments it).
pub(crate) fn aes256_ctr(key: &[u8; 32], iv: [u8; 16], buf: &mut [u8]) -> Result<(), Error> {
    use ctr::cipher::{KeyIvInit, StreamCipher};
    ctr::Ctr128BE::<aes::Aes256>::new(key.into(), &iv.into()).apply_keystream(buf);
    Ok(())
}

/// AES-256-GCM open of `buf` in place with its detached `tag`, no associated data (an OpenSSH
/// key file's aes256-gcm@openssh.com); false if it does not authenticate.
pub(crate) fn aes256_gcm_open(key: &[u8; 32], nonce: [u8; 12], buf: &mut [u8], tag: &[u8; 16]) -> bool {
    aes_gcm::Aes256Gcm::new(key.into())
        .decrypt_inout_detached(&nonce.into(), &[], buf.into(), tag.into())
        .is_ok()
}

/// The OS randomness of [`crate::rng`] as the `rand_core` generator `rsa` asks for.
struct OsRng;

impl rsa::rand_core::TryRng for OsRng {
    type Error = Error;

    fn try_next_u32(&mut self) -> Result<u32, Error> {
        let mut b = [0u8; 4];
        crate::rng::fill(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Error> {
        let mut b = [0u8; 8];
        crate::rng::fill(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Error> {
        crate::rng::fill(dst)
    }
}

impl rsa::rand_core::TryCryptoRng for OsRng {}

/// An RSA public key for RSA-OAEP with SHA-256 and MGF1-SHA-256 (age's `ssh-rsa` stanzas).
pub(crate) struct RsaOaepPublic(rsa::PublicKey);

impl RsaOaepPublic {
    /// From the modulus and public exponent, big-endian; `None` if `rsa` refuses them (the
    /// caller has already checked the size and the exponent, with its own words).
    pub(crate) fn new(n: &[u8], e: &[u8]) -> Option<Self> {
        use rsa::BoxedUint;
        let bits = |b: &[u8]| (b.len() as u32 * 8).max(64);
        let n = BoxedUint::from_be_slice(n, bits(n)).ok()?;
        let e = BoxedUint::from_be_slice(e, bits(e)).ok()?;
        rsa::PublicKey::new_with_size_limits(n, e, 2048..=8192).ok().map(RsaOaepPublic)
    }

    /// `msg` encrypted under `label`: as many bytes as the modulus.
    pub(crate) fn encrypt(&self, msg: &[u8], label: &[u8]) -> Result<Vec<u8>, Error> {
        let padding = rsa::Oaep::<Sha256>::new_with_label(label);
        self.0.encrypt(&mut OsRng, padding, msg).map_err(|_| Error::Crypto)
    }
}
