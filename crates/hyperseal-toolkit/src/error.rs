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
    /// The stable code the bindings report for this error: one of the strings of
    /// `hyperseal::ErrorCode` (Node's `err.code`, Python's exception class, the browser's
    /// `err.code`). Failed opens and verifies are `AUTH`; unusable keys (wrong length, bad PEM or
    /// key line — the only encoded inputs the bindings take are keys) are `KEY`; unknown
    /// algorithms and out-of-range lengths or parameters are `ARGUMENT`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Crypto => "ERR_HYPERSEAL_AUTH",
            Error::InvalidKey(_) | Error::Malformed(_) => "ERR_HYPERSEAL_KEY",
            Error::Io(_) => "ERR_HYPERSEAL_IO",
            Error::InvalidLength(_) | Error::InvalidParameter(_) | Error::UnknownAlgorithm { .. } => {
                "ERR_HYPERSEAL_ARGUMENT"
            }
        }
    }

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

#[cfg(test)]
mod tests {
    use super::Error;
    use crate::token::TokenError;

    /// Every code the toolkit reports is one of the library's stable codes, so the bindings map
    /// them without a table of their own.
    #[test]
    fn codes_are_the_librarys() {
        let errors = [
            Error::Crypto,
            Error::InvalidKey("k"),
            Error::InvalidLength("l"),
            Error::InvalidParameter("p".into()),
            Error::unknown("x", "y"),
            Error::Malformed("m"),
            Error::Io(std::io::Error::other("io")),
        ];
        let tokens = [TokenError::Malformed, TokenError::UnknownKeyId, TokenError::Expired, TokenError::Auth];
        let codes = errors.iter().map(Error::code).chain(tokens.iter().map(TokenError::code));
        for code in codes {
            assert!(hyperseal::ErrorCode::from_code(code).is_some(), "{code}");
        }
        assert_eq!(Error::Crypto.code(), "ERR_HYPERSEAL_AUTH");
        assert_eq!(TokenError::Expired.code(), "ERR_HYPERSEAL_TOKEN_EXPIRED");
    }
}
