//! The writer holds no identity: its key file names none, opens nothing, and a backup only
//! adds objects (it reads id lists, never an age object; it never deletes or replaces).

use std::sync::Mutex;

use hyperseal::recipient;
use hyperseal_backup::{Error, LocalStore, Reader, WriterKey};

use crate::common::{small, Repo};
use crate::common::{Watch, Watched};

#[test]
fn the_writer_key_holds_no_identity_and_opens_no_object() {
    let (repo, _) = Repo::backed_up();
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

/// Records every call a backup makes, as `OP NAME`.
struct Recording(Mutex<Vec<String>>);

impl Watch for Recording {
    fn before(&self, op: &str, name: &str, _: &[u8], _: &LocalStore) {
        self.0.lock().unwrap().push(format!("{op} {name}"));
    }
}

#[test]
fn a_backup_only_adds_objects_and_reads_only_id_lists() {
    let (repo, src) = Repo::backed_up();
    let rec = Watched { inner: LocalStore::new(repo.store.root()), watch: Recording(Mutex::new(Vec::new())) };
    std::fs::write(src.join("new"), crate::common::noise(5, 900 << 10)).unwrap();
    let paths = vec![src.clone()];
    hyperseal_backup::backup(&rec, &repo.writer, hyperseal_backup::Source::Paths(paths), &small()).unwrap();
    let calls = rec.watch.0.into_inner().unwrap();
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
