//! Digital signatures: Ed25519, ECDSA P-256, RSA (PSS and PKCS#1 v1.5) and ML-DSA-65, all on
//! aws-lc-rs; plus RSA-OAEP encryption in [`oaep`].
//!
//! Keys travel as PEM: private keys as PKCS#8 (`BEGIN PRIVATE KEY`, returned as
//! `Zeroizing<String>`), public keys as SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`), the forms
//! `openssl genpkey` writes and `openssl pkey -pubin` reads. OpenSSL's older `BEGIN EC
//! PRIVATE KEY` (SEC1) and `BEGIN RSA PRIVATE KEY` (PKCS#1) are accepted on input.
//!
//! Signature encodings are OpenSSL's: ECDSA signatures are ASN.1 DER (what `openssl dgst
//! -sha256 -sign` emits), RSA signatures use SHA-256 (PSS with MGF1-SHA-256 and a 32-byte
//! salt, or PKCS#1 v1.5), Ed25519 and ML-DSA-65 sign the message itself (pure mode).
//! RSA keys are limited to 2048, 3072 and 4096 bits: smaller is too weak, larger is slow
//! for no practical gain.

pub mod oaep;

use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::PqdsaKeyPair;
use aws_lc_rs::signature::{
    self as sig, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, RsaKeyPair, UnparsedPublicKey,
};
use zeroize::Zeroizing;

use crate::{pem, Error, Result};

/// The kinds of signing key hyperseal can generate and use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyKind {
    /// Ed25519 (RFC 8032).
    Ed25519,
    /// ECDSA over NIST P-256 with SHA-256.
    EcdsaP256,
    /// RSA-2048.
    Rsa2048,
    /// RSA-3072.
    Rsa3072,
    /// RSA-4096.
    Rsa4096,
    /// ML-DSA-65 (FIPS 204), post-quantum.
    MlDsa65,
}

const KIND_NAMES: &str = "ed25519, ecdsa-p256, rsa2048, rsa3072, rsa4096, ml-dsa-65";

impl KeyKind {
    /// Every kind.
    pub const ALL: [KeyKind; 6] = [
        KeyKind::Ed25519,
        KeyKind::EcdsaP256,
        KeyKind::Rsa2048,
        KeyKind::Rsa3072,
        KeyKind::Rsa4096,
        KeyKind::MlDsa65,
    ];

    /// Canonical name, e.g. `ecdsa-p256`.
    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Ed25519 => "ed25519",
            KeyKind::EcdsaP256 => "ecdsa-p256",
            KeyKind::Rsa2048 => "rsa2048",
            KeyKind::Rsa3072 => "rsa3072",
            KeyKind::Rsa4096 => "rsa4096",
            KeyKind::MlDsa65 => "ml-dsa-65",
        }
    }

    /// Parses a canonical name.
    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.to_ascii_lowercase();
        KeyKind::ALL.into_iter().find(|k| k.name() == lower).ok_or_else(|| Error::unknown(name, KIND_NAMES))
    }

    /// Whether this is an RSA kind.
    pub fn is_rsa(self) -> bool {
        matches!(self, KeyKind::Rsa2048 | KeyKind::Rsa3072 | KeyKind::Rsa4096)
    }

    fn rsa_from_bits(bits: usize) -> Result<Self> {
        match bits {
            2048 => Ok(KeyKind::Rsa2048),
            3072 => Ok(KeyKind::Rsa3072),
            4096 => Ok(KeyKind::Rsa4096),
            _ => Err(Error::InvalidKey("RSA keys must be 2048, 3072 or 4096 bits")),
        }
    }
}

impl std::fmt::Display for KeyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// RSA signature padding. PSS is the default: it has a security proof and no
/// Bleichenbacher-style parsing pitfalls; PKCS#1 v1.5 is for interoperability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RsaPadding {
    /// RSASSA-PSS, SHA-256, MGF1-SHA-256, 32-byte salt.
    #[default]
    Pss,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Pkcs1v15,
}

impl RsaPadding {
    /// Parses `pss` or `pkcs1`.
    pub fn parse(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "pss" => Ok(RsaPadding::Pss),
            "pkcs1" | "pkcs1v15" | "pkcs1-v1_5" => Ok(RsaPadding::Pkcs1v15),
            _ => Err(Error::unknown(name, "pss, pkcs1")),
        }
    }
}

enum Private {
    Ed25519(Ed25519KeyPair),
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair),
    MlDsa(PqdsaKeyPair),
}

