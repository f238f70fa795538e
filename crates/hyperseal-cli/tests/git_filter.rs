//! `hyperseal git` with the real git: marked paths are stored as age files that age v1.3.1
//! opens, a path without `.age-recipients` fails `git add` with nothing staged, plaintext that
//! did not change stores the same blob (touch, re-save, renormalize, stash, lock, unlock), a
//! change or another repository stores a different one, a fresh clone is clean and locked, and
//! branches, merges, rebases, worktrees and sparse checkouts go through the filter.

use crate::common;
use crate::git_support;

use common::keypair;
use git_support::{age_open, git_tmp, git_tmp_and, isolated, unlocked, Repo, AGE_INTRO};

const SECRET: &[u8] = b"DB_PASSWORD=correct horse battery staple\n";

#[test]
fn a_path_without_recipients_fails_closed() {
    let Some(tmp) = git_tmp() else { return };
    let r = Repo::init(tmp.path(), "r");
    r.hs_ok(&["git", "init", "*.env"]);
    r.write("app/secret.env", SECRET);
    let o = r.git(&["add", "app/secret.env"]);
    assert!(!o.status.success(), "git add must fail without recipients");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("hyperseal: error: app/secret.env") && err.contains(".age-recipients"), "{err}");
    assert_eq!(r.ok(&["ls-files"]), "", "nothing is staged");
    r.assert_no_blob_holds(SECRET);
}

