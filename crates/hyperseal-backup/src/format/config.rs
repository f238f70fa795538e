//! The repository's config (`config`, an age file of JSON): its parameters and the
//! deduplication key, which readers hold so that they can check chunk ids and hand a new
//! writer its key.

use serde::{Deserialize, Serialize};

use crate::error::{format, Result};

/// FastCDC (2020) sizes, as restic's: about 1 MiB chunks, never over 8 MiB.
pub const CHUNK_MIN: u32 = 512 << 10;
/// The average chunk.
pub const CHUNK_AVG: u32 = 1 << 20;
/// The largest chunk.
pub const CHUNK_MAX: u32 = super::MAX_CHUNK as u32;
/// Stored bytes a pack gathers before it is sealed.
pub const PACK_SIZE: u64 = 16 << 20;

/// The chunker's sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chunker {
    /// Always `"fastcdc-2020"`.
    pub algorithm: Algorithm,
    /// Smallest chunk (but the last of a file).
    pub min: u32,
    /// Target average.
    pub avg: u32,
    /// Largest chunk.
    pub max: u32,
}

/// The one chunking algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Algorithm {
    /// FastCDC as published in 2020, the `fastcdc` crate's `v2020`.
    #[serde(rename = "fastcdc-2020")]
    FastCdc2020,
}

/// The config object's JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Format version: 1.
    pub version: u32,
    /// The repository id, 32 hex digits.
    pub repo: String,
    /// The deduplication key, 64 hex digits.
    pub dedup_key: String,
    /// Chunker sizes.
    pub chunker: Chunker,
    /// Always `"zstd"`.
    pub compression: String,
}

impl Config {
    /// Reads the JSON and checks every field.
    pub fn decode(b: &[u8]) -> Result<Config> {
        let c: Config = serde_json::from_slice(b).map_err(|e| format(format!("config: {e}")))?;
        let k = c.chunker;
        let sane = c.version == 1
            && c.compression == "zstd"
            && crate::keys::hex16(&c.repo).is_ok()
            && crate::keys::hex32(&c.dedup_key).is_ok()
            && 64 <= k.min
            && k.min <= k.avg
            && k.avg <= k.max
            && k.max <= CHUNK_MAX;
        match sane {
            true => Ok(c),
            false => Err(format("config holds values this version does not support")),
        }
    }
}
