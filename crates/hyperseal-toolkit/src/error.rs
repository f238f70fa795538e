//! One small error type for the whole toolkit.
//!
//! Cryptographic failures are deliberately opaque ([`Error::Crypto`]): whether a tag, a
//! padding byte or a signature was wrong is exactly what an attacker probing an oracle
//! would like to learn, so every such failure collapses into one variant with one message.

use std::fmt;

/// Result alias used throughout the toolkit.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors returned by the toolkit.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Authentication, decryption or verification failed. Intentionally carries no detail.
    #[error("cryptographic operation failed (wrong key, corrupted or forged data)")]
    Crypto,
    /// A key had the wrong length or could not be parsed.
    #[error("invalid key: {0}")]
    InvalidKey(&'static str),
    /// An input had a length the algorithm does not accept.
    #[error("invalid length: {0}")]
    InvalidLength(&'static str),
    /// A parameter is outside the range the toolkit accepts.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// An algorithm name was not recognised.
    #[error("unknown algorithm {name:?} (expected one of: {expected})")]
    UnknownAlgorithm {
        /// The name that was given.
        name: String,
        /// The accepted names, comma separated.
        expected: &'static str,
    },
    /// Encoded input (PEM, hex, base64, key file) was malformed.
    #[error("malformed input: {0}")]
    Malformed(&'static str),
    /// An I/O error while reading input.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Error {
    pub(crate) fn unknown(name: &str, expected: &'static str) -> Self {
        Error::UnknownAlgorithm { name: name.to_owned(), expected }
    }

    pub(crate) fn param(msg: impl fmt::Display) -> Self {
        Error::InvalidParameter(msg.to_string())
    }
}

impl From<crate::backend::error::Unspecified> for Error {
    fn from(_: crate::backend::error::Unspecified) -> Self {
        Error::Crypto
    }
}

impl From<crate::backend::error::KeyRejected> for Error {
    fn from(_: crate::backend::error::KeyRejected) -> Self {
        Error::InvalidKey("key rejected")
    }
}
