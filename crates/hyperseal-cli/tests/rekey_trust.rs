//! What a re-key promises beyond the happy path (docs/SECURITY.md, "Re-key"), each as a user
//! meets it: a post-quantum file is never moved to a classical key under its old file key, a
//! rotation keeps the lock-out guard, the lock comes before recovery, a journal name another
//! user controls never blocks or receives headers, and a rewritten file keeps its owner, mode,
//! attributes and hard links. The faults and concurrent writers at every system call are in
//! `rekey_faults.rs`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{hs, keypair, ok, stderr};

/// An encryption of 100 KB to `to`, at `dir/name` (extra encrypt arguments in `args`).
/// A new temporary folder with two X25519 keys named `names` in it: the folder, then each key's
/// identity file and recipient.
fn two_x25519(names: [&str; 2]) -> (tempfile::TempDir, [(String, String); 2]) {
    let d = tempfile::tempdir().unwrap();
    let keys = names.map(|name| keypair(d.path(), name, "x25519"));
    (d, keys)
}

fn encrypted(dir: &Path, name: &str, to: &[&str], args: &[&str]) -> String {
    encrypted_sized(dir, name, to, args, 100_000)
}

/// From 1 MiB, files are written with slack: a re-key adding a recipient fits in place.
const WITH_SLACK: usize = 1 << 20;

fn encrypted_sized(dir: &Path, name: &str, to: &[&str], args: &[&str], size: usize) -> String {
    let p = dir.join("plain");
    fs::write(&p, vec![7u8; size]).unwrap();
    let out = dir.join(name);
    let mut a = vec!["encrypt", "-q", "-o", out.to_str().unwrap()];
    for r in to {
        a.extend(["-r", r]);
    }
    a.extend_from_slice(args);
    a.push(p.to_str().unwrap());
    ok(&hs(&a, None));
    out.to_str().unwrap().to_string()
}

/// Runs `rekey --add ADD` on `file` under strace, killed at its header write (the write itself
/// not made): it leaves exactly the journal a live re-key has on disk. Its path; `None` when
/// strace is missing (outside `make test`).
fn killed_at_header_write(id: &str, add: &str, file: &str) -> Option<std::path::PathBuf> {
    let strace = common::peer_on_path("strace")?;
    let inject = "inject=pwrite64:error=EIO:signal=KILL:when=1";
    let o = Command::new(strace)
        .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=pwrite64", "-e", inject])
        .args([env!("CARGO_BIN_EXE_hyperseal"), "rekey", "-i", id, "--add", add, file])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let jpath = hyperseal::rekey::journal_path(Path::new(file));
    assert!(jpath.exists(), "no journal: {}", stderr(&o));
    Some(jpath)
}

fn opens(id: &str, file: &str) -> bool {
    hs(&["decrypt", "-i", id, "-o", "/dev/null", file], None).status.success()
}

#[test]
fn a_post_quantum_file_is_never_rewrapped_to_a_classical_key() {
    let d = tempfile::tempdir().unwrap();
    let (pq_id, pq) = keypair(d.path(), "pq", "hybrid");
    let (a_id, a) = keypair(d.path(), "a", "x25519");
    let file = encrypted(d.path(), "pq.age", &[&pq], &["--format", "age"]);
    let before = fs::read(&file).unwrap();
    for args in [&["-i", &pq_id, "-i", &a_id, "-r", &a][..], &["-i", &pq_id, "-r", &a, "--remove-own"][..]] {
        let mut all = vec!["rekey"];
        all.extend_from_slice(args);
        all.push(&file);
        let o = hs(&all, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("post-quantum") && stderr(&o).contains("--rotate"), "{}", stderr(&o));
        assert_eq!(fs::read(&file).unwrap(), before, "the file changed");
    }
    // A rotation draws a fresh key: allowed.
    ok(&hs(&["rekey", "--rotate", "-i", &pq_id, "-r", &a, "--remove-own", &file], None));
    assert!(opens(&a_id, &file) && !opens(&pq_id, &file));
}

