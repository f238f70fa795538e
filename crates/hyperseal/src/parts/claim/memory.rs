//! A claim store in one process's memory, for drivers whose every sealed part passes through
//! that process before it is released: the browser's worker pool (the page joins the parts),
//! a Python `PartKey` sealing in its own process. Records live as long as the store; one store
//! serves one key (names repeat between keys).
//!
//! Workers that run in other instances (a WebAssembly instance per browser worker) cannot reach
//! this store while they seal, so they send the record of what they sealed
//! ([`PartKey::part_claim`]) with the sealed bytes, and the process that owns the store settles
//! it ([`PartKey::settle_carried`]) before it lets the bytes go.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{Claim, ClaimStore, What};
use crate::error::Error;
use crate::parts::PartKey;

/// Claims in memory: "create only if new" under a lock. Its `Debug` shows how many records it
/// holds, not the records.
#[derive(Default)]
pub struct MemoryClaims {
    records: Mutex<HashMap<String, Vec<u8>>>,
}

impl MemoryClaims {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<u8>>> {
        // A panic elsewhere while the lock was held cannot leave a half-made record (an insert
        // is one step), so the map is still sound.
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for MemoryClaims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemoryClaims({} records)", self.len())
    }
}

impl ClaimStore for MemoryClaims {
    fn put_new(&self, name: &str, record: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let mut map = self.lock();
        if let Some(existing) = map.get(name) {
            return Ok(Some(existing.clone()));
        }
        map.insert(name.to_string(), record.to_vec());
        Ok(None)
    }
}

impl PartKey {
    /// Settles in `store` the plan of `part_size` bytes per part and the part at chunk
    /// `first_chunk`, sealed by another worker that sent `record`, the
    /// [`part_claim`](Self::part_claim) of its sealed bytes. Call it before those bytes leave
    /// memory you own; an error means they must be discarded (this key's nonces already sealed
    /// other bytes, or the part is not one of the plan).
    pub fn settle_carried(
        &self,
        store: &dyn ClaimStore,
        part_size: u64,
        first_chunk: u64,
        record: &[u8],
    ) -> Result<(), Error> {
        self.part_of_plan(part_size, first_chunk)?;
        let record = <[u8; 32]>::try_from(record)
            .map_err(|_| Error::InvalidArgument(format!("a part claim is 32 bytes, not {}", record.len())))?;
        self.plan_claim(part_size)?.settle(store)?;
        let claim = Claim { name: format!("part-{first_chunk:020}"), record, what: What::Part(first_chunk) };
        claim.settle(store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encrypt::Options;
    use crate::recipient::{self, Kind, Recipient};

    const CHUNK: usize = 16 << 10;

    fn key(len: usize) -> PartKey {
        let id = recipient::generate(Kind::X25519).unwrap();
        let to: Vec<Box<dyn Recipient>> = vec![recipient::parse_recipient(&id.public).unwrap()];
        let opts = Options { chunk_size: CHUNK, ..Options::default() };
        PartKey::seal_new(&to, opts, len as u64).unwrap().1
    }

    #[test]
    fn one_part_index_seals_one_plaintext() {
        let (key, store, size) = (key(3 * CHUNK), MemoryClaims::new(), 2 * CHUNK as u64);
        let a = vec![1u8; 2 * CHUNK];
        let sealed = key.seal_claimed(&store, size, 0, &a).unwrap();
        assert_eq!(key.seal_claimed(&store, size, 0, &a).unwrap(), sealed, "the same bytes pass");
        let err = key.seal_claimed(&store, size, 0, &vec![2u8; 2 * CHUNK]).unwrap_err();
        assert!(err.to_string().contains("reuse a nonce"), "{err}");
        assert_eq!(store.len(), 2, "the plan and one part");
        assert_eq!(format!("{store:?}"), "MemoryClaims(2 records)");
    }

    #[test]
    fn two_threads_racing_for_a_part_leave_one_record() {
        let (key, store, size) = (key(2 * CHUNK), MemoryClaims::new(), 2 * CHUNK as u64);
        let won = std::thread::scope(|s| {
            let runs: Vec<_> = (0..4u8)
                .map(|i| {
                    let (key, store) = (&key, &store);
                    s.spawn(move || key.seal_claimed(store, size, 0, &vec![i; 2 * CHUNK]).is_ok())
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).filter(|&ok| ok).count()
        });
        assert_eq!(won, 1);
    }

    #[test]
    fn carried_records_settle_as_the_workers_own() {
        let (key, size) = (key(4 * CHUNK + 7), 2 * CHUNK as u64);
        let store = MemoryClaims::new();
        // A worker seals and sends the record; the driver settles it.
        let pt = vec![5u8; 2 * CHUNK];
        let sealed = key.seal(2, &pt).unwrap();
        let record = key.part_claim(size, 2, &sealed).unwrap().record().to_vec();
        key.settle_carried(&store, size, 2, &record).unwrap();
        key.settle_carried(&store, size, 2, &record).unwrap();
        // The same part sealed here with the same bytes agrees with the carried record.
        assert_eq!(key.seal_claimed(&store, size, 2, &pt).unwrap(), sealed);
        // Other bytes, carried or sealed here, are refused.
        let other = key.part_claim(size, 2, &key.seal(2, &vec![6u8; 2 * CHUNK]).unwrap()).unwrap();
        let err = key.settle_carried(&store, size, 2, other.record()).unwrap_err();
        assert!(err.to_string().contains("reuse a nonce"), "{err}");
        assert!(key.seal_claimed(&store, size, 2, &vec![6u8; 2 * CHUNK]).is_err());
        // Not a part of the plan, not a record, another plan: refused before anything is stored.
        assert!(key.settle_carried(&store, size, 1, &record).is_err());
        assert!(key.settle_carried(&store, size, 0, &record[..31]).is_err());
        let err = key.settle_carried(&store, CHUNK as u64, 3, &record).unwrap_err();
        assert!(err.to_string().contains("another part size"), "{err}");
        assert_eq!(store.len(), 2);
    }
}
