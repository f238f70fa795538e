//! The X25519 recipient type, native to age: `age1…` recipients and `AGE-SECRET-KEY-1…`
//! identities, on the core's X25519 kind.

use std::str::FromStr;
use std::sync::Arc;

use hyperseal::recipient::x25519 as core;

use crate::bridge;

/// The standard age identity type, which can decrypt files encrypted to the corresponding
/// [`Recipient`].
#[derive(Clone)]
pub struct Identity(Arc<core::X25519Identity>);

impl FromStr for Identity {
    type Err = &'static str;

    /// Parses an X25519 identity from a string (`AGE-SECRET-KEY-1…`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        core::X25519Identity::from_bech32(s)
            .map(|k| Identity(Arc::new(k)))
            .map_err(|_| "invalid Bech32 encoding of an X25519 identity")
    }
}

bridge::native_identity!(Identity, Recipient, core::X25519Identity, core::generate, "x25519::Identity");

/// The standard age recipient type. Files encrypted to this recipient can be decrypted with
/// the corresponding [`Identity`].
#[derive(Clone, PartialEq, Eq)]
pub struct Recipient(core::X25519Recipient);

impl FromStr for Recipient {
    type Err = &'static str;

    /// Parses a recipient key from a string (`age1…`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        core::X25519Recipient::from_bech32(s)
            .map(Recipient)
            .map_err(|_| "invalid Bech32 encoding of an X25519 recipient")
    }
}

bridge::native_recipient!(Recipient);
