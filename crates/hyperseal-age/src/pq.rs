//! The post-quantum recipient type of age v1.3: `age1pq1…` recipients and
//! `AGE-SECRET-KEY-PQ-1…` identities (ML-KEM-768 + X25519, the `mlkem768x25519` stanza), on the
//! core's hybrid kind. The age crate 0.12 has no such type; files made with it open with age
//! v1.3 and with hyperseal, and only with a post-quantum identity.

use std::str::FromStr;
use std::sync::Arc;

use hyperseal::recipient::hybrid as core;

use crate::bridge;

/// A post-quantum identity, which can decrypt files encrypted to the corresponding
/// [`Recipient`].
#[derive(Clone)]
pub struct Identity(Arc<core::HybridIdentity>);

impl FromStr for Identity {
    type Err = &'static str;

    /// Parses a post-quantum identity from a string (`AGE-SECRET-KEY-PQ-1…`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        core::HybridIdentity::from_bech32(s)
            .map(|k| Identity(Arc::new(k)))
            .map_err(|_| "invalid Bech32 encoding of a post-quantum identity")
    }
}

bridge::native_identity!(Identity, Recipient, core::HybridIdentity, core::generate, "pq::Identity");

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

bridge::native_recipient!(Recipient);
