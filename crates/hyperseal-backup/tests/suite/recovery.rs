//! A backup stopped at any point leaves a repository that checks clean, and the next backup
//! reuses what was stored. Writers and a prune keep out of each other's way.

use std::fs;

use hyperseal_backup::{check, restore, BackupOptions, Error, PruneOptions, RestoreOptions, Store};

use crate::common::{describe, make_tree, noise, small, Repo};

#[test]
fn a_stopped_backup_checks_clean_and_the_next_one_reuses_its_packs() {
    for stop_after in 1..=3 {
        let (repo, src) = Repo::with_tree();
        fs::write(src.join("more.bin"), noise(11, 3 << 20)).unwrap();
        let opts = BackupOptions { stop_after_packs: Some(stop_after), ..small() };
        assert!(matches!(repo.backup_with(&[&src], &opts), Err(Error::Interrupted)));
        assert!(repo.objects().iter().all(|n| !n.starts_with("snapshots/") && !n.starts_with("index/")));
        let reader = repo.open();
        let rep = check(&reader, true).unwrap();
        assert!(rep.errors.is_empty(), "{rep:?}");
        assert_eq!(rep.notes.len(), stop_after, "each stored pack is in no index yet: {rep:?}");
        let next = repo.backup(&[&src]);
        assert!(next.chunks_reused >= stop_after as u64, "{next:?}");
        let rep = check(&reader, true).unwrap();
        assert!(rep.errors.is_empty() && rep.notes.is_empty(), "{rep:?}");
        let snap = reader.find("latest").unwrap().snapshot;
        restore(&reader, &snap, &repo.path("out"), &RestoreOptions::default()).unwrap();
        assert_eq!(describe(&src), describe(&repo.path("out/src")));
    }
}

#[test]
fn a_pack_without_its_id_list_is_a_note_and_not_reused() {
    let (repo, src) = Repo::with_tree();
    let opts = BackupOptions { stop_after_packs: Some(2), ..small() };
    let _ = repo.backup_with(&[&src], &opts);
    // A kill between a pack and its id list.
    let ids_list = repo.objects().into_iter().find(|n| n.ends_with(".ids")).unwrap();
    repo.store.delete(&ids_list).unwrap();
    let reader = repo.open();
    let rep = check(&reader, false).unwrap();
    assert!(rep.errors.is_empty() && rep.notes.iter().any(|n| n.contains("no id list")), "{rep:?}");
    repo.backup(&[&src]);
    let rep = check(&reader, true).unwrap();
    assert!(rep.errors.is_empty(), "{rep:?}");
    repo.age_marks(120);
    let opts = PruneOptions { now: 1_700_000_100, stale_after: 60 };
    hyperseal_backup::prune(&reader, opts).unwrap();
    let rep = check(&reader, true).unwrap();
    assert!(rep.errors.is_empty() && rep.notes.is_empty(), "{rep:?}");
}

#[test]
fn prune_waits_for_a_running_backup_and_a_backup_for_a_prune() {
    let (repo, src) = Repo::with_tree();
    // A writer that was stopped mid-run: its mark is fresh, so prune must not run.
    let opts = BackupOptions { stop_after_packs: Some(1), ..small() };
    let _ = repo.backup_with(&[&src], &opts);
    let reader = repo.open();
    let now = PruneOptions { now: 1_700_000_100, stale_after: 3600 };
    assert!(matches!(hyperseal_backup::prune(&reader, now), Err(Error::Locked(_))));
    assert!(!repo.objects().contains(&"locks/prune".to_string()), "a prune that gave up released its lock");
    // A day later (to the store) the mark is stale: prune runs, and removes the stopped run's
    // pack. The writer's own clock plays no part: the mark says it started long ago.
    repo.age_marks(2 * 86_400);
    let later = PruneOptions { now: 1_700_000_000 + 2 * 86_400, stale_after: 86_400 };
    let p = hyperseal_backup::prune(&reader, later).unwrap();
    assert_eq!(p.packs_removed, 1);
    // A prune's lock stops a writer before it stores anything but its mark.
    repo.store.put_new("locks/prune", b"{}").unwrap();
    assert!(matches!(repo.backup_with(&[&src], &small()), Err(Error::Locked(_))));
    assert!(repo.objects().iter().all(|n| !n.starts_with("data/")));
    // The writer that gave up said so: a prune need not wait a day for it.
    hyperseal_backup::unlock(&repo.store).unwrap();
    hyperseal_backup::prune(&reader, now).unwrap();
}

#[test]
fn two_writers_at_once_both_finish_and_share_chunks() {
    let repo = Repo::new(&[]);
    let (a, b) = (repo.path("a"), repo.path("b"));
    make_tree(&a);
    make_tree(&b);
    std::thread::scope(|s| {
        let ta = s.spawn(|| repo.backup(&[&a]));
        let tb = s.spawn(|| repo.backup(&[&b]));
        ta.join().unwrap();
        tb.join().unwrap();
    });
    let third = repo.backup(&[&a]);
    assert_eq!(third.chunks_new, 0);
    let reader = repo.open();
    assert_eq!(reader.snapshots().unwrap().list.len(), 3);
    let rep = check(&reader, true).unwrap();
    assert!(rep.errors.is_empty() && rep.notes.is_empty(), "{rep:?}");
}

/// A put killed before its link leaves a temporary; a listing a day later removes it, and a
/// missing object's error names it.
#[test]
fn a_killed_put_s_temporary_goes_and_a_missing_object_is_named() {
    let (repo, _src) = Repo::backed_up();
    let dir = repo.store.root().join("data");
    let (fresh, old) = (dir.join(".tmp-fresh"), dir.join(".tmp-old"));
    std::fs::write(&fresh, b"x").unwrap();
    let f = std::fs::File::create(&old).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400)).unwrap();
    repo.store.list("data/").unwrap();
    assert!(fresh.exists() && !old.exists(), "a put in progress was removed, or a killed one kept");
    let e = repo.store.get("data/0123456789abcdef0123456789abcdef", 10).unwrap_err();
    assert!(e.to_string().contains("data/0123456789abcdef0123456789abcdef"), "{e}");
}

/// `forget --prune` asks whether a prune could run before it removes anything; `unlock` says
/// whether there was a lock, and the runs that hold a prune off are named, not removed.
#[test]
fn a_prune_that_could_not_run_is_known_before_anything_is_forgotten() {
    let (repo, src) = Repo::with_tree();
    repo.backup(&[&src]);
    fs::write(src.join("more.bin"), noise(41, 2 << 20)).unwrap();
    let stopped = repo.backup_with(&[&src], &BackupOptions { stop_after_packs: Some(1), ..small() });
    assert!(matches!(stopped, Err(Error::Interrupted)), "{stopped:?}");
    let reader = repo.open();
    let now = PruneOptions { now: 1_700_000_100, stale_after: 3600 };
    let ready = hyperseal_backup::prune_ready(&reader, now);
    assert!(matches!(&ready, Err(Error::Locked(m)) if m.contains("runs/")), "{ready:?}");
    assert_eq!(hyperseal_backup::running(&reader, now).unwrap().len(), 1);
    assert!(!hyperseal_backup::unlock(&repo.store).unwrap(), "there was no lock");
    repo.store.put_new("locks/prune", b"{}").unwrap();
    assert!(hyperseal_backup::unlock(&repo.store).unwrap());
    // A day later the killed run no longer holds a prune off.
    let later = PruneOptions { now: 1_700_000_000 + 2 * 86_400, stale_after: 86_400 };
    hyperseal_backup::prune_ready(&reader, later).unwrap();
}
