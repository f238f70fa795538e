//! `KeyCache`: the last few parsed keys, found again by their text without keeping that text.
//!
//! The bindings are called with the same few key strings over and over, and parsing is not free
//! (a hybrid identity expands its seed into ML-KEM keys, an RSA PEM is validated, a token key
//! line derives and schedules keys). Keying a cache by the secret text itself and comparing with
//! `==` would keep a copy of every secret and compare in time that depends on it; here an entry is keyed by HMAC-SHA-256 of the text under a random
//! per-process key, and every entry is compared in constant time: the cache holds no key text,
//! and how long a lookup scans does not depend on any key's bytes or on which entry matched.
//!
//! What its timing does reveal: a hit returns the parsed key at once, a miss parses it (from
//! microseconds for X25519 to milliseconds for RSA), so whoever can time calls and choose the
//! text learns whether that exact text was used recently — membership, never the bytes of a key
//! (guessing a key that way is guessing the whole key). A process that must not reveal even that
//! can [`clear`](KeyCache::clear) the cache, or not use one.

use std::sync::{Mutex, MutexGuard, OnceLock};

use subtle::ConstantTimeEq;

use crate::crypto::hmac_sha256;

/// Entries per cache; few, so a linear scan is the fastest lookup.
const SLOTS: usize = 16;

/// A small least-recently-used cache of parsed keys, by the text they were parsed from.
pub struct KeyCache<T> {
    entries: Mutex<Vec<([u8; 32], T)>>,
}

impl<T> KeyCache<T> {
    /// An empty cache (usable in a `static`).
    pub const fn new() -> Self {
        KeyCache { entries: Mutex::new(Vec::new()) }
    }
}

impl<T> Default for KeyCache<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> KeyCache<T> {
    /// The value parsed from `text`: cached, or made by `parse` (an error is not cached).
    pub fn get_or_parse<E>(&self, text: &str, parse: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let Some(id) = fingerprint(text) else { return parse() };
        {
            let mut entries = self.lock();
            // Every entry is compared, hit or not: the scan takes the same time either way.
            let mut found = None;
            for (i, (k, _)) in entries.iter().enumerate() {
                if bool::from(k.ct_eq(&id)) {
                    found = Some(i);
                }
            }
            if let Some(i) = found {
                let hit = entries.remove(i);
                let value = hit.1.clone();
                entries.push(hit);
                return Ok(value);
            }
        }
        let value = parse()?;
        let mut entries = self.lock();
        if entries.len() == SLOTS {
            entries.remove(0);
        }
        entries.push((id, value.clone()));
        Ok(value)
    }

    /// Drops every entry (the parsed keys zeroize as they drop), e.g. when a session ends.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Vec<([u8; 32], T)>> {
        // A panic while holding the lock leaves only a cache behind: keep using it.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// HMAC-SHA-256 of `text` under a random key made once per process; `None` (no caching) if the
/// system has no randomness to give.
fn fingerprint(text: &str) -> Option<[u8; 32]> {
    static KEY: OnceLock<Option<[u8; 32]>> = OnceLock::new();
    let key = KEY.get_or_init(|| {
        let mut k = [0u8; 32];
        crate::rng::fill(&mut k).ok().map(|()| k)
    });
    key.as_ref().map(|k| hmac_sha256(k, &[text.as_bytes()]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_once_per_text_and_evicts_the_least_recently_used() {
        let cache = KeyCache::<String>::new();
        let calls = std::cell::Cell::new(0);
        let get = |t: &str| {
            cache.get_or_parse(t, || {
                calls.set(calls.get() + 1);
                Ok::<_, ()>(t.to_uppercase())
            })
        };
        assert_eq!(get("a").unwrap(), "A");
        assert_eq!(get("a").unwrap(), "A");
        assert_eq!(calls.get(), 1);
        for i in 0..SLOTS - 1 {
            get(&format!("k{i}")).unwrap();
        }
        get("a").unwrap(); // a hit: "a" becomes the most recent
        get("new").unwrap(); // evicts k0, not "a"
        let before = calls.get();
        get("a").unwrap();
        assert_eq!(calls.get(), before);
        get("k0").unwrap();
        assert_eq!(calls.get(), before + 1);
        // Errors are not cached: the next call parses again.
        assert!(cache.get_or_parse("bad", || Err::<String, _>("no")).is_err());
        let before = calls.get();
        get("bad").unwrap();
        assert_eq!(calls.get(), before + 1);
        // clear() forgets everything: the next lookup parses again.
        assert_eq!(cache.len(), SLOTS);
        cache.clear();
        assert!(cache.is_empty());
        get("a").unwrap();
        assert_eq!(calls.get(), before + 2);
    }
}