#[test]
fn mixing_post_quantum_and_classic_recipients_is_refused() {
    let Some(tmp) = git_tmp() else { return };
    let (_, pq) = keypair(tmp.path(), "pq", "hybrid");
    let (_, classic) = keypair(tmp.path(), "classic", "x25519");
    let r = Repo::init(tmp.path(), "r");
    r.hs_ok(&["git", "init", "*.env"]);
    r.write(".age-recipients", format!("{pq}\n{classic}\n").as_bytes());
    r.write("secret.env", SECRET);
    let o = r.git(&["add", "secret.env"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("secret.env") && err.contains("post-quantum and classic"), "{err}");
    assert_eq!(r.ok(&["ls-files"]), "");
    r.assert_no_blob_holds(SECRET);
}

#[test]
fn blobs_are_age_files_and_unchanged_plaintext_stores_the_same_blob() {
    let Some((tmp, age)) = git_tmp_and("age") else { return };
    let (r, key) = unlocked(tmp.path(), "r");
    r.write("secret.env", SECRET);
    r.write("README", b"not marked\n");
    r.commit_all("one");
    let blob = r.blob("HEAD:secret.env");
    assert!(blob.starts_with(AGE_INTRO), "a binary age v1 file");
    assert_eq!(age_open(&age, &key, &blob), SECRET, "age v1.3.1 opens the stored blob");
    assert_eq!(r.blob("HEAD:README"), b"not marked\n");
    assert_eq!(r.read("secret.env"), SECRET, "the work tree holds plaintext");
    let id = r.staged("secret.env");

    // touch, re-save, renormalize: the same blob, a clean status.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    r.write("secret.env", SECRET);
    assert_eq!(r.status(), "");
    r.ok(&["add", "--renormalize", "."]);
    r.ok(&["add", "secret.env"]);
    assert_eq!(r.staged("secret.env"), id);

    // diff through the textconv: plaintext lines.
    r.write("secret.env", b"DB_PASSWORD=new\n");
    let diff = r.ok(&["diff"]);
    assert!(diff.contains("-DB_PASSWORD=correct horse") && diff.contains("+DB_PASSWORD=new"), "{diff}");

    // stash and pop: the stored blob comes back as plaintext; dropping the change restores
    // the very same blob.
    r.ok(&["stash", "-q"]);
    assert_eq!(r.read("secret.env"), SECRET);
    assert_eq!(r.status(), "");
    r.ok(&["stash", "pop", "-q"]);
    assert_eq!(r.read("secret.env"), b"DB_PASSWORD=new\n");
    r.ok(&["commit", "-qam", "two"]);
    let changed = r.staged("secret.env");
    assert_ne!(changed, id, "a change is sealed again");
    assert_eq!(age_open(&age, &key, &r.blob(&changed)), b"DB_PASSWORD=new\n");
    let log = r.ok(&["log", "-p", "--", "secret.env"]);
    assert!(log.contains("+DB_PASSWORD=new") && log.contains("+DB_PASSWORD=correct horse"), "{log}");

    // lock: the stored age files in the work tree, status clean; unlock: plaintext again.
    let o = r.hs(&["git", "lock"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(r.read("secret.env"), r.blob("HEAD:secret.env"));
    assert_eq!(r.status(), "");
    r.hs_ok(&["git", "unlock", "-i", &key]);
    assert_eq!(r.read("secret.env"), b"DB_PASSWORD=new\n");
    assert_eq!(r.status(), "");
    assert_eq!(r.staged("secret.env"), changed, "lock and unlock store nothing new");

    // Another repository with the same plaintext stores a different blob.
    let (other, _) = unlocked(tmp.path(), "other");
    other.write("secret.env", b"DB_PASSWORD=new\n");
    other.ok(&["add", "secret.env"]);
    assert_ne!(other.blob(":secret.env"), r.blob(":secret.env"));
    r.assert_no_blob_holds(b"correct horse");
    r.assert_no_blob_holds(b"DB_PASSWORD=new");
}

/// [`unlocked`] with `secret.env` committed as `SECRET`.
fn committed(tmp: &std::path::Path, name: &str) -> (Repo, String) {
    let (r, key) = unlocked(tmp, name);
    r.write("secret.env", SECRET);
    r.commit_all("one");
    (r, key)
}

#[test]
fn lock_refuses_uncommitted_changes() {
    let Some(tmp) = git_tmp() else { return };
    let (r, _) = committed(tmp.path(), "r");
    r.write("secret.env", b"work in progress\n");
    let o = r.hs(&["git", "lock"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("hyperseal: error:") && err.contains("secret.env") && err.contains("hint:"),
        "{err}"
    );
    assert_eq!(r.read("secret.env"), b"work in progress\n", "nothing was overwritten");
}

#[test]
fn a_fresh_clone_is_locked_and_clean_until_unlocked() {
    let Some(tmp) = git_tmp() else { return };
    let (r, key) = committed(tmp.path(), "origin");
    let o = git_support::git_in(tmp.path(), &["clone", "-q", r.dir.to_str().unwrap(), "clone"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = Repo::at(tmp.path().join("clone"));
    assert_eq!(c.read("secret.env"), r.blob("HEAD:secret.env"), "the stored age file");
    assert_eq!(c.status(), "");
    c.hs_ok(&["git", "unlock", "-i", &key]);
    assert_eq!(c.read("secret.env"), SECRET);
    assert_eq!(c.status(), "", "unlocking changes nothing that git stores");
}

#[test]
fn branches_merge_rebase_worktree_and_sparse_checkout() {
    let Some(tmp) = git_tmp() else { return };
    let (r, _) = unlocked(tmp.path(), "r");
    r.write("a.env", b"A=1\n");
    r.write("b.env", b"B=1\n");
    r.write("deep/c.env", b"C=1\n");
    r.commit_all("base");
    r.branch("left", "a.env", b"A=2\n");
    r.ok(&["checkout", "-q", "-b", "right", "main"]);
    assert_eq!(r.read("a.env"), b"A=1\n", "checkout smudges the branch's blob");
    r.write("b.env", b"B=2\n");
    r.ok(&["commit", "-qam", "right"]);
    r.ok(&["merge", "-q", "left", "-m", "merge"]);
    assert_eq!((r.read("a.env"), r.read("b.env")), (b"A=2\n".to_vec(), b"B=2\n".to_vec()));
    assert_eq!(r.status(), "");

    r.ok(&["checkout", "-q", "-b", "topic", "main"]);
    r.write("deep/c.env", b"C=2\n");
    r.ok(&["commit", "-qam", "topic"]);
    r.ok(&["rebase", "-q", "left"]);
    assert_eq!((r.read("a.env"), r.read("deep/c.env")), (b"A=2\n".to_vec(), b"C=2\n".to_vec()));
    assert_eq!(r.status(), "");

    let wt = tmp.path().join("wt");
    r.ok(&["worktree", "add", "-q", wt.to_str().unwrap(), "left"]);
    let w = Repo::at(wt);
    assert_eq!(w.read("a.env"), b"A=2\n", "a worktree shares the unlocked configuration");
    assert_eq!(w.status(), "");

    r.ok(&["sparse-checkout", "set", "--no-cone", "/deep/"]);
    assert!(!r.dir.join("a.env").exists());
    assert_eq!(r.read("deep/c.env"), b"C=2\n");
    r.ok(&["sparse-checkout", "disable"]);
    assert_eq!(r.read("a.env"), b"A=2\n");
    assert_eq!(r.status(), "");
    for secret in [&b"A=1"[..], b"A=2", b"B=1", b"B=2", b"C=1", b"C=2"] {
        r.assert_no_blob_holds(secret);
    }
}

#[test]
fn init_twice_changes_nothing() {
    let Some(tmp) = git_tmp() else { return };
    let r = Repo::init(tmp.path(), "r");
    r.hs_ok(&["git", "init", "*.env", "secrets/**"]);
    let (attrs, config) = (r.read(".gitattributes"), r.read(".git/config"));
    assert_eq!(
        String::from_utf8_lossy(&attrs),
        "*.env filter=hyperseal diff=hyperseal merge=hyperseal -text\nsecrets/** filter=hyperseal diff=hyperseal merge=hyperseal -text\n"
    );
    r.hs_ok(&["git", "init", "*.env", "secrets/**"]);
    assert_eq!((r.read(".gitattributes"), r.read(".git/config")), (attrs, config));
    assert_eq!(r.ok(&["config", "filter.hyperseal.required"]).trim(), "true");
    let o = r.hs(&["git", "init", "a b"]);
    assert_eq!(o.status.code(), Some(2), "a pattern with a space is a usage error");
}

/// Each file's answer reaches git in one write: git blocks until it has the whole answer, so an
/// answer cut in two wakes it twice per file. (Rust's standard output is line-buffered: behind
/// it, an answer went out up to its last newline, and the rest at the flush.)
#[test]
fn each_answer_is_one_write() {
    let Some(strace) = common::peer_on_path("strace") else { return };
    let Some(tmp) = git_tmp() else { return };
    let (r, _) = unlocked(tmp.path(), "r");
    let files = 5;
    for i in 0..files {
        r.write(&format!("f{i}.env"), format!("LINE={i}\nMORE=x\n").as_bytes());
    }
    let trace = tmp.path().join("trace");
    let o = isolated(&strace, &r.dir)
        .args(["-f", "-qq", "-e", "trace=execve,write", "-e", "signal=none", "-s", "400", "-o"])
        .arg(&trace)
        .args(["git", "add", "-A"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = std::fs::read_to_string(&trace).unwrap();
    let filter = t
        .lines()
        // hyperseal's own start, not that of the shell git may start it through.
        .find(|l| {
            l.contains("execve(")
                && l.contains("hyperseal\", [")
                && l.contains("filter-process")
                && l.ends_with("= 0")
        })
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no filter process in the trace:\n{t}"));
    // The filter's writes to git: everything but its standard error.
    let writes: Vec<&str> = t
        .lines()
        .filter(|l| {
            l.split_whitespace().next() == Some(filter) && l.contains(" write(") && !l.contains(" write(2,")
        })
        .collect();
    let answers = writes.iter().filter(|l| l.contains("\"0013status=success\\n")).count();
    assert_eq!(answers, files, "{writes:#?}");
    // Two for the handshake (its version, then its capabilities), then one per file.
    assert_eq!(writes.len(), 2 + files, "{writes:#?}");
    assert_eq!(r.ok(&["ls-files"]).lines().filter(|l| l.ends_with(".env")).count(), files);
}
