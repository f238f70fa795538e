//! Re-keying: change who can open a file without touching its payload.
//!
//! In both profiles the payload depends only on the file key and the payload salt (FORMAT.md
//! §5): no associated data binds the header. So a new header that wraps the *same* file key to
//! another recipient set, with a MAC computed over exactly the bytes written, leaves every
//! payload byte valid. [`Rekey::open`] recovers the file key with an identity the caller holds
//! (the header MAC is verified before anything else), [`Rekey::rewrap`] builds the new stanza
//! list and [`Rekey::encode`] the new header; the file key is used for nothing else and never
//! leaves this type.
//!
//! Removal is not revocation: a removed recipient can still open every old copy of the file, and
//! may have kept the file key, which opens this one too. [`Plan::removed`] says when that
//! applies; only a rotation (a fresh file key: a full re-encryption) protects what is written
//! from then on.
//!
//! The rules of the format hold as at encryption:
//! - a passphrase stanza stands alone, so moving between a passphrase and recipients is a
//!   [`Change::set`], never an edit;
//! - a post-quantum file is not silently downgraded: recipients must carry the labels of the
//!   stanzas already there (age's rule against mixing);
//! - X25519 and post-quantum stanzas do not say whom they are for, so only kinds whose stanzas
//!   carry a key tag (SSH, RSA-OAEP, age's tag kinds) can be removed by name; anything else is
//!   removed by giving the full new list;
//! - an edit keeps every other stanza byte for byte (plugin stanzas of kinds this build cannot
//!   re-create included); a set rebuilds the list, dropping everything else;
//! - slack stanzas ([`SLACK_TYPE`]) are dropped and made again to fill the old length.

#[cfg(all(feature = "fs", any(unix, windows)))]
mod beneath;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod file;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod guard;
mod header;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod journal;
#[cfg(all(feature = "fs", any(unix, windows)))]
pub mod kit;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod manifest;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod rotate;
#[cfg(test)]
mod tests;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod tree;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod unlock;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod walk;

pub use crate::error::Outcome;
pub use crate::format::slack::{slack_for, SLACK_TYPE};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use file::{old_copy_path, recover, rekey_file, FileOptions, Report, Written};
pub use header::{rekey_head, Change, Plan, Rekey};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use journal::{journal_path, settled_head, Recovered};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use manifest::MANIFEST_NAME;
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use rotate::rotate_file;
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use tree::{looks_encrypted_head, rekey_tree, TreeOptions, TreeOutcome, TreeReport};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use walk::{glob_match, selected_by};
