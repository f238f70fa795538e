//! A tree re-key in a folder others may write (docs/SECURITY.md, "A tree re-key in a shared
//! folder"): it touches only the files its walk found, never through a link or a FIFO swapped in
//! afterwards; it trusts no manifest it did not make; a record counts as done only for the
//! header this change's run wrote; a colleague's file it may read but not write, and cannot
//! open, is skipped; and every file name, UTF-8 or not, is matched exactly on resume.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use hyperseal::recipient::{parse_recipient, Identity};
use hyperseal::rekey::{rekey_tree, Change, TreeOptions, TreeOutcome};

use crate::common;
use common::swap::{swapping, walked_within_a_minute};
use common::{hs, keypair, ok, p, TwoKeys};

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn encrypt(to: &str, out: &Path, text: &str) {
    let plain = out.with_extension("plain");
    fs::write(&plain, text).unwrap();
    ok(&hs(&["encrypt", "-q", "-r", to, "-o", p(out), p(&plain)], None));
    fs::remove_file(plain).unwrap();
}

fn stanzas(file: &Path) -> usize {
    let o = hs(&["inspect", "--json", p(file)], None);
    let v: serde_json::Value = serde_json::from_slice(ok(&o).as_bytes()).unwrap();
    v["recipients"].as_object().unwrap().values().map(|n| n.as_u64().unwrap() as usize).sum()
}

fn opens(key: &str, file: &Path) -> bool {
    hs(&["decrypt", "-i", key, p(file)], None).status.success()
}

/// A folder with the caller's key (`me`), a key to add (`new`) and an empty `tree/`: the keys
/// and the tree.
fn setup() -> (TwoKeys, PathBuf) {
    let keys = common::two_keys();
    let tree = keys.dir.path().join("tree");
    fs::create_dir(&tree).unwrap();
    (keys, tree)
}

#[test]
fn a_swap_after_the_walk_touches_nothing_outside_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let (admin, admin_pub) = keypair(&d, "admin", "x25519");
    let (_, carol_pub) = keypair(&d, "carol", "x25519");
    let (t, victim) = (d.join("tree"), d.join("victim"));
    fs::create_dir_all(t.join("u/d")).unwrap();
    fs::create_dir_all(&victim).unwrap();
    for f in ["a.hs", "u/d/y.hs", "u/f.hs", "u/x.hs"] {
        encrypt(&admin_pub, &t.join(f), f);
    }
    // Her files, outside the tree, that the administrator's key also opens.
    encrypt(&admin_pub, &victim.join("secret.hs"), "hers");
    encrypt(&admin_pub, &victim.join("y.hs"), "hers too");
    let before: Vec<Vec<u8>> =
        ["secret.hs", "y.hs"].iter().map(|f| fs::read(victim.join(f)).unwrap()).collect();

    let ids: Vec<Box<dyn Identity>> = vec![Box::new(swapping(Path::new(&admin), &t, &victim, "hs"))];
    let change = Change { add: vec![parse_recipient(&carol_pub).unwrap()], ..Change::default() };
    let opts = TreeOptions { recursive: true, threads: 1, ..TreeOptions::default() };

    let root = t.clone();
    let walk = move || rekey_tree(&[root], &ids, &change, &opts, None).unwrap().files;
    let lines = walked_within_a_minute(walk, |o| match o {
        TreeOutcome::Rekeyed(_) => "rekeyed".to_string(),
        TreeOutcome::AlreadyDone => "done".into(),
        TreeOutcome::Skipped(why) => format!("skipped: {why}"),
        TreeOutcome::Failed(e) => format!("failed: {e}"),
    });
    let of = |f: &str| lines.iter().find(|(path, _)| path == &t.join(f)).map(|(_, w)| w.clone()).unwrap();
    assert_eq!(of("a.hs"), "rekeyed");
    for f in ["u/d/y.hs", "u/f.hs", "u/x.hs"] {
        let line = of(f);
        assert!(line.starts_with("failed: ") && line.contains("was replaced after the walk"), "{f}: {line}");
        // The line names the file as the walk found it, and says what it was left as.
        assert!(line.contains(p(&t.join(f))) && line.contains("nothing changed"), "{f}: {line}");
    }
    let after: Vec<Vec<u8>> =
        ["secret.hs", "y.hs"].iter().map(|f| fs::read(victim.join(f)).unwrap()).collect();
    assert_eq!(after, before, "a file outside the tree was re-keyed");
    assert_eq!(fs::read_dir(&victim).unwrap().count(), 2, "something was created outside the tree");
}

