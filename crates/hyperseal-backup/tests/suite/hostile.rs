//! A snapshot is input: whoever can write to the store can write one. None of these writes
//! anything outside the target, and a refused snapshot writes nothing at all.

use std::fs;

use hyperseal::{recipient, Encryptor, Options};
use hyperseal_backup::{restore, Entry, Error, RestoreOptions, Snapshot, Store};

use crate::common::Repo;

fn file(path: &str) -> Entry {
    Entry::File { path: path.into(), mode: 0o644, mtime: 0, size: 0, chunks: vec![] }
}

fn dir(path: &str) -> Entry {
    Entry::Dir { path: path.into(), mode: 0o755, mtime: 0 }
}

/// Stores a snapshot as an attacker with the recipients would; returns its id.
fn plant(repo: &Repo, entries: Vec<Entry>) -> String {
    let snap = Snapshot {
        version: 1,
        time: 1,
        nanos: 0,
        host: "evil".into(),
        run: "00".into(),
        paths: vec![],
        tags: vec![],
        entries,
    };
    let to = [recipient::parse_recipient(&repo.reader.public).unwrap()];
    let mut sealed = Vec::new();
    Encryptor::with_recipients(&to, Options::age())
        .unwrap()
        .encrypt_slice(&snap.encode(), &mut sealed, None)
        .unwrap();
    let id = format!("{:032x}", rand_u128());
    repo.store.put_new(&format!("snapshots/{id}"), &sealed).unwrap();
    id
}

fn rand_u128() -> u128 {
    let mut b = [0u8; 16];
    hyperseal::fill_random(&mut b).unwrap();
    u128::from_le_bytes(b)
}

/// Restores `entries` into `target` (under a folder with a sibling `outside`); returns the
/// result and asserts nothing reached `outside`.
fn attempt(entries: Vec<Entry>, prepare: impl FnOnce(&std::path::Path)) -> (Result<(), Error>, Vec<String>) {
    let repo = Repo::new(&[]);
    let id = plant(&repo, entries);
    let (target, outside) = (repo.path("t/target"), repo.path("t/outside"));
    fs::create_dir_all(&target).unwrap();
    fs::create_dir_all(&outside).unwrap();
    prepare(&target);
    let reader = repo.open();
    let snap = reader.find(&id).unwrap().snapshot;
    let r = restore(&reader, &snap, &target, &RestoreOptions { overwrite: true, ..Default::default() })
        .map(|_| ());
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0, "something reached outside the target");
    assert_eq!(fs::read_dir(repo.path("t")).unwrap().count(), 2);
    let inside: Vec<String> = fs::read_dir(&target)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    (r, inside)
}

#[test]
fn unsafe_names_refuse_the_whole_snapshot() {
    let names =
        ["../outside/x", "/tmp/abs", "a/../../outside/x", "a/./b", "line\nbreak", "nul\0", "", "a//b", "."];
    for name in names {
        let (r, inside) = attempt(vec![file("ok"), file(name)], |_| {});
        assert!(matches!(r, Err(Error::Refused(_))), "{name:?}: {r:?}");
        assert!(inside.is_empty(), "{name:?}: refused, yet wrote {inside:?}");
    }
}

#[test]
fn a_link_on_the_way_is_never_followed() {
    // The snapshot makes the link, then writes through it.
    let entries =
        vec![dir("a"), Entry::Symlink { path: "a/l".into(), target: "../../outside".into() }, file("a/l/x")];
    let (r, _) = attempt(entries, |_| {});
    assert!(matches!(r, Err(Error::Refused(_))), "{r:?}");
    // The link was in the target already.
    let (r, _) = attempt(vec![dir("b"), file("b/x")], |t| {
        std::os::unix::fs::symlink("../outside", t.join("b")).unwrap()
    });
    assert!(matches!(r, Err(Error::Refused(_))), "{r:?}");
}

#[test]
fn a_hard_link_reaches_only_a_file_of_the_snapshot() {
    let entries = vec![Entry::Hardlink { path: "h".into(), target: "../outside/secret".into() }];
    let (r, inside) = attempt(entries, |_| {});
    assert!(matches!(r, Err(Error::Refused(_))) && inside.is_empty(), "{r:?}");
    let entries = vec![Entry::Hardlink { path: "h".into(), target: "later".into() }, file("later")];
    let (r, _) = attempt(entries, |_| {});
    assert!(matches!(r, Err(Error::Refused(_))), "{r:?}");
}

#[test]
fn a_name_twice_is_refused() {
    let (r, inside) = attempt(vec![file("x"), file("x")], |_| {});
    assert!(matches!(r, Err(Error::Refused(_))) && inside.is_empty(), "{r:?}");
}

#[test]
fn restore_never_overwrites_unless_asked_and_leaves_no_temporary() {
    let (repo, src) = Repo::backed_up();
    let reader = repo.open();
    let snap = reader.find("latest").unwrap().snapshot;
    let out = repo.path("out");
    fs::create_dir_all(out.join("src")).unwrap();
    fs::write(out.join("src/readme.txt"), "mine").unwrap();
    let r = restore(&reader, &snap, &out, &RestoreOptions::default());
    assert!(matches!(r, Err(Error::Refused(_))), "{r:?}");
    assert_eq!(fs::read(out.join("src/readme.txt")).unwrap(), b"mine");
    let temporaries = walk_names(&out).into_iter().filter(|n| n.contains(".hyperseal-restore-")).count();
    assert_eq!(temporaries, 0);
    restore(&reader, &snap, &out, &RestoreOptions { overwrite: true, ..Default::default() }).unwrap();
    assert_eq!(fs::read(out.join("src/readme.txt")).unwrap(), fs::read(src.join("readme.txt")).unwrap());
}

#[test]
fn a_missing_chunk_loses_the_file_and_leaves_nothing_half_written() {
    let repo = Repo::new(&[]);
    let entries =
        vec![Entry::File { path: "f".into(), mode: 0o644, mtime: 0, size: 5, chunks: vec!["ab".repeat(32)] }];
    let id = plant(&repo, entries);
    let reader = repo.open();
    let snap = reader.find(&id).unwrap().snapshot;
    let out = repo.path("out");
    let done = restore(&reader, &snap, &out, &RestoreOptions::default()).unwrap();
    assert_eq!(done.failed.len(), 1, "the file is named as not restored: {done:?}");
    assert!(done.failed[0].0 == "f" && done.failed[0].1.contains("no index"), "{:?}", done.failed);
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0);
}

fn walk_names(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        out.push(p.file_name().unwrap().to_string_lossy().into_owned());
        if fs::symlink_metadata(&p).unwrap().is_dir() {
            out.extend(walk_names(&p));
        }
    }
    out
}
