//! `hyperseal rekey` as a user runs it: the payload never changes, the real age agrees on who
//! can open the result, refusals and the removal warning, and a kill or a full disk at any
//! instant leaves a file that opens with the old set or the new one.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common;
use common::{hs, ok, peer, stderr};

fn keypair(dir: &Path, name: &str) -> (String, String) {
    let key = dir.join(format!("{name}.key"));
    ok(&hs(&["keygen", "--kind", "x25519", "-o", key.to_str().unwrap()], None));
    let public = ok(&hs(&["pubkey", "-i", key.to_str().unwrap()], None)).trim().to_string();
    (key.to_str().unwrap().to_string(), public)
}

/// A plaintext of `n` bytes and its encryption to `public` (extra encrypt arguments in `args`).
/// A new temporary folder with the keys `a` and `b` in it: the folder, then each key's identity
/// file and recipient.
fn a_and_b() -> (tempfile::TempDir, (String, String), (String, String)) {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (keypair(d.path(), "a"), keypair(d.path(), "b"));
    (d, a, b)
}

fn encrypted(dir: &Path, public: &str, n: usize, args: &[&str]) -> (Vec<u8>, String) {
    let plain: Vec<u8> = (0..n as u32).map(|i| (i * 7 % 253) as u8).collect();
    let p = dir.join("plain");
    fs::write(&p, &plain).unwrap();
    let out = dir.join("file.enc");
    let _ = fs::remove_file(&out);
    let mut a = vec!["encrypt", "-q", "-r", public, "-o", out.to_str().unwrap()];
    a.extend_from_slice(args);
    a.push(p.to_str().unwrap());
    ok(&hs(&a, None));
    (plain, out.to_str().unwrap().to_string())
}

fn header_len(file: &[u8]) -> usize {
    hyperseal::format::Header::read_from(&mut &file[..]).unwrap().encode_len()
}

fn opens(id: &str, file: &str) -> Option<Vec<u8>> {
    let o = hs(&["decrypt", "-i", id, file], None);
    o.status.success().then_some(o.stdout)
}

