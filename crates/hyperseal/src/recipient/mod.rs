//! Recipients wrap the file key into stanzas; identities unwrap them.
//!
//! The folder lists the recipient kinds, one file or folder each, and keeps their shared
//! machinery in a room of its own:
//!
//! * the kinds: `x25519.rs`, `mlkem1024.rs`, `rsa.rs` (`rsa-oaep`), `passphrase.rs` (Argon2id),
//!   `scrypt.rs` (age's), `mlkem.rs` (ML-KEM from seeds, for the post-quantum kinds),
//!   `fido2prf/` (passkeys and security keys, asked by the caller); `hpke/`:
//!   the kinds built on HPKE base mode and its KEMs ([`hybrid`], [`p256`], [`mlkem768p256`],
//!   age's [`tag`] recipients); `ssh/`: age's SSH keys and the OpenSSH and PEM key formats they
//!   come in; `plugin/`: age plugins, which run a program;
//! * `common/`, below every kind: the [`Recipient`] / [`Identity`] pair, labels and the label
//!   rule (`traits.rs`), the [`Callbacks`] a kind may ask the user through, `primitives.rs`
//!   (HKDF, the ChaCha20-Poly1305 file-key wrap, randomness), `bech32_long.rs`, `pem.rs`; and,
//!   above every kind, choosing between them: `parse.rs` (key texts to recipients and
//!   identities, by prefix) and `kind.rs` ([`Kind`], [`generate`]). Identity files, also
//!   passphrase-encrypted ones, are read above this folder ([`crate::identity_file`]), since
//!   opening one is a decryption.
//!
//! A kind imports only the machinery below it, never the choosing above it.
//!
//! The portable build (WebAssembly) has no RSA private keys (`rsa-oaep`, `ssh-rsa` identities):
//! `common/unavailable.rs` stands in for them, under the same names, and says why. It has SSH
//! keys otherwise: `ssh-ed25519` both ways and `ssh-rsa` recipients.

mod common;
#[cfg(test)]
mod contract;
pub mod fido2prf;
mod hpke;
mod mlkem;
pub mod mlkem1024;
pub mod passphrase;
pub mod plugin;
#[cfg(not(portable_backend))]
pub mod rsa;
pub mod scrypt;
pub mod ssh;
#[cfg(test)]
mod tests;
pub mod x25519;

// The machinery, under the names the kinds use (`super::traits`, `super::primitives`, …).
use common::pem;
#[cfg(portable_backend)]
use common::unavailable;
use common::{bech32_long, callbacks, kind, parse, primitives, traits};

pub use callbacks::{Callbacks, NoCallbacks};
pub use hpke::{hybrid, mlkem768p256, p256, tag, tag_held};
pub use kind::{generate, passphrase_identities, passphrase_identity_for, passphrase_recipient, Kind};
pub use parse::{
    identity_recipients, identity_recipients_for, looks_like_identity, parse_identities,
    parse_identities_with, parse_recipient, parse_recipient_with, parse_recipients_file,
    parse_recipients_file_with, public_of, tag_recipients_of, IDENTITY_NOT_RECIPIENT, RECIPIENT_NOT_IDENTITY,
};
pub use traits::{wrap_all, wrap_refs, GeneratedKey, Identity, Labels, Recipient, POSTQUANTUM};
#[cfg(portable_backend)]
pub use unavailable::rsa;
