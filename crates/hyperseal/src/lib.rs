//! hyperseal: fast, safe file and stream encryption.
//!
//! A file is a text header (version, parameters, one stanza per recipient, a MAC) followed by a
//! STREAM-chunked AEAD payload. See `docs/FORMAT.md` for the normative byte layout.
//!
//! ```
//! use hyperseal::{recipient, Kind};
//! let key = recipient::generate(Kind::X25519).unwrap();
//! let r = recipient::parse_recipient(&key.public).unwrap();
//! let ids = recipient::parse_identities(&key.secret).unwrap();
//! let ct = hyperseal::encrypt(&[r], b"hello").unwrap();
//! assert_eq!(&hyperseal::decrypt(&ids, &ct).unwrap()[..], b"hello");
//! ```
// Two modules need unsafe, each with its reason: recipient/mlkem.rs (one aws-lc call) and mem.rs
// (a huge-page hint); nothing else may.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod c2sp;
mod decrypt;
mod encrypt;
mod error;
mod file_key;
pub mod format;
mod mem;
pub mod recipient;
mod rng;
pub mod stream;
pub mod suite;

pub use decrypt::{decrypt, decrypt_into, decrypt_slice, decrypt_with, Decryptor, Source};
pub use encrypt::{armored, available_threads, encrypt, encrypt_with, Encryptor, Options, SALT_LEN};
pub use error::Error;
pub use file_key::FileKey;
pub use format::Profile;
pub use mem::output_buffer;
pub use recipient::{Identity, Kind, Recipient};
pub use stream::{StreamReader, StreamWriter};
pub use suite::Suite;
