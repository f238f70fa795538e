//! What the agent holds: the keys added to it (`keys.rs`), or, once locked, their records
//! sealed under the lock passphrase. Every secret here zeroizes when it is dropped: on expiry,
//! `remove`, `lock` (after sealing) and when the agent ends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hyperseal::agent::proto::{Answer, Entry};
use hyperseal::recipient;
use hyperseal::{Error, Profile};
use zeroize::Zeroizing;

use super::keys::{AddError, Key};
use super::reader::Readers;

/// The identities, or what `lock` sealed them into.
#[derive(Default)]
pub struct Store {
    keys: Vec<Arc<Key>>,
    sealed: Option<Sealed>,
    /// The reader the agent was started with, for files the library does not read.
    readers: Readers,
}

/// The locked agent: every key's record (fingerprint, file name, text, passphrase) sealed
/// under the lock passphrase (Argon2id), and what `list` may still show. An unlock takes each
/// record by its fingerprint, never by its place: a key forgotten while locked (its lifetime
/// ended) leaves its record behind in the ciphertext, and must neither come back nor shift
/// another key's record onto its entry.
struct Sealed {
    ciphertext: Vec<u8>,
    /// Each key's entry, when it expires and its PIN lifetime.
    entries: Vec<(Entry, Option<Instant>, Option<Duration>)>,
}

impl Store {
    /// An empty store whose `add` and `unlock` read files the library does not with `readers`.
    pub fn with_readers(readers: Readers) -> Store {
        Store { readers, ..Store::default() }
    }

    /// The reader the agent was started with.
    pub fn readers(&self) -> Readers {
        self.readers.clone()
    }

    pub fn add(&mut self, key: Key) -> Result<String, String> {
        if self.sealed.is_some() {
            return Err(LOCKED.into());
        }
        let said = format!("{} ({})", key.recipient, key.fingerprint);
        self.keys.retain(|k| k.fingerprint != key.fingerprint);
        self.keys.push(Arc::new(key));
        Ok(said)
    }

    /// The keys to answer with (a snapshot: a request in flight keeps its keys until it
    /// ends), or why none.
    pub fn snapshot(&self) -> Result<Vec<Arc<Key>>, String> {
        match self.sealed {
            Some(_) => Err(LOCKED.into()),
            None => Ok(self.keys.clone()),
        }
    }

    pub fn list(&self) -> Answer {
        let now = Instant::now();
        match &self.sealed {
            None => Answer::Entries(self.keys.iter().map(|k| k.entry(now)).collect()),
            Some(s) => Answer::Entries(s.entries.iter().map(|(e, _, _)| e.clone()).collect()),
        }
    }

    pub fn remove(&mut self, selector: &str) -> Result<usize, String> {
        if self.sealed.is_some() {
            return Err(LOCKED.into());
        }
        let before = self.keys.len();
        self.keys.retain(|k| !k.selected_by(selector));
        Ok(before - self.keys.len())
    }

    /// Forgets expired keys (also while locked: they are not restored by an unlock), and the
    /// PINs past their lifetime, which would otherwise stay in memory until their key's next use.
    pub fn expire(&mut self, now: Instant) {
        self.keys.retain(|k| !k.expired(now));
        self.keys.iter().for_each(|k| k.prune_pins(now));
        if let Some(s) = &mut self.sealed {
            s.entries.retain(|(_, t, _)| t.is_none_or(|t| t > now));
        }
    }

