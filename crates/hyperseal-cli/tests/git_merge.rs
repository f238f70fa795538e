//! `hyperseal git`'s merge driver with the real git: a conflicting change to one marked file
//! leaves plaintext conflict markers in the unlocked work tree and fails the merge as git's own
//! merge does, while every object git stored (the driver's result included) is an age file; a
//! change on each side in different lines merges cleanly; a locked repository fails with one
//! line and keeps our side.

use crate::git_support;

use git_support::{age_open, git_tmp, git_tmp_and, unlocked, Repo, AGE_INTRO};

/// `s.env` as base, ours and theirs: a change to the same line on each side.
const CONFLICTING: [&[u8]; 3] = [
    b"USER=app\nPASSWORD=base-secret-1\nPORT=5432\n",
    b"USER=app\nPASSWORD=ours-secret-2\nPORT=5432\n",
    b"USER=app\nPASSWORD=theirs-secret-3\nPORT=5432\n",
];

/// `s.env` as base, ours and theirs: a change on each side, to different lines.
const APART: [&[u8]; 3] = [
    b"A=first-1\nB=second-1\nC=third-1\nD=fourth-1\n",
    b"A=first-2\nB=second-1\nC=third-1\nD=fourth-1\n",
    b"A=first-1\nB=second-1\nC=third-1\nD=fourth-3\n",
];

/// A repository with `*.env` marked and unlocked, `s.env` committed on `main` as `base`, then
/// as `theirs` on branch `other` and as `ours` on `main`.
fn diverged(tmp: &std::path::Path, [base, ours, theirs]: [&[u8]; 3]) -> (Repo, String) {
    let (r, key) = unlocked(tmp, "r");
    r.write("s.env", base);
    r.commit_all("base");
    r.diverge("s.env", ours, theirs, &[]);
    (r, key)
}

/// Asserts that no blob in the store holds any of `lines` (each a distinct secret line).
fn assert_no_plaintext(r: &Repo, lines: &[&[u8]]) {
    for l in lines {
        r.assert_no_blob_holds(l);
    }
}

#[test]
fn a_conflict_leaves_plaintext_markers_in_the_work_tree_and_only_age_files_in_git() {
    let Some((tmp, age)) = git_tmp_and("age") else { return };
    let (r, key) = diverged(tmp.path(), CONFLICTING);
    let o = r.git(&["merge", "other", "-m", "merge"]);
    assert!(!o.status.success(), "a conflicting merge exits non-zero");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("CONFLICT (content)") && out.contains("s.env"), "{out}");
    let text = String::from_utf8(r.read("s.env")).unwrap();
    assert_eq!(
        text,
        "USER=app\n<<<<<<< ours\nPASSWORD=ours-secret-2\n=======\nPASSWORD=theirs-secret-3\n>>>>>>> theirs\nPORT=5432\n",
        "plaintext markers in the unlocked work tree"
    );
    assert!(r.status().contains("UU s.env"), "{}", r.status());
    // Every stored object is an age file: the three stages, the driver's result, the commits'.
    assert_no_plaintext(&r, &[b"secret-1", b"secret-2", b"secret-3", b"<<<<<<<", b"PORT=5432"]);
    let unmarked = [r.blob("HEAD:.gitattributes"), r.blob("HEAD:.age-recipients")];
    for b in r.all_blobs() {
        assert!(b.starts_with(AGE_INTRO) || unmarked.contains(&b), "an unsealed blob");
    }
    // The resolution goes in through the filter, sealed.
    r.write("s.env", b"USER=app\nPASSWORD=resolved-secret-4\nPORT=5432\n");
    r.ok(&["add", "s.env"]);
    r.ok(&["commit", "-qm", "resolved"]);
    let blob = r.blob("HEAD:s.env");
    assert_eq!(age_open(&age, &key, &blob), b"USER=app\nPASSWORD=resolved-secret-4\nPORT=5432\n");
    assert_no_plaintext(&r, &[b"secret-4"]);
    assert_eq!(r.status(), "");
}

#[test]
fn changes_to_different_lines_of_one_file_merge_cleanly() {
    let Some((tmp, age)) = git_tmp_and("age") else { return };
    let (r, key) = diverged(tmp.path(), APART);
    r.ok(&["merge", "-q", "other", "-m", "merge"]);
    let merged = b"A=first-2\nB=second-1\nC=third-1\nD=fourth-3\n";
    assert_eq!(r.read("s.env"), merged);
    assert_eq!(age_open(&age, &key, &r.blob("HEAD:s.env")), merged, "the merge commit holds an age file");
    assert_eq!(r.status(), "");
    assert_no_plaintext(&r, &[b"first-", b"fourth-"]);
}

#[test]
fn a_locked_repository_fails_the_merge_in_one_line_and_keeps_our_side() {
    let Some(tmp) = git_tmp() else { return };
    let (r, _) = diverged(tmp.path(), [b"K=base-secret-1\n", b"K=ours-secret-2\n", b"K=theirs-secret-3\n"]);
    r.hs_ok(&["git", "lock"]);
    let ours = r.blob("HEAD:s.env");
    let o = r.git(&["merge", "other", "-m", "merge"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let ours_line: Vec<&str> = err.lines().filter(|l| l.starts_with("hyperseal: error:")).collect();
    assert_eq!(ours_line.len(), 1, "{err}");
    assert!(ours_line[0].contains("s.env") && ours_line[0].contains("locked"), "{err}");
    assert!(err.contains("hint: run `hyperseal git unlock`"), "{err}");
    assert_eq!(r.read("s.env"), ours, "the work tree keeps our stored age file");
    assert_no_plaintext(&r, &[b"secret-1", b"secret-2", b"secret-3"]);
}
