//! The native signature backend: aws-lc-rs for every kind, RSA included. The front
//! (`sign.rs`) holds the PEM handling and the public types; this file only the aws-lc calls.

use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::PqdsaKeyPair;
use aws_lc_rs::signature::{
    self as sig, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, RsaKeyPair, UnparsedPublicKey,
};
use zeroize::Zeroizing;

use super::{KeyKind, RsaPadding};
use crate::{Error, Result};

pub(super) enum Private {
    Ed25519(Ed25519KeyPair),
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair),
    MlDsa(PqdsaKeyPair),
}

pub(super) fn generate(kind: KeyKind) -> Result<Private> {
    Ok(match kind {
        KeyKind::Ed25519 => Private::Ed25519(Ed25519KeyPair::generate()?),
        KeyKind::EcdsaP256 => Private::Ecdsa(EcdsaKeyPair::generate(&sig::ECDSA_P256_SHA256_ASN1_SIGNING)?),
        KeyKind::Rsa2048 => Private::Rsa(RsaKeyPair::generate(KeySize::Rsa2048)?),
        KeyKind::Rsa3072 => Private::Rsa(RsaKeyPair::generate(KeySize::Rsa3072)?),
        KeyKind::Rsa4096 => Private::Rsa(RsaKeyPair::generate(KeySize::Rsa4096)?),
        KeyKind::MlDsa65 => Private::MlDsa(PqdsaKeyPair::generate(&sig::ML_DSA_65_SIGNING)?),
    })
}

fn rsa(k: RsaKeyPair) -> Result<(KeyKind, Private)> {
    Ok((KeyKind::rsa_from_bits(k.public_modulus_len() * 8)?, Private::Rsa(k)))
}

pub(super) fn from_pkcs8_der(der: &[u8]) -> Result<(KeyKind, Private)> {
    if let Ok(k) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
        return Ok((KeyKind::Ed25519, Private::Ed25519(k)));
    }
    if let Ok(k) = EcdsaKeyPair::from_pkcs8(&sig::ECDSA_P256_SHA256_ASN1_SIGNING, der) {
        return Ok((KeyKind::EcdsaP256, Private::Ecdsa(k)));
    }
    if let Ok(k) = RsaKeyPair::from_pkcs8(der) {
        return rsa(k);
    }
    if let Ok(k) = PqdsaKeyPair::from_pkcs8(&sig::ML_DSA_65_SIGNING, der) {
        return Ok((KeyKind::MlDsa65, Private::MlDsa(k)));
    }
    Err(Error::InvalidKey("not a supported PKCS#8 private key (ed25519, ecdsa-p256, rsa, ml-dsa-65)"))
}

/// OpenSSL's `BEGIN EC PRIVATE KEY` (SEC1).
pub(super) fn from_sec1_der(der: &[u8]) -> Result<Private> {
    EcdsaKeyPair::from_private_key_der(&sig::ECDSA_P256_SHA256_ASN1_SIGNING, der)
        .map(Private::Ecdsa)
        .map_err(|_| Error::InvalidKey("only P-256 EC keys are supported"))
}

/// OpenSSL's `BEGIN RSA PRIVATE KEY` (PKCS#1).
pub(super) fn from_pkcs1_der(der: &[u8]) -> Result<(KeyKind, Private)> {
    rsa(RsaKeyPair::from_der(der)?)
}

pub(super) fn to_pkcs8_der(k: &Private) -> Result<Zeroizing<Vec<u8>>> {
    let doc = match k {
        Private::Ed25519(k) => k.to_pkcs8v1()?.as_ref().to_vec(),
        Private::Ecdsa(k) => k.to_pkcs8v1()?.as_ref().to_vec(),
        Private::Rsa(k) => AsDer::<Pkcs8V1Der>::as_der(k)?.as_ref().to_vec(),
        Private::MlDsa(k) => k.to_pkcs8v1()?.as_ref().to_vec(),
    };
    Ok(Zeroizing::new(doc))
}

pub(super) fn spki_der(k: &Private) -> Result<Vec<u8>> {
    Ok(match k {
        Private::Ed25519(k) => k.public_key().as_der()?.as_ref().to_vec(),
        Private::Ecdsa(k) => k.public_key().as_der()?.as_ref().to_vec(),
        Private::Rsa(k) => k.public_key().as_der()?.as_ref().to_vec(),
        Private::MlDsa(k) => k.public_key().as_der()?.as_ref().to_vec(),
    })
}

pub(super) fn sign(k: &Private, msg: &[u8], padding: RsaPadding) -> Result<Vec<u8>> {
    Ok(match k {
        Private::Ed25519(k) => k.try_sign(msg)?.as_ref().to_vec(),
        Private::Ecdsa(k) => k.sign(&SystemRandom::new(), msg)?.as_ref().to_vec(),
        Private::Rsa(k) => {
            let enc: &'static dyn sig::RsaEncoding = match padding {
                RsaPadding::Pss => &sig::RSA_PSS_SHA256,
                RsaPadding::Pkcs1v15 => &sig::RSA_PKCS1_SHA256,
            };
            let mut out = vec![0u8; k.public_modulus_len()];
            k.sign(enc, &SystemRandom::new(), msg, &mut out)?;
            out
        }
        Private::MlDsa(k) => {
            let mut out = vec![0u8; k.algorithm().signature_len()];
            let n = k.sign(msg, &mut out)?;
            out.truncate(n);
            out
        }
    })
}

/// The kind of a SubjectPublicKeyInfo DER key.
pub(super) fn spki_kind(der: &[u8]) -> Result<KeyKind> {
    Ok(if sig::ParsedPublicKey::new(&sig::ED25519, der).is_ok() && der.len() != 32 {
        KeyKind::Ed25519
    } else if sig::ParsedPublicKey::new(&sig::ECDSA_P256_SHA256_ASN1, der).is_ok()
        && der.first() == Some(&0x30)
    {
        KeyKind::EcdsaP256
    } else if let Ok(k) = aws_lc_rs::rsa::PublicEncryptingKey::from_der(der) {
        KeyKind::rsa_from_bits(k.key_size_bits())?
    } else if sig::ParsedPublicKey::new(&sig::ML_DSA_65, der).is_ok() {
        KeyKind::MlDsa65
    } else {
        return Err(Error::InvalidKey("not a supported public key (ed25519, ecdsa-p256, rsa, ml-dsa-65)"));
    })
}

pub(super) fn verify(
    kind: KeyKind,
    spki: &[u8],
    msg: &[u8],
    signature: &[u8],
    padding: RsaPadding,
) -> Result<()> {
    let alg: &'static dyn sig::VerificationAlgorithm = match kind {
        KeyKind::Ed25519 => &sig::ED25519,
        KeyKind::EcdsaP256 => &sig::ECDSA_P256_SHA256_ASN1,
        KeyKind::MlDsa65 => &sig::ML_DSA_65,
        _ => match padding {
            RsaPadding::Pss => &sig::RSA_PSS_2048_8192_SHA256,
            RsaPadding::Pkcs1v15 => &sig::RSA_PKCS1_2048_8192_SHA256,
        },
    };
    UnparsedPublicKey::new(alg, spki).verify(msg, signature).map_err(|_| Error::Crypto)
}
