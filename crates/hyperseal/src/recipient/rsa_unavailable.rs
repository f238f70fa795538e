//! RSA-OAEP recipients on the portable backend (WebAssembly): not available.
//!
//! Why: the only pure-Rust RSA (RustCrypto `rsa`) is not constant-time (the Marvin attack,
//! RUSTSEC-2023-0071, unfixed), and an RSA private-key operation that leaks timing in a page is
//! exactly what an attacker with a script on the same machine can measure. RSA keys also exist
//! for PKI interop, which a browser rarely needs. So the portable build parses no RSA key and says
//! so with a `Key` error; files with RSA stanzas still open with another recipient's identity
//! (an RSA stanza is then "not mine"). Same public names as `rsa.rs`, so callers compile
//! unchanged.

use super::{GeneratedKey, Identity, Recipient};
use crate::format::Stanza;
use crate::{Error, FileKey};

/// RSA keys are PEM, not bech32; this is the PEM line that introduces a recipient.
pub const RECIPIENT_HRP: &str = "-----BEGIN PUBLIC KEY-----";
/// The PEM line that introduces an identity.
pub const IDENTITY_HRP: &str = "-----BEGIN PRIVATE KEY-----";

const UNAVAILABLE: &str = "RSA keys are not available in this build (WebAssembly has no constant-time \
                           RSA): use an x25519, hybrid or mlkem1024 key";

/// An RSA public key: none can be made in this build.
#[derive(Debug)]
pub enum RsaRecipient {}

impl RsaRecipient {
    /// Always an error in this build.
    pub fn from_spki_pem(_: &str) -> Result<Self, Error> {
        Err(Error::InvalidRecipient(UNAVAILABLE.into()))
    }
}

impl Recipient for RsaRecipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, super::Labels), Error> {
        match *self {}
    }
}

/// An RSA private key: none can be made in this build.
#[derive(Debug)]
pub enum RsaIdentity {}

impl RsaIdentity {
    /// Always an error in this build.
    pub fn from_pkcs8_pem(_: &str) -> Result<Self, Error> {
        Err(Error::InvalidKey(UNAVAILABLE.into()))
    }
}

impl Identity for RsaIdentity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> {
        match *self {}
    }
}

/// Always an error in this build.
pub fn public_pem_from_pkcs8_pem(_: &str) -> Result<String, Error> {
    Err(Error::InvalidKey(UNAVAILABLE.into()))
}

/// Always an error in this build.
pub fn generate(_: usize) -> Result<GeneratedKey, Error> {
    Err(Error::InvalidArgument(UNAVAILABLE.into()))
}
