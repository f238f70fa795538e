//! Removing a reader rewrites headers only: afterwards the removed reader opens no object,
//! the remaining one opens every object, and no payload byte changed.

use std::collections::HashMap;
use std::fs;

use hyperseal::{Decryptor, Kind};
use hyperseal_backup::check;

use crate::common::{make_tree, Key, Repo};

/// A hash of each age object's bytes after its header (the reader set's own object, which a
/// rekey replaces, left out).
fn payloads(repo: &Repo) -> HashMap<String, blake3::Hash> {
    let mut out = HashMap::new();
    for name in repo.age_objects().into_iter().filter(|n| !n.starts_with("keys/")) {
        let bytes = fs::read(repo.store.root().join(&name)).unwrap();
        let head = Decryptor::from_slice(&bytes).unwrap().header().encode_len();
        out.insert(name, blake3::hash(&bytes[head..]));
    }
    out
}

fn opens(repo: &Repo, key: &Key) -> usize {
    let ids = key.identities();
    repo.age_objects()
        .iter()
        .filter(|n| hyperseal::decrypt(&ids, &fs::read(repo.store.root().join(n)).unwrap()).is_ok())
        .count()
}

#[test]
fn removing_a_reader_rewrites_headers_only() {
    let leaving = Key::new(Kind::Hybrid);
    let repo = Repo::new(&[&leaving]);
    let src = repo.path("src");
    make_tree(&src);
    repo.backup(&[&src]);
    let total = repo.age_objects().len();
    assert_eq!((opens(&repo, &repo.reader), opens(&repo, &leaving)), (total, total));
    let before = payloads(&repo);
    let reader = repo.open();
    let keep = vec![repo.reader.public.clone()];
    let dry = hyperseal_backup::rekey(&reader, &keep, true, None).unwrap();
    assert_eq!((dry.in_place, dry.rewritten), (0, 0));
    assert_eq!(opens(&repo, &leaving), total, "a dry run changes nothing");
    let done = hyperseal_backup::rekey(&reader, &keep, false, None).unwrap();
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    // Every object but the new reader set (`keys/`), which was written for the new set.
    assert_eq!((done.in_place as usize, done.rewritten), (total - 1, 0));
    assert!(done.removed >= 1);
    assert_eq!(opens(&repo, &leaving), 0);
    assert_eq!(opens(&repo, &repo.reader), total);
    assert_eq!(payloads(&repo), before, "no payload byte changed");
    // The repository still works, and a new writer key seals to the new set only.
    let rep = check(&reader, true).unwrap();
    assert!(rep.errors.is_empty(), "{rep:?}");
    assert_eq!(reader.recipient_strings().unwrap().0, keep);
    // Run again (as a resumed run would): nothing breaks.
    let again = hyperseal_backup::rekey(&reader, &keep, false, None).unwrap();
    assert!(again.failed.is_empty(), "{:?}", again.failed);
    assert_eq!((opens(&repo, &leaving), opens(&repo, &repo.reader)), (0, total));
}
