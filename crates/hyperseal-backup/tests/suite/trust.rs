//! What a host holding only the writer key (and put-only access to the store) can do to the
//! readers' verbs. Every object planted here is made with the writer key alone, as such a host
//! would; the store lists names in order, as S3 does, so a planted `index/000…` comes first.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;

use hyperseal::{Encryptor, Kind, Options};
use hyperseal_backup::format::table::Table;
use hyperseal_backup::{
    check, restore, Error, LocalStore, ObjectInfo, Plugins, PruneOptions, Reader, RestoreOptions, Source,
    Store, WriterKey,
};

use crate::common::*;

const FIRST: &str = "00000000000000000000000000000000";
const NOW: PruneOptions = PruneOptions { now: 1_800_000_000, stale_after: 3600 };

/// An age object sealed to the writer key's recipients: all a writer can make.
fn seal(w: &WriterKey, plaintext: &[u8]) -> Vec<u8> {
    let recipients = w.parsed_recipients(Plugins::Refuse).unwrap();
    let enc = Encryptor::with_recipients(&recipients, Options::age()).unwrap();
    let mut out = Vec::new();
    enc.encrypt_slice(plaintext, &mut out, None).unwrap();
    out
}

/// Every place the repository's clear index copies give.
fn places(repo: &Repo) -> Table {
    let mut t = Table::default();
    for name in repo.objects().into_iter().filter(|n| n.starts_with("index/") && n.ends_with(".ids")) {
        t.entries.extend(Table::decode(&repo.store.get(&name, 1 << 26).unwrap()).unwrap().entries);
    }
    t
}

fn packs(repo: &Repo) -> Vec<String> {
    repo.objects().into_iter().filter(|n| n.starts_with("data/")).collect()
}

/// Listings sorted by name, as S3's are.
struct Sorted;

impl Watch for Sorted {
    fn listed(&self, _folder: &str, mut list: Vec<ObjectInfo>) -> Vec<ObjectInfo> {
        list.sort_by(|a, b| a.name.cmp(&b.name));
        list
    }
}

/// The repository's folder as a store that lists in name order.
fn sorted(repo: &Repo) -> Watched<Sorted> {
    Watched { inner: LocalStore::new(repo.store.root()), watch: Sorted }
}

fn restores_whole(repo: &Repo, reader: &Reader<'_>, src: &std::path::Path, sel: &str, out: &str) {
    let snap = reader.find(sel).unwrap();
    restore(reader, &snap.snapshot, &repo.path(out), &RestoreOptions::default()).unwrap();
    assert_eq!(describe(src), describe(&repo.path(out).join("src")));
}

#[test]
fn an_index_placing_chunks_in_a_missing_pack_stops_prune_and_deletes_nothing() {
    let (repo, src) = Repo::backed_up();
    let mut t = places(&repo);
    t.entries.iter_mut().for_each(|e| e.pack = [0xaa; 16]);
    repo.store.put_new(&format!("index/{FIRST}"), &seal(&repo.writer, &t.encode().unwrap())).unwrap();
    let before = packs(&repo);
    let store = sorted(&repo);
    let ids = repo.reader.identities();
    let reader = Reader::open(&store, &ids).unwrap();
    let err = hyperseal_backup::prune(&reader, NOW).unwrap_err();
    assert!(
        matches!(&err, Error::Damaged(m) if m.contains(&format!("index/{FIRST}")) && m.contains("missing")),
        "{err}"
    );
    assert_eq!(packs(&repo), before, "a refused prune deleted packs");
    restores_whole(&repo, &reader, &src, "latest", "out");
}

#[test]
fn an_index_its_pack_s_id_list_denies_stops_prune() {
    let (repo, _src) = Repo::backed_up();
    let mut t = places(&repo);
    t.entries.iter_mut().for_each(|e| e.offset += 1);
    repo.store.put_new(&format!("index/{FIRST}"), &seal(&repo.writer, &t.encode().unwrap())).unwrap();
    let before = packs(&repo);
    let reader = repo.open();
    let err = hyperseal_backup::prune(&reader, NOW).unwrap_err();
    assert!(
        matches!(&err, Error::Damaged(m) if m.contains(&format!("index/{FIRST}")) && m.contains("id list")),
        "{err}"
    );
    assert_eq!(packs(&repo), before);
}

