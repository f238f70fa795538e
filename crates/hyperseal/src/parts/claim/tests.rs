use std::cell::RefCell;
use std::collections::HashMap;

use super::*;
use crate::encrypt::Options;
use crate::format::Suite;
use crate::recipient::{self, Kind, Recipient};

const CHUNK: usize = 16 << 10;

/// A claim store in memory: what `O_EXCL` or `If-None-Match: *` give a real driver.
#[derive(Default)]
struct Store(RefCell<HashMap<String, Vec<u8>>>);

impl ClaimStore for Store {
    fn put_new(&self, name: &str, record: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let mut map = self.0.borrow_mut();
        Ok(match map.get(name) {
            Some(existing) => Some(existing.clone()),
            None => {
                map.insert(name.into(), record.to_vec());
                None
            }
        })
    }
}

fn key(suite: Suite, len: usize) -> (Vec<u8>, PartKey, String) {
    let id = recipient::generate(Kind::X25519).unwrap();
    let to: Vec<Box<dyn Recipient>> = vec![recipient::parse_recipient(&id.public).unwrap()];
    let opts = Options { suite, chunk_size: CHUNK, ..Options::default() };
    let (head, key) = PartKey::seal_new(&to, opts, len as u64).unwrap();
    (head, key, id.secret.to_string())
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

#[test]
fn claimed_parts_make_the_same_file_and_the_same_bytes_may_be_sealed_again() {
    for len in [0, 1, CHUNK, 3 * CHUNK + 5] {
        let (head, key, secret) = key(Suite::Aes256Gcm, len);
        let (pt, store, size) = (bytes(len, 1), Store::default(), 2 * CHUNK as u64);
        let mut file = head.clone();
        for part in key.plan(size).unwrap() {
            let p = &pt[part.plaintext.start as usize..part.plaintext.end as usize];
            let sealed = key.seal_claimed(&store, size, part.first_chunk, p).unwrap();
            assert_eq!(sealed, key.seal(part.first_chunk, p).unwrap());
            // A retry with the same bytes: allowed, and the same ciphertext.
            assert_eq!(key.seal_claimed(&store, size, part.first_chunk, p).unwrap(), sealed);
            file.extend_from_slice(&sealed);
        }
        let ids = recipient::parse_identities(&secret).unwrap();
        assert_eq!(crate::decrypt::decrypt(&ids, &file).unwrap(), pt);
        assert_eq!(store.0.borrow().len(), 1 + key.plan(size).unwrap().len());
    }
}

#[test]
fn other_bytes_for_a_claimed_part_are_refused_and_wiped() {
    for suite in Suite::ALL {
        let (_, key, _) = key(suite, 4 * CHUNK);
        let (store, size) = (Store::default(), 2 * CHUNK as u64);
        let first = bytes(2 * CHUNK, 1);
        key.seal_claimed(&store, size, 2, &first).unwrap();
        let mut changed = first.clone();
        changed[CHUNK + 3] ^= 1;
        let mut out = vec![0xAAu8; key.sealed_len(2, changed.len()).unwrap()];
        let err = key.seal_claimed_into(&store, size, 2, &changed, &mut out).unwrap_err();
        assert!(err.to_string().contains("reuse a nonce"), "{err}");
        assert!(out.iter().all(|&b| b == 0), "{suite}: the refused ciphertext must not survive");
        // The first bytes are still welcome.
        key.seal_claimed(&store, size, 2, &first).unwrap();
    }
}

#[test]
fn another_plan_under_the_same_key_is_refused_before_sealing() {
    let (_, key, _) = key(Suite::ChaCha20Poly1305, 4 * CHUNK);
    let store = Store::default();
    key.seal_claimed(&store, 2 * CHUNK as u64, 0, &bytes(2 * CHUNK, 1)).unwrap();
    // Chunk 1 again, inside a part that starts there: a plan of 1-chunk parts.
    let err = key.seal_claimed(&store, CHUNK as u64, 1, &bytes(CHUNK, 9)).unwrap_err();
    assert!(err.to_string().contains("another part size"), "{err}");
    assert!(!store.0.borrow().contains_key("part-00000000000000000001"));
}

#[test]
fn parts_outside_the_plan_are_refused() {
    let (_, key, _) = key(Suite::Aes256Gcm, 4 * CHUNK + 1);
    let (store, size) = (Store::default(), 2 * CHUNK as u64);
    for (first, len) in [(1, 2 * CHUNK), (0, CHUNK), (2, 2 * CHUNK + 1), (6, 0), (u64::MAX, 1)] {
        assert!(key.seal_claimed(&store, size, first, &bytes(len, 0)).is_err(), "{first} {len}");
    }
    assert!(key.seal_claimed(&store, size + 1, 0, &bytes(2 * CHUNK, 0)).is_err());
    assert!(store.0.borrow().get("part-00000000000000000000").is_none());
    // The last part holds the rest: two chunks and one byte.
    key.seal_claimed(&store, size, 4, &bytes(1, 0)).unwrap();
}

#[test]
fn records_reveal_nothing_and_bind_the_key() {
    let pt = bytes(2 * CHUNK, 5);
    let (_, a, _) = key(Suite::Aes256Gcm, pt.len());
    let (_, b, _) = key(Suite::Aes256Gcm, pt.len());
    let size = 2 * CHUNK as u64;
    let claim = |k: &PartKey, p: &[u8]| k.part_claim(size, 0, &k.seal(0, p).unwrap()).unwrap();
    let (ca, cb) = (claim(&a, &pt), claim(&b, &pt));
    assert_eq!(ca.name(), cb.name());
    assert_ne!(ca.record(), cb.record(), "same bytes under two keys: unrelated records");
    assert_eq!(ca, claim(&a, &pt), "deterministic under one key");
    assert_ne!(ca.record(), claim(&a, &bytes(2 * CHUNK, 6)).record());
    assert_ne!(a.plan_claim(size).unwrap().record(), b.plan_claim(size).unwrap().record());
    // Neither the plaintext nor the sealed bytes appear in a record.
    let sealed = a.seal(0, &pt).unwrap();
    for w in sealed.windows(8).chain(pt.windows(8)).step_by(97) {
        assert!(!ca.record().windows(8).any(|r| r == w));
    }
    // One part's record does not pass for another's, nor the plan's.
    assert!(ca.check(b"short").is_err() && ca.check(cb.record()).is_err());
    assert!(ca.check(a.plan_claim(size).unwrap().record()).is_err());
}

#[test]
fn an_opening_key_cannot_claim_to_seal() {
    let (head, key, secret) = key(Suite::Aes256Gcm, 10);
    let mut file = head;
    file.extend_from_slice(&key.seal(0, &bytes(10, 0)).unwrap());
    let ids = recipient::parse_identities(&secret).unwrap();
    let opener = PartKey::open_file(&mut std::io::Cursor::new(&file), file.len() as u64, &ids).unwrap();
    assert!(opener.seal_claimed(&Store::default(), CHUNK as u64, 0, &bytes(10, 0)).is_err());
}
