//! Choosing a kind: the key kinds `hyperseal keygen` can make ([`Kind`], [`generate`]) and the
//! passphrase kind of each profile (Argon2id for hyperseal files, age's scrypt for age files).

use zeroize::Zeroizing;

use crate::error::Error;
use crate::format::{Header, Profile};
use crate::recipient::hpke::{hybrid, mlkem768p256, p256};
use crate::recipient::traits::{GeneratedKey, Identity, Recipient};
use crate::recipient::{mlkem1024, passphrase, rsa, scrypt, x25519};

/// The key kinds `hyperseal keygen` can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// ML-KEM-768 + X25519 (X-Wing), age v1.3's `mlkem768x25519`. The default.
    Hybrid,
    /// X25519, age's classic recipient.
    X25519,
    /// ML-KEM-1024 alone.
    Mlkem1024,
    /// P-256 (HPKE DHKEM(P-256)): nkCryptoTool's ECC mode. Not in the portable build.
    P256,
    /// ML-KEM-768 + P-256 (HPKE MLKEM768-P256): nkCryptoTool's Hybrid mode. Not in the portable
    /// build.
    P256Mlkem768,
    /// RSA-OAEP-SHA-256 with a 3072-bit modulus.
    Rsa3072,
    /// RSA-OAEP-SHA-256 with a 4096-bit modulus.
    Rsa4096,
}

impl Kind {
    /// Every kind, in the order the CLI lists them.
    pub const ALL: [Kind; 7] = [
        Kind::Hybrid,
        Kind::X25519,
        Kind::Mlkem1024,
        Kind::P256,
        Kind::P256Mlkem768,
        Kind::Rsa3072,
        Kind::Rsa4096,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Hybrid => "hybrid",
            Kind::X25519 => "x25519",
            Kind::Mlkem1024 => "mlkem1024",
            Kind::P256 => "p256",
            Kind::P256Mlkem768 => "p256-mlkem768",
            Kind::Rsa3072 => "rsa3072",
            Kind::Rsa4096 => "rsa4096",
        }
    }

    /// Parses a CLI name.
    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Generates a key pair of the given kind.
pub fn generate(kind: Kind) -> Result<GeneratedKey, Error> {
    match kind {
        Kind::Hybrid => hybrid::generate(),
        Kind::X25519 => x25519::generate(),
        Kind::Mlkem1024 => mlkem1024::generate(),
        Kind::P256 => p256::generate(),
        Kind::P256Mlkem768 => mlkem768p256::generate(),
        Kind::Rsa3072 => rsa::generate(3072),
        Kind::Rsa4096 => rsa::generate(4096),
    }
}

/// The passphrase recipient of a profile: age's scrypt for age files, Argon2id for hyperseal.
pub fn passphrase_recipient(profile: Profile, passphrase: Zeroizing<String>) -> Box<dyn Recipient> {
    match profile {
        Profile::Age => Box::new(scrypt::ScryptRecipient::new(passphrase)),
        Profile::Hyperseal => Box::new(passphrase::PassphraseRecipient::new(passphrase)),
    }
}

/// The passphrase identity that can open a file with this header (see [`Header::is_passphrase`]).
pub fn passphrase_identity_for(header: &Header, passphrase: Zeroizing<String>) -> Box<dyn Identity> {
    match header.profile {
        Profile::Age => Box::new(scrypt::ScryptIdentity::new(passphrase)),
        Profile::Hyperseal => Box::new(passphrase::PassphraseIdentity::new(passphrase)),
    }
}

/// Both passphrase identities, Argon2id (hyperseal files) and scrypt (age files): each opens
/// only its own stanza type, so a file or stream can be opened before its header says which
/// one it needs (what the bindings' `passphrase` arguments build).
pub fn passphrase_identities(passphrase: Zeroizing<String>) -> Vec<Box<dyn Identity>> {
    vec![
        Box::new(passphrase::PassphraseIdentity::new(passphrase.clone())),
        Box::new(scrypt::ScryptIdentity::new(passphrase)),
    ]
}