/// A private signing key. `Debug` shows only the kind.
pub struct SigningKey {
    kind: KeyKind,
    inner: Private,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey").field("kind", &self.kind).finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Generates a fresh key.
    pub fn generate(kind: KeyKind) -> Result<Self> {
        let inner = match kind {
            KeyKind::Ed25519 => Private::Ed25519(Ed25519KeyPair::generate()?),
            KeyKind::EcdsaP256 => {
                Private::Ecdsa(EcdsaKeyPair::generate(&sig::ECDSA_P256_SHA256_ASN1_SIGNING)?)
            }
            KeyKind::Rsa2048 => Private::Rsa(RsaKeyPair::generate(KeySize::Rsa2048)?),
            KeyKind::Rsa3072 => Private::Rsa(RsaKeyPair::generate(KeySize::Rsa3072)?),
            KeyKind::Rsa4096 => Private::Rsa(RsaKeyPair::generate(KeySize::Rsa4096)?),
            KeyKind::MlDsa65 => Private::MlDsa(PqdsaKeyPair::generate(&sig::ML_DSA_65_SIGNING)?),
        };
        Ok(SigningKey { kind, inner })
    }

    /// Parses a PKCS#8 DER private key of any supported kind.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self> {
        if let Ok(k) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
            return Ok(SigningKey { kind: KeyKind::Ed25519, inner: Private::Ed25519(k) });
        }
        if let Ok(k) = EcdsaKeyPair::from_pkcs8(&sig::ECDSA_P256_SHA256_ASN1_SIGNING, der) {
            return Ok(SigningKey { kind: KeyKind::EcdsaP256, inner: Private::Ecdsa(k) });
        }
        if let Ok(k) = RsaKeyPair::from_pkcs8(der) {
            return Self::rsa(k);
        }
        if let Ok(k) = PqdsaKeyPair::from_pkcs8(&sig::ML_DSA_65_SIGNING, der) {
            return Ok(SigningKey { kind: KeyKind::MlDsa65, inner: Private::MlDsa(k) });
        }
        Err(Error::InvalidKey("not a supported PKCS#8 private key (ed25519, ecdsa-p256, rsa, ml-dsa-65)"))
    }

    fn rsa(k: RsaKeyPair) -> Result<Self> {
        let kind = KeyKind::rsa_from_bits(k.public_modulus_len() * 8)?;
        Ok(SigningKey { kind, inner: Private::Rsa(k) })
    }

    /// Parses a PEM private key: PKCS#8, or OpenSSL's SEC1 / PKCS#1 forms.
    pub fn from_pem(text: &str) -> Result<Self> {
        let (label, der) = pem::decode(text)?;
        match label.as_str() {
            "PRIVATE KEY" => Self::from_pkcs8_der(&der),
            "EC PRIVATE KEY" => {
                let k = EcdsaKeyPair::from_private_key_der(&sig::ECDSA_P256_SHA256_ASN1_SIGNING, &der)
                    .map_err(|_| Error::InvalidKey("only P-256 EC keys are supported"))?;
                Ok(SigningKey { kind: KeyKind::EcdsaP256, inner: Private::Ecdsa(k) })
            }
            "RSA PRIVATE KEY" => Self::rsa(RsaKeyPair::from_der(&der)?),
            "ENCRYPTED PRIVATE KEY" => Err(Error::InvalidKey(
                "encrypted PKCS#8 is not supported; decrypt it with openssl pkey first",
            )),
            _ => Err(Error::Malformed("PEM block is not a private key")),
        }
    }

    /// The key's kind.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// PKCS#8 v1 DER.
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        let doc = match &self.inner {
            Private::Ed25519(k) => k.to_pkcs8v1()?.as_ref().to_vec(),
            Private::Ecdsa(k) => k.to_pkcs8v1()?.as_ref().to_vec(),
            Private::Rsa(k) => AsDer::<Pkcs8V1Der>::as_der(k)?.as_ref().to_vec(),
            Private::MlDsa(k) => k.to_pkcs8v1()?.as_ref().to_vec(),
        };
        Ok(Zeroizing::new(doc))
    }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>> {
        Ok(pem::encode("PRIVATE KEY", &self.to_pkcs8_der()?))
    }

    /// The matching public key.
    pub fn verifying_key(&self) -> Result<VerifyingKey> {
        let spki = match &self.inner {
            Private::Ed25519(k) => k.public_key().as_der()?.as_ref().to_vec(),
            Private::Ecdsa(k) => k.public_key().as_der()?.as_ref().to_vec(),
            Private::Rsa(k) => k.public_key().as_der()?.as_ref().to_vec(),
            Private::MlDsa(k) => k.public_key().as_der()?.as_ref().to_vec(),
        };
        Ok(VerifyingKey { kind: self.kind, spki })
    }

    /// Signs `msg` (RSA: PSS).
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>> {
        self.sign_with(msg, RsaPadding::Pss)
    }

    /// Signs `msg`; `padding` matters only for RSA keys.
    pub fn sign_with(&self, msg: &[u8], padding: RsaPadding) -> Result<Vec<u8>> {
        Ok(match &self.inner {
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
}

/// A public verification key (SubjectPublicKeyInfo).
#[derive(Clone, PartialEq, Eq)]
pub struct VerifyingKey {
    kind: KeyKind,
    spki: Vec<u8>,
}

impl std::fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyingKey").field("kind", &self.kind).finish_non_exhaustive()
    }
}

