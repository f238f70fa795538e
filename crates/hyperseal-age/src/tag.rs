//! age's P-256 tag recipient type (`age1tag1…`, the `p256tag` stanza), on the core's tag
//! kind. The identities are in hardware (a plugin holds them); this crate encrypts to them, and
//! the core's `p256` kind opens them where the key is held in software.

use std::fmt;
use std::str::FromStr;

use age_core::format::{FileKey, Stanza};
use hyperseal::recipient::tag::TagRecipient;

use crate::{bridge, EncryptError};

/// A P-256 tag recipient (`age1tag1…`).
#[derive(Clone, PartialEq, Eq)]
pub struct Recipient(TagRecipient);

impl Recipient {
    /// The core recipient; `pq` says which of the two tag kinds the string must be.
    pub(crate) fn parse(s: &str, pq: bool) -> Result<TagRecipient, &'static str> {
        match TagRecipient::from_bech32(s) {
            Ok(r) if r.is_postquantum() == pq => Ok(r),
            _ if pq => Err("invalid Bech32 encoding of a post-quantum tag recipient"),
            _ => Err("invalid Bech32 encoding of a tag recipient"),
        }
    }
}

impl FromStr for Recipient {
    type Err = &'static str;

    /// Parses a tag recipient from a string (`age1tag1…`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s, false).map(Recipient)
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

pub mod pq {
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
}