#[test]
fn a_manifest_the_caller_did_not_make_is_refused() {
    let (TwoKeys { dir, me, me_pub, new_pub, .. }, t) = setup();
    let d = dir.path();
    encrypt(&me_pub, &t.join("a.hs"), "a");
    let a = fs::read(t.join("a.hs")).unwrap();
    let manifest = t.join(".hyperseal-rekey.manifest");
    let run = || hs(&["rekey", "-i", &me, "--add", &new_pub, "--recursive", p(&t)], None);

    // A link planted at the manifest's name: nothing is created or written through it.
    let target = d.join("planted-target");
    std::os::unix::fs::symlink(&target, &manifest).unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("is not your own private regular file"), "{}", err(&o));
    assert!(!target.exists(), "the run wrote through a planted link");
    assert_eq!(fs::read(t.join("a.hs")).unwrap(), a);
    fs::remove_file(&manifest).unwrap();

    // One others may write (and, as root, one another user owns): refused, nothing touched.
    let o = run();
    ok(&o);
    let made = fs::metadata(&manifest).unwrap();
    assert_eq!(made.permissions().mode() & 0o777, 0o600, "the manifest is created private");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::remove_file(&manifest).unwrap();
    let a = fs::read(t.join("a.hs")).unwrap();
    fs::write(&manifest, &text).unwrap();
    fs::set_permissions(&manifest, fs::Permissions::from_mode(0o664)).unwrap();
    let o = run();
    assert!(err(&o).contains("is not your own private regular file"), "{}", err(&o));
    if made.uid() == 0 {
        fs::set_permissions(&manifest, fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&manifest, Some(65534), Some(65534)).unwrap();
        let o = run();
        assert!(err(&o).contains("is not your own private regular file"), "{}", err(&o));
    }
    assert_eq!(fs::read(t.join("a.hs")).unwrap(), a);
}

#[test]
fn a_version_saved_after_a_failed_run_is_rekeyed_not_counted_done() {
    let (TwoKeys { dir, me, me_pub, new, new_pub }, t) = setup();
    let d = dir.path();
    for f in ["a.hs", "b.hs"] {
        encrypt(&me_pub, &t.join(f), f);
    }
    let run = || hs(&["rekey", "-i", &me, "--add", &new_pub, "--recursive", p(&t)], None);
    // Run 1 fails on a.hs: another program holds it open.
    let held = fs::File::open(t.join("a.hs")).unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("open in another program"), "{}", err(&o));
    drop(held);
    // That program then saves a new version in place, for the old recipient only.
    let plain = d.join("v2");
    fs::write(&plain, "version 2").unwrap();
    let v2 = hs(&["encrypt", "-q", "-r", &me_pub, p(&plain)], None);
    fs::write(t.join("a.hs"), v2.stdout).unwrap();

    let o = run();
    let e = err(&o);
    assert!(o.status.success(), "{e}");
    assert!(!e.contains("a.hs: already done"), "a version nobody re-keyed was counted as done: {e}");
    assert!(e.contains("1 already done"), "{e}");
    assert_eq!(ok(&hs(&["decrypt", "-i", &new, p(&t.join("a.hs"))], None)), "version 2");
    assert!(opens(&new, &t.join("b.hs")));
}

/// As root, the run drops to `nobody` (root may write every file).
#[test]
fn a_colleagues_file_you_may_only_read_is_skipped() {
    let (TwoKeys { dir, me, me_pub, new_pub, .. }, t) = setup();
    let d = dir.path();
    fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
    let (_, colleague_pub) = keypair(d, "colleague", "x25519");
    encrypt(&colleague_pub, &t.join("theirs.hs"), "theirs");
    encrypt(&me_pub, &t.join("mine.hs"), "mine");
    encrypt(&me_pub, &t.join("readonly-mine.hs"), "mine too");
    let root = unsafe { libc::geteuid() } == 0; // SAFETY: geteuid cannot fail.
    for f in [&me, &me_pub] {
        let _ = fs::set_permissions(f, fs::Permissions::from_mode(0o644));
    }
    for f in ["theirs.hs", "readonly-mine.hs"] {
        fs::set_permissions(t.join(f), fs::Permissions::from_mode(0o444)).unwrap();
    }
    if root {
        for f in [t.as_path(), &t.join("mine.hs")] {
            std::os::unix::fs::chown(f, Some(65534), Some(65534)).unwrap();
        }
    }
    let theirs = fs::read(t.join("theirs.hs")).unwrap();
    // nobody runs the binary from where it can reach it, whatever folder the checkout is in.
    let bin = if root { crate::common::others::binary() } else { Path::new(env!("CARGO_BIN_EXE_hyperseal")) };
    let mut c = Command::new(bin);
    c.args(["rekey", "-i", &me, "--add", &new_pub, "--recursive", p(&t)]);
    if root {
        c.uid(65534).gid(65534);
    }
    let o = c.stdin(Stdio::null()).output().unwrap();
    let e = err(&o);
    assert!(e.contains("theirs.hs: skipped: none of the identities opens it"), "{e}");
    assert!(e.contains("readonly-mine.hs") && e.contains("cannot be written by you"), "{e}");
    assert!(e.contains("nothing changed"), "every failure says what the file was left as: {e}");
    assert!(e.contains("1 skipped, 1 failed"), "{e}");
    assert_eq!(fs::read(t.join("theirs.hs")).unwrap(), theirs);
    assert_eq!(stanzas(&t.join("mine.hs")), 2);
}

#[test]
fn a_name_that_is_not_utf8_is_found_on_resume() {
    use std::os::unix::ffi::OsStrExt;
    let (TwoKeys { dir, me, me_pub, new_pub, .. }, t) = setup();
    let d = dir.path();
    let latin1 = t.join(std::ffi::OsStr::from_bytes(b"caf\xe9.hs"));
    encrypt(&me_pub, &d.join("cafe.hs"), "latin-1 name");
    fs::rename(d.join("cafe.hs"), &latin1).unwrap();
    for _ in 0..2 {
        ok(&hs(&["rekey", "-i", &me, "--add", &new_pub, "--recursive", p(&t)], None));
    }
    let copy = d.join("copy.hs");
    fs::copy(&latin1, &copy).unwrap();
    assert_eq!(stanzas(&copy), 2, "the recipient was added twice");
}
