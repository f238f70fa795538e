//! The portable signature backend: RustCrypto (`ed25519-dalek`, `p256`, `ml-dsa`), pure Rust, so
//! it builds for wasm32 where aws-lc does not (and natively with the `portable` feature, to test
//! it). Same key forms and signature encodings as `native.rs`: PKCS#8 v1 private keys, SPKI
//! public keys, ECDSA signatures in ASN.1 DER, Ed25519 and ML-DSA-65 in pure mode with an empty
//! context. No RSA: there is no constant-time pure-Rust RSA to put here.
//!
//! Differences that do not change what verifies: ECDSA signs with RFC 6979 deterministic nonces
//! (aws-lc draws random ones), ML-DSA signs hedged (FIPS 204's default, as aws-lc does).

use ed25519_dalek::Signer as _;
use ml_dsa::{EncodedSignature, MlDsa65};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use zeroize::Zeroizing;

use super::{KeyKind, RsaPadding};
use crate::aead::fill_random;
use crate::{Error, Result};

const NO_RSA: Error = Error::InvalidKey("RSA signing keys are native-only (no constant-time pure-Rust RSA)");

pub(super) enum Private {
    Ed25519(Box<ed25519_dalek::SigningKey>),
    Ecdsa(Box<p256::ecdsa::SigningKey>),
    MlDsa(Box<ml_dsa::SigningKey<MlDsa65>>),
}

pub(super) fn generate(kind: KeyKind) -> Result<Private> {
    let mut seed = Zeroizing::new([0u8; 32]);
    Ok(match kind {
        KeyKind::Ed25519 => {
            fill_random(&mut seed[..]);
            Private::Ed25519(Box::new(ed25519_dalek::SigningKey::from_bytes(&seed)))
        }
        // A uniform 32-byte string is a valid P-256 scalar unless it is zero or ≥ n (chance
        // about 2⁻³²): draw again then.
        KeyKind::EcdsaP256 => loop {
            fill_random(&mut seed[..]);
            if let Ok(k) = p256::ecdsa::SigningKey::from_slice(&seed[..]) {
                break Private::Ecdsa(Box::new(k));
            }
        },
        KeyKind::MlDsa65 => {
            fill_random(&mut seed[..]);
            Private::MlDsa(Box::new(ml_dsa::SigningKey::from_seed(&(*seed).into())))
        }
        KeyKind::Rsa2048 | KeyKind::Rsa3072 | KeyKind::Rsa4096 => return Err(NO_RSA),
    })
}

pub(super) fn from_pkcs8_der(der: &[u8]) -> Result<(KeyKind, Private)> {
    if let Ok(k) = ed25519_dalek::SigningKey::from_pkcs8_der(der) {
        return Ok((KeyKind::Ed25519, Private::Ed25519(Box::new(k))));
    }
    if let Ok(k) = p256::ecdsa::SigningKey::from_pkcs8_der(der) {
        return Ok((KeyKind::EcdsaP256, Private::Ecdsa(Box::new(k))));
    }
    if let Ok(k) = ml_dsa::SigningKey::<MlDsa65>::from_pkcs8_der(der) {
        return Ok((KeyKind::MlDsa65, Private::MlDsa(Box::new(k))));
    }
    Err(Error::InvalidKey(
        "not a supported PKCS#8 private key (ed25519, ecdsa-p256, ml-dsa-65; RSA is native-only)",
    ))
}

/// OpenSSL's `BEGIN EC PRIVATE KEY` (SEC1).
pub(super) fn from_sec1_der(der: &[u8]) -> Result<Private> {
    let secret = p256::SecretKey::from_sec1_der(der)
        .map_err(|_| Error::InvalidKey("only P-256 EC keys are supported"))?;
    Ok(Private::Ecdsa(Box::new(secret.into())))
}

/// OpenSSL's `BEGIN RSA PRIVATE KEY` (PKCS#1): native-only.
pub(super) fn from_pkcs1_der(_der: &[u8]) -> Result<(KeyKind, Private)> {
    Err(NO_RSA)
}

