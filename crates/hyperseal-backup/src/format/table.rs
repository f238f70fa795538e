//! The chunk table: which chunk lies where. One codec serves a pack's clear id list
//! (`data/NAME.ids`, one pack), an index (`index/NAME`, age) and its clear copy
//! (`index/NAME.ids`). Layout, all integers big-endian:
//!
//! ```text
//! "HSBKTBL1"                      8 bytes
//! P: u32, then P pack names       16 bytes each
//! N: u32, then N entries          52 bytes each:
//!   id [32] | pack u32 (< P) | offset u64 | stored u32 | raw u32
//! ```
//!
//! `offset` and `stored` place the chunk's zstd frame in the pack's plaintext; `raw` is its
//! length once decompressed (at most the chunker's maximum), and `stored` at most zstd's bound
//! for that ([`super::MAX_STORED`]).

use crate::error::{format, Result};
use crate::keys::ChunkId;

const MAGIC: &[u8; 8] = b"HSBKTBL1";
const ENTRY: usize = 52;
/// Most packs one table names.
pub const MAX_PACKS: usize = 1 << 16;
/// Most entries one table holds (~200 MiB of table; far more than one index needs).
pub const MAX_ENTRIES: usize = 1 << 20;

/// Where one chunk lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The chunk's id.
    pub id: ChunkId,
    /// The pack's name (16 bytes; `data/` + hex of it is the object).
    pub pack: [u8; 16],
    /// Offset of its zstd frame in the pack's plaintext.
    pub offset: u64,
    /// Length of the frame.
    pub stored: u32,
    /// Length once decompressed.
    pub raw: u32,
}

/// A table: entries grouped by the packs they lie in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// The entries (in the order written).
    pub entries: Vec<Entry>,
}

impl Table {
    /// The packs this table names, first-seen order.
    pub fn packs(&self) -> Vec<[u8; 16]> {
        let mut packs: Vec<[u8; 16]> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for e in &self.entries {
            if seen.insert(e.pack) {
                packs.push(e.pack);
            }
        }
        packs
    }

    /// The bytes. Fails past the bounds, so a writer never writes a table its readers refuse.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let packs = self.packs();
        if packs.len() > MAX_PACKS || self.entries.len() > MAX_ENTRIES {
            return Err(format("chunk table over its bounds"));
        }
        let ordinal: std::collections::HashMap<[u8; 16], u32> =
            packs.iter().enumerate().map(|(i, p)| (*p, i as u32)).collect();
        let mut out = Vec::with_capacity(16 + packs.len() * 16 + self.entries.len() * ENTRY);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(packs.len() as u32).to_be_bytes());
        packs.iter().for_each(|p| out.extend_from_slice(p));
        out.extend_from_slice(&(self.entries.len() as u32).to_be_bytes());
        for e in &self.entries {
            out.extend_from_slice(&e.id.0);
            out.extend_from_slice(&ordinal[&e.pack].to_be_bytes());
            out.extend_from_slice(&e.offset.to_be_bytes());
            out.extend_from_slice(&e.stored.to_be_bytes());
            out.extend_from_slice(&e.raw.to_be_bytes());
        }
        Ok(out)
    }

    /// Reads a table; the length must be exactly what the counts say.
    pub fn decode(b: &[u8]) -> Result<Table> {
        let bad = || format("damaged chunk table");
        if b.len() < 16 || &b[..8] != MAGIC {
            return Err(bad());
        }
        let p = u32::from_be_bytes(b[8..12].try_into().unwrap()) as usize;
        if p > MAX_PACKS || b.len() < 16 + p * 16 {
            return Err(bad());
        }
        let packs: Vec<[u8; 16]> = b[12..12 + p * 16].chunks(16).map(|c| c.try_into().unwrap()).collect();
        let at = 12 + p * 16;
        let n = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        if n > MAX_ENTRIES || b.len() != at + 4 + n * ENTRY {
            return Err(bad());
        }
        let mut entries = Vec::with_capacity(n);
        for r in b[at + 4..].chunks(ENTRY) {
            let pack =
                *packs.get(u32::from_be_bytes(r[32..36].try_into().unwrap()) as usize).ok_or_else(bad)?;
            let e = Entry {
                id: ChunkId(r[..32].try_into().unwrap()),
                pack,
                offset: u64::from_be_bytes(r[36..44].try_into().unwrap()),
                stored: u32::from_be_bytes(r[44..48].try_into().unwrap()),
                raw: u32::from_be_bytes(r[48..52].try_into().unwrap()),
            };
            if e.raw as usize > super::MAX_CHUNK
                || e.stored as usize > super::MAX_STORED
                || e.offset.checked_add(e.stored as u64).is_none()
            {
                return Err(bad());
            }
            entries.push(e);
        }
        Ok(Table { entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let e = |i: u8, p: u8| Entry {
            id: ChunkId([i; 32]),
            pack: [p; 16],
            offset: i as u64 * 10,
            stored: 10,
            raw: 20,
        };
        Table { entries: vec![e(1, 7), e(2, 7), e(3, 9)] }
    }

    #[test]
    fn round_trip() {
        let t = sample();
        assert_eq!(Table::decode(&t.encode().unwrap()).unwrap(), t);
    }

    #[test]
    fn every_cut_and_extension_is_refused() {
        let b = sample().encode().unwrap();
        for n in 0..b.len() {
            assert!(Table::decode(&b[..n]).is_err(), "cut at {n}");
        }
        let mut long = b.clone();
        long.push(0);
        assert!(Table::decode(&long).is_err());
    }

    #[test]
    fn counts_past_the_bounds_allocate_nothing() {
        let mut b = sample().encode().unwrap();
        b[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(Table::decode(&b).is_err());
        let mut b = sample().encode().unwrap();
        let at = 12 + 2 * 16;
        b[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(Table::decode(&b).is_err());
    }

    #[test]
    fn a_stored_length_past_zstd_s_bound_is_refused() {
        let mut t = sample();
        t.entries[0].stored = (crate::format::MAX_STORED + 1) as u32;
        assert!(Table::decode(&t.encode().unwrap()).is_err());
    }

    #[test]
    fn a_pack_ordinal_out_of_range_is_refused() {
        let mut b = sample().encode().unwrap();
        let at = 12 + 2 * 16 + 4 + 32;
        b[at..at + 4].copy_from_slice(&5u32.to_be_bytes());
        assert!(Table::decode(&b).is_err());
    }
}
