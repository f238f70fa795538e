//! The writer holds no identity: its key file names none, opens nothing, and a backup only
//! adds objects (it reads id lists, never an age object; it never deletes or replaces).

use std::io;
use std::sync::Mutex;

use hyperseal::recipient::{self, Identity};
use hyperseal::rekey::{Change, Report};
use hyperseal_backup::{Error, LocalStore, Reader, Store, WriterKey};

use crate::common::{make_tree, small, Repo};

#[test]
fn the_writer_key_holds_no_identity_and_opens_no_object() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    make_tree(&src);
    repo.backup(&[&src]);
    let text = repo.writer.encode();
    for token in text.split_whitespace() {
        assert!(!recipient::looks_like_identity(token), "an identity in the writer key: {token:.20}…");
        assert!(!token.to_ascii_uppercase().starts_with("AGE-"), "{token:.20}");
    }
    let as_identities = recipient::parse_identities(&text).map(|v| v.len()).unwrap_or(0);
    assert_eq!(as_identities, 0);
    let back = WriterKey::parse(&text).unwrap();
    assert_eq!((back.repo_id, &back.recipients), (repo.writer.repo_id, &repo.writer.recipients));
    // Nothing the writer holds opens anything: not its dedup key as a key, not its recipients.
    let stranger = crate::common::Key::new(hyperseal::Kind::Hybrid).identities();
    for name in repo.age_objects() {
        let file = std::fs::read(repo.store.root().join(&name)).unwrap();
        assert!(hyperseal::decrypt(&stranger, &file).is_err(), "{name}");
    }
    assert!(matches!(Reader::open(&repo.store, &stranger), Err(Error::Crypto(_))));
}

#[test]
fn a_writer_key_file_is_bounded_and_strict() {
    let repo = Repo::new(&[]);
    let text = repo.writer.encode().to_string();
    assert!(WriterKey::parse(&text.replace("hyperseal-backup-writer-v1", "other")).is_err());
    assert!(WriterKey::parse(&format!("{text}identity AGE-SECRET-KEY-1\n")).is_err());
    assert!(WriterKey::parse(&"#".repeat(2 << 20)).is_err());
    let no_recipients: String =
        text.lines().filter(|l| !l.starts_with("recipient")).map(|l| format!("{l}\n")).collect();
    assert!(WriterKey::parse(&no_recipients).is_err());
}

/// A store that records every call a backup makes.
struct Recording {
    inner: LocalStore,
    calls: Mutex<Vec<String>>,
}

impl Store for Recording {
    fn put_new(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.calls.lock().unwrap().push(format!("put {name}"));
        self.inner.put_new(name, bytes)
    }
    fn get(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
        self.calls.lock().unwrap().push(format!("get {name}"));
        self.inner.get(name, limit)
    }
    fn open(&self, name: &str) -> io::Result<Box<dyn hyperseal_backup::ReadSeek>> {
        self.calls.lock().unwrap().push(format!("open {name}"));
        self.inner.open(name)
    }
    fn list(&self, folder: &str) -> io::Result<Vec<hyperseal_backup::ObjectInfo>> {
        self.calls.lock().unwrap().push(format!("list {folder}"));
        self.inner.list(folder)
    }
    fn delete(&self, name: &str) -> io::Result<()> {
        self.calls.lock().unwrap().push(format!("delete {name}"));
        self.inner.delete(name)
    }
    fn rekey(
        &self,
        name: &str,
        ids: &[Box<dyn Identity>],
        change: &Change,
        dry: bool,
    ) -> hyperseal_backup::Result<Report> {
        self.calls.lock().unwrap().push(format!("rekey {name}"));
        self.inner.rekey(name, ids, change, dry)
    }
}

#[test]
fn a_backup_only_adds_objects_and_reads_only_id_lists() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    make_tree(&src);
    repo.backup(&[&src]);
    let rec = Recording { inner: LocalStore::new(repo.store.root()), calls: Mutex::new(Vec::new()) };
    std::fs::write(src.join("new"), crate::common::noise(5, 900 << 10)).unwrap();
    let paths = vec![src.clone()];
    hyperseal_backup::backup(&rec, &repo.writer, hyperseal_backup::Source::Paths(paths), &small()).unwrap();
    let calls = rec.calls.into_inner().unwrap();
    let mut puts = std::collections::HashSet::new();
    for c in &calls {
        let (op, name) = c.split_once(' ').unwrap();
        match op {
            "put" => assert!(puts.insert(name.to_string()), "{name} written twice"),
            "get" => assert!(name.ends_with(".ids"), "the writer read {name}"),
            "list" => {}
            _ => panic!("the writer called {c}"),
        }
    }
    assert!(calls.iter().any(|c| c.starts_with("put snapshots/")));
    assert!(calls.iter().any(|c| c.starts_with("get data/") || c.starts_with("get index/")), "{calls:?}");
}

#[test]
fn init_never_replaces_a_repository() {
    let repo = Repo::new(&[]);
    let readers = vec![repo.reader.public.clone()];
    let again = hyperseal_backup::init(&repo.store, &readers);
    assert!(matches!(again, Err(Error::Refused(_))), "{again:?}");
    // A killed init (a reader set, no config) is refused too, not guessed at.
    let half = LocalStore::new(repo.path("half"));
    let full = LocalStore::new(repo.path("full"));
    hyperseal_backup::init(&full, &readers).unwrap();
    std::fs::create_dir_all(half.root().join("keys")).unwrap();
    let keys = std::fs::read_dir(full.root().join("keys")).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&keys, half.root().join("keys").join(keys.file_name().unwrap())).unwrap();
    assert!(matches!(hyperseal_backup::init(&half, &readers), Err(Error::Refused(_))));
}
