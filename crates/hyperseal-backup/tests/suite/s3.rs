//! The S3 store against a real MinIO: a round trip, a write-only user, two writers at once,
//! and a one-file restore that reads ranges and not packs.

use std::io::{self, Read};
use std::path::Path;

use hyperseal_backup::{
    backup, restore, BackupOptions, Error, Reader, RestoreOptions, S3Store, Source, Store, WriterKey,
};

use crate::common::{describe, make_tree, noise, small, Key};
use crate::minio::{write_only_policy, Minio};

fn init(store: &S3Store, reader: &Key) -> WriterKey {
    hyperseal_backup::init(store, std::slice::from_ref(&reader.public)).unwrap()
}

/// [`make_tree`]'s tree in `m`'s scratch folder, as `src`.
fn tree_in(m: &Minio) -> std::path::PathBuf {
    let src = m.data().join("src");
    make_tree(&src);
    src
}

/// A repository in `m`'s bucket under `prefix` for a new post-quantum reader: the store, the
/// reader's key and the writer's.
fn repo_in(m: &Minio, prefix: &str) -> (S3Store, Key, WriterKey) {
    let (store, reader) = (m.store(prefix), Key::new(hyperseal::Kind::Hybrid));
    let w = init(&store, &reader);
    (store, reader, w)
}

fn back_up(store: &S3Store, w: &WriterKey, path: &Path, time: i64) -> hyperseal_backup::BackupSummary {
    let opts = BackupOptions { time, ..small() };
    backup(store, w, Source::Paths(vec![path.to_path_buf()]), &opts).unwrap()
}

fn restore_all(store: &S3Store, reader: &Key, snapshot: &str, to: &Path) {
    let ids = reader.identities();
    let r = Reader::open(store, &ids).unwrap();
    let snap = r.find(snapshot).unwrap().snapshot;
    restore(&r, &snap, to, &RestoreOptions::default()).unwrap();
}

#[test]
fn a_tree_goes_to_s3_and_comes_back_whole() {
    let Some(m) = Minio::start() else { return };
    let (store, reader, w) = repo_in(&m, "host/repo");
    let src = tree_in(&m);
    let first = back_up(&store, &w, &src, 1_700_000_000);
    assert!(first.packs >= 2, "{first:?}");
    restore_all(&store, &reader, &first.snapshot, &m.data().join("out"));
    let back = m.data().join("out/src");
    assert_eq!(describe(&back), describe(&src));
    // A second run of the same tree adds no chunk: it reads the id lists, not the packs.
    let again = back_up(&store, &w, &src, 1_700_000_001);
    assert_eq!(again.chunks_new, 0, "{again:?}");
    // Names are never replaced, and the objects are where the prefix says.
    let pack = store.list("data/").unwrap().into_iter().find(|o| !o.name.ends_with(".ids")).unwrap();
    let e = store.put_new(&pack.name, b"other bytes").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
    let listed = m.mc(&["ls", "--recursive", &format!("local/{}/host/repo/config", crate::minio::BUCKET)]);
    assert!(listed.contains("config"), "{listed}");
    assert!(!store.list("snapshots/").unwrap().is_empty());
}

