//! sops files re-keyed in place: only the age entries of the `sops` metadata change.
//!
//! A sops file keeps its values encrypted under a data key (AES-256-GCM per value, the `mac`
//! over the plaintext). Each key source wraps that data key, or with several key groups the
//! group's Shamir share: an age entry is a `recipient` and an `enc`, an armored age file whose
//! plaintext is the key or share. Changing who can open the file is then: open one `enc` of a
//! group with an identity the caller holds, write one new armored age file per new recipient
//! (exactly as sops does: one recipient per file, age's armor), and drop the entries of the
//! recipients removed. Values, `mac`, `lastmodified`, comments, key order and every other key
//! source stay byte for byte: each format's module finds the age entries with a parser that
//! knows positions and replaces those byte ranges only.
//!
//! Where this differs from `sops updatekeys`: sops re-emits the whole file, re-wraps every key
//! (so every `enc` changes) and with several groups splits the data key again, which needs every
//! other key source (PGP, KMS) to wrap its new share. Here an unchanged entry stays as it was and
//! each group keeps its share, so PGP or KMS entries stay valid untouched. The result is what
//! `sops updatekeys` would accept as up to date (it compares the recipient sets per group).
//!
//! Removal is not revocation: a removed recipient may have kept the data key, which opens
//! every value of this file and of its history.
//!
//! Where things are:
//! - `formats/`: one file per sops store (`yaml.rs`, `json.rs` with binary files, `dotenv.rs`,
//!   `ini.rs`), each whole: the file names sops reads as it, how a sops file of it is recognised,
//!   its layout (where the metadata and age entries are, and the edits of a new age list) and
//!   its values. `formats/mod.rs` has the [`Format`] enum and the one dispatch to a format, a
//!   `Store` trait; no other file matches on a format. **Adding a sops format means one new file
//!   in `formats/` and one enum arm** (a line of the `formats!` list, which declares the module
//!   and the variant); the compiler then asks that file for every answer a format owes.
//! - `model.rs`: the metadata as the formats find it (key groups, age entries with their bytes,
//!   other key sources), the outcome of one file, the limits.
//! - `rekey.rs`: the re-key of one file: each group's new age list, the lock-out guard, the edits
//!   applied. `rotate.rs`: `--rotate`, a fresh data key and every value sealed again.
//! - `datakey.rs`: the data key opened from an `enc`, wrapped for a recipient, combined from
//!   Shamir shares (`shamir.rs`); `values.rs`: sops's value cipher, its walk paths and `mac`.
//! - `target.rs`: the target a frontend names; `rules.rs`: `.sops.yaml`; `tree.rs`: files and
//!   folders, in windows run by the library's round driver (`hyperseal::unlock::in_windows`);
//!   `unlock.rs`: one unlock per window of files.

mod datakey;
mod formats;
mod model;
mod rekey;
mod rotate;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod rules;
mod shamir;
mod target;
#[cfg(test)]
mod tests;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod tree;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod unlock;
mod values;

pub use formats::{looks_like_sops, Format};
pub use model::{source_name, SopsOutcome, MAX_ENC, MAX_ENTRIES, MAX_FILE, MAX_GROUPS};
pub use rekey::{rekey, rekey_with, ReadRecipient};
pub use rotate::{rotate, rotate_with};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use rules::{find_config, Rule, Rules, CONFIG_NAME};
pub use target::{Target, TargetGroup};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use tree::{rekey_files, FileOutcome, FilesOptions, FilesReport, ReadRecipientSync, MAX_FILES};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use unlock::unlock;
