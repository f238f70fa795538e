//! git's own doors to a marked file's plaintext, tried with the real git and a user's global
//! configuration that opens them: rerere, `commit.verbose` and `diff.*.cachetextconv` leave
//! nothing in `.git`, even after a merge, a commit and `lock`; `mergetool.keepBackup` is off;
//! files git checks out, resets, stashes or leaves in conflict are private to their owner; a
//! `.age-recipients` that is a link or a FIFO fails `git add` at once; plaintext that begins
//! with age's first line is sealed; and `git log -p` of a repository with another team's files
//! shows a placeholder for them instead of failing.

use std::path::Path;

use crate::common;
use crate::git_support;

use common::keypair;
use git_support::{age_open, git_tmp, git_tmp_and, isolated, unlocked_with, Repo, AGE_INTRO};

/// A global git configuration of the test's with `text`, as `GIT_CONFIG_GLOBAL` names it.
fn global_config(tmp: &Path, text: &str) -> String {
    let f = tmp.join("gitconfig");
    std::fs::write(&f, text).unwrap();
    f.to_str().unwrap().to_string()
}

/// A repository with `*.env` marked, unlocked with a new key under the global git
/// configuration `global`: the repository and the key.
fn unlocked(tmp: &Path, global: &str) -> (Repo, String) {
    let env = [("GIT_CONFIG_GLOBAL", std::ffi::OsStr::new(global))];
    unlocked_with(tmp, "r", "hybrid", &["*.env"], &env)
}

#[test]
fn rerere_on_globally_keeps_no_plaintext_in_dot_git() {
    let Some(tmp) = git_tmp() else { return };
    let global = global_config(tmp.path(), "[rerere]\n\tenabled = true\n\tautoUpdate = true\n");
    let env = [("GIT_CONFIG_GLOBAL", global.as_str())];
    let (r, _) = unlocked(tmp.path(), &global);
    assert_eq!(r.ok(&["config", "--local", "rerere.enabled"]).trim(), "false");
    assert_eq!(r.ok(&["config", "--local", "mergetool.keepBackup"]).trim(), "false");
    r.write("s.env", b"USER=app\nPASSWORD=base-secret-1\n");
    r.ok_env(&["add", "-A"], &env);
    r.ok_env(&["commit", "-qm", "base"], &env);
    r.diverge("s.env", b"USER=app\nPASSWORD=ours-secret-2\n", b"USER=app\nPASSWORD=theirs-secret-3\n", &env);
    assert!(!r.git_env(&["merge", "other", "-m", "merge"], &env).status.success(), "a conflict");
    r.write("s.env", b"USER=app\nPASSWORD=resolved-secret-4\n");
    r.ok_env(&["add", "s.env"], &env);
    r.ok_env(&["commit", "-qm", "resolved"], &env);
    for secret in [&b"secret-2"[..], b"secret-3", b"secret-4"] {
        let found = r.dot_git_files_holding(secret);
        assert!(found.is_empty(), "plaintext in .git: {found:?}");
    }
    assert!(!r.dir.join(".git/rr-cache").exists(), "rerere recorded nothing");
    // Records made before hyperseal closed the door are removed by lock.
    let old = r.dir.join(".git/rr-cache/0123abcd");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("preimage"), b"PASSWORD=old-secret-5\n").unwrap();
    let o = r.hs_env(&["git", "lock"], &[("GIT_CONFIG_GLOBAL", std::ffi::OsStr::new(&global))]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(r.dot_git_files_holding(b"secret-5").is_empty() && !r.dir.join(".git/rr-cache").exists());
}

