//! Recipients wrap the file key into stanzas; identities unwrap them.
//!
//! The folder is laid out by what depends on what:
//!
//! * below every kind: the [`Recipient`] / [`Identity`] pair, labels and the label rule
//!   (`traits.rs`), the [`Callbacks`] a kind may ask the user through (`callbacks.rs`), and the
//!   machinery several kinds share: `primitives.rs` (HKDF, the ChaCha20-Poly1305 file-key wrap,
//!   randomness), `bech32_long.rs` (age's bech32 without a length limit), `mlkem.rs` (ML-KEM
//!   from seeds) and `pem.rs` (PEM blocks and DER, for the RSA and SSH kinds);
//! * the kinds, one file each: `x25519.rs`, `mlkem1024.rs`, `rsa.rs`, `passphrase.rs`
//!   (Argon2id), `scrypt.rs` (age's); `hpke/`: the kinds built on HPKE base mode and its KEMs
//!   ([`hybrid`], [`p256`], [`mlkem768p256`], age's [`tag`] recipients); `ssh/`: age's SSH keys
//!   and the OpenSSH and PEM key formats they come in; `plugin/`: age plugins, which run a
//!   program;
//! * above the kinds, choosing between them: `parse.rs` (key texts to recipients and
//!   identities, by prefix) and `kind.rs` ([`Kind`], [`generate`], the passphrase kind of a
//!   profile). Identity files, also passphrase-encrypted ones, are read above this folder
//!   ([`crate::identity_file`]), since opening one is a decryption.
//!
//! A kind imports only what is below it, never the choosing that sits above it.
//!
//! The portable build (WebAssembly) has no RSA and no SSH keys: `unavailable.rs` stands in for
//! both, under the same names, and says why.

mod bech32_long;
mod callbacks;
mod hpke;
mod kind;
mod mlkem;
pub mod mlkem1024;
mod parse;
pub mod passphrase;
#[cfg(not(portable_backend))]
mod pem;
pub mod plugin;
mod primitives;
#[cfg(not(portable_backend))]
pub mod rsa;
pub mod scrypt;
#[cfg(not(portable_backend))]
pub mod ssh;
#[cfg(test)]
mod tests;
mod traits;
#[cfg(portable_backend)]
mod unavailable;
pub mod x25519;

pub use callbacks::{Callbacks, NoCallbacks};
pub use hpke::{hybrid, mlkem768p256, p256, tag};
pub use kind::{generate, passphrase_identities, passphrase_identity_for, passphrase_recipient, Kind};
pub use parse::{
    identity_recipients, identity_recipients_for, looks_like_identity, parse_identities,
    parse_identities_with, parse_recipient, parse_recipient_with, parse_recipients_file,
    parse_recipients_file_with, public_of, tag_recipients_of, IDENTITY_NOT_RECIPIENT, RECIPIENT_NOT_IDENTITY,
};
pub use traits::{wrap_all, wrap_refs, GeneratedKey, Identity, Labels, Recipient, POSTQUANTUM};
#[cfg(portable_backend)]
pub use unavailable::rsa;
#[cfg(portable_backend)]
use unavailable::ssh;
