//! Digital signatures: Ed25519, ECDSA P-256, RSA (PSS and PKCS#1 v1.5) and ML-DSA-65; plus RSA-OAEP
//! encryption in [`oaep`].
//!
//! Two backends behind this one front, chosen at compile time: aws-lc-rs natively
//! (`sign/native.rs`), and RustCrypto (`ed25519-dalek`, `p256`, `ml-dsa`: `sign/portable.rs`) on
//! wasm32 or with the `portable` feature. They read and write the same PEM keys and signature
//! encodings (tested across in `tests/sign_portable.rs`); the portable one has no RSA and no
//! [`oaep`] (no constant-time pure-Rust RSA).
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

#[cfg(not(portable_backend))]
mod native;
#[cfg(not(portable_backend))]
pub mod oaep;
#[cfg(portable_backend)]
mod portable;

#[cfg(not(portable_backend))]
use native as imp;
#[cfg(portable_backend)]
use portable as imp;
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

    #[cfg(not(portable_backend))]
    pub(crate) fn rsa_from_bits(bits: usize) -> Result<Self> {
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

/// A private signing key. `Debug` shows only the kind.
pub struct SigningKey {
    kind: KeyKind,
    inner: imp::Private,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey").field("kind", &self.kind).finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Generates a fresh key (the portable backend has no RSA: [`Error::InvalidKey`]).
    pub fn generate(kind: KeyKind) -> Result<Self> {
        Ok(SigningKey { kind, inner: imp::generate(kind)? })
    }

    /// Parses a PKCS#8 DER private key of any supported kind.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self> {
        let (kind, inner) = imp::from_pkcs8_der(der)?;
        Ok(SigningKey { kind, inner })
    }

    /// Parses a PEM private key: PKCS#8, or OpenSSL's SEC1 / PKCS#1 forms.
    pub fn from_pem(text: &str) -> Result<Self> {
        let (label, der) = pem::decode(text)?;
        match label.as_str() {
            "PRIVATE KEY" => Self::from_pkcs8_der(&der),
            "EC PRIVATE KEY" => Ok(SigningKey { kind: KeyKind::EcdsaP256, inner: imp::from_sec1_der(&der)? }),
            "RSA PRIVATE KEY" => {
                let (kind, inner) = imp::from_pkcs1_der(&der)?;
                Ok(SigningKey { kind, inner })
            }
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
        imp::to_pkcs8_der(&self.inner)
    }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>> {
        Ok(pem::encode("PRIVATE KEY", &self.to_pkcs8_der()?))
    }

    /// The matching public key.
    pub fn verifying_key(&self) -> Result<VerifyingKey> {
        Ok(VerifyingKey { kind: self.kind, spki: imp::spki_der(&self.inner)? })
    }

    /// Signs `msg` (RSA: PSS).
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>> {
        self.sign_with(msg, RsaPadding::Pss)
    }

    /// Signs `msg`; `padding` matters only for RSA keys.
    pub fn sign_with(&self, msg: &[u8], padding: RsaPadding) -> Result<Vec<u8>> {
        imp::sign(&self.inner, msg, padding)
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
        Ok(VerifyingKey { kind: imp::spki_kind(der)?, spki: der.to_vec() })
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
        imp::verify(self.kind, &self.spki, msg, signature, padding)
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
        let kinds: &[KeyKind] = if cfg!(portable_backend) {
            &[KeyKind::Ed25519, KeyKind::EcdsaP256, KeyKind::MlDsa65]
        } else {
            &[KeyKind::Ed25519, KeyKind::EcdsaP256, KeyKind::Rsa2048, KeyKind::MlDsa65]
        };
        for &kind in kinds {
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