#[test]
fn rotate_keeps_the_lock_out_guard() {
    let (d, [(a_id, a), (c_id, c)]) = two_x25519(["a", "c"]);
    let file = encrypted(d.path(), "f.hs", &[&a], &[]);
    let before = fs::read(&file).unwrap();
    let o = hs(&["rekey", "--rotate", "-i", &a_id, "-r", &c, &file], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("leave out every key") && stderr(&o).contains("--remove-own"),
        "{}",
        stderr(&o)
    );
    assert_eq!(fs::read(&file).unwrap(), before);
    ok(&hs(&["rekey", "--rotate", "-i", &a_id, "-r", &c, "--remove-own", &file], None));
    assert!(opens(&c_id, &file) && !opens(&a_id, &file));
}

/// A journal is resolved only under the file's lock: while another re-key holds the lock, its
/// journal is live, and must be neither applied nor removed.
#[test]
fn recovery_waits_for_the_lock() {
    let (d, [(a_id, a), (_, b)]) = two_x25519(["a", "b"]);
    let file = encrypted_sized(d.path(), "f.hs", &[&a], &[], WITH_SLACK);
    let before = fs::read(&file).unwrap();
    // A live journal, as a re-key has it on disk while it writes.
    let Some(jpath) = killed_at_header_write(&a_id, &b, &file) else { return };
    assert_eq!(fs::read(&file).unwrap(), before);
    // Another re-key holds the lock: a process of its own (util-linux's flock, which with -o
    // holds it itself, not in the command it runs), so that no descriptor of this test process,
    // shared by a fork in a parallel test, can hold it longer.
    let mut holder = Command::new("flock").args(["-o", &file, "sleep", "30"]).spawn().unwrap();
    let probe = fs::File::open(&file).unwrap();
    while probe.try_lock().is_ok() {
        probe.unlock().unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(probe);
    let o = hs(&["rekey", "-i", &a_id, "--add", &b, &file], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("being re-keyed by another process"), "{}", stderr(&o));
    assert!(jpath.exists(), "the live journal was removed");
    assert_eq!(fs::read(&file).unwrap(), before, "the live journal was applied");
    holder.kill().unwrap();
    holder.wait().unwrap();
    // Once the lock is free, the journal is the interrupted re-key's (its header write never
    // happened, so it is undone), and it is said so.
    let o = hs(&["rekey", "-i", &a_id, "--add", &b, &file], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("an interrupted re-key") && stderr(&o).contains("undone"), "{}", stderr(&o));
    assert!(!jpath.exists());
}

/// A power cut during the header write can leave a mix of the old and the new header. No such
/// state may fail to open: `decrypt` and `age -d` read it through the journal, read-only, and
/// the next re-key completes it.
#[test]
fn a_torn_header_opens_through_its_journal() {
    let (d, [(a_id, a), (b_id, b)]) = two_x25519(["a", "b"]);
    let file = encrypted_sized(d.path(), "f.age", &[&a], &["--format", "age"], WITH_SLACK);
    let Some(jpath) = killed_at_header_write(&a_id, &b, &file) else { return };
    let j = fs::read(jpath).unwrap();
    // FORMAT.md §9.1: magic, file length, two header lengths, old header, new header, HMAC.
    let len = u64::from_le_bytes(j[27..35].try_into().unwrap()) as usize;
    let (old, new) = (&j[43..43 + len], &j[43 + len..43 + 2 * len]);
    assert!(old != new);
    let mut torn = fs::read(&file).unwrap();
    assert!(torn[..len] == *old, "the file's head is not the journal's old header");
    // The first half of the new header reached the disk, the rest did not.
    torn[..len / 2].copy_from_slice(&new[..len / 2]);
    fs::write(&file, &torn).unwrap();
    for args in [&["decrypt", "-i", &a_id][..], &["age", "-d", "-i", &a_id][..]] {
        let mut all = args.to_vec();
        all.extend(["-o", "/dev/null", &file]);
        let o = hs(&all, None);
        assert!(o.status.success(), "{args:?} on a torn header: {}", stderr(&o));
    }
    assert!(fs::read(&file).unwrap() == torn, "decrypt changed the file");
    // The next re-key completes the interrupted one first (and says so), then makes its own.
    let o = hs(&["rekey", "-i", &a_id, "-r", &a, "-r", &b, &file], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("an interrupted re-key was completed first"), "{}", stderr(&o));
    assert!(!hyperseal::rekey::journal_path(Path::new(&file)).exists());
    assert!(opens(&b_id, &file) && opens(&a_id, &file));
}

#[test]
fn a_fifo_or_link_at_the_journal_name_never_hangs_the_rekey() {
    let (d, [(a_id, a), (_, b)]) = two_x25519(["a", "b"]);
    let file = encrypted(d.path(), "victim.hs", &[&a], &[]);
    let before = fs::read(&file).unwrap();
    let jpath = hyperseal::rekey::journal_path(Path::new(&file));
    let c = std::ffi::CString::new(jpath.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
    for _ in 0..2 {
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(["rekey", "-i", &a_id, "--add", &b, &file])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("the re-key hangs on a FIFO at the journal's name");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let o = child.wait_with_output().unwrap();
        assert_eq!(status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("is not the journal of a re-key"), "{}", stderr(&o));
        assert_eq!(fs::read(&file).unwrap(), before);
        fs::remove_file(&jpath).unwrap();
        std::os::unix::fs::symlink(d.path().join("planted"), &jpath).unwrap();
    }
    assert!(!d.path().join("planted").exists());
}

#[test]
fn a_rewrite_keeps_owner_mode_attributes_and_links() {
    let (d, [(a_id, a), (b_id, b)]) = two_x25519(["a", "b"]);
    // Armored: always rewritten (its payload is not at a fixed offset).
    let file = encrypted(d.path(), "f.age", &[&a], &["--format", "age", "-a"]);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    let xattr = set_xattr(&file, "user.hyperseal-test", b"kept");
    // Only root can give a file away: elsewhere the owner half has nothing to test.
    let chowned = std::os::unix::fs::chown(&file, Some(4242), Some(4343)).is_ok();
    let o = hs(&["rekey", "-i", &a_id, "--add", &b, &file], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("rewritten"), "{}", stderr(&o));
    let m = fs::metadata(&file).unwrap();
    assert_eq!(m.mode() & 0o7777, 0o640, "mode");
    if chowned {
        assert_eq!((m.uid(), m.gid()), (4242, 4343), "owner");
    }
    if xattr {
        assert_eq!(get_xattr(&file, "user.hyperseal-test").as_deref(), Some(&b"kept"[..]), "xattr");
    }
    assert!(opens(&b_id, &file));
    // A second name: a rewrite would leave it with the old recipients. Refused, unless asked.
    let other = d.path().join("other-name.age");
    fs::hard_link(&file, &other).unwrap();
    let (_, c) = keypair(d.path(), "c", "x25519");
    let before = fs::read(&file).unwrap();
    let o = hs(&["rekey", "-i", &a_id, "--add", &c, &file], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("hard links") && stderr(&o).contains("--split-links"), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing changed"), "{}", stderr(&o));
    assert_eq!(fs::read(&file).unwrap(), before);
    ok(&hs(&["rekey", "-q", "-i", &a_id, "--add", &c, "--split-links", &file], None));
    assert_eq!(fs::metadata(&other).unwrap().nlink(), 1);
    // In place, a file with links stays one file: every name sees the new header.
    let slack = encrypted_sized(d.path(), "slack.hs", &[&a], &[], WITH_SLACK);
    let link = d.path().join("slack-link.hs");
    fs::hard_link(&slack, &link).unwrap();
    ok(&hs(&["rekey", "-q", "-i", &a_id, "--add", &b, &slack], None));
    assert!(opens(&b_id, link.to_str().unwrap()));
}

fn set_xattr(path: &str, name: &str, value: &[u8]) -> bool {
    let (p, n) = (std::ffi::CString::new(path).unwrap(), std::ffi::CString::new(name).unwrap());
    // SAFETY: NUL-terminated strings and a slice valid for its length.
    unsafe { libc::setxattr(p.as_ptr(), n.as_ptr(), value.as_ptr().cast(), value.len(), 0) == 0 }
}

fn get_xattr(path: &str, name: &str) -> Option<Vec<u8>> {
    let (p, n) = (std::ffi::CString::new(path).unwrap(), std::ffi::CString::new(name).unwrap());
    let mut buf = vec![0u8; 256];
    // SAFETY: as above.
    let r = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    (r >= 0).then(|| buf[..r as usize].to_vec())
}