/// A planted pack with an id list that agrees with a planted index: the real pack is still
/// kept by prune, and restore takes the place whose chunk verifies.
#[test]
fn a_planted_pack_and_index_neither_drop_the_real_pack_nor_restore_their_bytes() {
    let (repo, src) = Repo::backed_up();
    let mut t = places(&repo);
    t.entries.iter_mut().for_each(|e| e.pack = [0; 16]);
    let end = t.entries.iter().map(|e| e.offset + e.stored as u64).max().unwrap();
    let bytes = t.encode().unwrap();
    repo.store.put_new(&format!("data/{FIRST}"), &seal(&repo.writer, &noise(9, end as usize))).unwrap();
    repo.store.put_new(&format!("data/{FIRST}.ids"), &bytes).unwrap();
    repo.store.put_new(&format!("index/{FIRST}"), &seal(&repo.writer, &bytes)).unwrap();
    repo.store.put_new(&format!("index/{FIRST}.ids"), &bytes).unwrap();
    let before = packs(&repo);
    let store = sorted(&repo);
    let ids = repo.reader.identities();
    let reader = Reader::open(&store, &ids).unwrap();
    restores_whole(&repo, &reader, &src, "latest", "out");
    let rep = hyperseal_backup::prune(&reader, NOW).unwrap();
    assert_eq!(rep.packs_removed, 0, "{rep:?}");
    assert_eq!(packs(&repo), before);
    restores_whole(&repo, &reader, &src, "latest", "again");
}

/// Stops a backup once it has stored its mark and looked for a prune's lock, until told to go
/// on: the backup is then past every point where it would see the prune.
struct Gate {
    started: Mutex<Sender<()>>,
    go: Mutex<Receiver<()>>,
}

impl Watch for Gate {
    fn listed(&self, folder: &str, list: Vec<ObjectInfo>) -> Vec<ObjectInfo> {
        if folder == "locks/" {
            self.started.lock().unwrap().send(()).unwrap();
            self.go.lock().unwrap().recv().unwrap();
        }
        list
    }
}

/// Its first listing of `snapshots/` lets the gated backup finish before it answers (with what
/// it listed before): the backup's snapshot and end mark land while the prune reads.
struct Racing {
    go: Mutex<Option<Sender<()>>>,
    done: Mutex<Receiver<()>>,
}

impl Racing {
    fn release(&self) {
        if let Some(go) = self.go.lock().unwrap().take() {
            go.send(()).unwrap();
            self.done.lock().unwrap().recv().unwrap();
        }
    }
}

impl Watch for Racing {
    fn listed(&self, folder: &str, list: Vec<ObjectInfo>) -> Vec<ObjectInfo> {
        if folder == "snapshots/" {
            self.release();
        }
        list
    }
}

#[test]
fn a_backup_that_finishes_while_prune_reads_keeps_its_packs() {
    let (repo, src) = Repo::backed_up();
    std::fs::write(src.join("new.bin"), noise(77, 3 << 20)).unwrap();
    let (started_tx, started_rx) = channel();
    let (go_tx, go_rx) = channel();
    let (done_tx, done_rx) = channel();
    let gate = Watched {
        inner: LocalStore::new(repo.store.root()),
        watch: Gate { started: Mutex::new(started_tx), go: Mutex::new(go_rx) },
    };
    let racing = Watched {
        inner: LocalStore::new(repo.store.root()),
        watch: Racing { go: Mutex::new(Some(go_tx)), done: Mutex::new(done_rx) },
    };
    let ids = repo.reader.identities();
    let second = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let opts = small();
            let r = hyperseal_backup::backup(&gate, &repo.writer, Source::Paths(vec![src.clone()]), &opts);
            done_tx.send(()).unwrap();
            r
        });
        started_rx.recv().unwrap();
        let reader = Reader::open(&racing, &ids).unwrap();
        let pruned = hyperseal_backup::prune(&reader, NOW);
        // Whatever the prune did, the backup finishes now.
        racing.watch.release();
        assert!(matches!(pruned, Err(Error::Locked(_))), "a prune beside a running backup: {pruned:?}");
        writer.join().unwrap().unwrap()
    });
    let reader = repo.open();
    restores_whole(&repo, &reader, &src, &second.snapshot, "out");
    hyperseal_backup::prune(&reader, NOW).unwrap();
    restores_whole(&repo, &reader, &src, &second.snapshot, "after");
    assert!(check(&reader, true).unwrap().errors.is_empty());
}

