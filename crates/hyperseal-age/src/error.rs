//! age 0.12's error enums, variant for variant, so that callers' `match`es compile unchanged.
//! The messages are this crate's own (age's come from its translation files).

use std::collections::HashSet;
use std::{fmt, io};

#[cfg(feature = "plugin")]
pub use crate::plugin::PluginError;

/// Errors returned when converting an identity file to a recipients file.
#[derive(Debug)]
#[non_exhaustive]
pub enum IdentityFileConvertError {
    /// Writing out a recipient failed.
    FailedToWriteOutput(io::Error),
    /// The identity file holds a plugin identity, which has no recipient string of its own.
    #[cfg(feature = "plugin")]
    #[cfg_attr(docsrs, doc(cfg(feature = "plugin")))]
    IdentityFileContainsPlugin {
        /// The given identity file.
        filename: Option<String>,
        /// The name of the plugin.
        plugin_name: String,
    },
    /// The identity file holds no identities.
    NoIdentities {
        /// The given identity file.
        filename: Option<String>,
    },
}

impl fmt::Display for IdentityFileConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityFileConvertError::FailedToWriteOutput(e) => write!(f, "failed to write output: {e}"),
            #[cfg(feature = "plugin")]
            IdentityFileConvertError::IdentityFileContainsPlugin { filename, plugin_name } => write!(
                f,
                "identity file {} contains a plugin identity ({plugin_name}); use `age-plugin-{plugin_name}` to get its recipient",
                filename.as_deref().unwrap_or("(stdin)")
            ),
            IdentityFileConvertError::NoIdentities { filename } => {
                write!(f, "no identities found in {}", filename.as_deref().unwrap_or("(stdin)"))
            }
        }
    }
}

impl std::error::Error for IdentityFileConvertError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IdentityFileConvertError::FailedToWriteOutput(e) => Some(e),
            _ => None,
        }
    }
}

/// Errors that can occur while encrypting.
#[derive(Debug)]
#[non_exhaustive]
pub enum EncryptError {
    /// Decrypting passphrase-encrypted identities failed.
    EncryptedIdentities(DecryptError),
    /// The recipients declare themselves incompatible (their labels differ).
    IncompatibleRecipients {
        /// The labels of the first recipient.
        l_labels: HashSet<String>,
        /// The labels of the first recipient that did not match.
        r_labels: HashSet<String>,
    },
    /// A label of the first recipient is not a valid age "arbitrary string".
    InvalidRecipientLabels(HashSet<String>),
    /// An I/O error occurred during encryption.
    Io(io::Error),
    /// The encryptor was given no recipients.
    MissingRecipients,
    /// A passphrase recipient was mixed with other recipients.
    MixedRecipientAndPassphrase,
    /// Errors from a plugin.
    #[cfg(feature = "plugin")]
    #[cfg_attr(docsrs, doc(cfg(feature = "plugin")))]
    Plugin(Vec<PluginError>),
    /// A plugin could not be resolved.
    #[cfg(feature = "plugin")]
    #[cfg_attr(docsrs, doc(cfg(feature = "plugin")))]
    PluginResolve(crate::plugin::ResolveError),
}

impl From<io::Error> for EncryptError {
    fn from(e: io::Error) -> Self {
        EncryptError::Io(e)
    }
}

impl fmt::Display for EncryptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncryptError::EncryptedIdentities(e) => write!(f, "{e}"),
            EncryptError::IncompatibleRecipients { l_labels, r_labels } => write!(
                f,
                "incompatible recipients: labels {l_labels:?} and {r_labels:?} (a passphrase must stand alone, \
                 and post-quantum keys cannot be mixed with classic ones)"
            ),
            EncryptError::InvalidRecipientLabels(labels) => write!(f, "invalid recipient labels: {labels:?}"),
            EncryptError::Io(e) => write!(f, "{e}"),
            EncryptError::MissingRecipients => f.write_str("missing recipients"),
            EncryptError::MixedRecipientAndPassphrase => {
                f.write_str("a passphrase cannot be used together with other recipients")
            }
            #[cfg(feature = "plugin")]
            EncryptError::Plugin(errors) => write_plugin_errors(f, errors),
            #[cfg(feature = "plugin")]
            EncryptError::PluginResolve(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for EncryptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EncryptError::EncryptedIdentities(inner) => Some(inner),
            EncryptError::Io(inner) => Some(inner),
            _ => None,
        }
    }
}