    /// Seals every key's record under `passphrase` and forgets the keys in the clear.
    pub fn lock(&mut self, passphrase: Zeroizing<String>) -> Result<(), String> {
        if self.sealed.is_some() {
            return Err("the agent is already locked".into());
        }
        // Sized first: a buffer that grows leaves freed copies of what it held behind.
        let size = self.keys.iter().flat_map(|k| fields(k).map(|f| 4 + f.len())).sum();
        let mut plain = Zeroizing::new(Vec::with_capacity(size));
        for k in &self.keys {
            for field in fields(k) {
                plain.extend_from_slice(&(field.len() as u32).to_be_bytes());
                plain.extend_from_slice(field);
            }
        }
        let to = [recipient::passphrase_recipient(Profile::Hyperseal, passphrase)];
        let ciphertext = hyperseal::encrypt(&to, &plain).map_err(|e| e.to_string())?;
        let now = Instant::now();
        let entries = self.keys.iter().map(|k| (k.entry(now), k.expires, k.pin_ttl)).collect();
        self.sealed = Some(Sealed { ciphertext, entries });
        self.keys.clear();
        Ok(())
    }

    /// Opens what `lock` sealed (a wrong passphrase changes nothing) and loads again the keys
    /// whose entries are left: each from its own record, found by fingerprint, and proven to
    /// be that key again. A key whose lifetime ended meanwhile stays forgotten; a record that
    /// does not match its entry refuses the whole unlock, and the agent stays locked.
    pub fn unlock(&mut self, passphrase: Zeroizing<String>) -> Result<(), String> {
        let Some(sealed) = &self.sealed else { return Err("the agent is not locked".into()) };
        let header = hyperseal::Decryptor::from_slice(&sealed.ciphertext).map_err(|e| e.to_string())?;
        let id = recipient::passphrase_identity_for(header.header(), passphrase);
        let plain = Zeroizing::new(hyperseal::decrypt(&[id], &sealed.ciphertext).map_err(|e| match e {
            Error::WrongPassphrase | Error::HeaderMac => "incorrect lock passphrase".to_string(),
            e => e.to_string(),
        })?);
        let records = records(&plain).ok_or(SEALED_DAMAGED)?;
        let now = Instant::now();
        let mut keys = Vec::new();
        for (entry, expires, pin_ttl) in &sealed.entries {
            if expires.is_some_and(|t| t <= now) {
                continue;
            }
            let [_, name, text, pass] = records
                .iter()
                .find(|r| r[0] == entry.fingerprint.as_bytes())
                .ok_or("a locked key's sealed record is missing: the agent stays locked")?;
            if *name != entry.name.as_bytes() {
                return Err(SEALED_DAMAGED.into());
            }
            let pass = (!pass.is_empty()).then(|| Zeroizing::new(String::from_utf8_lossy(pass).into_owned()));
            let left = expires.map_or(0, |t| t.saturating_duration_since(now).as_secs().max(1));
            let pin_ttl = pin_ttl.map_or(0, |t| t.as_secs());
            let key = match Key::load(&entry.name, text, pass, left, pin_ttl, &self.readers) {
                Ok(k) => k,
                Err(AddError::NeedPassphrase(e) | AddError::Refused(e)) => return Err(e),
            };
            if key.fingerprint != entry.fingerprint {
                return Err(SEALED_DAMAGED.into());
            }
            // The lifetime stays what it was, to the instant (`load` counts whole seconds), and
            // so do the grants.
            let key = key.with_grants(entry.forward.clone(), entry.confirm);
            keys.push(Arc::new(key.expiring_at(*expires)));
        }
        self.keys = keys;
        self.sealed = None;
        Ok(())
    }

    /// Forgets everything (the agent ends).
    pub fn clear(&mut self) {
        self.keys.clear();
        self.sealed = None;
    }
}

const LOCKED: &str = "the agent is locked (hyperseal agent unlock)";

const SEALED_DAMAGED: &str = "the sealed keys do not match the agent's entries: the agent stays locked";

/// The records `lock` wrote: four length-prefixed fields each (fingerprint, name, text,
/// passphrase). `None`: the plaintext is not a whole number of records.
fn records(mut plain: &[u8]) -> Option<Vec<[&[u8]; 4]>> {
    let mut out = Vec::new();
    while !plain.is_empty() {
        out.push([field(&mut plain)?, field(&mut plain)?, field(&mut plain)?, field(&mut plain)?]);
    }
    Some(out)
}