#[test]
fn a_reader_set_a_writer_stores_decides_nothing() {
    let (repo, src) = Repo::backed_up();
    let intruder = Key::new(Kind::Hybrid);
    let json = format!(r#"{{"serial":99,"recipients":["{}"]}}"#, intruder.public);
    for name in [format!("keys/99-{FIRST}"), format!("keys/{FIRST}")] {
        repo.store.put_new(&name, &seal(&repo.writer, json.as_bytes())).unwrap();
    }
    let reader = repo.open();
    assert_eq!(reader.recipient_strings().unwrap().0, vec![repo.reader.public.clone()]);
    hyperseal_backup::prune(&reader, NOW).unwrap();
    let (ours, theirs) = (repo.reader.identities(), intruder.identities());
    for name in repo.age_objects().into_iter().filter(|n| n.starts_with("index/")) {
        let bytes = repo.store.get(&name, 1 << 26).unwrap();
        assert!(hyperseal::decrypt(&ours, &bytes).is_ok(), "{name}: the readers cannot open the new index");
        assert!(hyperseal::decrypt(&theirs, &bytes).is_err(), "{name}: sealed to the planted set");
    }
    restores_whole(&repo, &reader, &src, "latest", "out");
}

#[test]
fn another_repository_s_writer_key_is_refused_and_its_objects_passed_over() {
    let (repo, src) = Repo::backed_up();
    let other = Repo::new(&[]);
    let before = repo.objects();
    let refused =
        hyperseal_backup::backup(&repo.store, &other.writer, Source::Paths(vec![src.clone()]), &small());
    assert!(matches!(&refused, Err(Error::Refused(m)) if m.contains("repository")), "{refused:?}");
    assert_eq!(repo.objects(), before, "a refused writer stored something");
    // What such a key stores anyway, by hand: a snapshot the readers cannot open.
    repo.store.put_new(&format!("snapshots/{FIRST}"), &seal(&other.writer, b"{}")).unwrap();
    let reader = repo.open();
    let listed = reader.snapshots().unwrap();
    assert_eq!((listed.list.len(), listed.skipped.len()), (1, 1));
    assert_eq!(listed.skipped[0].name, format!("snapshots/{FIRST}"));
    let id = listed.list[0].id.clone();
    restores_whole(&repo, &reader, &src, &id, "by-id");
    restores_whole(&repo, &reader, &src, "latest", "latest");
    assert!(reader.find(FIRST).is_err(), "the one asked for does not open: that fails");
    let rep = check(&reader, false).unwrap();
    assert!(rep.errors.iter().any(|e| e.contains(FIRST)), "{rep:?}");
    let f =
        hyperseal_backup::forget(&reader, hyperseal_backup::Keep { last: 1, ..Default::default() }).unwrap();
    assert_eq!((f.kept.len(), f.skipped.len()), (1, 1));
    hyperseal_backup::prune(&reader, NOW).unwrap();
    restores_whole(&repo, &reader, &src, &id, "after-prune");
}

#[test]
fn an_id_list_that_does_not_decode_is_named_and_the_backup_goes_on() {
    let (repo, src) = Repo::backed_up();
    // (A pack's id list is read where the pack exists and no index names it.)
    repo.store.put_new(&format!("data/{FIRST}"), &seal(&repo.writer, b"pack")).unwrap();
    for name in [format!("data/{FIRST}.ids"), format!("index/{FIRST}.ids")] {
        repo.store.put_new(&name, &[0u8; 12]).unwrap();
    }
    let sum = repo.backup_with(&[&src], &small()).unwrap();
    for name in [format!("data/{FIRST}.ids"), format!("index/{FIRST}.ids")] {
        assert!(sum.warnings.iter().any(|w| w.contains(&name)), "{name} not named: {sum:?}");
    }
    assert_eq!(sum.chunks_new, 0, "the lists that decode still deduplicate");
}

#[test]
fn the_same_file_is_cut_differently_in_each_repository() {
    let lengths = |repo: &Repo| {
        let mut l: Vec<u32> = Vec::new();
        for name in repo.objects().into_iter().filter(|n| n.starts_with("data/") && n.ends_with(".ids")) {
            l.extend(
                Table::decode(&repo.store.get(&name, 1 << 26).unwrap())
                    .unwrap()
                    .entries
                    .iter()
                    .map(|e| e.raw),
            );
        }
        l.sort();
        l
    };
    let (a, b) = (Repo::new(&[]), Repo::new(&[]));
    let mut cuts = Vec::new();
    for repo in [&a, &b] {
        let src = repo.path("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("known.bin"), noise(5, 12 << 20)).unwrap();
        repo.backup(&[&src]);
        cuts.push(lengths(repo));
    }
    assert!(cuts[0].len() >= 4, "{cuts:?}");
    assert_ne!(cuts[0], cuts[1], "chunk lengths are the same in two repositories");
}

/// The run's mark goes (a prune took the run for a killed one) once its first pack is stored.
struct MarkTaken;

impl Watch for MarkTaken {
    fn before(&self, op: &str, name: &str, _: &[u8], inner: &LocalStore) {
        if op == "put" && name.starts_with("data/") && name.ends_with(".ids") {
            for o in inner.list("runs/").unwrap() {
                inner.delete(&o.name).unwrap();
            }
        }
    }
}

#[test]
fn a_run_whose_mark_a_prune_took_stores_no_snapshot() {
    let (repo, src) = Repo::with_tree();
    let store = Watched { inner: LocalStore::new(repo.store.root()), watch: MarkTaken };
    let r = hyperseal_backup::backup(&store, &repo.writer, Source::Paths(vec![src]), &small());
    assert!(matches!(&r, Err(Error::Locked(m)) if m.contains("runs/")), "{r:?}");
    assert!(repo.objects().iter().all(|n| !n.starts_with("snapshots/")));
}
