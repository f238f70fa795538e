//! `hyperseal git unlock` writes the work tree itself where it can: the files of a fresh clone
//! are opened on every core and written as plaintext, with their stat data in git's index, so
//! neither the unlock nor the next `git status` sends a file through the filter. What it must
//! not take (a file changed since checkout, an executable, a large blob) git checks out as
//! before, and a changed file is left as it is.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::git_support;

use git_support::{git_tmp, isolated, unlocked, Repo, AGE_INTRO};

/// A committed repository with `count` small marked files (and whatever `extra` adds), cloned
/// into `clone`: the clone holds the age files, locked.
fn cloned(tmp: &Path, count: usize, extra: impl Fn(&Repo)) -> (Repo, Repo, String) {
    let (r, key) = unlocked(tmp, "origin");
    for i in 0..count {
        r.write(&format!("d{}/f{i}.env", i % 4), &secret(i));
    }
    extra(&r);
    r.commit_all("files");
    let o = git_support::git_in(tmp, &["clone", "-q", r.dir.to_str().unwrap(), "clone"]);
    assert!(o.status.success());
    let c = Repo::at(tmp.join("clone"));
    assert!(c.read("d0/f0.env").starts_with(AGE_INTRO), "a fresh clone holds the age files");
    (r, c, key)
}

fn secret(i: usize) -> Vec<u8> {
    format!("TOKEN_{i}={}\n", "x".repeat(i * 7)).into_bytes()
}

/// `hyperseal ARGS` (or `git ARGS`) in `r` with git's trace going to `trace`; whether git started
/// a filter process.
fn traced(r: &Repo, program: &Path, args: &[&str], trace: &Path) -> (bool, String) {
    let _ = std::fs::remove_file(trace);
    let o = isolated(program, &r.dir).args(args).env("GIT_TRACE", trace).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let t = std::fs::read_to_string(trace).unwrap_or_default();
    // git's line for starting a program: "run_command: … git filter-process".
    let started = t.lines().any(|l| l.contains("run_command:") && l.contains("filter-process"));
    (started, String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn an_unlock_writes_a_clone_itself_and_git_status_needs_no_filter() {
    let Some(tmp) = git_tmp() else { return };
    let (_, c, key) = cloned(tmp.path(), 40, |_| {});
    let trace = tmp.path().join("trace");
    let hs = Path::new(env!("CARGO_BIN_EXE_hyperseal"));
    let (filtered, _) = traced(&c, hs, &["git", "unlock", "-i", &key], &trace);
    assert!(!filtered, "no file went through the filter");
    for i in 0..40 {
        assert_eq!(c.read(&format!("d{}/f{i}.env", i % 4)), secret(i), "file {i} is plaintext");
    }
    // git's index has the new files' stat data: comparing the work tree with it (what `git
    // status` does first) needs no file's contents. (`git status` itself starts the filter
    // process in any repository with a process filter, clean or not.)
    let (filtered, _) = traced(&c, Path::new("git"), &["diff-files", "--quiet"], &trace);
    if filtered {
        // What git compared: each entry's stat data against the file's, and the index's time
        // (an entry not older than the index is "racily clean" and its contents compared).
        let index = std::fs::metadata(c.dir.join(".git/index")).unwrap();
        let files: String = (0..40)
            .map(|i| {
                let m = std::fs::symlink_metadata(c.dir.join(format!("d{}/f{i}.env", i % 4))).unwrap();
                format!(
                    "f{i}: mtime {}.{} ctime {}.{} ino {}\n",
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec(),
                    m.ino()
                )
            })
            .collect();
        panic!(
            "git diff-files sent a file through the filter; index mtime {}.{}\n{files}{}",
            index.mtime(),
            index.mtime_nsec(),
            c.ok(&["ls-files", "--debug"])
        );
    }
    assert_eq!(c.status(), "", "a clean work tree");
    let debug = c.ok(&["ls-files", "--debug", "d1/f5.env"]);
    assert!(debug.contains(&format!("size: {}\t", secret(5).len())), "{debug}");
    // Unlocking an unlocked work tree: its files are plaintext, not their blobs, so none is
    // taken for an age file; they stay as they are.
    c.hs_ok(&["git", "unlock", "-i", &key]);
    assert_eq!(c.read("d3/f7.env"), secret(7));
    assert_eq!(c.status(), "");
    // Locking again puts the stored files back, and unlocking again works from there, also
    // from a folder inside the work tree (git lists paths relative to where it runs).
    let inside = Repo::at(c.dir.join("d2"));
    inside.hs_ok(&["git", "lock"]);
    assert!(c.read("d2/f6.env").starts_with(AGE_INTRO));
    assert!(c.read("d1/f5.env").starts_with(AGE_INTRO), "the whole work tree, not one folder");
    let (filtered, _) = traced(&inside, hs, &["git", "unlock", "-i", &key], &trace);
    assert!(!filtered, "no file went through the filter");
    assert_eq!(c.read("d2/f6.env"), secret(6));
    assert_eq!(c.read("d1/f5.env"), secret(5));
    assert_eq!(c.status(), "");
}

#[test]
fn what_the_unlock_does_not_take_git_checks_out_and_a_changed_file_is_left() {
    let Some(tmp) = git_tmp() else { return };
    let large: Vec<u8> = (0..(3 << 19)).map(|i: u32| (i % 251) as u8).collect();
    let (_, c, key) = cloned(tmp.path(), 8, |r| {
        r.write("big.env", &large);
        r.write("run.env", b"#!/bin/sh\necho secret\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let f = r.dir.join("run.env");
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    });
    // The user's change to a locked file: never overwritten.
    let mut changed = c.read("d1/f1.env");
    changed.extend_from_slice(b"\nmore\n");
    c.write("d1/f1.env", &changed);

    let o = c.hs(&["git", "unlock", "-i", &key]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("1 marked file(s) with uncommitted changes left as they are (d1/f1.env"), "{err}");
    assert_eq!(c.read("d1/f1.env"), changed);
    assert_eq!(c.read("big.env"), large, "a large blob, checked out by git through the filter");
    assert_eq!(c.read("run.env"), b"#!/bin/sh\necho secret\n");
    for i in [0, 2, 3, 4, 5, 6, 7] {
        assert_eq!(c.read(&format!("d{}/f{i}.env", i % 4)), secret(i));
    }
    assert_eq!(c.status(), " M d1/f1.env\n", "only the user's change shows");
}
