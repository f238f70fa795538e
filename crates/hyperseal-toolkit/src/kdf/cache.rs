//! A bounded, expiring cache of derived keys.
//!
//! Password KDFs are slow on purpose; a process that re-derives the same key many times
//! (@ldesign/crypto's "same password" case) can keep the result. The cache never stores the
//! password: entries are looked up by BLAKE3 keyed with a random per-cache key over
//! `kdf ‖ params ‖ len(password) ‖ password ‖ len(salt) ‖ salt ‖ out_len`. Because the
//! hash key is random and never leaves the process, a dump of the lookup table alone does
//! not allow an offline dictionary attack on the password.
//!
//! Entries are `Zeroizing`, so eviction (capacity, TTL, `clear`, drop) wipes them.
//! A `Mutex` guards the table; derivation itself runs outside the lock so that one slow
//! Argon2id call does not stall readers of other entries.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::backend::rand::{SecureRandom, SystemRandom};
use zeroize::{Zeroize, Zeroizing};

use super::PasswordKdf;
use crate::Result;

struct Entry {
    value: Zeroizing<Vec<u8>>,
    created: Instant,
    last_used: Instant,
}

/// Thread-safe cache of password-derived keys with a capacity and a time-to-live.
pub struct DerivationCache {
    hash_key: Zeroizing<[u8; 32]>,
    capacity: usize,
    ttl: Duration,
    entries: Mutex<HashMap<[u8; 32], Entry>>,
}

impl std::fmt::Debug for DerivationCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DerivationCache")
            .field("capacity", &self.capacity)
            .field("ttl", &self.ttl)
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl Default for DerivationCache {
    /// 100 entries, 5 minutes: the figures @ldesign/crypto reports.
    fn default() -> Self {
        DerivationCache::new(100, Duration::from_secs(300))
    }
}

impl DerivationCache {
    /// A cache holding at most `capacity` entries (at least 1), each for at most `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        let mut hash_key = Zeroizing::new([0u8; 32]);
        SystemRandom::new().fill(&mut *hash_key).expect("system RNG available");
        DerivationCache { hash_key, capacity: capacity.max(1), ttl, entries: Mutex::new(HashMap::new()) }
    }

    fn lookup_key(&self, kdf: &PasswordKdf, password: &[u8], salt: &[u8], out_len: usize) -> [u8; 32] {
        let mut h = blake3::Hasher::new_keyed(&self.hash_key);
        // `Debug` of the parameter structs is a stable, unambiguous encoding of the
        // parameters; lengths prefix the variable-size fields so boundaries cannot shift.
        let params = format!("{kdf:?}");
        h.update(&(params.len() as u64).to_le_bytes());
        h.update(params.as_bytes());
        h.update(&(password.len() as u64).to_le_bytes());
        h.update(password);
        h.update(&(salt.len() as u64).to_le_bytes());
        h.update(salt);
        h.update(&(out_len as u64).to_le_bytes());
        let out = *h.finalize().as_bytes();
        // The hasher's buffer held password bytes.
        h.zeroize();
        out
    }

    /// Returns the cached key for these inputs, deriving (and caching) it on a miss.
    pub fn get_or_derive(
        &self,
        kdf: &PasswordKdf,
        password: &[u8],
        salt: &[u8],
        out_len: usize,
    ) -> Result<Zeroizing<Vec<u8>>> {
        let id = self.lookup_key(kdf, password, salt, out_len);
        let now = Instant::now();
        {
            let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            match map.get_mut(&id) {
                Some(e) if now.duration_since(e.created) < self.ttl => {
                    e.last_used = now;
                    return Ok(e.value.clone());
                }
                Some(_) => {
                    map.remove(&id);
                }
                None => {}
            }
        }
        let value = kdf.derive(password, salt, out_len)?;
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        map.retain(|_, e| now.duration_since(e.created) < self.ttl);
        while map.len() >= self.capacity {
            // Least recently used. A linear scan is fine: capacities are in the hundreds
            // and this runs only on a miss, next to a KDF call that costs milliseconds.
            let victim = map.iter().min_by_key(|(_, e)| e.last_used).map(|(k, _)| *k);
            match victim {
                Some(k) => {
                    map.remove(&k);
                }
                None => break,
            }
        }
        map.insert(id, Entry { value: value.clone(), created: now, last_used: now });
        Ok(value)
    }

    /// Number of live (possibly expired but not yet purged) entries.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops (and wipes) every entry.
    pub fn clear(&self) {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kdf::{HashFn, Pbkdf2Params};

    fn kdf() -> PasswordKdf {
        PasswordKdf::Pbkdf2(Pbkdf2Params { hash: HashFn::Sha256, iterations: 1000 })
    }

    #[test]
    fn hit_miss_capacity_ttl() {
        let c = DerivationCache::new(2, Duration::from_secs(60));
        let a = c.get_or_derive(&kdf(), b"pw", b"salt-one", 32).unwrap();
        assert_eq!(*a, *kdf().derive(b"pw", b"salt-one", 32).unwrap());
        assert_eq!(*c.get_or_derive(&kdf(), b"pw", b"salt-one", 32).unwrap(), *a);
        c.get_or_derive(&kdf(), b"pw", b"salt-two", 32).unwrap();
        c.get_or_derive(&kdf(), b"pw", b"salt-3..", 32).unwrap();
        assert_eq!(c.len(), 2);
        // Different output length is a different entry, not a prefix.
        assert_eq!(c.get_or_derive(&kdf(), b"pw", b"salt-one", 16).unwrap().len(), 16);

        let short = DerivationCache::new(4, Duration::from_millis(1));
        short.get_or_derive(&kdf(), b"pw", b"salt-one", 32).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        short.get_or_derive(&kdf(), b"pw", b"salt-two", 32).unwrap();
        assert_eq!(short.len(), 1);
        assert!(!format!("{short:?}").contains("hash_key"));
    }
}
