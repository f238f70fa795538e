//! RSA-OAEP with SHA-256 and MGF1-SHA-256 (aws-lc-rs).
//!
//! For wrapping short secrets (a symmetric key) to an RSA public key. Decryption failures
//! are a single opaque [`Error::Crypto`]: distinguishing padding errors is Manger's attack.

use aws_lc_rs::rsa::{
    OaepPrivateDecryptingKey, OaepPublicEncryptingKey, PrivateDecryptingKey, PublicEncryptingKey,
    OAEP_SHA256_MGF1SHA256,
};
use zeroize::Zeroizing;

use crate::{pem, Error, Result};

/// An RSA public key for OAEP encryption.
pub struct RsaOaepPublicKey(OaepPublicEncryptingKey);

/// An RSA private key for OAEP decryption. `Debug` shows nothing secret.
pub struct RsaOaepPrivateKey(OaepPrivateDecryptingKey);

impl std::fmt::Debug for RsaOaepPublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RsaOaepPublicKey({} bits)", self.0.key_size_bits())
    }
}

impl std::fmt::Debug for RsaOaepPrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RsaOaepPrivateKey({} bits)", self.0.key_size_bits())
    }
}

fn label(l: &[u8]) -> Option<&[u8]> {
    (!l.is_empty()).then_some(l)
}

impl RsaOaepPublicKey {
    /// From SubjectPublicKeyInfo DER.
    pub fn from_spki_der(der: &[u8]) -> Result<Self> {
        Ok(RsaOaepPublicKey(OaepPublicEncryptingKey::new(PublicEncryptingKey::from_der(der)?)?))
    }

    /// From a `BEGIN PUBLIC KEY` PEM block.
    pub fn from_pem(text: &str) -> Result<Self> {
        let (label, der) = pem::decode(text)?;
        if label != "PUBLIC KEY" {
            return Err(Error::Malformed("expected a BEGIN PUBLIC KEY block"));
        }
        Self::from_spki_der(&der)
    }

    /// Largest plaintext this key can encrypt.
    pub fn max_plaintext_len(&self) -> usize {
        self.0.max_plaintext_size(&OAEP_SHA256_MGF1SHA256)
    }

    /// Encrypts `plaintext` with the OAEP `label` (empty for none).
    pub fn encrypt(&self, plaintext: &[u8], oaep_label: &[u8]) -> Result<Vec<u8>> {
        if plaintext.len() > self.max_plaintext_len() {
            return Err(Error::InvalidLength("plaintext too long for this RSA key"));
        }
        let mut out = vec![0u8; self.0.ciphertext_size()];
        let n = self.0.encrypt(&OAEP_SHA256_MGF1SHA256, plaintext, &mut out, label(oaep_label))?.len();
        out.truncate(n);
        Ok(out)
    }
}

impl RsaOaepPrivateKey {
    /// From PKCS#8 DER.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self> {
        Ok(RsaOaepPrivateKey(OaepPrivateDecryptingKey::new(PrivateDecryptingKey::from_pkcs8(der)?)?))
    }

    /// From a `BEGIN PRIVATE KEY` PEM block.
    pub fn from_pem(text: &str) -> Result<Self> {
        let (label, der) = pem::decode(text)?;
        if label != "PRIVATE KEY" {
            return Err(Error::Malformed("expected a BEGIN PRIVATE KEY block"));
        }
        Self::from_pkcs8_der(&der)
    }

    /// Decrypts; every failure is the same opaque error.
    pub fn decrypt(&self, ciphertext: &[u8], oaep_label: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
        let mut out = Zeroizing::new(vec![0u8; self.0.min_output_size()]);
        let n = self
            .0
            .decrypt(&OAEP_SHA256_MGF1SHA256, ciphertext, &mut out, label(oaep_label))
            .map_err(|_| Error::Crypto)?
            .len();
        out.truncate(n);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::{KeyKind, SigningKey};

    #[test]
    fn round_trip() {
        let sk = SigningKey::generate(KeyKind::Rsa2048).unwrap();
        let pk = RsaOaepPublicKey::from_pem(&sk.verifying_key().unwrap().to_pem()).unwrap();
        let dk = RsaOaepPrivateKey::from_pem(&sk.to_pkcs8_pem().unwrap()).unwrap();
        let ct = pk.encrypt(b"file key", b"").unwrap();
        assert_eq!(&**dk.decrypt(&ct, b"").unwrap(), b"file key");
        assert!(dk.decrypt(&ct, b"other label").is_err());
        assert_eq!(pk.max_plaintext_len(), 256 - 2 * 32 - 2);
    }
}