#[test]
fn a_write_only_user_backs_up_and_reads_nothing() {
    let Some(m) = Minio::start() else { return };
    let (admin, reader) = (m.store("w/repo"), Key::new(hyperseal::Kind::Hybrid));
    let w = init(&admin, &reader);
    m.user("writer", "writer-secret-1234", &write_only_policy("w/repo"));
    let host = m.store_as("w/repo", "writer", "writer-secret-1234");
    let src = tree_in(&m);
    let first = back_up(&host, &w, &src, 1_700_000_000);
    assert!(first.chunks_new > 0);
    // The id lists are all it reads: a second run deduplicates against the first.
    let second = back_up(&host, &w, &src, 1_700_000_001);
    assert_eq!(second.chunks_new, 0, "{second:?}");
    // Every age object is out of its reach, and it can neither delete nor replace one.
    for name in ["config", &format!("snapshots/{}", first.snapshot)] {
        let e = host.get(name, 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{name}: {e}");
    }
    let packs: Vec<_> =
        admin.list("data/").unwrap().into_iter().filter(|o| !o.name.ends_with(".ids")).collect();
    assert!(!packs.is_empty());
    for p in &packs {
        let e = host.open(&p.name).and_then(|mut r| r.read(&mut [0u8; 16])).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{}: {e}", p.name);
        assert!(host.delete(&p.name).is_err(), "{} deleted by the writer", p.name);
        assert!(admin.get(&p.name, 64 << 20).is_ok(), "{} is gone", p.name);
    }
    let ids = reader.identities();
    assert!(matches!(Reader::open(&host, &ids), Err(Error::Io(_))), "the writer opened the repository");
    // The reader, with its own credentials, restores what the writer stored.
    restore_all(&admin, &reader, "latest", &m.data().join("out"));
    assert_eq!(describe(&m.data().join("out/src")), describe(&src));
}

#[test]
fn two_writers_at_once_both_land_and_share_chunks() {
    let Some(m) = Minio::start() else { return };
    let (store, reader, w) = repo_in(&m, "shared");
    let (a, b) = (m.data().join("a"), m.data().join("b"));
    for (dir, state) in [(&a, 10), (&b, 20)] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("own.bin"), noise(state, 3 << 20)).unwrap();
    }
    let (sa, sb) = std::thread::scope(|s| {
        let one = s.spawn(|| back_up(&m.store("shared"), &w, &a, 1_700_000_000));
        let two = s.spawn(|| back_up(&m.store("shared"), &w, &b, 1_700_000_001));
        (one.join().unwrap(), two.join().unwrap())
    });
    assert_ne!(sa.snapshot, sb.snapshot);
    // Each host now holds the other's file too: what the other finished is not stored again.
    std::fs::copy(a.join("own.bin"), b.join("from-a.bin")).unwrap();
    let sb2 = back_up(&m.store("shared"), &w, &b, 1_700_000_002);
    assert_eq!(sb2.chunks_new, 0, "{sb2:?}");
    assert!(sb2.chunks_reused > 0);
    for (snap, dir) in [(&sa.snapshot, &a), (&sb2.snapshot, &b)] {
        let out = m.data().join(format!("out-{snap}"));
        restore_all(&store, &reader, snap, &out);
        assert_eq!(describe(&out.join(dir.file_name().unwrap())), describe(dir));
    }
}

#[test]
fn a_one_file_restore_from_s3_reads_ranges_not_packs() {
    let Some(m) = Minio::start() else { return };
    let (store, reader, w) = repo_in(&m, "ranges");
    let src = m.data().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("a-large.bin"), noise(31, 12 << 20)).unwrap();
    let one = noise(32, 1 << 20);
    std::fs::write(src.join("b-one.bin"), &one).unwrap();
    let opts = BackupOptions { pack_size: 32 << 20, threads: 1, ..small() };
    let sum = backup(&store, &w, Source::Paths(vec![src.clone()]), &opts).unwrap();
    assert_eq!(sum.packs, 1);
    let pack = store.list("data/").unwrap().into_iter().find(|o| !o.name.ends_with(".ids")).unwrap();
    let reading = m.store("ranges");
    let ids = reader.identities();
    let r = Reader::open(&reading, &ids).unwrap();
    let snap = r.find("latest").unwrap().snapshot;
    // What the repository's config, index and snapshot cost is counted apart.
    let before = reading.downloaded();
    let rel = "src/b-one.bin".to_string();
    let only = RestoreOptions { include: vec![rel.clone()], ..RestoreOptions::default() };
    restore(&r, &snap, &m.data().join("out"), &only).unwrap();
    assert_eq!(std::fs::read(m.data().join("out").join(&rel)).unwrap(), one);
    let read = reading.downloaded() - before;
    eprintln!(
        "one-file restore from S3: {read} bytes read for a file of {} in a pack of {}",
        one.len(),
        pack.size
    );
    // The file's stored chunks (random data: about its size), plus the pack's header and its
    // final STREAM chunk (a seek authenticates the end first): one 64 KiB read window each.
    let stored = one.len() as u64;
    assert!(read <= 2 * stored + 2 * (64 << 10) + 32, "read {read} bytes for a {stored}-byte file");
    assert!(read < pack.size / 4, "read {read} of a {}-byte pack", pack.size);
}

/// Every age object of an S3 repository, with its bytes.
fn age_objects(store: &S3Store) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for folder in ["keys/", "index/", "snapshots/", "data/"] {
        for o in store.list(folder).unwrap().into_iter().filter(|o| !o.name.ends_with(".ids")) {
            out.push((o.name.clone(), store.get(&o.name, 64 << 20).unwrap()));
        }
    }
    out.push(("config".into(), store.get("config", 1 << 20).unwrap()));
    out
}

fn payload_hash(bytes: &[u8]) -> blake3::Hash {
    let head = hyperseal::Decryptor::from_slice(bytes).unwrap().header().encode_len();
    blake3::hash(&bytes[head..])
}

