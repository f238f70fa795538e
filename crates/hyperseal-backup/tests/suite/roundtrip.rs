//! A tree goes in and comes back the same; a second backup of it stores nothing new.

use std::fs;

use hyperseal_backup::{check, restore, BackupOptions, Entry, Keep, RestoreOptions, Source, Store};

use crate::common::{describe, noise, small, Repo};

#[test]
fn a_tree_with_links_comes_back_byte_for_byte() {
    let (repo, src) = Repo::with_tree();
    let sum = repo.backup(&[&src]);
    assert!(sum.packs >= 2, "small packs: several for 4 MiB ({sum:?})");
    assert_eq!(sum.files, 5, "the hard link's second name is not read again");
    let reader = repo.open();
    let snap = reader.find("latest").unwrap();
    assert_eq!(snap.id, sum.snapshot);
    assert!(snap.snapshot.entries.iter().any(|e| matches!(e, Entry::Hardlink { path, target } if path == "src/hard-twin" && target == "src/docs/deep/er/mid.bin")));
    let out = repo.path("out");
    let done = restore(&reader, &snap.snapshot, &out, &RestoreOptions::default()).unwrap();
    assert_eq!(done.files, 5);
    assert_eq!(describe(&src), describe(&out.join("src")));
    let rep = check(&reader, true).unwrap();
    assert!(rep.errors.is_empty() && rep.notes.is_empty(), "{rep:?}");
    assert_eq!(rep.chunks_read, sum.chunks_new);
}

/// The walking thread hashes and compresses too once a pack's worth is queued, so one thread
/// (no helper at all) finishes the run and cuts the chunks that four do: four threads backing
/// the same tree up again into the same repository (the cut is keyed per repository) find every
/// chunk stored.
#[test]
fn one_thread_or_four_store_the_same_chunks() {
    let (repo, src) = Repo::with_tree();
    let one = repo.backup_with(&[&src], &BackupOptions { threads: 1, ..small() }).unwrap();
    assert!(one.packs >= 2, "small packs: several for 4 MiB ({one:?})");
    let four = repo.backup_with(&[&src], &BackupOptions { threads: 4, ..small() }).unwrap();
    assert_eq!((four.files, four.chunks_new, four.chunks_reused), (one.files, 0, one.chunks_new), "{four:?}");
    let reader = repo.open();
    for sel in [&one.snapshot, &four.snapshot] {
        let snap = reader.find(sel).unwrap();
        let out = repo.path(&format!("out-{sel}"));
        restore(&reader, &snap.snapshot, &out, &RestoreOptions::default()).unwrap();
        assert_eq!(describe(&src), describe(&out.join("src")));
    }
}

#[test]
fn an_unchanged_tree_backs_up_to_no_new_chunk() {
    let (repo, src) = Repo::with_tree();
    let first = repo.backup(&[&src]);
    let second = repo.backup(&[&src]);
    assert_eq!((second.chunks_new, second.packs, second.bytes_added), (0, 0, 0), "{second:?}");
    assert_eq!(second.chunks_reused, first.chunks_new + first.chunks_reused);
    assert_eq!(second.files_with_new_data, 0);
    // Nothing new, so no index: a snapshot and the run marks only.
    assert!(second.bytes_stored < 16 << 10, "{}", second.bytes_stored);
}

#[test]
fn a_changed_file_stores_only_its_changed_chunks() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    fs::create_dir_all(&src).unwrap();
    let mut data = noise(9, 6 << 20);
    fs::write(src.join("f"), &data).unwrap();
    let first = repo.backup(&[&src]);
    data.splice(3 << 20..3 << 20, noise(10, 1000));
    fs::write(src.join("f"), &data).unwrap();
    let second = repo.backup(&[&src]);
    assert!(second.chunks_new <= 2, "an insert changes one or two chunks: {second:?}");
    assert!(second.chunks_reused + 2 >= first.chunks_new, "{first:?} {second:?}");
}