/// One length-prefixed field off the front of `plain`.
fn field<'a>(plain: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, rest) = plain.split_first_chunk::<4>()?;
    let n = u32::from_be_bytes(*len) as usize;
    let (f, rest) = (rest.len() >= n).then(|| rest.split_at(n))?;
    *plain = rest;
    Some(f)
}

/// What `lock` seals of a key, in this order.
fn fields(k: &Key) -> [&[u8]; 4] {
    [
        k.fingerprint.as_bytes(),
        k.name.as_bytes(),
        k.text.as_bytes(),
        k.passphrase.as_deref().map_or(&b""[..], |p| p.as_bytes()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyperseal::recipient::{generate, Kind};

    fn key(name: &str, lifetime: u64) -> Key {
        let k = generate(Kind::X25519).unwrap();
        Key::load(name, format!("{}\n", k.secret.as_str()).as_bytes(), None, lifetime, 0, &None).ok().unwrap()
    }

    fn pass() -> Zeroizing<String> {
        Zeroizing::new("lock pass".into())
    }

    /// A key forgotten while locked must not come back, nor hand its record to the next key.
    #[test]
    fn a_key_that_expired_while_locked_stays_gone_and_the_others_keep_their_own_keys() {
        let mut store = Store::default();
        let (a, b) = (key("a.key", 1), key("b.key", 0));
        let (a_print, b_print) = (a.fingerprint.clone(), b.fingerprint.clone());
        store.add(a).unwrap();
        store.add(b).unwrap();
        store.lock(pass()).unwrap();
        store.expire(Instant::now() + Duration::from_secs(2));
        store.unlock(pass()).unwrap();
        let keys = store.snapshot().unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].name, "b.key");
        assert_eq!(keys[0].fingerprint, b_print);
        assert!(keys[0].expires.is_none(), "b had no lifetime and has none now");
        assert!(keys.iter().all(|k| k.fingerprint != a_print));
    }

    #[test]
    fn an_unlock_keeps_each_lifetime_to_the_instant() {
        let mut store = Store::default();
        store.add(key("a.key", 0)).unwrap();
        store.add(key("b.key", 3600)).unwrap();
        let before: Vec<_> = store.keys.iter().map(|k| (k.name.clone(), k.expires)).collect();
        store.lock(pass()).unwrap();
        store.unlock(pass()).unwrap();
        let after: Vec<_> = store.keys.iter().map(|k| (k.name.clone(), k.expires)).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn records_that_do_not_match_the_entries_refuse_the_unlock() {
        let mut store = Store::default();
        store.add(key("a.key", 0)).unwrap();
        store.lock(pass()).unwrap();
        // Another key's record sealed under the same passphrase, put in place of the first.
        let mut other = Store::default();
        other.add(key("a.key", 0)).unwrap();
        other.lock(pass()).unwrap();
        store.sealed.as_mut().unwrap().ciphertext = other.sealed.take().unwrap().ciphertext;
        let e = store.unlock(pass()).unwrap_err();
        assert!(e.contains("stays locked"), "{e}");
        assert!(store.snapshot().is_err(), "still locked");
    }

    #[test]
    fn records_are_whole_or_refused() {
        let mut plain = Vec::new();
        for f in [&b"fp"[..], b"name", b"text", b""] {
            plain.extend_from_slice(&(f.len() as u32).to_be_bytes());
            plain.extend_from_slice(f);
        }
        assert_eq!(records(&plain).unwrap(), vec![[&b"fp"[..], b"name", b"text", b""]]);
        assert!(records(&plain[..plain.len() - 1]).is_none());
        assert!(records(&plain[..plain.len() - 5]).is_none(), "three fields are no record");
        let mut long = plain.clone();
        long.extend_from_slice(&[0, 0, 0, 9, 1]);
        assert!(records(&long).is_none());
    }
}