#[test]
fn in_place_keeps_every_payload_byte_and_age_agrees() {
    let (d, (a_id, a), (b_id, b)) = a_and_b();
    let (plain, file) = encrypted(d.path(), &a, 3 << 20, &["--format", "age"]);
    let before = fs::read(&file).unwrap();
    let o = hs(&["rekey", "-i", &a_id, "-r", &b, "--remove-own", &file], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("header rewritten in place"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("hyperseal: warning:") && stderr(&o).contains("only --rotate"),
        "{}",
        stderr(&o)
    );
    let after = fs::read(&file).unwrap();
    assert_eq!(after.len(), before.len());
    let at = header_len(&before);
    assert_eq!(header_len(&after), at);
    assert_eq!(after[at..], before[at..], "payload bytes identical");
    assert_eq!(opens(&b_id, &file).unwrap(), plain);
    assert!(opens(&a_id, &file).is_none());
    if let Some(age) = peer("age") {
        let new = Command::new(&age).args(["-d", "-i", &b_id, &file]).output().unwrap();
        assert!(new.stdout == plain, "age: {}", stderr(&new));
        let old = Command::new(&age).args(["-d", "-i", &a_id, &file]).output().unwrap();
        assert!(!old.status.success());
    }
    assert!(!hyperseal::rekey::journal_path(Path::new(&file)).exists());
    // inspect shows the slack apart from the recipients, before and after alike.
    let j: serde_json::Value = serde_json::from_str(&ok(&hs(&["inspect", "--json", &file], None))).unwrap();
    assert_eq!(j["header_bytes"].as_u64(), Some(at as u64));
    assert!(j["slack_bytes"].as_u64().unwrap() >= 1024, "{j}");
    assert_eq!(j["recipients"], serde_json::json!({"X25519": 1}));
}

#[test]
fn small_files_armored_files_and_outputs_are_rewritten() {
    let (d, (a_id, a), (b_id, b)) = a_and_b();
    for args in [&[][..], &["-a"][..], &["--format", "age", "-a"][..]] {
        let (plain, file) = encrypted(d.path(), &a, 1000, args);
        let armored = args.contains(&"-a");
        ok(&hs(&["rekey", "-q", "-i", &a_id, "--add", &b, &file], None));
        let text = fs::read(&file).unwrap();
        assert_eq!(text.starts_with(b"-----BEGIN"), armored, "armor kept");
        assert_eq!(opens(&b_id, &file).unwrap(), plain);
        assert_eq!(opens(&a_id, &file).unwrap(), plain);
    }
    // -o: the input is untouched, an existing output needs --force.
    let (plain, file) = encrypted(d.path(), &a, 5000, &[]);
    let before = fs::read(&file).unwrap();
    let out = d.path().join("out.enc");
    fs::write(&out, b"keep me").unwrap();
    let o = hs(&["rekey", "-i", &a_id, "-r", &a, "-r", &b, "-o", out.to_str().unwrap(), &file], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(fs::read(&out).unwrap(), b"keep me");
    ok(&hs(&["rekey", "-i", &a_id, "-r", &a, "-r", &b, "--force", "-o", out.to_str().unwrap(), &file], None));
    assert_eq!(fs::read(&file).unwrap(), before);
    assert_eq!(opens(&b_id, out.to_str().unwrap()).unwrap(), plain);
}

#[test]
fn refusals_and_dry_run_change_nothing() {
    let (d, (a_id, a), (_, b)) = a_and_b();
    let (c_id, _) = keypair(d.path(), "c");
    let (_, file) = encrypted(d.path(), &a, 2 << 20, &[]);
    let before = fs::read(&file).unwrap();
    let dry = hs(&["rekey", "--dry-run", "-i", &a_id, "--add", &b, &file], None);
    assert_eq!(String::from_utf8_lossy(&dry.stdout), format!("{file}: [1 X25519] -> [2 X25519]\n"));
    let cases: [(&[&str], &str); 3] = [
        (&["-r", &b], "leave out every key"),
        (&["--remove", &b], "cannot be removed by name"),
        (&["--add", "age1pq1nope"], "invalid recipient"),
    ];
    for (args, words) in cases {
        let mut all = vec!["rekey", "-i", &a_id];
        all.extend_from_slice(args);
        all.push(&file);
        let o = hs(&all, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with("hyperseal: error: ") && stderr(&o).contains(words), "{}", stderr(&o));
        assert_eq!(fs::read(&file).unwrap(), before, "{args:?} changed the file");
    }
    // A wrong identity: nothing opened, nothing changed.
    let o = hs(&["rekey", "-i", &c_id, "--add", &b, &file], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(fs::read(&file).unwrap(), before);
}

#[test]
fn many_files_report_each_and_fail_if_any_failed() {
    let (d, (a_id, a), (b_id, b)) = a_and_b();
    let (plain, file) = encrypted(d.path(), &a, 100, &[]);
    let good = d.path().join("good.enc");
    fs::rename(&file, &good).unwrap();
    let bad = d.path().join("bad.enc");
    fs::write(&bad, b"not encrypted").unwrap();
    let o = hs(&["rekey", "-i", &a_id, "--add", &b, good.to_str().unwrap(), bad.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.enc: "), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 of 2 files failed"), "{}", stderr(&o));
    assert_eq!(fs::read(&bad).unwrap(), b"not encrypted");
    assert_eq!(opens(&b_id, good.to_str().unwrap()).unwrap(), plain);
}

#[test]
fn rotate_makes_a_new_file_key() {
    let (d, (a_id, a), (b_id, b)) = a_and_b();
    let (plain, file) = encrypted(d.path(), &a, 300_000, &[]);
    let before = fs::read(&file).unwrap();
    ok(&hs(&["rekey", "--rotate", "-i", &a_id, "-r", &b, "--remove-own", &file], None));
    let after = fs::read(&file).unwrap();
    let (hb, ha) = (header_len(&before), header_len(&after));
    assert_ne!(after[ha..ha + 16], before[hb..hb + 16], "fresh salt");
    assert_eq!(opens(&b_id, &file).unwrap(), plain);
    assert!(opens(&a_id, &file).is_none());
    // Rotation needs the full list.
    assert_eq!(hs(&["rekey", "--rotate", "-i", &b_id, "--add", &a, &file], None).status.code(), Some(2));
}

/// SIGKILL at many instants of in-place and rewriting re-keys: every time the file opens with
/// the old key or the new one, and the next re-key completes or cleans up the journal.
#[test]
fn a_kill_at_any_instant_leaves_the_old_set_or_the_new() {
    let (d, (a_id, a), (b_id, b)) = a_and_b();
    // 4 MiB: written with slack, re-keyed in place. 900 KB: no slack, so rewritten.
    let (plain, file) = {
        let (p, f) = encrypted(d.path(), &a, 4 << 20, &[]);
        let s = d.path().join("large.enc");
        fs::rename(&f, &s).unwrap();
        (p, s.to_str().unwrap().to_string())
    };
    let (small_plain, small) = {
        let (p, f) = encrypted(d.path(), &a, 900_000, &["--format", "age"]);
        let s = d.path().join("small.enc");
        fs::rename(&f, &s).unwrap();
        (p, s.to_str().unwrap().to_string())
    };
    let (mut old, mut new) = (0, 0);
    for i in 0..40u64 {
        for (f, p) in [(&file, &plain), (&small, &small_plain)] {
            let original = fs::read(f).unwrap();
            let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
            c.args(["rekey", "-q", "-i", &a_id, "--add", &b, f]).stderr(Stdio::null());
            let mut child = c.spawn().unwrap();
            std::thread::sleep(Duration::from_micros(i * 400));
            let _ = child.kill();
            let _ = child.wait();
            // The next re-key of the file rolls an interrupted one forward.
            hyperseal::rekey::recover(Path::new(f)).unwrap();
            assert_eq!(
                opens(&a_id, f).as_ref(),
                Some(p),
                "a kill at {} µs: the old key no longer opens",
                i * 400
            );
            match opens(&b_id, f) {
                Some(x) if x == *p => new += 1,
                Some(_) => panic!("wrong plaintext"),
                None => old += 1,
            }
            // No journal is left. (A SIGKILL in the instant between linking a finished rewrite
            // and renaming it over the file leaves that whole file under a hidden
            // `.hyperseal-*.partial` name, as for any forced output: see output/.)
            assert!(!hyperseal::rekey::journal_path(Path::new(f)).exists());
            for e in fs::read_dir(d.path()).unwrap() {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                assert!(!name.starts_with('.') || name.ends_with(".partial"), "left behind: {name}");
            }
            fs::write(f, &original).unwrap();
        }
    }
    // Where the kills land depends on the machine's load: either side is a pass. The re-key run
    // to its end shows the new side exists (and the cases above, the old one).
    eprintln!("kills: {old} left the old set, {new} the new");
    for (f, p) in [(&file, &plain), (&small, &small_plain)] {
        ok(&hs(&["rekey", "-q", "-i", &a_id, "--add", &b, f], None));
        assert_eq!(opens(&b_id, f).as_ref(), Some(p));
    }
}
/// A full disk (the file size limit) while the payload is copied: the file is untouched.
#[test]
fn a_full_disk_leaves_the_old_file() {
    let (d, (a_id, a), (_, b)) = a_and_b();
    let (plain, file) = encrypted(d.path(), &a, 3 << 20, &["--format", "age", "-a"]);
    let before = fs::read(&file).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
    c.args(["rekey", "-i", &a_id, "--add", &b, &file]);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 1 << 20, rlim_max: 1 << 20 };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            Ok(())
        });
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).lines().next().unwrap().starts_with("hyperseal: error: "), "{}", stderr(&o));
    assert_eq!(fs::read(&file).unwrap(), before);
    assert_eq!(opens(&a_id, &file).unwrap(), plain);
    let leftovers: Vec<_> = fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(leftovers.iter().all(|n| !n.to_string_lossy().starts_with('.')), "{leftovers:?}");
}

