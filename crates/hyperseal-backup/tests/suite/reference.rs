//! The Python reference restorer checks every chunk's id: a pack and an index planted by
//! whoever can write to the store, placing other bytes under a snapshot's chunk id, restore
//! nothing, and without the blake3 package it refuses to run at all. Runs where the peer venv
//! is installed (`make tools`), as `peers.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hyperseal::{recipient, Encryptor, Options};
use hyperseal_backup::{Entry, Snapshot, Store};

use crate::common::Repo;

/// Seals `plain` to the repository's reader, as anyone holding its recipients could.
fn seal(repo: &Repo, plain: &[u8]) -> Vec<u8> {
    let to = [recipient::parse_recipient(&repo.reader.public).unwrap()];
    let mut out = Vec::new();
    Encryptor::with_recipients(&to, Options::age()).unwrap().encrypt_slice(plain, &mut out, None).unwrap();
    out
}

/// A snapshot of one file `f` whose one chunk id is placed, by a planted index, in a planted
/// pack holding `bytes` (which are not that chunk); returns the snapshot's id.
fn plant_forged_chunk(repo: &Repo, bytes: &[u8]) -> String {
    let id = [0x5a; 32];
    let pack = [0x11; 16];
    let frame = zstd::encode_all(bytes, 3).unwrap();
    repo.store.put_new(&format!("data/{}", hex::encode(pack)), &seal(repo, &frame)).unwrap();
    // The chunk table of docs/BACKUP.md §5.2, written out here from the spec.
    let mut table = b"HSBKTBL1".to_vec();
    table.extend_from_slice(&1u32.to_be_bytes());
    table.extend_from_slice(&pack);
    table.extend_from_slice(&1u32.to_be_bytes());
    table.extend_from_slice(&id);
    table.extend_from_slice(&0u32.to_be_bytes());
    table.extend_from_slice(&0u64.to_be_bytes());
    table.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    table.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    repo.store.put_new(&format!("index/{}", "0".repeat(32)), &seal(repo, &table)).unwrap();
    let file = Entry::File {
        path: "f".into(),
        mode: 0o644,
        mtime: 0,
        size: bytes.len() as u64,
        chunks: vec![hex::encode(id)],
    };
    let snap = Snapshot {
        version: 1,
        time: 1,
        nanos: 0,
        host: "planted".into(),
        run: "00".into(),
        paths: vec![],
        tags: vec![],
        entries: vec![file],
    };
    let name = "ab".repeat(16);
    repo.store.put_new(&format!("snapshots/{name}"), &seal(repo, &snap.encode())).unwrap();
    name
}

/// The venv's Python and the repository kind its age library opens (as in `peers.rs`).
fn python() -> Option<(PathBuf, hyperseal::Kind)> {
    let python = crate::minio::installed("venv/bin/python", "tools")?;
    let probe = Command::new(&python).args(["-c", "import hyperseal.pyrage"]).status().unwrap();
    Some((python, if probe.success() { hyperseal::Kind::Hybrid } else { hyperseal::Kind::X25519 }))
}

fn run_reference(python: &Path, repo: &Repo, snapshot: &str, target: &Path, no_blake3: bool) -> Output {
    let key = repo.path("reader.key");
    std::fs::write(&key, &repo.reader.secret).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reference/restore.py");
    let mut cmd = Command::new(python);
    cmd.arg(&script).arg(repo.store.root()).arg(&key).arg(snapshot).arg(target);
    if no_blake3 {
        // A module named blake3 that fails to import, ahead of the installed one.
        let stub = repo.path("no-blake3");
        std::fs::create_dir_all(&stub).unwrap();
        std::fs::write(stub.join("blake3.py"), "raise ImportError('blake3 hidden by the test')\n").unwrap();
        cmd.env("PYTHONPATH", &stub);
    }
    cmd.output().unwrap()
}

#[test]
fn the_reference_restorer_refuses_a_chunk_that_is_not_its_id() {
    let Some((python, kind)) = python() else { return };
    let repo = Repo::with_reader(kind, &[]);
    let snapshot = plant_forged_chunk(&repo, b"the attacker's bytes");
    let out = repo.path("out");
    let run = run_reference(&python, &repo, &snapshot, &out, false);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && err.contains("does not match its id"), "{err}");
    assert!(!out.join("f").exists());
}

#[test]
fn the_reference_restorer_will_not_run_without_blake3() {
    let Some((python, kind)) = python() else { return };
    let repo = Repo::with_reader(kind, &[]);
    let snapshot = plant_forged_chunk(&repo, b"the attacker's bytes");
    let out = repo.path("out");
    let run = run_reference(&python, &repo, &snapshot, &out, true);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && err.contains("blake3"), "{err}");
    assert!(!out.exists(), "wrote before refusing");
}
