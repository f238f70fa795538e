//! hyperseal: fast, safe file and stream encryption.
//!
//! A file is a text header (version, parameters, one stanza per recipient, a MAC) followed by a
//! STREAM-chunked AEAD payload. See `docs/FORMAT.md` for the normative byte layout and
//! `ARCHITECTURE.md` for where each concern lives.
//!
//! ```
//! use hyperseal::{recipient, Kind};
//! let key = recipient::generate(Kind::X25519)?;
//! let to = [recipient::parse_recipient(&key.public)?];
//! let ids = recipient::parse_identities(&key.secret)?;
//! let file = hyperseal::encrypt(&to, b"hello")?;
//! assert_eq!(hyperseal::decrypt(&ids, &file)?, b"hello");
//! # Ok::<(), hyperseal::Error>(())
//! ```
//!
//! Beyond the one-shots: [`Encryptor`] and [`Decryptor`] for streams, slices and buffers (all
//! cores, constant memory), [`Sealer`] and [`Opener`] for data pushed in pieces, and
//! [`StreamReader`] for random access. Nothing here lets a caller choose a nonce.
// Five places need unsafe, each with its reason: crypto/native.rs (one aws-lc call),
// recipient/ssh/rsa.rs (aws-lc bignum division for the CRT exponents OpenSSH keys omit), mem.rs
// (a huge-page hint), exec.rs (a job borrowed by persistent threads) and the OS seam sys/ (the
// `linkat` of an unnamed file, signal handlers, a plugin's process group, Windows' file and Job
// Object calls, and the agent transport's peer credentials, sys/unix/peer.rs, and Windows named
// pipe, sys/windows/pipe.rs); nothing else may (tests aside).
#![deny(unsafe_code)]
#![warn(missing_docs)]

// The identity agent's client, transport and wire format (the agent is the CLI's): Unix
// sockets and Windows named pipes.
#[cfg(any(unix, windows))]
pub mod agent;
// C2SP chunked encryption runs on aws-lc: native builds only (the browser has the native format).
#[cfg(not(portable_backend))]
pub mod c2sp;
mod crypto;
mod decrypt;
pub mod detached;
mod encrypt;
mod error;
/// The executor every parallel path runs on, for the workspace's other crates too: the toolkit's
/// legacy-mode streaming runs on it, so the workspace has one thread design. Not a stable API.
#[doc(hidden)]
pub mod exec;
mod file_key;
pub mod format;
pub mod identity_file;
mod key_cache;
mod keys;
pub mod limits;
mod mem;
mod opener;
#[cfg(all(feature = "fs", any(unix, windows)))]
pub mod output;
pub mod parts;
pub mod recipient;
pub mod rekey;
mod rng;
mod stream;
mod suite;
mod sys;
pub mod time;
pub mod unlock;

pub use decrypt::{decrypt, Decryptor, Source};
pub use encrypt::{armored, encrypt, Encryptor, FileSizes, Options, Sealer};
pub use error::{Error, ErrorCode};
pub use exec::available_threads;
pub use file_key::FileKey;
pub use format::{Profile, Suite};
pub use key_cache::KeyCache;
pub use mem::{output_buffer, wipe, zeroed_output, Pages};
pub use opener::Opener;
pub use recipient::{Identity, Kind, Recipient};
pub use rng::fill as fill_random;
pub use stream::{Progress, StreamReader, StreamWriter};
pub use suite::AesGcmBackend;
