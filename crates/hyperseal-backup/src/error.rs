//! One small error type: the CLI turns each kind into a message, a hint and an exit status.

use std::io;

/// What went wrong, by kind: the CLI picks its exit status and hint from the kind.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed (a file system or network error).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The encryption layer refused (no identity matched, a damaged object, bad recipients).
    #[error("{0}")]
    Crypto(#[from] hyperseal::Error),
    /// An object or key file is not what this format allows (bounds included).
    #[error("{0}")]
    Format(String),
    /// A name the caller gave (a snapshot, an object) is not there, or is ambiguous.
    #[error("{0}")]
    NotFound(String),
    /// Another run holds the repository (a prune's lock, or a backup still running).
    #[error("{0}")]
    Locked(String),
    /// A restore or a backup met something it refuses to touch (an unsafe name, an existing
    /// file without overwrite).
    #[error("{0}")]
    Refused(String),
    /// `check` found damage; the string says how many problems.
    #[error("{0}")]
    Damaged(String),
    /// The run was stopped on purpose (a test's simulated kill).
    #[error("interrupted")]
    Interrupted,
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn format(msg: impl Into<String>) -> Error {
    Error::Format(msg.into())
}
