//! A backup, and a prune, killed at every store write or delete: the child process (this test
//! binary again) aborts at its k-th change, halfway into the object, as `kill -9` would (no
//! destructor, no cleanup). After each, `check` passes, and the next backup succeeds and
//! restores the tree. The kill points are counted changes, not times, so every run kills at
//! the same instants.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use hyperseal_backup::{
    check, restore, Keep, LocalStore, PruneOptions, Reader, RestoreOptions, Source, WriterKey,
};

use crate::common::{describe, noise, small, Repo};
use crate::common::{Watch, Watched};

/// Dies at its `kill_at`-th change to the store: a write after half of its temporary, a
/// delete before it happens.
struct Dying {
    writes: AtomicUsize,
    kill_at: usize,
}

impl Watch for Dying {
    fn before(&self, op: &str, name: &str, bytes: &[u8], inner: &LocalStore) {
        if !matches!(op, "put" | "delete") || self.writes.fetch_add(1, Ordering::SeqCst) + 1 != self.kill_at {
            return;
        }
        if op == "put" {
            let dir = inner.root().join(name).parent().unwrap().to_path_buf();
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(".tmp-killed"), &bytes[..bytes.len() / 2]).unwrap();
        }
        std::process::abort();
    }
}

/// The child's side: runs only when the parent sets HYPERSEAL_BACKUP_KILL_AT.
#[test]
fn child_backup_that_dies() {
    let Ok(kill_at) = std::env::var("HYPERSEAL_BACKUP_KILL_AT") else { return };
    let var = |k: &str| PathBuf::from(std::env::var_os(k).unwrap());
    let key = WriterKey::parse(&std::fs::read_to_string(var("HYPERSEAL_BACKUP_KEY")).unwrap()).unwrap();
    let inner = LocalStore::new(var("HYPERSEAL_BACKUP_REPO"));
    let store = Watched { inner, watch: Dying { writes: 0.into(), kill_at: kill_at.parse().unwrap() } };
    if let Some(reader_key) = std::env::var_os("HYPERSEAL_BACKUP_READER") {
        let ids =
            hyperseal::recipient::parse_identities(&std::fs::read_to_string(reader_key).unwrap()).unwrap();
        let reader = Reader::open(&store, &ids).unwrap();
        hyperseal_backup::prune(&reader, PruneOptions { now: 1_800_000_000, stale_after: 3600 }).unwrap();
        return;
    }
    let src = Source::Paths(vec![var("HYPERSEAL_BACKUP_SRC")]);
    hyperseal_backup::backup(&store, &key, src, &small()).unwrap();
}

#[test]
fn a_backup_killed_at_any_write_leaves_a_repository_that_checks_and_recovers() {
    let mut k = 1;
    loop {
        let (repo, src) = Repo::with_tree();
        std::fs::write(src.join("extra.bin"), noise(21, 2 << 20)).unwrap();
        let key = repo.path("writer.key");
        std::fs::write(&key, repo.writer.encode().as_bytes()).unwrap();
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "kills::child_backup_that_dies", "--nocapture", "--test-threads=1"])
            .env("HYPERSEAL_BACKUP_KILL_AT", k.to_string())
            .env("HYPERSEAL_BACKUP_KEY", &key)
            .env("HYPERSEAL_BACKUP_REPO", repo.store.root())
            .env("HYPERSEAL_BACKUP_SRC", &src)
            .output()
            .unwrap();
        let reader = repo.open();
        let rep = check(&reader, true).unwrap();
        assert!(rep.errors.is_empty(), "killed at write {k}: {rep:?}");
        let next = repo.backup(&[&src]);
        let snap = reader.find(&next.snapshot).unwrap().snapshot;
        let out = repo.path("out");
        restore(&reader, &snap, &out, &RestoreOptions::default()).unwrap();
        assert_eq!(describe(&src), describe(&out.join("src")), "killed at write {k}");
        if child.status.success() {
            // The run outlived every kill point: each write was a kill point once.
            assert!(k > 8, "a whole backup is more than a few writes ({k})");
            return;
        }
        k += 1;
    }
}

#[test]
fn a_prune_killed_at_any_change_leaves_a_repository_that_checks_and_recovers() {
    let mut k = 1;
    loop {
        let (repo, src) = Repo::backed_up();
        std::fs::remove_file(src.join("docs/big.bin")).unwrap();
        repo.backup(&[&src]);
        let reader = repo.open();
        hyperseal_backup::forget(&reader, Keep { last: 1, ..Keep::default() }).unwrap();
        let (key, reader_key) = (repo.path("writer.key"), repo.path("reader.key"));
        std::fs::write(&key, repo.writer.encode().as_bytes()).unwrap();
        std::fs::write(&reader_key, &repo.reader.secret).unwrap();
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "kills::child_backup_that_dies", "--nocapture", "--test-threads=1"])
            .env("HYPERSEAL_BACKUP_KILL_AT", k.to_string())
            .env("HYPERSEAL_BACKUP_KEY", &key)
            .env("HYPERSEAL_BACKUP_READER", &reader_key)
            .env("HYPERSEAL_BACKUP_REPO", repo.store.root())
            .output()
            .unwrap();
        let rep = check(&reader, true).unwrap();
        assert!(rep.errors.is_empty(), "prune killed at change {k}: {rep:?}");
        // A killed prune leaves its lock: writers wait until it is removed.
        hyperseal_backup::unlock(&repo.store).unwrap();
        hyperseal_backup::prune(&reader, PruneOptions { now: 1_800_000_000, stale_after: 3600 }).unwrap();
        let next = repo.backup(&[&src]);
        let snap = reader.find(&next.snapshot).unwrap().snapshot;
        restore(&reader, &snap, &repo.path("out"), &RestoreOptions::default()).unwrap();
        assert_eq!(describe(&src), describe(&repo.path("out/src")), "prune killed at change {k}");
        assert!(check(&reader, true).unwrap().errors.is_empty());
        if child.status.success() {
            assert!(
                k > 4,
                "a prune that frees a pack makes several changes ({k}): {}",
                String::from_utf8_lossy(&child.stdout)
            );
            return;
        }
        k += 1;
    }
}