/// An editor that appends each message file git gives it to `seen`, then writes a message.
fn editor(tmp: &Path, seen: &Path) -> String {
    let script = tmp.join("editor.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat \"$1\" >> '{}'\nsed -i '1s/^/message/' \"$1\"\n", seen.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    script.to_str().unwrap().to_string()
}

#[test]
fn commit_verbose_leaves_no_plaintext_diff_in_dot_git() {
    let Some(tmp) = git_tmp() else { return };
    let global = global_config(tmp.path(), "[commit]\n\tverbose = true\n");
    let seen = tmp.path().join("seen");
    let ed = editor(tmp.path(), &seen);
    let env = [("GIT_CONFIG_GLOBAL", global.as_str()), ("GIT_EDITOR", ed.as_str())];
    let (r, _) = unlocked(tmp.path(), &global);
    r.write("s.env", b"TOKEN=first-secret-1\n");
    r.ok_env(&["add", "-A"], &env);
    r.ok_env(&["commit", "-q"], &env);
    r.write("s.env", b"TOKEN=second-secret-2\n");
    r.ok_env(&["add", "s.env"], &env);
    r.ok_env(&["commit", "-q"], &env);
    // And `-v` on the command line, without the global setting.
    r.write("s.env", b"TOKEN=third-secret-3\n");
    r.ok_env(&["commit", "-q", "-v", "-a"], &[("GIT_EDITOR", ed.as_str())]);
    let shown = String::from_utf8_lossy(&std::fs::read(&seen).unwrap()).into_owned();
    // The first commit's diff adds the file: a placeholder stands for its text (later ones
    // change one placeholder into the same, which git shows as no change).
    assert!(
        shown.contains(">8") && shown.contains("+[hyperseal: "),
        "the verbose diff holds a placeholder: {shown}"
    );
    for secret in [&b"secret-1"[..], b"secret-2", b"secret-3"] {
        assert!(!shown.as_bytes().windows(secret.len()).any(|w| w == secret), "{shown}");
        assert!(r.dot_git_files_holding(secret).is_empty(), "plaintext in .git");
    }
    // `git diff` outside a commit still shows plaintext.
    r.write("s.env", b"TOKEN=fourth-secret-4\n");
    assert!(r.ok(&["diff"]).contains("+TOKEN=fourth-secret-4"));
    // A diff an older hyperseal let git write there is cut by lock.
    let msg = r.dir.join(".git/COMMIT_EDITMSG");
    std::fs::write(
        &msg,
        "subject\n# ------------------------ >8 ------------------------\n+TOKEN=old-secret-5\n",
    )
    .unwrap();
    r.ok(&["checkout", "s.env"]);
    r.hs_ok(&["git", "lock"]);
    assert_eq!(std::fs::read_to_string(&msg).unwrap(), "subject\n");
}

#[cfg(unix)]
#[test]
fn recipients_only_from_a_regular_file_in_the_work_tree() {
    let Some(tmp) = git_tmp() else { return };
    let (_, elsewhere) = keypair(tmp.path(), "elsewhere", "hybrid");
    let r = Repo::init(tmp.path(), "r");
    r.hs_ok(&["git", "init", "*.env"]);
    let outside = tmp.path().join("outside-recipients");
    std::fs::write(&outside, format!("{elsewhere}\n")).unwrap();
    r.write("s.env", b"TOKEN=secret\n");
    let refused = |what: &str| {
        // A filter reading a FIFO would wait for ever: the child is stopped well past any
        // honest `git add` of one file, and the test fails.
        let mut c = isolated("timeout", &r.dir)
            .args(["120", "git", "add", "s.env"])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(c.stderr.as_mut().unwrap(), &mut err).unwrap();
        let status = c.wait().unwrap();
        assert_ne!(status.code(), Some(124), "git add hung on a {what} .age-recipients");
        assert!(!status.success(), "git add of s.env with a {what} .age-recipients");
        assert!(err.contains(".age-recipients") && err.contains(what), "{what}: {err}");
        assert_eq!(r.ok(&["ls-files"]), "", "nothing staged");
    };
    let link = r.dir.join(".age-recipients");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    refused("symbolic link");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("/dev/stdin", &link).unwrap();
    refused("symbolic link");
    std::fs::remove_file(&link).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&link).status().unwrap().success());
    refused("not a regular file");
    std::fs::remove_file(&link).unwrap();
    // verify names a committed link: a regular file when the secret was added, a link later.
    let (key, public) = keypair(tmp.path(), "key", "hybrid");
    r.write(".age-recipients", format!("{public}\n").as_bytes());
    r.hs_ok(&["git", "unlock", "-i", &key]);
    r.commit_all("one");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    r.ok(&["add", ".age-recipients"]);
    r.ok(&["commit", "-qm", "a link"]);
    let o = r.hs(&["git", "verify", "HEAD"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && out.contains("s.env") && out.contains("symbolic link"), "{out}");
}