#[test]
fn a_stream_is_one_file() {
    let repo = Repo::new(&[]);
    let data = noise(3, 1 << 20);
    let src = Source::Stream { input: Box::new(std::io::Cursor::new(data.clone())), name: "db.sql".into() };
    let sum = hyperseal_backup::backup(&repo.store, &repo.writer, src, &small()).unwrap();
    let reader = repo.open();
    let snap = reader.find(&sum.snapshot[..6]).unwrap();
    restore(&reader, &snap.snapshot, &repo.path("out"), &RestoreOptions::default()).unwrap();
    assert_eq!(fs::read(repo.path("out/db.sql")).unwrap(), data);
}

#[test]
fn include_restores_one_file_and_the_folders_to_it() {
    let (repo, src) = Repo::backed_up();
    let reader = repo.open();
    let snap = reader.find("latest").unwrap().snapshot;
    let opts = RestoreOptions { include: vec!["src/docs/deep".into()], ..RestoreOptions::default() };
    let done = restore(&reader, &snap, &repo.path("out"), &opts).unwrap();
    assert_eq!(done.files, 1);
    assert_eq!(
        fs::read(repo.path("out/src/docs/deep/er/mid.bin")).unwrap(),
        fs::read(src.join("docs/deep/er/mid.bin")).unwrap()
    );
    assert!(!repo.path("out/src/readme.txt").exists());
}

#[test]
fn excludes_leave_names_out() {
    let (repo, src) = Repo::with_tree();
    let opts = hyperseal_backup::BackupOptions {
        excludes: vec!["*.bin".into(), "src/empty-dir".into(), "docs/deep".into()],
        ..small()
    };
    repo.backup_with(&[&src], &opts).unwrap();
    let reader = repo.open();
    let snap = reader.find("latest").unwrap().snapshot;
    let paths: Vec<&str> = snap.entries.iter().map(Entry::path).collect();
    assert!(
        !paths.iter().any(|p| p.ends_with(".bin") || p.contains("empty-dir") || p.contains("deep")),
        "{paths:?}"
    );
    assert!(paths.contains(&"src/docs/empty"), "{paths:?}");
    assert!(paths.contains(&"src/readme.txt"));
}

#[test]
fn forget_and_prune_free_what_no_snapshot_uses() {
    let (repo, src) = Repo::backed_up();
    fs::remove_file(src.join("docs/big.bin")).unwrap();
    fs::write(src.join("new.bin"), noise(78, 2 << 20)).unwrap();
    let last = repo.backup(&[&src]);
    let reader = repo.open();
    let f = hyperseal_backup::forget(&reader, Keep { last: 1, ..Keep::default() }).unwrap();
    assert_eq!((f.removed.len(), f.kept), (1, vec![last.snapshot.clone()]));
    let opts = hyperseal_backup::PruneOptions { now: 1_700_000_100, stale_after: 3600 };
    let p = hyperseal_backup::prune(&reader, opts).unwrap();
    // Packs mix chunks of several files (workers finish in any order): at least one went whole.
    assert!(p.packs_removed >= 1 && p.bytes_freed > 512 << 10, "{p:?}");
    let rep = check(&reader, true).unwrap();
    assert!(rep.errors.is_empty() && rep.notes.is_empty(), "{rep:?}");
    let snap = reader.find("latest").unwrap().snapshot;
    restore(&reader, &snap, &repo.path("out"), &RestoreOptions::default()).unwrap();
    assert_eq!(describe(&src), describe(&repo.path("out/src")));
    assert!(
        repo.objects().iter().all(|n| !n.starts_with("runs/") && !n.starts_with("locks/")),
        "{:?}",
        repo.objects()
    );
}

