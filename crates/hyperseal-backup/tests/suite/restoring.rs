//! While a restore writes, what it made is private: files 0600 and folders 0700 until each
//! gets its own mode. What an interrupted restore left (its temporaries) the next one into
//! the same target removes, and nothing else.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use hyperseal_backup::{restore, LocalStore, Reader, RestoreOptions};

use crate::common::{describe, Repo, Watch, Watched};

/// The modes of the folders and temporaries under `target` each time a pack is opened: then a
/// file is being written.
struct Modes {
    target: PathBuf,
    seen: Mutex<Vec<(String, u32)>>,
}

impl Watch for Modes {
    fn before(&self, op: &str, name: &str, _bytes: &[u8], _inner: &LocalStore) {
        if op == "open" && name.starts_with("data/") && self.target.exists() {
            let mut seen = self.seen.lock().unwrap();
            modes(&self.target, &self.target, &mut seen);
        }
    }
}

fn modes(root: &Path, dir: &Path, out: &mut Vec<(String, u32)>) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let Ok(m) = fs::symlink_metadata(e.path()) else { continue };
        let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if m.is_dir() {
            out.push((rel, m.permissions().mode() & 0o7777));
            modes(root, &e.path(), out);
        } else if rel.contains(".hyperseal-restore-") {
            out.push((rel, m.permissions().mode() & 0o7777));
        }
    }
}

fn modes_of_files(dir: &Path, out: &mut Vec<u32>) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let m = fs::symlink_metadata(e.path()).unwrap();
        if m.is_dir() {
            modes_of_files(&e.path(), out);
        } else if m.is_file() {
            out.push(m.permissions().mode() & 0o7777);
        }
    }
}

#[test]
fn what_a_restore_writes_is_private_until_it_gets_its_mode() {
    let (repo, src) = Repo::backed_up();
    let out = repo.path("out");
    let watch = Modes { target: out.clone(), seen: Mutex::default() };
    let store = Watched { inner: LocalStore::new(repo.store.root()), watch };
    let ids = repo.reader.identities();
    let reader = Reader::open(&store, &ids).unwrap();
    let snap = reader.find("latest").unwrap().snapshot;
    restore(&reader, &snap, &out, &RestoreOptions::default()).unwrap();
    let seen = store.watch.seen.into_inner().unwrap();
    assert!(
        seen.iter().any(|(p, _)| p.contains(".hyperseal-restore-")),
        "no file seen being written: {seen:?}"
    );
    assert!(seen.iter().any(|(p, _)| p == "src/docs"), "{seen:?}");
    // A file gets its own mode once whole, just before its rename: another thread may see it
    // then, with one of the tree's file modes, never while its content is being written.
    let mut finals = Vec::new();
    modes_of_files(&src, &mut finals);
    for (path, mode) in &seen {
        match path.contains(".hyperseal-restore-") {
            true => assert!(*mode == 0o600 || finals.contains(mode), "{path} was {mode:o} while written"),
            false => assert_eq!(*mode, 0o700, "{path} was {mode:o} while files were written"),
        }
    }
    // And each has its own mode once restored.
    assert_eq!(describe(&src), describe(&out.join("src")));
}

#[test]
fn the_next_restore_removes_what_an_interrupted_one_left() {
    let (repo, src) = Repo::backed_up();
    let out = repo.path("out");
    let stale = |dir: &Path| dir.join(format!(".hyperseal-restore-{}", "0123456789abcdef".repeat(2)));
    let kept =
        [".hyperseal-restore-notes", ".hyperseal-restore-0123456789ABCDEF0123456789ABCDEF", "mine.txt"];
    for dir in [out.clone(), out.join("src"), out.join("src/docs/deep")] {
        fs::create_dir_all(&dir).unwrap();
        fs::write(stale(&dir), "half a file").unwrap();
        for name in kept {
            fs::write(dir.join(name), "not the restore's").unwrap();
        }
    }
    // A link left halfway, and a folder that only looks like a temporary.
    symlink("../elsewhere", out.join("src/docs").join(format!(".hyperseal-restore-{}", "f".repeat(32))))
        .unwrap();
    fs::create_dir(out.join("src").join(format!(".hyperseal-restore-{}", "e".repeat(32)))).unwrap();

    let reader = repo.open();
    let snap = reader.find("latest").unwrap().snapshot;
    restore(&reader, &snap, &out, &RestoreOptions::default()).unwrap();

    for dir in [out.clone(), out.join("src"), out.join("src/docs/deep")] {
        assert!(!stale(&dir).exists(), "{} left", stale(&dir).display());
        for name in kept {
            assert_eq!(
                fs::read(dir.join(name)).unwrap(),
                b"not the restore's",
                "{name} in {}",
                dir.display()
            );
        }
    }
    let docs: Vec<String> = fs::read_dir(out.join("src/docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(!docs.iter().any(|n| n.starts_with(".hyperseal-restore-")), "{docs:?}");
    assert!(out.join("src").join(format!(".hyperseal-restore-{}", "e".repeat(32))).is_dir());
    for f in ["readme.txt", "docs/big.bin", "docs/deep/er/mid.bin"] {
        assert_eq!(fs::read(out.join("src").join(f)).unwrap(), fs::read(src.join(f)).unwrap(), "{f}");
    }
}
