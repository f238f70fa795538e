//! age's post-quantum tag recipient type (`age1tagpq1…`, ML-KEM-768 + P-256), on the core's tag
//! kind; as with [`tag`](crate::tag), the identities are a plugin's or the core's.

use std::fmt;
use std::str::FromStr;

use age_core::format::{FileKey, Stanza};
use hyperseal::recipient::tag::TagRecipient;

use crate::{bridge, EncryptError};

/// A post-quantum tag recipient (`age1tagpq1…`).
#[derive(Clone, PartialEq, Eq)]
pub struct Recipient(TagRecipient);

impl FromStr for Recipient {
    type Err = &'static str;

    /// Parses a tag recipient from a string (`age1tagpq1…`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::tag::Recipient::parse(s, true).map(Recipient)
    }
}

impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_bech32())
    }
}

impl fmt::Debug for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl crate::Recipient for Recipient {
    fn wrap_file_key(
        &self,
        file_key: &FileKey,
    ) -> Result<(Vec<Stanza>, std::collections::HashSet<String>), EncryptError> {
        bridge::wrap_with(&self.0, file_key)
    }
}
