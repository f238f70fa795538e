//! TPM 2.0-bound age identities: the unwrap side of age's tag recipients (`age1tag1…`,
//! `age1tagpq1…`) with the P-256 key inside a TPM and, for the post-quantum kind, the
//! ML-KEM-768 seed sealed to it.
//!
//! A small pure-Rust TPM 2.0 command layer (no libtss2: the released CLI is one static binary):
//!
//! * `transport.rs`: where the TPM is (`/dev/tpmrm0`, or swtpm's socket), a deadline per
//!   command, bounds, no second use of a connection whose exchange failed;
//! * `marshal.rs`, `command.rs`: the wire encoding and the command frame, every returned length
//!   bounded; `ops.rs`: the commands used, the object templates and the policy digest;
//! * `key.rs`: the identity file's TPM data (and `age_plugin_tpm.rs`: that plugin's p256 keys); `keygen.rs`: making a key; `identity.rs`: the
//!   [`Identity`](hyperseal::Identity); `error.rs`: what failed and what to do.
//!
//! * `session.rs`: the sessions, salted by ECDH to a key of the TPM: the PIN keys an HMAC
//!   instead of crossing the bus, and the seed, the PIN at creation and the ECDH result travel
//!   AES-CFB encrypted; the TPM's answers are HMAC-checked. A use of a key is salted to that
//!   key, whose point the identity file holds; key creation to the storage primary.
//!
//! What this layer does not do (docs/TPM.md): at key creation the salt's ECDH trusts the
//! primary that `CreatePrimary` returns (trust on first use: nothing is known yet to check it
//! against); no Windows TBS; the mssim platform port (power-on) is not driven: start swtpm
//! with `--flags not-need-init,startup-clear` (a `TPM_RC_INITIALIZE` answer gets one
//! `Startup`). A primary's name is always computed from the public area returned with it.
//!
//! The library reads no environment variable: callers pass the [`Location`].

pub mod age_plugin_tpm;
mod command;
mod error;
mod identity;
mod key;
mod keygen;
mod marshal;
mod ops;
mod session;
mod transport;

pub use command::Tpm;
pub use error::{split_hint, TpmError, PREFIX as ERROR_PREFIX};
pub use identity::TpmIdentity;
pub use key::{TpmKey, PLUGIN_NAME};
pub use keygen::{generate, Options, MAX_PIN};
pub use transport::{Location, DEFAULT_DEVICE};

#[cfg(test)]
mod interposer_tests;
#[cfg(test)]
mod swtpm_tests;