/// A file its owner removed stays removed: a stale second name (`.NAME.hyperseal-old`, left by a
/// rewrite killed on a system where it is a hard link) is never renamed back into its place.
#[test]
fn a_removed_file_is_not_brought_back_from_a_stale_second_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (id, public) = keypair(d, "me");
    let (_, file) = encrypted(d, &public, 5000, &[]);
    let stale = d.join(".file.enc.hyperseal-old");
    fs::rename(&file, &stale).unwrap();
    let o = hs(&["rekey", "-i", &id, "--add", &public, &file], None);
    assert!(!o.status.success(), "a removed file was re-keyed: {}", stderr(&o));
    assert!(!Path::new(&file).exists(), "the removed file came back from its stale second name");
}

/// A file that is empty, or not opened by the identities, fails before
/// anything is written, and says so as every failure of a file's re-key does (a writer that
/// truncated the file just before the re-key read it is the case that matters).
#[test]
fn a_file_that_fails_before_any_write_says_nothing_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (me, _) = common::keypair(d, "me", "x25519");
    let (_, other_pub) = common::keypair(d, "other", "x25519");
    fs::write(d.join("empty.hs"), b"").unwrap();
    fs::write(d.join("plain"), b"x").unwrap();
    ok(&hs(
        &[
            "encrypt",
            "-q",
            "-r",
            &other_pub,
            "-o",
            d.join("theirs.hs").to_str().unwrap(),
            d.join("plain").to_str().unwrap(),
        ],
        None,
    ));
    for (name, hint) in [("empty.hs", "no bytes at all"), ("theirs.hs", "other keys")] {
        for rotate in [false, true] {
            let f = d.join(name);
            let before = fs::read(&f).unwrap();
            let args = match rotate {
                false => vec!["rekey", "-i", &me, "--add", &other_pub, f.to_str().unwrap()],
                true => vec!["rekey", "--rotate", "-i", &me, "-r", &other_pub, f.to_str().unwrap()],
            };
            let o = hs(&args, None);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{name}");
            assert!(err.contains("nothing changed") && err.contains(hint), "{name} (rotate {rotate}): {err}");
            assert_eq!(fs::read(&f).unwrap(), before, "{name}");
        }
    }
}
