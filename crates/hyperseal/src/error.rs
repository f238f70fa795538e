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
    /// An age plugin is missing, refused, crashed, hung or broke the protocol.
    #[error("plugin: {0}")]
    Plugin(String),
    /// The identity agent is unreachable, did not answer within its deadline, is locked, or
    /// broke the protocol (`agent/`).
    #[error("agent: {0}")]
    Agent(String),
    /// An underlying read or write failed.
    #[error("{0}")]
    Io(io::Error),
    /// A primitive failed where it cannot fail with valid inputs (RNG, key setup).
    #[error("internal cryptographic failure")]
    Crypto,
    /// An input went past one of the budgets in [`limits`](crate::limits) (a header, a stanza,
    /// an armor line, a key file, a plugin's messages): refused before it could take more
    /// memory or time. The text names what and the limit.
    #[error("input too large: {0}")]
    Limit(String),
    /// The input has no bytes at all (an empty file, or a pipe whose writer wrote nothing):
    /// not [`Error::UnknownFormat`], since the fix is elsewhere (the wrong file, a failed
    /// command before the pipe). Its code is [`ErrorCode::Format`], as an unknown format's.
    #[error("the input is empty: not a hyperseal or age file")]
    EmptyInput,
    /// A re-key of a file on disk failed: `source` says why, `outcome` which recipients the
    /// file has now (every failure says it). Its code is the source's.
    #[error("{source}; {outcome}")]
    Rekey {
        /// What the file is left as.
        outcome: Outcome,
        /// The failure.
        source: Box<Error>,
    },
}

/// What a failed re-key of a file left: every failure says which recipients are in force. It
/// stands beside the variant that carries it, [`Error::Rekey`], so the error type needs nothing
/// from the re-key; `rekey::Outcome` names it there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing changed: the file is as it was (or as another program that wrote it left it).
    Unchanged,
    /// The change was made, and something after it failed (removing the journal, say).
    Changed,
    /// The header write was interrupted and could not be undone: the journal at this path
    /// keeps both headers; `decrypt` opens the file, and the next re-key of it finishes or
    /// undoes the change and says which.
    Pending(std::path::PathBuf),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Unchanged => f.write_str("nothing changed"),
            Outcome::Changed => f.write_str("the change WAS made: the file opens with the new recipients"),
            Outcome::Pending(j) => write!(
                f,
                "the header write was interrupted and could not be undone: its journal {} keeps both \
                 headers, decrypt still opens the file, and the next re-key of it finishes or undoes the change and says which",
                j.display()
            ),
        }
    }
}

impl From<io::Error> for Error {
    /// The one way in from `io`: a library error that travelled through `io::Read`/`io::Write`
    /// (from [`StreamReader`](crate::stream::StreamReader), say) comes back as itself.
    fn from(e: io::Error) -> Self {
        match e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
            true => *e.into_inner().and_then(|b| b.downcast::<Error>().ok()).expect("checked above"),
            false => Error::Io(e),
        }
    }
}

impl Error {
    /// Wraps this error so it can travel through `io::Read`/`io::Write`; `From<io::Error>`
    /// unwraps it again.
    pub fn into_io(self) -> io::Error {
        match self {
            Error::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidData, other),
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl From<aws_lc_rs::error::Unspecified> for Error {
    fn from(_: aws_lc_rs::error::Unspecified) -> Self {
        Error::Crypto
    }
}

/// The stable error codes every binding reports (Node's `err.code`, Python's `.code`, the
/// browser's `err.code`): one list, here. Never rename one; add new ones at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A chunk or the header failed to authenticate, a wrong passphrase, or a payload cut short.
    Auth,
    /// None of the given identities opens the file.
    NoIdentity,
    /// Not a hyperseal/age file, or a malformed one.
    Format,
    /// A key string could not be parsed, or keys cannot be mixed.
    Key,
    /// Wrong argument types or bad options.
    Argument,
    /// Reading or writing failed.
    Io,
    /// A toolkit token authenticated but its expiry time has passed.
    TokenExpired,
    /// A toolkit token names a key id that none of the given keys has.
    TokenUnknownKey,
    /// An input went past one of the library's size or count budgets (`hyperseal::limits`).
    Limit,
}

impl ErrorCode {
    /// Every code, in a stable order.
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::Auth,
        ErrorCode::NoIdentity,
        ErrorCode::Format,
        ErrorCode::Key,
        ErrorCode::Argument,
        ErrorCode::Io,
        ErrorCode::TokenExpired,
        ErrorCode::TokenUnknownKey,
        ErrorCode::Limit,
    ];

