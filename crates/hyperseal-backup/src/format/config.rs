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

/// The config object's JSON. `Debug` leaves out the two keys.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// 64 hex digits only readers hold (a writer key does not): the MAC key of the reader set
    /// (`keys/`), so that a writer cannot store a set that readers then seal to. Absent in
    /// repositories made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_key: Option<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("version", &self.version)
            .field("repo", &self.repo)
            .field("chunker", &self.chunker)
            .field("compression", &self.compression)
            .finish_non_exhaustive()
    }
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
            && c.reader_key.as_deref().is_none_or(|k| crate::keys::hex32(k).is_ok())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn json(version: u32, max: u32, extra: &str) -> String {
        format!(
            r#"{{"version":{version},"repo":"{}","dedup_key":"{}","chunker":{{"algorithm":"fastcdc-2020","min":524288,"avg":1048576,"max":{max}}},"compression":"zstd"{extra}}}"#,
            "ab".repeat(16),
            "cd".repeat(32)
        )
    }

    #[test]
    fn a_config_of_this_version_reads() {
        assert_eq!(Config::decode(json(1, CHUNK_MAX, "").as_bytes()).unwrap().chunker.max, CHUNK_MAX);
    }

    #[test]
    fn debug_shows_no_key() {
        let k = format!(r#","reader_key":"{}""#, "ef".repeat(32));
        let shown = format!("{:?}", Config::decode(json(1, CHUNK_MAX, &k).as_bytes()).unwrap());
        assert!(!shown.contains("cdcd") && !shown.contains("efef") && shown.contains("abab"), "{shown}");
    }

    #[test]
    fn other_versions_unknown_fields_and_larger_chunks_are_refused() {
        assert!(Config::decode(json(2, CHUNK_MAX, "").as_bytes()).is_err());
        assert!(Config::decode(json(1, CHUNK_MAX, r#","more":1"#).as_bytes()).is_err());
        assert!(Config::decode(json(1, CHUNK_MAX + 1, "").as_bytes()).is_err());
        assert!(Config::decode(b"{}").is_err());
        assert!(Config::decode(json(1, CHUNK_MAX, r#","reader_key":"zz""#).as_bytes()).is_err());
        let k = format!(r#","reader_key":"{}""#, "ef".repeat(32));
        assert!(Config::decode(json(1, CHUNK_MAX, &k).as_bytes()).unwrap().reader_key.is_some());
    }
}