#[test]
fn removing_a_reader_on_s3_copies_payloads_on_the_server() {
    let Some(m) = Minio::start() else { return };
    let (reader, leaving) = (Key::new(hyperseal::Kind::Hybrid), Key::new(hyperseal::Kind::Hybrid));
    let store = m.store("rekey");
    let w = hyperseal_backup::init(&store, &[reader.public.clone(), leaving.public.clone()]).unwrap();
    let src = m.data().join("src");
    std::fs::create_dir_all(&src).unwrap();
    // One pack of about 12 MiB (past S3's 5 MiB part: copied by the server) and small objects.
    std::fs::write(src.join("large.bin"), noise(41, 12 << 20)).unwrap();
    std::fs::write(src.join("small.txt"), "a small file\n".repeat(50)).unwrap();
    let opts = BackupOptions { pack_size: 32 << 20, ..small() };
    backup(&store, &w, Source::Paths(vec![src.clone()]), &opts).unwrap();
    let before = age_objects(&store);
    let (ids, gone) = (reader.identities(), leaving.identities());
    assert!(before.iter().all(|(_, b)| hyperseal::decrypt(&gone, b).is_ok()));
    let stored: u64 = before.iter().map(|(_, b)| b.len() as u64).sum();
    let big = before.iter().map(|(_, b)| b.len() as u64).max().unwrap();
    assert!(big > 10 << 20, "no pack past a part: {big}");

    let working = m.store("rekey");
    let r = Reader::open(&working, &ids).unwrap();
    let dry = hyperseal_backup::rekey(&r, std::slice::from_ref(&reader.public), true, None).unwrap();
    assert_eq!(dry.rewritten, 0);
    assert!(age_objects(&store).iter().all(|(_, b)| hyperseal::decrypt(&gone, b).is_ok()), "a dry run wrote");
    let seen = working.downloaded();
    let done = hyperseal_backup::rekey(&r, std::slice::from_ref(&reader.public), false, None).unwrap();
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    let after = age_objects(&store);
    assert_eq!(after.len(), before.len());
    for (name, bytes) in &after {
        assert!(hyperseal::decrypt(&gone, bytes).is_err(), "{name}: the removed reader still opens it");
        assert!(hyperseal::decrypt(&ids, bytes).is_ok(), "{name}: the remaining reader cannot open it");
    }
    // Payloads are the same bytes (keys/ is written anew for the new set).
    for (name, old) in before.iter().filter(|(n, _)| !n.starts_with("keys/")) {
        let new = &after.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(payload_hash(old), payload_hash(new), "{name}");
    }
    // The large pack's payload stayed on the server: at most S3's smallest part (and the head
    // read's spare) of it went through this client, either way.
    let down = working.downloaded() - seen;
    eprintln!(
        "S3 rekey: {} objects ({stored} bytes), {down} bytes down, {} up",
        after.len(),
        done.rewritten_bytes
    );
    let bound = stored - big + (5 << 20) + (256 << 10);
    assert!(done.rewritten_bytes <= bound, "{} bytes uploaded of {stored}", done.rewritten_bytes);
    assert!(down <= bound + (1 << 20), "{down} bytes downloaded of {stored}");
}

#[test]
fn a_backup_stopped_halfway_on_s3_is_finished_by_the_next_and_prune_keeps_it_whole() {
    let Some(m) = Minio::start() else { return };
    let (store, reader, w) = repo_in(&m, "stopped");
    let src = tree_in(&m);
    std::fs::write(src.join("more.bin"), noise(11, 3 << 20)).unwrap();
    let opts = BackupOptions { stop_after_packs: Some(2), ..small() };
    let stopped = backup(&store, &w, Source::Paths(vec![src.clone()]), &opts);
    assert!(matches!(stopped, Err(Error::Interrupted)), "{stopped:?}");
    assert!(store.list("snapshots/").unwrap().is_empty(), "a snapshot before its packs");
    let ids = reader.identities();
    let r = Reader::open(&store, &ids).unwrap();
    let rep = hyperseal_backup::check(&r, true).unwrap();
    assert!(rep.errors.is_empty(), "{rep:?}");
    let next = back_up(&store, &w, &src, 1_700_000_010);
    assert!(next.chunks_reused >= 2, "the stopped run's packs were not reused: {next:?}");
    // A prune (the lock is a put-if-new on S3 too) keeps everything the snapshot uses.
    hyperseal_backup::prune(&r, hyperseal_backup::PruneOptions { now: 1_700_000_100, stale_after: 0 })
        .unwrap();
    assert!(store.list("locks/").unwrap().is_empty(), "the prune left its lock");
    let rep = hyperseal_backup::check(&r, true).unwrap();
    assert!(rep.errors.is_empty() && rep.notes.is_empty(), "{rep:?}");
    restore_all(&store, &reader, "latest", &m.data().join("out"));
    assert_eq!(describe(&m.data().join("out/src")), describe(&src));
}