pub(super) fn to_pkcs8_der(k: &Private) -> Result<Zeroizing<Vec<u8>>> {
    let doc = match k {
        Private::Ed25519(k) => k.to_pkcs8_der(),
        Private::Ecdsa(k) => k.to_pkcs8_der(),
        Private::MlDsa(k) => k.to_pkcs8_der(),
    }
    .map_err(|_| Error::Crypto)?;
    Ok(Zeroizing::new(doc.as_bytes().to_vec()))
}

pub(super) fn spki_der(k: &Private) -> Result<Vec<u8>> {
    let doc = match k {
        Private::Ed25519(k) => k.verifying_key().to_public_key_der(),
        Private::Ecdsa(k) => k.verifying_key().to_public_key_der(),
        Private::MlDsa(k) => k.expanded_key().verifying_key().to_public_key_der(),
    }
    .map_err(|_| Error::Crypto)?;
    Ok(doc.into_vec())
}

pub(super) fn sign(k: &Private, msg: &[u8], _padding: RsaPadding) -> Result<Vec<u8>> {
    Ok(match k {
        Private::Ed25519(k) => k.try_sign(msg).map_err(|_| Error::Crypto)?.to_bytes().to_vec(),
        Private::Ecdsa(k) => {
            let sig: p256::ecdsa::Signature =
                p256::ecdsa::signature::Signer::try_sign(&**k, msg).map_err(|_| Error::Crypto)?;
            sig.to_der().as_bytes().to_vec()
        }
        Private::MlDsa(k) => {
            let sig = k
                .expanded_key()
                .sign_randomized(msg, &[], &mut getrandom::SysRng)
                .map_err(|_| Error::Crypto)?;
            sig.encode().to_vec()
        }
    })
}

/// The kind of a SubjectPublicKeyInfo DER key.
pub(super) fn spki_kind(der: &[u8]) -> Result<KeyKind> {
    if ed25519_dalek::VerifyingKey::from_public_key_der(der).is_ok() {
        Ok(KeyKind::Ed25519)
    } else if p256::ecdsa::VerifyingKey::from_public_key_der(der).is_ok() {
        Ok(KeyKind::EcdsaP256)
    } else if ml_dsa::VerifyingKey::<MlDsa65>::from_public_key_der(der).is_ok() {
        Ok(KeyKind::MlDsa65)
    } else {
        Err(Error::InvalidKey(
            "not a supported public key (ed25519, ecdsa-p256, ml-dsa-65; RSA is native-only)",
        ))
    }
}

pub(super) fn verify(
    kind: KeyKind,
    spki: &[u8],
    msg: &[u8],
    signature: &[u8],
    _padding: RsaPadding,
) -> Result<()> {
    let ok = match kind {
        KeyKind::Ed25519 => {
            let vk = ed25519_dalek::VerifyingKey::from_public_key_der(spki).map_err(|_| Error::Crypto)?;
            let sig = ed25519_dalek::Signature::from_slice(signature).map_err(|_| Error::Crypto)?;
            ed25519_dalek::Verifier::verify(&vk, msg, &sig).is_ok()
        }
        KeyKind::EcdsaP256 => {
            let vk = p256::ecdsa::VerifyingKey::from_public_key_der(spki).map_err(|_| Error::Crypto)?;
            let sig = p256::ecdsa::Signature::from_der(signature).map_err(|_| Error::Crypto)?;
            p256::ecdsa::signature::Verifier::verify(&vk, msg, &sig).is_ok()
        }
        KeyKind::MlDsa65 => {
            let vk = ml_dsa::VerifyingKey::<MlDsa65>::from_public_key_der(spki).map_err(|_| Error::Crypto)?;
            let enc = EncodedSignature::<MlDsa65>::try_from(signature).map_err(|_| Error::Crypto)?;
            let sig = ml_dsa::Signature::<MlDsa65>::decode(&enc).ok_or(Error::Crypto)?;
            vk.verify_with_context(msg, &[], &sig)
        }
        KeyKind::Rsa2048 | KeyKind::Rsa3072 | KeyKind::Rsa4096 => return Err(NO_RSA),
    };
    if ok {
        Ok(())
    } else {
        Err(Error::Crypto)
    }
}
