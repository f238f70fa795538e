//! `hyperseal git clone`: `git clone` and `unlock` in one step. The marked files are written
//! once, as plaintext, with their stat data in git's index (so the next `git status` sends none
//! through the filter); git checks out the rest, including what the clone leaves to the filter
//! (a large blob, a file for other recipients). Options it cannot honour, and a missing or
//! wrong identity, are refused before anything is cloned.

use crate::common;
use crate::git_support;

use common::keypair;
use git_support::{git_tmp, unlocked, unlocked_with, Repo, AGE_INTRO};

fn secret(i: usize) -> Vec<u8> {
    format!("API_KEY_{i}={}\n", "k".repeat(i * 5)).into_bytes()
}

#[test]
fn a_clone_is_checked_out_unlocked_in_one_step() {
    let Some(tmp) = git_tmp() else { return };
    let t = tmp.path();
    let (_, theirs) = keypair(t, "theirs", "x25519");
    let (r, key) = unlocked(t, "origin");
    r.write("other/.age-recipients", format!("{theirs}\n").as_bytes());
    for i in 0..30 {
        r.write(&format!("a/b{}/f{i}.env", i % 3), &secret(i));
    }
    let large: Vec<u8> = (0..(3 << 19)).map(|i: u32| (i % 253) as u8).collect();
    r.write("big.env", &large);
    r.write("README", b"not marked\n");
    r.commit_all("files");
    // A branch of its own, cloned through the options after `--`.
    r.ok(&["checkout", "-qb", "dev"]);
    r.write("dev.env", b"DEV_ONLY=1\n");
    r.commit_all("dev");
    r.ok(&["checkout", "-q", "main"]);
    // Last, a file this key cannot open (the origin could not switch branches over it: each
    // `git add` of it seals it anew).
    r.write("other/not-mine.env", b"THEIR_TOKEN=1\n");
    r.commit_all("theirs");

    let origin = r.dir.to_str().unwrap();
    // The folder the clones are made in.
    let here = Repo::at(t.to_path_buf());
    let o = here.hs(&["git", "clone", "-i", &key, origin, "copy"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cloned into copy: 32 marked file(s) checked out"), "{err}");
    let c = Repo::at(t.join("copy"));
    for i in 0..30 {
        assert_eq!(c.read(&format!("a/b{}/f{i}.env", i % 3)), secret(i), "file {i} is plaintext");
    }
    assert_eq!(c.read("big.env"), large, "a large blob, checked out by git through the filter");
    assert!(c.read("other/not-mine.env").starts_with(AGE_INTRO), "another's file stays as stored");
    assert_eq!(c.read("README"), b"not marked\n");
    assert_eq!(c.status(), "", "a clean work tree");
    // The files written by the clone have their stat data in git's index (the plaintext's
    // size, where a checkout through the filter would have recorded the same), so comparing
    // the work tree with the index needs none of their contents.
    for i in [0, 11, 29] {
        let debug = c.ok(&["ls-files", "--debug", &format!("a/b{}/f{i}.env", i % 3)]);
        assert!(debug.contains(&format!("size: {}\t", secret(i).len())), "{debug}");
        assert!(!debug.contains("ctime: 0:0"), "{debug}");
    }
    // Unlocked as `unlock` leaves a repository: the identity recorded, new files sealed.
    assert!(c.ok(&["config", "--local", "--get-all", "hyperseal.identity"]).contains("key.key"));
    c.write("a/new.env", b"NEW_SECRET=42\n");
    c.ok(&["add", "a/new.env"]);
    assert!(c.blob(":a/new.env").starts_with(AGE_INTRO));
    c.assert_no_blob_holds(b"API_KEY_7=");
    c.assert_no_blob_holds(b"NEW_SECRET=42");

    // Options for git clone after `--`: a branch.
    let o = here.hs(&["git", "clone", "-i", &key, origin, "dev-copy", "--", "--branch", "dev"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = Repo::at(t.join("dev-copy"));
    assert_eq!(d.read("dev.env"), b"DEV_ONLY=1\n");
    assert_eq!(d.status(), "");
}

#[test]
fn a_clone_it_cannot_finish_is_refused_before_anything_is_cloned() {
    let Some(tmp) = git_tmp() else { return };
    let t = tmp.path();
    let (r, key) = unlocked_with(t, "origin", "x25519", &["*.env"], &[]);
    r.write("a.env", b"A=1\n");
    r.commit_all("a");
    let origin = r.dir.to_str().unwrap();
    // The folder the clones are made in.
    let here = Repo::at(t.to_path_buf());
    let missing = t.join("missing.key");
    for (args, says) in [
        (vec!["git", "clone", origin, "c1"], "no identity to unlock with"),
        (vec!["git", "clone", "-i", missing.to_str().unwrap(), origin, "c2"], "cannot read identity file"),
        (vec!["git", "clone", "-i", &key, origin, "c3", "--", "--no-checkout"], "cannot take --no-checkout"),
        (vec!["git", "clone", "-i", &key, origin, "c4", "--", "--bare"], "cannot take --bare"),
    ] {
        let o = here.hs(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(err.starts_with("hyperseal: error: ") && err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), if says.starts_with("cannot read") { 1 } else { 2 }, "{err}");
        let dir = args.iter().find(|a| a.starts_with('c') && a.len() == 2).unwrap();
        assert!(!t.join(dir).exists(), "{dir} was not cloned");
    }
    // A folder git will not clone into: git's own words, and nothing of it changed.
    std::fs::create_dir(t.join("taken")).unwrap();
    std::fs::write(t.join("taken/mine.txt"), b"mine").unwrap();
    let o = here.hs(&["git", "clone", "-i", &key, origin, "taken"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("already exists") && err.contains("hyperseal: error: git clone failed"), "{err}");
    assert_eq!(std::fs::read(t.join("taken/mine.txt")).unwrap(), b"mine");
    assert_eq!(std::fs::read_dir(t.join("taken")).unwrap().count(), 1);
}
