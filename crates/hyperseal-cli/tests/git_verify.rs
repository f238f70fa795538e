//! `hyperseal git verify` catches what the filter would never store: plaintext added with the
//! filter bypassed (as tools that ignore `.gitattributes` do), and blobs whose stanzas do not
//! match their `.age-recipients`; `init --hooks` runs it before each commit.

use crate::common;
use crate::git_support;

use common::keypair;
use git_support::{git_tmp, unlocked_with, Repo};

/// A repository with one sealed, committed marked file.
fn sealed_repo(tmp: &std::path::Path) -> Repo {
    let (r, _) = unlocked_with(tmp, "r", "hybrid", &["--hooks", "*.env"], &[]);
    r.write("good.env", b"GOOD=1\n");
    r.commit_all("one");
    r
}

/// `git add` with the filter bypassed.
const BYPASS: [&str; 4] = ["-c", "filter.hyperseal.process=", "-c", "filter.hyperseal.required=false"];

#[test]
fn verify_passes_a_sealed_repository_and_names_each_bad_path() {
    let Some(tmp) = git_tmp() else { return };
    let r = sealed_repo(tmp.path());
    let o = r.hs(&["git", "verify"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = r.hs(&["git", "verify", "HEAD"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    r.write("leak.env", b"LEAK=1\n");
    let mut add = BYPASS.to_vec();
    add.extend(["add", "leak.env"]);
    r.ok(&add);
    let o = r.hs(&["git", "verify"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("leak.env: not an age file") && !out.contains("good.env"), "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("hyperseal: error: 1 of 2 marked path(s)") && err.contains("hint:"), "{err}");

    // The pre-commit hook `init --hooks` installed refuses that commit.
    let o = r.git(&["commit", "-qm", "leak"]);
    assert!(!o.status.success(), "the hook stops a commit of plaintext");
    assert!(r.git(&["rev-parse", "HEAD~1"]).status.code() != Some(0), "nothing was committed");
}

#[test]
fn verify_catches_stanzas_that_do_not_match_the_recipients() {
    let Some(tmp) = git_tmp() else { return };
    let r = sealed_repo(tmp.path());
    let (_, second) = keypair(tmp.path(), "second", "hybrid");
    let mut text = r.read(".age-recipients");
    text.extend_from_slice(format!("{second}\n").as_bytes());
    r.write(".age-recipients", &text);
    r.ok(&["add", ".age-recipients"]);
    let o = r.hs(&["git", "verify"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("good.env: 1 stanza(s) (mlkem768x25519), but its .age-recipients makes 2"), "{out}");
    // HEAD still matches its own recipients file.
    assert!(r.hs(&["git", "verify", "HEAD"]).status.success());
}