    /// The code string, e.g. `ERR_HYPERSEAL_AUTH`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Auth => "ERR_HYPERSEAL_AUTH",
            ErrorCode::NoIdentity => "ERR_HYPERSEAL_NO_IDENTITY",
            ErrorCode::Format => "ERR_HYPERSEAL_FORMAT",
            ErrorCode::Key => "ERR_HYPERSEAL_KEY",
            ErrorCode::Argument => "ERR_HYPERSEAL_ARGUMENT",
            ErrorCode::Io => "ERR_HYPERSEAL_IO",
            ErrorCode::TokenExpired => "ERR_HYPERSEAL_TOKEN_EXPIRED",
            ErrorCode::TokenUnknownKey => "ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY",
            ErrorCode::Limit => "ERR_HYPERSEAL_LIMIT",
        }
    }
}

impl ErrorCode {
    /// The code whose [`as_str`](Self::as_str) is `s` (how the bindings turn the toolkit's code
    /// strings into codes).
    pub fn from_code(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Error {
    /// The stable code of this error (what the bindings report).
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::HeaderMac
            | Error::ChunkAuth(_)
            | Error::Truncated(_)
            | Error::WrongPassphrase
            | Error::WrongKey => ErrorCode::Auth,
            Error::NoIdentityMatched => ErrorCode::NoIdentity,
            // A plugin that is missing, misnamed, or failed: its key cannot be used.
            Error::Plugin(_) => ErrorCode::Key,
            // An agent that cannot answer: its keys cannot be used, as a plugin's.
            Error::Agent(_) => ErrorCode::Key,
            Error::InvalidKey(_) | Error::InvalidRecipient(_) | Error::IncompatibleRecipients(_) => {
                ErrorCode::Key
            }
            Error::InvalidArgument(_) => ErrorCode::Argument,
            Error::Limit(_) => ErrorCode::Limit,
            // An input that ends inside the header is a malformed file, not an I/O failure.
            Error::Rekey { source, .. } => source.code(),
            Error::Io(io) if io.kind() == io::ErrorKind::UnexpectedEof => ErrorCode::Format,
            Error::Io(_) | Error::Crypto => ErrorCode::Io,
            Error::UnknownFormat
            | Error::EmptyInput
            | Error::MalformedHeader(_)
            | Error::WorkFactorTooHigh(_)
            | Error::InvalidStanza(_)
            | Error::Armor(_) => ErrorCode::Format,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decrypt::Decryptor;

    /// No bytes at all is its own error on every way in; one byte that is not a header is still
    /// an unknown format. Both keep the code `Format`.
    #[test]
    fn an_empty_input_is_told_apart_from_an_unknown_format() {
        assert!(matches!(Decryptor::new(&b""[..]), Err(Error::EmptyInput)));
        assert!(matches!(Decryptor::from_slice(b""), Err(Error::EmptyInput)));
        assert!(matches!(crate::decrypt::decrypt(&[], b""), Err(Error::EmptyInput)));
        assert!(matches!(Decryptor::new(&b"\n"[..]), Err(Error::UnknownFormat)));
        assert!(matches!(Decryptor::from_slice(b"x\n"), Err(Error::UnknownFormat)));
        assert_eq!(Error::EmptyInput.code(), ErrorCode::Format);
        assert_eq!(Error::EmptyInput.code(), Error::UnknownFormat.code());
    }
}