/// Errors that can occur while decrypting.
#[derive(Debug)]
#[non_exhaustive]
pub enum DecryptError {
    /// The age file failed to decrypt.
    DecryptionFailed,
    /// The passphrase work factor is above the limit.
    ExcessiveWork {
        /// The work factor required to decrypt.
        required: u8,
        /// The limit (or the target for this device).
        target: u8,
    },
    /// The age header was invalid.
    InvalidHeader,
    /// The MAC in the age header was invalid.
    InvalidMac,
    /// An I/O error occurred during decryption.
    Io(io::Error),
    /// Failed to decrypt an encrypted key.
    KeyDecryptionFailed,
    /// None of the provided keys could be used to decrypt the age file.
    NoMatchingKeys,
    /// Errors from a plugin.
    #[cfg(feature = "plugin")]
    #[cfg_attr(docsrs, doc(cfg(feature = "plugin")))]
    Plugin(Vec<PluginError>),
    /// A plugin could not be resolved.
    #[cfg(feature = "plugin")]
    #[cfg_attr(docsrs, doc(cfg(feature = "plugin")))]
    PluginResolve(crate::plugin::ResolveError),
    /// An unknown age format, probably from a newer version.
    UnknownFormat,
}

impl Clone for DecryptError {
    // io::Error is not Clone: a clone keeps its kind and message.
    fn clone(&self) -> Self {
        match self {
            Self::DecryptionFailed => Self::DecryptionFailed,
            Self::ExcessiveWork { required, target } => {
                Self::ExcessiveWork { required: *required, target: *target }
            }
            Self::InvalidHeader => Self::InvalidHeader,
            Self::InvalidMac => Self::InvalidMac,
            Self::Io(e) => Self::Io(io::Error::new(e.kind(), e.to_string())),
            Self::KeyDecryptionFailed => Self::KeyDecryptionFailed,
            Self::NoMatchingKeys => Self::NoMatchingKeys,
            #[cfg(feature = "plugin")]
            Self::Plugin(e) => Self::Plugin(e.clone()),
            #[cfg(feature = "plugin")]
            Self::PluginResolve(e) => Self::PluginResolve(e.clone()),
            Self::UnknownFormat => Self::UnknownFormat,
        }
    }
}

impl From<io::Error> for DecryptError {
    fn from(e: io::Error) -> Self {
        DecryptError::Io(e)
    }
}

impl fmt::Display for DecryptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecryptError::DecryptionFailed => f.write_str("decryption failed"),
            DecryptError::ExcessiveWork { required, target } => write!(
                f,
                "excessive work parameter for passphrase (requires work factor {required}, the limit is {target})"
            ),
            DecryptError::InvalidHeader => f.write_str("header is invalid"),
            DecryptError::InvalidMac => f.write_str("header MAC is invalid"),
            DecryptError::Io(e) => write!(f, "{e}"),
            DecryptError::KeyDecryptionFailed => f.write_str("failed to decrypt an encrypted key"),
            DecryptError::NoMatchingKeys => f.write_str("no matching keys found"),
            #[cfg(feature = "plugin")]
            DecryptError::Plugin(errors) => write_plugin_errors(f, errors),
            #[cfg(feature = "plugin")]
            DecryptError::PluginResolve(e) => write!(f, "{e}"),
            DecryptError::UnknownFormat => f.write_str("unknown age format (from a newer version?)"),
        }
    }
}

impl std::error::Error for DecryptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DecryptError::Io(inner) => Some(inner),
            _ => None,
        }
    }
}

#[cfg(feature = "plugin")]
fn write_plugin_errors(f: &mut fmt::Formatter<'_>, errors: &[PluginError]) -> fmt::Result {
    for (i, e) in errors.iter().enumerate() {
        if i > 0 {
            writeln!(f)?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}
