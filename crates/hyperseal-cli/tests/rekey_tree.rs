//! `hyperseal rekey --recursive`: a whole tree in one command. What is not an encrypted file, or
//! not opened by the identities, is listed as skipped and never touched; a dry run changes
//! nothing; the summary counts every file; exit 0 only if nothing failed; and a run killed at
//! any moment resumes with the same command, leaving every file opening with the new set exactly
//! once and every payload byte as it was.

use crate::common;

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{hs, keypair, ok, p, two_keys, TwoKeys};

/// Every file under `dir` (names relative to it) with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push((e.path().strip_prefix(dir).unwrap().to_path_buf(), fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn recipients(file: &Path) -> String {
    let o = hs(&["inspect", "--json", p(file)], None);
    let v: serde_json::Value = serde_json::from_slice(&ok(&o).into_bytes()).unwrap();
    v["recipients"].to_string()
}

#[test]
fn a_tree_is_rekeyed_and_the_rest_is_skipped_untouched() {
    let TwoKeys { dir, me, me_pub: my_pub, new, new_pub } = two_keys();
    let d = dir.path();
    let (_, other_pub) = keypair(d, "other", "x25519");
    let t = d.join("tree");
    fs::create_dir_all(t.join("sub/deeper")).unwrap();
    for name in ["a", "sub/b", "sub/deeper/c"] {
        fs::write(t.join(format!("{name}.txt")), format!("plain {name}")).unwrap();
        let out = t.join(format!("{name}.hs"));
        ok(&hs(&["encrypt", "-q", "-r", &my_pub, "-o", p(&out), p(&t.join(format!("{name}.txt")))], None));
    }
    ok(&hs(&["age", "-r", &my_pub, "-o", p(&t.join("sub/d.age")), p(&t.join("a.txt"))], None));
    ok(&hs(&["encrypt", "-q", "-r", &other_pub, "-o", p(&t.join("theirs.hs")), p(&t.join("a.txt"))], None));
    std::os::unix::fs::symlink("a.hs", t.join("link.hs")).unwrap();
    // Armor of another kind (a PEM key) is not ours: skipped, not a failure.
    fs::write(
        t.join("id.pem"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();

    // A dry run prints the plan and touches nothing (no manifest either).
    let before = snapshot(&t);
    let o = hs(&["rekey", "-i", &me, "--add", &new_pub, "--recursive", "--dry-run", p(&t)], None);
    let plan = ok(&o);
    assert_eq!(plan.lines().count(), 4, "{plan}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("would re-key 4"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(snapshot(&t), before, "a dry run changed the tree");

    // --exclude keeps the age file out; everything else encrypted to `me` is re-keyed.
    let o = hs(&["rekey", "-i", &me, "--add", &new_pub, "--recursive", "--exclude", "*.age", p(&t)], None);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    assert!(err.contains("re-keyed 3") && err.contains("skipped"), "{err}");
    assert!(err.contains("theirs.hs: skipped: none of the identities opens it"), "{err}");
    assert!(err.contains("a.txt: skipped: not a hyperseal or age file"), "{err}");
    assert!(err.contains("id.pem: skipped: not a hyperseal or age file"), "{err}");
    assert!(err.contains("link.hs: skipped: a symbolic link"), "{err}");
    for name in ["a", "sub/b", "sub/deeper/c"] {
        let f = t.join(format!("{name}.hs"));
        assert_eq!(ok(&hs(&["decrypt", "-i", &new, p(&f)], None)), format!("plain {name}"));
    }
    let after = snapshot(&t);
    for (name, bytes) in &before {
        let untouched = !name.to_string_lossy().ends_with(".hs")
            || name.ends_with("theirs.hs")
            || name.ends_with("link.hs");
        if untouched && !name.ends_with("sub/d.age") {
            let now = after.iter().find(|(n, _)| n == name).map(|(_, b)| b);
            assert_eq!(now, Some(bytes), "{} was touched", name.display());
        }
    }
    assert_eq!(
        fs::read(t.join("sub/d.age")).unwrap(),
        before.iter().find(|(n, _)| n.ends_with("sub/d.age")).unwrap().1
    );
    assert!(t.join(".hyperseal-rekey.manifest").exists());

    // The same command again adds nothing twice: every file is verified as done.
    let o = hs(&["rekey", "-i", &me, "--add", &new_pub, "--recursive", "--exclude", "*.age", p(&t)], None);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("3 already done"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(recipients(&t.join("a.hs")), r#"{"X25519":2}"#);

    // Another change against the same manifest is refused, not mixed in.
    let o = hs(&["rekey", "-i", &me, "--add", &other_pub, "--recursive", p(&t)], None);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("another change"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // A damaged header is a failure: exit 1, and the summary counts it.
    let mut bad = fs::read(t.join("sub/b.hs")).unwrap();
    bad[40] ^= 1;
    fs::create_dir(d.join("two")).unwrap();
    fs::write(d.join("two/bad.hs"), &bad).unwrap();
    fs::copy(t.join("a.hs"), d.join("two/good.hs")).unwrap();
    let o = hs(&["rekey", "-i", &new, "--add", &other_pub, "--recursive", p(&d.join("two"))], None);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("1 failed") && err.contains("1 of 2 files failed"), "{err}");
}

/// SIGKILL at random moments of a run over 1,000 files, then the same command until it ends:
/// every file opens with the new set (exactly one added stanza), every payload is as it was, and
/// nothing else is left (no journal, no second name, no temporary).
#[test]
fn a_killed_run_resumes_with_the_same_command() {
    let TwoKeys { dir, me, me_pub: my_pub, new, new_pub } = two_keys();
    let d = dir.path();
    let plain: Vec<u8> = (0..3000u32).map(|i| (i * 13 % 251) as u8).collect();
    fs::write(d.join("plain"), &plain).unwrap();
    ok(&hs(&["encrypt", "-q", "-r", &my_pub, "-o", p(&d.join("one.hs")), p(&d.join("plain"))], None));
    let original = fs::read(d.join("one.hs")).unwrap();
    let payload_at = original.len() - (plain.len() + 16);
    let t = d.join("tree");
    for i in 0..1000 {
        let sub = t.join(format!("d{}", i % 10));
        fs::create_dir_all(&sub).unwrap();
        fs::write(sub.join(format!("f{i}.hs")), &original).unwrap();
    }
    let seed: u64 =
        std::env::var("HYPERSEAL_TREE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
        });
    eprintln!("HYPERSEAL_TREE_SEED={seed}");
    let mut x = seed | 1;
    let mut kills = 0;
    for _ in 0..8 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut child = Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(["rekey", "-q", "-i", &me, "--add", &new_pub, "--recursive", p(&t)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(2_000 + x % 150_000));
        let _ = child.kill();
        let status = child.wait().unwrap();
        kills += usize::from(status.signal() == Some(9));
    }
    let o = hs(&["rekey", "-i", &me, "--add", &new_pub, "--recursive", p(&t)], None);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "seed {seed}: {err}");
    assert!(err.contains("0 failed"), "{err}");
    eprintln!("{kills} runs killed; last: {}", err.lines().last().unwrap_or(""));
    let mut files = 0;
    for (name, bytes) in snapshot(&t) {
        let n = name.to_string_lossy();
        if n.ends_with(".hyperseal-rekey.manifest") {
            continue;
        }
        assert!(n.ends_with(".hs") && !n.contains("/."), "seed {seed}: left behind: {n}");
        files += 1;
        assert!(bytes.ends_with(&original[payload_at..]), "seed {seed}: {n}: payload changed");
        let f = t.join(&name);
        assert_eq!(recipients(&f), r#"{"X25519":2}"#, "seed {seed}: {n}");
        if files % 97 == 0 {
            let o = hs(&["decrypt", "-i", &new, p(&f)], None);
            assert!(o.status.success() && o.stdout == plain, "seed {seed}: {n}");
        }
    }
    assert_eq!(files, 1000);
}

/// Files are re-keyed in parallel, so one file reached twice (here by overlapping roots; also a
/// followed link, a hard link) must be one job: it is re-keyed once, by its first path, and the
/// others are listed as skipped. An X25519 `--add` twice would add two stanzas.
#[test]
fn a_file_reached_twice_is_rekeyed_once() {
    let TwoKeys { dir, me, me_pub: my_pub, new_pub, .. } = two_keys();
    let d = dir.path();
    let t = d.join("tree");
    fs::create_dir_all(t.join("sub")).unwrap();
    fs::write(d.join("plain"), b"payload").unwrap();
    for i in 0..40 {
        let out = t.join(format!("sub/f{i:02}.hs"));
        ok(&hs(&["encrypt", "-q", "-r", &my_pub, "-o", p(&out), p(&d.join("plain"))], None));
    }
    let manifest = d.join("m");
    let o = hs(
        &["rekey", "-i", &me, "--add", &new_pub, "--recursive", "--threads", "4", "--manifest"]
            .into_iter()
            .chain([p(&manifest), p(&t), p(&t.join("sub"))])
            .collect::<Vec<_>>(),
        None,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("80 files: re-keyed 40") && err.contains("40 skipped"), "{err}");
    for i in 0..40 {
        let r = recipients(&t.join(format!("sub/f{i:02}.hs")));
        assert_eq!(r, r#"{"X25519":2}"#, "f{i:02}");
    }
}

/// A run stopped after a rewrite's rename and before it removed the old file's second name
/// (`.NAME.hyperseal-old`, the old version, which still opens for the old recipients): the
/// file's header is the one the run was about to write, so the resumed run counts it done, and
/// the second name must go then too. The state is made by hand: a finished run whose last
/// manifest record (`done`) is taken back, and the old version at the second name.
#[test]
fn a_second_name_left_by_a_run_stopped_after_its_rename_is_removed_on_resume() {
    let TwoKeys { dir, me, me_pub: my_pub, new_pub, .. } = two_keys();
    let d = dir.path();
    let t = d.join("tree");
    fs::create_dir(&t).unwrap();
    fs::write(d.join("plain"), b"the old version").unwrap();
    ok(&hs(&["encrypt", "-q", "-r", &my_pub, "-o", p(&t.join("f.hs")), p(&d.join("plain"))], None));
    let old = fs::read(t.join("f.hs")).unwrap();
    let run = || hs(&["rekey", "-i", &me, "--add", &new_pub, "--recursive", p(&t)], None);
    let first = run();
    assert!(String::from_utf8_lossy(&first.stderr).contains("rewritten"), "{}", ok(&first));
    let manifest = t.join(".hyperseal-rekey.manifest");
    let text = fs::read_to_string(&manifest).unwrap();
    let last = text.trim_end_matches('\n').rfind('\n').unwrap();
    assert!(text[last + 1..].starts_with("done\t"), "{text}");
    fs::write(&manifest, &text[..last + 1]).unwrap();
    let second_name = t.join(".f.hs.hyperseal-old");
    fs::write(&second_name, &old).unwrap();
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success() && err.contains("1 already done"), "{err}");
    assert!(!second_name.exists(), "the old version is left beside the file: {err}");
}