impl VerifyingKey {
    /// Parses SubjectPublicKeyInfo DER and works out its kind.
    pub fn from_spki_der(der: &[u8]) -> Result<Self> {
        let kind = if sig::ParsedPublicKey::new(&sig::ED25519, der).is_ok() && der.len() != 32 {
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
            return Err(Error::InvalidKey(
                "not a supported public key (ed25519, ecdsa-p256, rsa, ml-dsa-65)",
            ));
        };
        Ok(VerifyingKey { kind, spki: der.to_vec() })
    }

    /// Parses a `-----BEGIN PUBLIC KEY-----` PEM block.
    pub fn from_pem(text: &str) -> Result<Self> {
        let (label, der) = pem::decode(text)?;
        if label != "PUBLIC KEY" {
            return Err(Error::Malformed("expected a BEGIN PUBLIC KEY block"));
        }
        Self::from_spki_der(&der)
    }

    /// The key's kind.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// SubjectPublicKeyInfo DER.
    pub fn to_spki_der(&self) -> &[u8] {
        &self.spki
    }

    /// SubjectPublicKeyInfo PEM, readable by `openssl pkey -pubin`.
    pub fn to_pem(&self) -> String {
        pem::encode("PUBLIC KEY", &self.spki).to_string()
    }

    /// Verifies a signature (RSA: PSS).
    pub fn verify(&self, msg: &[u8], signature: &[u8]) -> Result<()> {
        self.verify_with(msg, signature, RsaPadding::Pss)
    }

    /// Verifies a signature; `padding` matters only for RSA keys.
    pub fn verify_with(&self, msg: &[u8], signature: &[u8], padding: RsaPadding) -> Result<()> {
        let alg: &'static dyn sig::VerificationAlgorithm = match self.kind {
            KeyKind::Ed25519 => &sig::ED25519,
            KeyKind::EcdsaP256 => &sig::ECDSA_P256_SHA256_ASN1,
            KeyKind::MlDsa65 => &sig::ML_DSA_65,
            _ => match padding {
                RsaPadding::Pss => &sig::RSA_PSS_2048_8192_SHA256,
                RsaPadding::Pkcs1v15 => &sig::RSA_PKCS1_2048_8192_SHA256,
            },
        };
        UnparsedPublicKey::new(alg, &self.spki).verify(msg, signature).map_err(|_| Error::Crypto)
    }
}

/// Generates a key of `kind` and returns it as PKCS#8 PEM.
pub fn generate(kind: KeyKind) -> Result<Zeroizing<String>> {
    SigningKey::generate(kind)?.to_pkcs8_pem()
}

/// The SPKI PEM public key for a PEM private key of any supported kind.
pub fn public_pem_from_private(private_pem: &str) -> Result<String> {
    Ok(SigningKey::from_pem(private_pem)?.verifying_key()?.to_pem())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fast_kind_round_trips_through_pem() {
        for kind in [KeyKind::Ed25519, KeyKind::EcdsaP256, KeyKind::Rsa2048, KeyKind::MlDsa65] {
            let pem = generate(kind).unwrap();
            assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));
            let sk = SigningKey::from_pem(&pem).unwrap();
            assert_eq!(sk.kind(), kind);
            let vk = VerifyingKey::from_pem(&public_pem_from_private(&pem).unwrap()).unwrap();
            assert_eq!(vk.kind(), kind, "{kind}");
            for pad in [RsaPadding::Pss, RsaPadding::Pkcs1v15] {
                let s = sk.sign_with(b"hello", pad).unwrap();
                vk.verify_with(b"hello", &s, pad).unwrap();
                assert!(vk.verify_with(b"hellO", &s, pad).is_err());
            }
            assert!(!format!("{sk:?}").contains("BEGIN"));
        }
    }
}
