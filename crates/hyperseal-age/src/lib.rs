//! The Rust [`age`](https://docs.rs/age/0.12) 0.12 API over the hyperseal core.
//!
//! A program switches with one line in its `Cargo.toml`:
//!
//! ```toml
//! age = { package = "hyperseal-age", version = "0.12" }
//! ```
//!
//! and a whole dependency tree with a `[patch.crates-io]` entry naming the `age` package that
//! ships beside this crate (see the README). The names, types, traits and errors are age's:
//! [`Recipient`] and [`Identity`] stay over age-core 0.12's [`Stanza`]
//! and [`FileKey`], and [`secrecy`] is age-core's, so recipients,
//! identities and plugins written for age work unchanged. The framing, keys and cryptography are
//! the hyperseal core's; this crate maps names and types only.
//!
//! What it adds to age 0.12:
//!
//! * `age1pq1…` recipients and `AGE-SECRET-KEY-PQ-1…` identities (age v1.3's ML-KEM-768 +
//!   X25519 hybrid), native in [`pq`], [`IdentityFile`] and every parser;
//! * the stream writer and reader use every core on large files, behind the same
//!   `Read`/`Write` calls;
//! * tag recipients (`age1tag1…`, `age1tagpq1…`) both ways;
//! * one plugin run for many files (`plugin::IdentityPluginV1::unwrap_files`, with
//!   [`Decryptor::stanzas`] and [`Decryptor::decrypt_with_file_key`]): one PIN or touch for a
//!   batch, where age asks once per file;
//! * the hyperseal agent as an identity ([`agent::Identity`]): keys unlocked once, outside the
//!   program.
//!
//! What differs from age 0.12 (the crate's README says why):
//!
//! * `Decryptor::new` also reads an armored file without an `ArmoredReader` around it;
//! * `ssh::Recipient` and `ssh::Identity` are structs, not age's enums over its key types;
//! * prompts read the terminal through rpassword, never a pinentry program, and messages are
//!   English only (the error variants are age's);
//! * before a payload error the readers release what age's do, except the last full chunk
//!   before 64 KiB or more of trailing junk inside one read batch.
//!
//! ```
//! # use hyperseal_age as age;
//! use std::io::{Read, Write};
//! let key = age::x25519::Identity::generate();
//! let encryptor = age::Encryptor::with_recipients(std::iter::once(&key.to_public() as _))?;
//! let mut file = vec![];
//! let mut writer = encryptor.wrap_output(&mut file)?;
//! writer.write_all(b"hello")?;
//! writer.finish()?;
//!
//! let decryptor = age::Decryptor::new(&file[..])?;
//! let mut reader = decryptor.decrypt(std::iter::once(&key as &dyn age::Identity))?;
//! let mut plain = vec![];
//! reader.read_to_end(&mut plain)?;
//! assert_eq!(plain, b"hello");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs)]

use age_core::format::{FileKey, Stanza};
pub use age_core::secrecy;
use secrecy::SecretString;

#[cfg(all(feature = "armor", feature = "async"))]
mod async_armor;
#[cfg(feature = "async")]
mod async_io;
mod bridge;
mod error;
mod identity;
mod io;
mod protocol;

pub mod agent;
#[cfg(feature = "armor")]
#[cfg_attr(docsrs, doc(cfg(feature = "armor")))]
pub mod armor;
#[cfg(feature = "cli-common")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli-common")))]
pub mod cli_common;
pub mod encrypted;
#[cfg(feature = "plugin")]
#[cfg_attr(docsrs, doc(cfg(feature = "plugin")))]
pub mod plugin;
pub mod pq;
pub mod scrypt;
#[cfg(feature = "ssh")]
#[cfg_attr(docsrs, doc(cfg(feature = "ssh")))]
pub mod ssh;
pub mod stream;
pub mod tag;
pub use tag::pq as tagpq;
pub mod x25519;

#[cfg(feature = "cli-common")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli-common")))]
pub use cli_common::i18n::localizer;
pub use error::{DecryptError, EncryptError, IdentityFileConvertError};
pub use identity::IdentityFile;
#[cfg(feature = "armor")]
#[cfg_attr(docsrs, doc(cfg(feature = "armor")))]
pub use protocol::encrypt_and_armor;
pub use protocol::{decrypt, encrypt};
pub use protocol::{Decryptor, Encryptor};

/// A private key or other value that can unwrap an opaque file key from a recipient stanza.
///
/// The same trait as age 0.12's, over age-core's types.
pub trait Identity {
    /// Attempts to unwrap the given stanza with this identity.
    ///
    /// Returns `None` if the stanza is not for this identity ("not mine"), `Some(Err(..))` if
    /// it is and is broken, `Some(Ok(file_key))` if it opened.
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>>;

    /// Attempts to unwrap any of the given stanzas, in order; the first definite answer wins.
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, DecryptError>> {
        stanzas.iter().find_map(|stanza| self.unwrap_stanza(stanza))
    }
}

/// A public key or other value that can wrap an opaque file key to a recipient stanza.
///
/// The same trait as age 0.12's: the labels forbid unsafe mixes (every recipient of a file
/// must carry the same set; a passphrase and a post-quantum key each carry one).
pub trait Recipient {
    /// Wraps the given file key, returning stanzas to be placed in an age file header and the
    /// labels that constrain how it may be combined with other recipients.
    fn wrap_file_key(
        &self,
        file_key: &FileKey,
    ) -> Result<(Vec<Stanza>, std::collections::HashSet<String>), EncryptError>;
}

/// Callbacks that might be triggered during encryption or decryption (a plugin's questions).
///
/// The same trait as age 0.12's; key types never touch a terminal themselves.
pub trait Callbacks: Clone + Send + Sync + 'static {
    /// Shows a message to the user.
    fn display_message(&self, message: &str);

    /// Asks the user a yes/no question; `None` if it could not be asked.
    fn confirm(&self, message: &str, yes_string: &str, no_string: Option<&str>) -> Option<bool>;

    /// Asks the user for a string that is not secret; `None` if it could not be asked.
    fn request_public_string(&self, description: &str) -> Option<String>;

    /// Asks the user for a passphrase; `None` if it could not be asked.
    fn request_passphrase(&self, description: &str) -> Option<SecretString>;
}

/// An implementation of [`Callbacks`] that does not allow callbacks.
#[derive(Clone, Copy, Debug)]
pub struct NoCallbacks;

impl Callbacks for NoCallbacks {
    fn display_message(&self, _: &str) {}
    fn confirm(&self, _: &str, _: &str, _: Option<&str>) -> Option<bool> {
        None
    }
    fn request_public_string(&self, _: &str) -> Option<String> {
        None
    }
    fn request_passphrase(&self, _: &str) -> Option<SecretString> {
        None
    }
}