#[test]
fn plaintext_that_begins_like_an_age_file_is_sealed() {
    let Some((tmp, age)) = git_tmp_and("age") else { return };
    let (r, key) = unlocked(tmp.path(), "/dev/null");
    let texts: [&[u8]; 3] = [
        b"age-encryption.org/v1\nTOKEN=looks-like-age-secret\n",
        b"age-encryption.org/v1\n-> X25519 abc\nnot base64!\n--- bad\nTOKEN=secret-two\n",
        b"age-encryption.org/v1\n",
    ];
    for (i, text) in texts.iter().enumerate() {
        let name = format!("s{i}.env");
        r.write(&name, text);
        r.ok(&["add", &name]);
        let blob = r.blob(&format!(":{name}"));
        assert!(blob.starts_with(AGE_INTRO) && blob != *text, "{name} is sealed");
        assert_eq!(age_open(&age, &key, &blob), *text, "{name}");
    }
    r.commit_all("one");
    // A real age file in a locked work tree is still stored as it is, and the tree stays clean.
    r.hs_ok(&["git", "lock"]);
    assert_eq!(r.status(), "");
    r.ok(&["add", "--renormalize", "."]);
    assert_eq!(r.status(), "", "locked files keep their blobs");
}

#[test]
fn another_teams_files_show_a_placeholder_in_log_p() {
    let Some(tmp) = git_tmp() else { return };
    let (_, other_team) = keypair(tmp.path(), "ops", "hybrid");
    let (r, _) = unlocked(tmp.path(), "/dev/null");
    r.write("prod/.age-recipients", format!("{other_team}\n").as_bytes());
    for round in 1..=2 {
        r.write("prod/db.env", format!("PROD_PASSWORD=ops-secret-{round}\n").as_bytes());
        r.write("app.env", format!("APP_TOKEN=dev-secret-{round}\n").as_bytes());
        r.commit_all(&format!("round {round}"));
    }
    // Each command succeeds; both sides of another team's change are the same placeholder, so
    // only the commit that added the file shows it.
    for args in [&["log", "-p"][..], &["show", "HEAD"], &["diff", "HEAD~1", "HEAD"]] {
        let out = r.ok(args);
        assert!(out.contains("+APP_TOKEN=dev-secret-2"), "{args:?}: our files as plaintext: {out}");
        assert!(!out.contains("ops-secret"), "{args:?}");
    }
    let out = r.ok(&["log", "-p", "--", "prod/db.env"]);
    assert!(out.contains("+[hyperseal: sealed to other recipients"), "{out}");
}

#[cfg(unix)]
#[test]
fn files_git_checks_out_are_private_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let Some(tmp) = git_tmp() else { return };
    let (r, key) = unlocked_with(tmp.path(), "r", "hybrid", &["--hooks", "*.env"], &[]);
    r.write("s.env", b"A=1\n");
    r.write("README", b"public\n");
    r.commit_all("one");
    r.branch("other", "s.env", b"A=2\n");
    let mode = |p: &str| std::fs::metadata(r.dir.join(p)).unwrap().permissions().mode() & 0o777;
    // Made world-readable, as git writes files under a umask of 022.
    std::fs::set_permissions(r.dir.join("README"), std::fs::Permissions::from_mode(0o644)).unwrap();
    r.ok(&["checkout", "-q", "main"]);
    assert_eq!(mode("s.env"), 0o600, "after a checkout (the post-checkout hook)");
    assert_eq!(mode("README"), 0o644, "unmarked files keep git's mode");
    r.ok(&["merge", "-q", "other"]);
    assert_eq!(mode("s.env"), 0o600, "after a merge (the post-merge hook)");
    // lock and unlock write through git too.
    r.hs_ok(&["git", "lock"]);
    std::fs::set_permissions(r.dir.join("s.env"), std::fs::Permissions::from_mode(0o644)).unwrap();
    r.hs_ok(&["git", "unlock", "-i", &key]);
    assert_eq!(mode("s.env"), 0o600, "after unlock");
    assert_eq!(r.status(), "");
}

/// git's cache of textconv output, where a global `diff.hyperseal.cachetextconv` would put it.
const TEXTCONV_NOTES: &str = "refs/notes/textconv/hyperseal";

