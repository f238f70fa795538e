//! The post-quantum recipient type of age v1.3: `age1pq1…` recipients and
//! `AGE-SECRET-KEY-PQ-1…` identities (ML-KEM-768 + X25519, the `mlkem768x25519` stanza), on the
//! core's hybrid kind. The age crate 0.12 has no such type; files made with it open with age
//! v1.3 and with hyperseal, and only with a post-quantum identity.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use age_core::format::{FileKey, Stanza};
use age_core::secrecy::SecretString;
use hyperseal::recipient::hybrid as core;

use crate::{bridge, DecryptError, EncryptError};

/// A post-quantum identity, which can decrypt files encrypted to the corresponding
/// [`Recipient`].
#[derive(Clone)]
pub struct Identity(Arc<core::HybridIdentity>);

impl fmt::Debug for Identity {
    // The secret never reaches a log: only the public half is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pq::Identity({})", self.to_public())
    }
}

impl FromStr for Identity {
    type Err = &'static str;

    /// Parses a post-quantum identity from a string (`AGE-SECRET-KEY-PQ-1…`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        core::HybridIdentity::from_bech32(s)
            .map(|k| Identity(Arc::new(k)))
            .map_err(|_| "invalid Bech32 encoding of a post-quantum identity")
    }
}

impl Identity {
    /// Generates a new secret key.
    pub fn generate() -> Self {
        let key = core::generate().expect("the system RNG works");
        core::HybridIdentity::from_bech32(&key.secret)
            .map(|k| Identity(Arc::new(k)))
            .expect("a generated key parses")
    }

    /// Serializes this secret key as a string.
    pub fn to_string(&self) -> SecretString {
        SecretString::from(self.0.to_bech32().to_string())
    }

    /// Returns the recipient key for this secret key.
    pub fn to_public(&self) -> Recipient {
        Recipient(self.0.to_public())
    }
}

impl crate::Identity for Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>> {
        bridge::unwrap_with(&*self.0, stanza)
    }
}

/// A post-quantum recipient. Files encrypted to this recipient can be decrypted with
/// the corresponding [`Identity`].
#[derive(Clone)]
pub struct Recipient(core::HybridRecipient);

impl FromStr for Recipient {
    type Err = &'static str;

    /// Parses a recipient key from a string (`age1pq1…`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        core::HybridRecipient::from_bech32(s)
            .map(Recipient)
            .map_err(|_| "invalid Bech32 encoding of a post-quantum recipient")
    }
}

impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_bech32())
    }
}

impl fmt::Debug for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl crate::Recipient for Recipient {
    fn wrap_file_key(
        &self,
        file_key: &FileKey,
    ) -> Result<(Vec<Stanza>, std::collections::HashSet<String>), EncryptError> {
        bridge::wrap_with(&self.0, file_key)
    }
}
