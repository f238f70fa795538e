//! Damage costs only what is damaged: a flipped byte in a pack, or a pack gone, loses the files
//! whose chunks lay there, each named with why; every other file is restored whole.

use std::collections::HashSet;
use std::fs;

use hyperseal_backup::format::table::Table;
use hyperseal_backup::{restore, RestoreOptions, Store};

use crate::common::*;

/// A repository of many small files and one large one, in small packs.
fn spread() -> (Repo, std::path::PathBuf) {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    fs::create_dir_all(src.join("many")).unwrap();
    for i in 0..40u64 {
        fs::write(src.join(format!("many/f{i:02}")), noise(100 + i, 100 << 10)).unwrap();
    }
    fs::write(src.join("large.bin"), noise(3, 5 << 20)).unwrap();
    repo.backup(&[&src]);
    (repo, src)
}

/// Which snapshot files have a chunk in `pack` (by the clear id lists and the snapshot).
fn files_in(repo: &Repo, pack: &str) -> HashSet<String> {
    let ids: HashSet<String> = Table::decode(&repo.store.get(&format!("{pack}.ids"), 1 << 26).unwrap())
        .unwrap()
        .entries
        .iter()
        .map(|e| e.id.to_string())
        .collect();
    let reader = repo.open();
    let snap = reader.find("latest").unwrap().snapshot;
    snap.entries
        .iter()
        .filter_map(|e| match e {
            hyperseal_backup::Entry::File { path, chunks, .. } if chunks.iter().any(|c| ids.contains(c)) => {
                Some(path.clone())
            }
            _ => None,
        })
        .collect()
}

/// Restores, expecting the files named in `failed` to be lost: all of `hit` where `exact`, else
/// some of them (a pack is read by 64 KiB pieces, each authenticated alone: a flipped byte
/// costs the chunks in its piece, not the pack).
fn damaged_restore(repo: &Repo, src: &std::path::Path, hit: &HashSet<String>, out: &str, exact: bool) {
    let reader = repo.open();
    let snap = reader.find("latest").unwrap().snapshot;
    let target = repo.path(out);
    let done = restore(&reader, &snap, &target, &RestoreOptions::default()).unwrap();
    let failed: HashSet<String> = done.failed.iter().map(|(p, _)| p.clone()).collect();
    match exact {
        true => assert_eq!(&failed, hit, "{:?}", done.failed),
        false => assert!(!failed.is_empty() && failed.is_subset(hit), "{:?} of {hit:?}", done.failed),
    }
    assert!(done.failed.iter().all(|(_, why)| why.contains("data/")), "the pack is named: {:?}", done.failed);
    for e in &snap.entries {
        if let hyperseal_backup::Entry::File { path, .. } = e {
            let got = target.join(path);
            match failed.contains(path) {
                true => assert!(!got.exists(), "{path}: a damaged file was left in place"),
                false => {
                    let rel = path.strip_prefix("src/").unwrap();
                    assert_eq!(fs::read(&got).unwrap(), fs::read(src.join(rel)).unwrap(), "{path}");
                }
            }
        }
    }
    let leftovers: Vec<_> =
        walk_names(&target).into_iter().filter(|n| n.contains(".hyperseal-restore-")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk_names(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        out.push(e.file_name().to_string_lossy().into_owned());
        if e.file_type().unwrap().is_dir() {
            out.extend(walk_names(&e.path()));
        }
    }
    out
}

fn a_pack(repo: &Repo) -> String {
    let mut packs: Vec<String> =
        repo.objects().into_iter().filter(|n| n.starts_with("data/") && !n.ends_with(".ids")).collect();
    packs.sort();
    assert!(packs.len() >= 3, "{packs:?}");
    packs.swap_remove(0)
}

#[test]
fn a_flipped_byte_in_a_pack_loses_only_the_files_that_use_it() {
    let (repo, src) = spread();
    let pack = a_pack(&repo);
    let hit = files_in(&repo, &pack);
    assert!(!hit.is_empty());
    let path = repo.store.root().join(&pack);
    let mut bytes = fs::read(&path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    fs::write(&path, bytes).unwrap();
    damaged_restore(&repo, &src, &hit, "out", false);
}

#[test]
fn a_missing_pack_loses_only_the_files_that_use_it() {
    let (repo, src) = spread();
    let pack = a_pack(&repo);
    let hit = files_in(&repo, &pack);
    repo.store.delete(&pack).unwrap();
    damaged_restore(&repo, &src, &hit, "out", true);
}

#[test]
fn the_next_backup_stores_again_what_a_missing_pack_held() {
    let (repo, src) = spread();
    let pack = a_pack(&repo);
    repo.store.delete(&pack).unwrap();
    let next = repo.backup(&[&src]);
    assert!(next.chunks_new > 0, "{next:?}");
    let reader = repo.open();
    let snap = reader.find(&next.snapshot).unwrap().snapshot;
    let done = restore(&reader, &snap, &repo.path("out"), &RestoreOptions::default()).unwrap();
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    assert_eq!(describe(&src), describe(&repo.path("out/src")));
}

/// After a pack is lost, a prune refuses (an index places chunks in it); `repair index`
/// rebuilds the indexes from the packs that are there, the next backup stores the lost chunks
/// again, and then prune, check and a restore of every snapshot pass.
#[test]
fn repair_index_and_a_new_backup_make_a_repository_whole_again() {
    let (repo, src) = spread();
    let pack = a_pack(&repo);
    repo.store.delete(&pack).unwrap();
    let reader = repo.open();
    let now = hyperseal_backup::PruneOptions { now: 1_800_000_000, stale_after: 3600 };
    let refused = hyperseal_backup::prune(&reader, now);
    assert!(matches!(&refused, Err(hyperseal_backup::Error::Damaged(m)) if m.contains(&pack)), "{refused:?}");
    let rep = hyperseal_backup::repair_index(&reader, 1_800_000_000, true).unwrap();
    assert!(rep.dropped.iter().any(|d| d.contains(&pack)), "{rep:?}");
    assert!(rep.indexes_replaced >= 1 && rep.chunks > 0, "{rep:?}");
    repo.backup(&[&src]);
    hyperseal_backup::prune(&reader, now).unwrap();
    let rep = hyperseal_backup::check(&reader, true).unwrap();
    assert!(rep.errors.is_empty(), "{rep:?}");
    for (i, s) in reader.snapshots().unwrap().list.iter().enumerate() {
        let snap = reader.find(&s.id).unwrap().snapshot;
        let out = repo.path(&format!("out{i}"));
        let done = restore(&reader, &snap, &out, &RestoreOptions::default()).unwrap();
        assert!(done.failed.is_empty(), "{:?}", done.failed);
        assert_eq!(describe(&src), describe(&out.join("src")));
    }
}
