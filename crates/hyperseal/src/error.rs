//! One small error type for the whole library.
//!
//! Payload failures are deliberately coarse (which chunk, not why): an attacker who tampers with a
//! file learns nothing from the message that the position did not already tell them.

use std::io;

/// Everything that can go wrong while encrypting or decrypting.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input does not start with a header this library knows.
    #[error("unknown file format: not a hyperseal or age file")]
    UnknownFormat,
    /// The header is syntactically invalid.
    #[error("malformed header: {0}")]
    MalformedHeader(String),
    /// The header MAC did not verify: the header was modified, or the file key is wrong.
    #[error("header authentication failed: the header was modified")]
    HeaderMac,
    /// None of the supplied identities could unwrap any stanza.
    #[error("no identity matched any of the file's recipients")]
    NoIdentityMatched,
    /// A passphrase-encrypted file was opened with the wrong passphrase.
    #[error("incorrect passphrase")]
    WrongPassphrase,
    /// The passphrase stanza asks for more work than the configured cap allows.
    #[error("passphrase work factor too high ({0}); refusing to spend that much time or memory")]
    WorkFactorTooHigh(String),
    /// A stanza that belongs to the identity is broken (fatal, unlike "not mine").
    #[error("invalid recipient stanza: {0}")]
    InvalidStanza(String),
    /// The key or context does not match the message's key commitment (c2sp-chunked): a wrong
    /// key, a wrong context, or a modified salt or commitment.
    #[error("wrong key or context: the key commitment does not match")]
    WrongKey,
    /// A payload chunk failed to authenticate.
    #[error("payload chunk {0} failed to authenticate: the file is corrupted or was tampered with")]
    ChunkAuth(u64),
    /// The payload ends before its final chunk.
    #[error("file is truncated: the final chunk is missing (after chunk {0})")]
    Truncated(u64),
    /// A key or identity string could not be parsed.
    #[error("invalid key: {0}")]
    InvalidKey(String),
    /// A recipient string could not be parsed.
    #[error("invalid recipient: {0}")]
    InvalidRecipient(String),
    /// The recipients cannot be combined in one file.
    #[error("incompatible recipients: {0}")]
    IncompatibleRecipients(String),
    /// A parameter (suite, chunk size, seek position) is out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// ASCII armor is malformed.
    #[error("malformed armor: {0}")]
    Armor(String),
    /// An underlying read or write failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A primitive failed where it cannot fail with valid inputs (RNG, key setup).
    #[error("internal cryptographic failure")]
    Crypto,
}

impl Error {
    /// Recovers a library error that travelled through `io::Read`/`io::Write` as an `io::Error`.
    pub fn from_io(e: io::Error) -> Self {
        if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
            *e.into_inner().unwrap().downcast::<Error>().unwrap()
        } else {
            Error::Io(e)
        }
    }

    /// Wraps this error so it can travel through `io::Read`/`io::Write`.
    pub fn into_io(self) -> io::Error {
        match self {
            Error::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidData, other),
        }
    }
}

impl From<aws_lc_rs::error::Unspecified> for Error {
    fn from(_: aws_lc_rs::error::Unspecified) -> Self {
        Error::Crypto
    }
}
