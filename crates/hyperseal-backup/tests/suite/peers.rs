//! Independence: the real age opens every object, and the Python reference restorer (written
//! from docs/BACKUP.md alone) restores a snapshot byte for byte. Each runs where the peer is
//! installed (`make tools`); elsewhere it says so and passes, unless HYPERSEAL_REQUIRE_PEERS=1.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{describe, make_tree, Repo};

/// The peer's path, or `None` (with a note) where it is not installed.
fn peer(rel: &str) -> Option<PathBuf> {
    crate::minio::installed(rel, "tools")
}

#[test]
fn the_real_age_opens_every_object() {
    let Some(age) = peer("bin/age") else { return };
    let (repo, _) = Repo::backed_up();
    let key = repo.path("reader.key");
    std::fs::write(&key, &repo.reader.secret).unwrap();
    let ids = repo.reader.identities();
    let objects = repo.age_objects();
    assert!(objects.len() >= 6, "{objects:?}");
    for name in objects {
        let path = repo.store.root().join(&name);
        let out = Command::new(&age).arg("-d").arg("-i").arg(&key).arg(&path).output().unwrap();
        assert!(out.status.success(), "age -d {name}: {}", String::from_utf8_lossy(&out.stderr));
        let ours = hyperseal::decrypt(&ids, &std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(out.stdout, ours, "{name}");
    }
}

#[test]
fn the_python_reference_restorer_restores_byte_for_byte() {
    let Some(python) = peer("venv/bin/python") else { return };
    // With hyperseal.pyrage (make python) the repository is post-quantum, as by default; with
    // pyrage alone (the venv's peer), X25519, which pyrage opens.
    let probe = Command::new(&python).args(["-c", "import hyperseal.pyrage"]).status().unwrap();
    let kind = if probe.success() { hyperseal::Kind::Hybrid } else { hyperseal::Kind::X25519 };
    let repo = Repo::with_reader(kind, &[]);
    let src = repo.path("src");
    make_tree(&src);
    let sum = repo.backup(&[&src]);
    let key = repo.path("reader.key");
    std::fs::write(&key, &repo.reader.secret).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reference/restore.py");
    let out = repo.path("out");
    let run = Command::new(&python)
        .arg(&script)
        .arg(repo.store.root())
        .arg(&key)
        .arg(&sum.snapshot)
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(describe(&src), describe(&out.join("src")));
}
