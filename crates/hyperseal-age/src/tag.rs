//! age's P-256 tag recipient type (`age1tag1…`, the `p256tag` stanza), on the core's tag
//! kind. The identities are in hardware (a plugin holds them); this crate encrypts to them, and
//! the core's `p256` kind opens them where the key is held in software.

use std::str::FromStr;

use hyperseal::recipient::tag::TagRecipient;

use crate::bridge;

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

bridge::native_recipient!(Recipient);

pub mod pq {
    //! age's post-quantum tag recipient type (`age1tagpq1…`, ML-KEM-768 + P-256), on the core's tag
    //! kind; as with [`tag`](crate::tag), the identities are a plugin's or the core's.

    use std::str::FromStr;

    use hyperseal::recipient::tag::TagRecipient;

    use crate::bridge;

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

    bridge::native_recipient!(Recipient);
}
