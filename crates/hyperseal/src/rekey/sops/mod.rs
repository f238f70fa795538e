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

mod datakey;
mod dotenv;
mod ini;
mod json;
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
mod yaml;

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

/// How sops stores the file, as it picks it from the name (binary files are JSON-wrapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.yaml`, `.yml`.
    Yaml,
    /// `.json`, and every other name (sops's binary store is JSON).
    Json,
    /// `.env`.
    Dotenv,
    /// `.ini`.
    Ini,
}

impl Format {
    /// The format sops reads a file of this name as.
    pub fn for_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("yaml" | "yml") => Format::Yaml,
            Some("env") => Format::Dotenv,
            Some("ini") => Format::Ini,
            _ => Format::Json,
        }
    }
}

/// Whether `input` carries sops metadata at all (a folder walk skips files that do not, and
/// fails those that do but cannot be read). A YAML or JSON file whose `sops` member is not a
/// mapping (`sops: a note`) has none: sops metadata is always one. A file that does not parse
/// is sorted by its bytes (a `sops` key in it), so a damaged sops file is still one, and
/// [`rekey`] says what is wrong with it.
pub fn looks_like_sops(input: &[u8], format: Format) -> bool {
    let has = |needle: &[u8]| input.windows(needle.len()).any(|w| w == needle);
    let text = std::str::from_utf8(input).ok().filter(|_| input.len() <= MAX_FILE);
    match format {
        Format::Yaml => match text.and_then(yaml::has_metadata) {
            Some(found) => found,
            None => input.starts_with(b"sops:") || has(b"\nsops:"),
        },
        Format::Json => match text.and_then(json::Json::has_metadata) {
            Some(found) => found,
            None => has(b"\"sops\""),
        },
        Format::Dotenv => input.starts_with(b"sops_") || has(b"\nsops_"),
        Format::Ini => has(b"[sops]"),
    }
}