#[test]
fn the_cache_skips_unchanged_files_and_trusts_only_chunks_still_stored() {
    let (repo, src) = Repo::with_tree();
    let opts = hyperseal_backup::BackupOptions { cache: Some(repo.path("cache/w.json")), ..small() };
    let first = repo.backup_with(&[&src], &opts).unwrap();
    assert_eq!(first.files_cached, 0);
    let second = repo.backup_with(&[&src], &opts).unwrap();
    assert_eq!((second.files_cached, second.bytes_read, second.chunks_new), (5, 0, 0), "{second:?}");
    // A changed file is read again (its time and change time moved), the others are not.
    fs::write(src.join("readme.txt"), "changed\n").unwrap();
    let third = repo.backup_with(&[&src], &opts).unwrap();
    assert_eq!((third.files_cached, third.bytes_read), (4, 8), "{third:?}");
    // Another repository's cache is not used.
    let other = Repo::new(&[]);
    assert_eq!(other.backup_with(&[&src], &opts).unwrap().files_cached, 0);
    // What the cache gave restores as read.
    let reader = repo.open();
    let snap = reader.find(&third.snapshot).unwrap().snapshot;
    restore(&reader, &snap, &repo.path("out"), &RestoreOptions::default()).unwrap();
    assert_eq!(describe(&src), describe(&repo.path("out/src")));
    // Chunks a prune removed are not trusted: every file is read again.
    for s in reader.snapshots().unwrap().list {
        repo.store.delete(&format!("snapshots/{}", s.id)).unwrap();
    }
    let now = hyperseal_backup::PruneOptions { now: 1_700_000_100, stale_after: 3600 };
    hyperseal_backup::prune(&reader, now).unwrap();
    let fifth = repo.backup_with(&[&src], &opts).unwrap();
    assert_eq!((fifth.files_cached, fifth.chunks_reused), (0, 0), "{fifth:?}");
    let rep = check(&reader, true).unwrap();
    assert!(rep.errors.is_empty(), "{rep:?}");
}

#[test]
fn forget_keeps_the_newest_of_each_period() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("f"), "x").unwrap();
    // Two a day for ten days from Monday 2023-11-13 (1699833600), noon and 18:00.
    let monday = 1_699_833_600;
    for day in 0..10 {
        for hour in [12, 18] {
            let time = monday + day * 86_400 + hour * 3600;
            repo.backup_with(&[&src], &hyperseal_backup::BackupOptions { time, ..small() }).unwrap();
        }
    }
    let reader = repo.open();
    let time_of = |id: &str| reader.find(id).unwrap().snapshot.time;
    assert!(hyperseal_backup::forget(&reader, Keep::default()).is_err(), "keeping nothing is refused");
    let keep = Keep { last: 1, daily: 3, weekly: 2, ..Keep::default() };
    let rep = hyperseal_backup::forget(&reader, keep).unwrap();
    let mut kept: Vec<i64> = rep.kept.iter().map(|id| time_of(id)).collect();
    kept.sort();
    // The last three days' 18:00 (the newest counts as last, daily and weekly at once), and
    // the first week's newest (Sunday 18:00).
    let at = |day: i64| monday + day * 86_400 + 18 * 3600;
    assert_eq!(kept, vec![at(6), at(7), at(8), at(9)]);
    assert_eq!(rep.removed.len(), 16);
}

#[test]
fn check_read_data_finds_a_damaged_pack_and_a_missing_one() {
    let (repo, _) = Repo::backed_up();
    let packs: Vec<String> =
        repo.objects().into_iter().filter(|n| n.starts_with("data/") && !n.ends_with(".ids")).collect();
    let damaged = repo.store.root().join(&packs[0]);
    let mut bytes = fs::read(&damaged).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 1;
    fs::write(&damaged, bytes).unwrap();
    let reader = repo.open();
    assert!(check(&reader, false).unwrap().errors.is_empty(), "without --read-data the damage is unseen");
    let rep = check(&reader, true).unwrap();
    assert!(rep.errors.iter().any(|e| e.contains(&packs[0])), "{rep:?}");
    fs::remove_file(repo.store.root().join(&packs[1])).unwrap();
    let rep = check(&reader, false).unwrap();
    assert!(rep.errors.iter().any(|e| e.contains(&packs[1])), "{rep:?}");
}