#[test]
fn cachetextconv_on_globally_keeps_no_decrypted_diffs() {
    let Some(tmp) = git_tmp() else { return };
    let global = global_config(tmp.path(), "[diff \"hyperseal\"]\n\tcachetextconv = true\n");
    let env = [("GIT_CONFIG_GLOBAL", global.as_str())];
    let (r, _) = unlocked(tmp.path(), &global);
    assert_eq!(r.ok(&["config", "--local", "diff.hyperseal.cachetextconv"]).trim(), "false");
    r.write("s.env", b"TOKEN=first-secret-1\n");
    r.ok_env(&["add", "-A"], &env);
    r.ok_env(&["commit", "-qm", "one"], &env);
    r.write("s.env", b"TOKEN=second-secret-2\n");
    r.ok_env(&["commit", "-qam", "two"], &env);
    for args in [&["log", "-p"][..], &["diff", "HEAD~1", "HEAD"], &["show", "HEAD"]] {
        assert!(r.ok_env(args, &env).contains("+TOKEN=second-secret-2"), "{args:?} shows plaintext");
    }
    let has_notes = || r.git(&["rev-parse", "--verify", "--quiet", TEXTCONV_NOTES]).status.success();
    assert!(!has_notes(), "git cached no decrypted diff");
    r.assert_no_blob_holds(b"secret-2");
    // A cache made before the door was closed (the command line wins over local configuration):
    // lock removes its ref and says how to prune what it held.
    r.ok_env(&["-c", "diff.hyperseal.cachetextconv=true", "log", "-p"], &env);
    assert!(has_notes(), "git -c cachetextconv=true made the cache");
    assert!(r.all_blobs().iter().any(|b| b.windows(8).any(|w| w == b"secret-2")), "it holds plaintext");
    let o = r.hs_env(&["git", "lock"], &[("GIT_CONFIG_GLOBAL", std::ffi::OsStr::new(&global))]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!has_notes(), "lock removed {TEXTCONV_NOTES}: {err}");
    assert!(err.contains(TEXTCONV_NOTES) && err.contains("git gc --prune=now"), "{err}");
    // The advice it printed leaves no plaintext object.
    r.ok_env(&["reflog", "expire", "--expire=now", "--all"], &env);
    r.ok_env(&["gc", "-q", "--prune=now"], &env);
    r.assert_no_blob_holds(b"secret-1");
    r.assert_no_blob_holds(b"secret-2");
}

/// `git ARGS` in `r` under a umask of 022, as most users run it: the files git writes are 0644
/// unless something makes them private.
#[cfg(unix)]
fn git_umask_022(r: &Repo, args: &[&str]) -> std::process::Output {
    isolated("sh", &r.dir)
        .args(["-c", "umask 022 && exec git \"$@\"", "git"])
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn marked_files_stay_private_after_reset_stash_and_a_conflicted_merge() {
    use std::os::unix::fs::PermissionsExt;
    let Some(tmp) = git_tmp() else { return };
    let (r, _) = unlocked_with(tmp.path(), "r", "hybrid", &["--hooks", "*.env"], &[]);
    r.write("s.env", b"A=base-secret\n");
    r.write("README", b"public\n");
    r.commit_all("one");
    r.diverge("s.env", b"A=ours-secret\n", b"A=theirs-secret\n", &[]);
    let mode = |p: &str| std::fs::metadata(r.dir.join(p)).unwrap().permissions().mode() & 0o777;
    let chmod = |p: &str, m: u32| {
        std::fs::set_permissions(r.dir.join(p), std::fs::Permissions::from_mode(m)).unwrap()
    };
    // Each step starts from a world-readable file and ends with the git command: what is
    // private afterwards was made so by a hook that command ran. Every step is tried, and the
    // failure names each that left the file readable by others.
    let mut left_open = Vec::new();
    let mut step = |what: &str, args: &[&str], succeeds: bool| {
        chmod("s.env", 0o644);
        let o = git_umask_022(&r, args);
        assert_eq!(o.status.success(), succeeds, "{what}: {}", String::from_utf8_lossy(&o.stderr));
        if mode("s.env") != 0o600 {
            left_open.push(format!("{what}: {:o}", mode("s.env")));
        }
    };
    step("a conflicted merge", &["merge", "other", "-m", "merge"], false);
    assert!(r.read("s.env").starts_with(b"<<<<<<<"), "the conflict is in the work tree");
    step("git merge --abort", &["merge", "--abort"], true);
    r.write("s.env", b"A=uncommitted-secret\n");
    r.write("README", b"changed\n");
    chmod("README", 0o644);
    step("git reset --hard", &["reset", "--hard", "-q"], true);
    assert_eq!(r.read("s.env"), b"A=ours-secret\n");
    assert_eq!(mode("README"), 0o644, "unmarked files keep git's mode");
    r.write("s.env", b"A=stashed-secret\n");
    step("git stash", &["stash", "-q"], true);
    assert_eq!(r.read("s.env"), b"A=ours-secret\n");
    step("git stash pop", &["stash", "pop", "-q"], true);
    assert_eq!(r.read("s.env"), b"A=stashed-secret\n");
    assert!(left_open.is_empty(), "marked files left readable by others: {left_open:?}");
    let hook = std::fs::read_to_string(r.dir.join(".git/hooks/post-index-change")).unwrap();
    assert!(hook.contains("# hyperseal git:") && hook.contains("git private-modes"), "{hook}");
}
