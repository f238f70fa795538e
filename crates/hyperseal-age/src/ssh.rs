//! SSH keys as age recipients and identities (`ssh` feature): `ssh-ed25519` and `ssh-rsa`
//! public key lines, and OpenSSH and PEM private keys, over the core's SSH kinds (their
//! parsers, bcrypt-encrypted keys and stanzas are the core's).
//!
//! age's `Recipient` and `Identity` here are enums over its own key types; these are structs
//! with the same constructors, traits and error type.

use std::collections::HashSet;
use std::fmt;
use std::io::{self, BufRead};
use std::sync::Arc;

use age_core::format::{FileKey, Stanza};
use hyperseal::recipient as core;
use zeroize::Zeroizing;

use crate::{bridge, Callbacks, DecryptError, EncryptError};

/// Error conditions when parsing an SSH recipient.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseRecipientKeyError {
    /// A value that parses but should be skipped (kept for age's signature; not returned).
    Ignore,
    /// The string is not a valid SSH recipient.
    Invalid(&'static str),
    /// An `ssh-rsa` key with a modulus larger than supported.
    RsaModulusTooLarge,
    /// A weak `ssh-rsa` key (under 2048 bits).
    RsaModulusTooSmall,
    /// An SSH key type that cannot be an age recipient.
    Unsupported(String),
}

/// An SSH public key (`ssh-ed25519 …` or `ssh-rsa …`) as a recipient.
pub struct Recipient {
    line: String,
    inner: Box<dyn hyperseal::Recipient>,
}

impl std::str::FromStr for Recipient {
    type Err = ParseRecipientKeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let line = s.trim();
        match core::ssh::parse_recipient(line) {
            Ok(inner) => Ok(Recipient { line: line.to_string(), inner }),
            Err(e) => {
                let why = e.to_string();
                let key_type = line.split_whitespace().next().unwrap_or_default();
                Err(if why.contains("cannot be an age recipient") {
                    ParseRecipientKeyError::Unsupported(key_type.to_string())
                } else if why.contains("2048") || why.contains("too small") {
                    ParseRecipientKeyError::RsaModulusTooSmall
                } else if why.contains("too large") {
                    ParseRecipientKeyError::RsaModulusTooLarge
                } else {
                    ParseRecipientKeyError::Invalid("invalid SSH recipient")
                })
            }
        }
    }
}

impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)
    }
}

impl crate::Recipient for Recipient {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, HashSet<String>), EncryptError> {
        bridge::wrap_with(self.inner.as_ref(), file_key)
    }
}

/// An SSH private key (OpenSSH or PEM, encrypted or not) as an identity.
pub struct Identity {
    text: Zeroizing<String>,
    filename: Option<String>,
    /// Parsed without callbacks: an encrypted key among them cannot open a stanza.
    parsed: bridge::CoreIdentities,
}

impl Identity {
    /// Parses an SSH private key from a buffered input. A passphrase-protected key stays
    /// encrypted until [`with_callbacks`](Identity::with_callbacks) can ask for its passphrase.
    pub fn from_buffer<R: BufRead>(mut data: R, filename: Option<String>) -> io::Result<Self> {
        let mut text = Zeroizing::new(String::new());
        data.read_to_string(&mut text)?;
        // Parsed now, so that a file that is no key fails here, as age's does.
        let no: Arc<dyn hyperseal::recipient::Callbacks> = Arc::new(core::NoCallbacks);
        let parsed = core::parse_identities_with(&text, no)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok(Identity { text, filename, parsed: bridge::CoreIdentities(parsed) })
    }

    /// This identity with callbacks to ask a passphrase-protected key's passphrase.
    pub fn with_callbacks<C: Callbacks>(self, callbacks: C) -> impl crate::Identity {
        let asks: Arc<dyn hyperseal::recipient::Callbacks> =
            Arc::new(bridge::Asks { callbacks, plugins: false });
        // The text parsed once already; with these callbacks it parses the same way.
        let parsed = core::parse_identities_with(&self.text, asks).unwrap_or_default();
        bridge::CoreIdentities(parsed)
    }

    /// The file this key was read from, if any.
    pub fn filename(&self) -> Option<&str> {
        self.filename.as_deref()
    }
}

impl crate::Identity for Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>> {
        crate::Identity::unwrap_stanza(&self.parsed, stanza)
    }
}
