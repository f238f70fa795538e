//! The writer key file and chunk ids.
//!
//! A writer key holds the repository id, the deduplication key and the recipients: enough to
//! add objects, nothing that opens one. Its text form (docs/BACKUP.md, "Writer key"):
//!
//! ```text
//! # hyperseal backup writer key: recipients and a deduplication key, no identity
//! hyperseal-backup-writer-v1
//! repo 0123…(32 hex)
//! dedup 89ab…(64 hex)
//! recipient age1pq1…
//! ```

use std::fmt;

use std::sync::Arc;

use hyperseal::recipient::plugin::Plugins;
use hyperseal::recipient::{self, Recipient};
use zeroize::Zeroizing;

use crate::error::{format, Result};

/// First line (after comments) of a writer key file.
const MAGIC: &str = "hyperseal-backup-writer-v1";
/// Most bytes of a writer key file: many post-quantum recipients fit (each ~2 KiB).
pub const MAX_WRITER_KEY: usize = 1 << 20;
/// Most recipients a writer key (and so every object's header) may name.
const MAX_RECIPIENTS: usize = 256;

/// A chunk's id: BLAKE3 keyed with the repository's deduplication key, over the plaintext.
/// Keyed, so that without the key nobody can test whether the repository holds a known chunk.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkId(pub [u8; 32]);

impl ChunkId {
    /// The id of `data` under `key`.
    pub fn of(key: &[u8; 32], data: &[u8]) -> ChunkId {
        ChunkId(*blake3::keyed_hash(key, data).as_bytes())
    }

    /// From 64 hex digits.
    pub fn parse(s: &str) -> Result<ChunkId> {
        let mut id = [0u8; 32];
        hex::decode_to_slice(s, &mut id).map_err(|_| format(format!("bad chunk id {s:?}")))?;
        Ok(ChunkId(id))
    }
}

impl fmt::Display for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChunkId({self})")
    }
}

/// What a writer holds. `Debug` hides the deduplication key.
pub struct WriterKey {
    /// The repository's id (16 bytes), so a key is not used on another repository by mistake.
    pub repo_id: [u8; 16],
    /// The deduplication key: secret, as it lets anyone test for known chunks.
    pub dedup_key: Zeroizing<[u8; 32]>,
    /// Recipient strings, as `hyperseal::recipient::parse_recipient` reads them.
    pub recipients: Vec<String>,
}

impl fmt::Debug for WriterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WriterKey(repo {}, {} recipients)", hex::encode(self.repo_id), self.recipients.len())
    }
}

impl WriterKey {
    /// The file's text.
    pub fn encode(&self) -> Zeroizing<String> {
        let mut s = format!(
            "# hyperseal backup writer key: recipients and a deduplication key, no identity\n{MAGIC}\nrepo {}\ndedup {}\n",
            hex::encode(self.repo_id),
            hex::encode(*self.dedup_key)
        );
        for r in &self.recipients {
            s.push_str(&format!("recipient {r}\n"));
        }
        Zeroizing::new(s)
    }

    /// Reads a writer key file's text; every field bounded, unknown lines refused.
    pub fn parse(text: &str) -> Result<WriterKey> {
        if text.len() > MAX_WRITER_KEY {
            return Err(format("writer key file is too large"));
        }
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        if lines.next() != Some(MAGIC) {
            return Err(format(format!("not a writer key (first line is not {MAGIC})")));
        }
        let (mut repo, mut dedup, mut recipients) = (None, None, Vec::new());
        for line in lines {
            let (k, v) = line.split_once(' ').ok_or_else(|| format("bad line in writer key"))?;
            match k {
                "repo" => repo = Some(hex16(v)?),
                "dedup" => dedup = Some(hex32(v)?),
                "recipient" if recipients.len() < MAX_RECIPIENTS => recipients.push(v.to_string()),
                _ => return Err(format(format!("unknown or extra line {k:?} in writer key"))),
            }
        }
        let (Some(repo_id), Some(dedup)) = (repo, dedup) else {
            return Err(format("writer key lacks its repo or dedup line"));
        };
        if recipients.is_empty() {
            return Err(format("writer key names no recipient"));
        }
        Ok(WriterKey { repo_id, dedup_key: Zeroizing::new(dedup), recipients })
    }

    /// The recipients, parsed; plugin recipients only where `plugins` allows them to run.
    pub fn parsed_recipients(&self, plugins: Plugins) -> Result<Vec<Box<dyn Recipient>>> {
        parse_recipients(&self.recipients, plugins)
    }
}

/// Recipient strings, parsed. Whether a plugin's (`age1NAME1…`, which runs `age-plugin-NAME`)
/// may be used is the caller's to say: the library refuses them unless told.
pub(crate) fn parse_recipients(list: &[String], plugins: Plugins) -> Result<Vec<Box<dyn Recipient>>> {
    let policy: Arc<Plugins> = Arc::new(plugins);
    Ok(list
        .iter()
        .map(|r| recipient::parse_recipient_with(r, policy.clone()))
        .collect::<std::result::Result<_, _>>()?)
}

/// A reader set's tag (`keys/SERIAL-TAG`): keyed BLAKE3 of the recipient strings under the
/// deduplication key, 16 bytes in hex. A writer compares it with its own key's set; without
/// the key, the name says nothing about who the readers are.
pub(crate) fn set_tag(dedup_key: &[u8; 32], recipients: &[String]) -> String {
    let mut h = blake3::Hasher::new_keyed(dedup_key);
    h.update(b"hyperseal backup v1 reader set tag\0");
    for r in recipients {
        h.update(&(r.len() as u64).to_be_bytes());
        h.update(r.as_bytes());
    }
    hex::encode(&h.finalize().as_bytes()[..16])
}

pub(crate) fn hex16(s: &str) -> Result<[u8; 16]> {
    let mut b = [0u8; 16];
    hex::decode_to_slice(s.trim(), &mut b).map_err(|_| format("expected 32 hex digits"))?;
    Ok(b)
}

pub(crate) fn hex32(s: &str) -> Result<[u8; 32]> {
    let mut b = [0u8; 32];
    hex::decode_to_slice(s.trim(), &mut b).map_err(|_| format("expected 64 hex digits"))?;
    Ok(b)
}

/// 16 random bytes in hex: every object name the writer picks. Random, so that two writers
/// never pick the same name and a name says nothing about the content.
pub fn random_name() -> String {
    hex::encode(random_id())
}

/// 16 random bytes (see [`random_name`]).
pub fn random_id() -> [u8; 16] {
    let mut b = [0u8; 16];
    hyperseal::fill_random(&mut b).expect("the system random source failed");
    b
}
