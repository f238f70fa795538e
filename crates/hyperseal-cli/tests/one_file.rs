//! One file on every core: a regular file into a file takes the positional engine (workers
//! reading and writing at offsets) from 2 threads and 4 MiB, a pipe or `--threads 1` the ordered
//! stream. The two must agree byte for byte in what they accept, and the positional one must keep
//! every nothing-lost rule: a damaged chunk anywhere leaves no output (and an existing one as it
//! was), with one error line. age reads what it writes in age's format, and the other way round.

use crate::common;

use std::fs;

use common::{data, hs, keypair, names, ok, p, peer};

/// 9 MiB and a bit: several pieces, a short final chunk.
const SIZE: usize = (9 << 20) + 12_345;

/// A folder with a key pair and `in`, SIZE bytes: (folder, identity file, recipient, plaintext).
fn setup() -> (tempfile::TempDir, String, String, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "k", "x25519");
    let plain = data(SIZE, 40);
    fs::write(dir.path().join("in"), &plain).unwrap();
    (dir, key, public, plain)
}

/// [`setup`] with `in` encrypted to `ct`: the folder, the key file, the plaintext.
fn sealed() -> (tempfile::TempDir, String, Vec<u8>) {
    let (dir, key, public, plain) = setup();
    let d = dir.path();
    ok(&hs(&["encrypt", "-r", &public, "-o", p(&d.join("ct")), p(&d.join("in"))], None));
    (dir, key, plain)
}

#[test]
fn positional_and_streamed_files_agree_both_ways() {
    let (dir, key, public, plain) = setup();
    let d = dir.path();
    for (enc_threads, dec_threads) in [("2", "1"), ("1", "2"), ("2", "2")] {
        let (ct, pt) = (d.join("ct"), d.join("pt"));
        let _ = (fs::remove_file(&ct), fs::remove_file(&pt));
        ok(&hs(&["encrypt", "--threads", enc_threads, "-r", &public, "-o", p(&ct), p(&d.join("in"))], None));
        ok(&hs(&["decrypt", "--threads", dec_threads, "-i", &key, "-o", p(&pt), p(&ct)], None));
        assert!(
            fs::read(&pt).unwrap() == plain,
            "encrypt on {enc_threads}, decrypt on {dec_threads} threads"
        );
        // From a pipe (the ordered stream) the same file opens to the same bytes.
        let piped = hs(&["decrypt", "-i", &key], Some(&fs::read(&ct).unwrap()));
        assert!(piped.status.success() && piped.stdout == plain);
    }
}

#[test]
fn a_damaged_chunk_leaves_no_output_and_keeps_an_existing_one() {
    let (dir, key, _) = sealed();
    let d = dir.path();
    let ct = d.join("ct");
    let mut bytes = fs::read(&ct).unwrap();
    // In the middle and near the end: pieces other workers may finish first.
    let (mid, late) = (bytes.len() / 2, bytes.len() - 70_000);
    for at in [mid, late] {
        bytes[at] ^= 0x40;
        let bad = d.join("bad");
        fs::write(&bad, &bytes).unwrap();
        let before = names(d);
        let o = hs(&["decrypt", "-i", &key, "-o", p(&d.join("pt")), p(&bad)], None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "a damaged chunk at {at} was accepted");
        assert!(err.starts_with("hyperseal: error: "), "{err}");
        assert_eq!(names(d), before, "something was left behind: {err}");
        // An existing file is not replaced, even with --force.
        fs::write(d.join("keep"), b"old").unwrap();
        let o = hs(&["decrypt", "--force", "-i", &key, "-o", p(&d.join("keep")), p(&bad)], None);
        assert!(!o.status.success());
        assert_eq!(fs::read(d.join("keep")).unwrap(), b"old");
        bytes[at] ^= 0x40;
    }
    // A file cut at a chunk boundary is reported as cut short.
    let cut = d.join("cut");
    fs::write(&cut, &bytes[..bytes.len() - 12_345 - 16]).unwrap();
    let o = hs(&["decrypt", "-i", &key, "-o", p(&d.join("pt")), p(&cut)], None);
    assert!(!o.status.success());
    assert!(!d.join("pt").exists());
}

#[test]
fn age_reads_what_the_positional_engine_writes_and_back() {
    let Some(age) = peer("age") else { return };
    let (dir, key, public, plain) = setup();
    let d = dir.path();
    ok(&hs(&["age", "-r", &public, "-o", p(&d.join("ct")), p(&d.join("in"))], None));
    let o = std::process::Command::new(&age).args(["-d", "-i", &key, p(&d.join("ct"))]).output().unwrap();
    assert!(o.status.success() && o.stdout == plain, "{}", String::from_utf8_lossy(&o.stderr));
    let o = std::process::Command::new(&age)
        .args(["-r", &public, "-o", p(&d.join("by-age")), p(&d.join("in"))])
        .output()
        .unwrap();
    assert!(o.status.success());
    ok(&hs(&["age", "-d", "-i", &key, "-o", p(&d.join("pt")), p(&d.join("by-age"))], None));
    assert!(fs::read(d.join("pt")).unwrap() == plain);
}

/// The path taken, seen from the system calls: a file into a file on 2 threads is read and
/// written at offsets (`pread64`/`pwrite64`); on 1 thread, or from a pipe, it is streamed.
#[test]
fn a_file_into_a_file_is_read_and_written_at_offsets() {
    let Some(strace) = common::peer_on_path("strace") else { return };
    let (dir, _, public, _) = setup();
    let d = dir.path();
    let calls = |threads: &str| -> String {
        let out = d.join(format!("ct{threads}"));
        let o = std::process::Command::new(&strace)
            .args(["-f", "-qq", "-e", "trace=pread64,pwrite64", "-o", p(&d.join("trace"))])
            .arg(env!("CARGO_BIN_EXE_hyperseal"))
            .args(["encrypt", "--threads", threads, "-r", &public, "-o", p(&out), p(&d.join("in"))])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        fs::read_to_string(d.join("trace")).unwrap()
    };
    let two = calls("2");
    assert!(two.matches("pread64(").count() >= 9 && two.matches("pwrite64(").count() >= 9, "{two}");
    let one = calls("1");
    assert!(!one.contains("pwrite64("), "{one}");
}

/// `--offset/--length` into a file opens only the chunks of the range, on every core, and gives
/// exactly the bytes the streamed reader gives; a file cut short fails whatever the range.
#[test]
fn random_access_into_a_file_matches_the_reader() {
    let (dir, key, plain) = sealed();
    let d = dir.path();
    let ct = d.join("ct");
    for (offset, length) in [(0usize, SIZE), (1_000_003, 5 << 20), (SIZE - 4_500_000, 9 << 20)] {
        let (o, l) = (offset.to_string(), length.to_string());
        let pt = d.join("pt");
        let _ = fs::remove_file(&pt);
        ok(&hs(
            &["decrypt", "--threads", "2", "-i", &key, "--offset", &o, "--length", &l, "-o", p(&pt), p(&ct)],
            None,
        ));
        let want = &plain[offset..(offset + length).min(SIZE)];
        assert!(fs::read(&pt).unwrap() == want, "range {offset}+{length}");
        let streamed =
            hs(&["decrypt", "--threads", "1", "-i", &key, "--offset", &o, "--length", &l, p(&ct)], None);
        assert!(streamed.status.success() && streamed.stdout == want);
    }
    let bytes = fs::read(&ct).unwrap();
    fs::write(d.join("cut"), &bytes[..bytes.len() - 20_000]).unwrap();
    let o = hs(
        &[
            "decrypt",
            "-i",
            &key,
            "--offset",
            "0",
            "--length",
            "6000000",
            "-o",
            p(&d.join("part")),
            p(&d.join("cut")),
        ],
        None,
    );
    assert!(!o.status.success());
    assert!(!d.join("part").exists());
}

/// The unnamed output is reachable through `/proc/PID/fd` by any process of the same user:
/// one that truncates it while the workers write (8 of them, where a shared mapping was once
/// used) must cost an error line and no output, never a signal (a `SIGBUS` in Node or Python
/// kills the host). Tried a few times, the truncation landing at different moments.
#[test]
fn an_output_truncated_underneath_is_an_error_not_a_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keypair(dir.path(), "k", "x25519");
    let input = dir.path().join("big");
    fs::write(&input, data(256 << 20, 41)).unwrap();
    let out = dir.path().join("out.hs");
    for attempt in 0..4 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(["encrypt", "-q", "--threads", "8", "-r", &public, "-o", p(&out), p(&input)])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let fds = format!("/proc/{}/fd", child.id());
        // The output: the descriptor naming a deleted file in the output's folder (O_TMPFILE).
        let mut cut = false;
        for _ in 0..20_000 {
            let found = fs::read_dir(&fds).into_iter().flatten().flatten().find(|e| {
                fs::read_link(e.path())
                    .is_ok_and(|t| t.starts_with(dir.path()) && t.to_string_lossy().ends_with("(deleted)"))
            });
            if let Some(e) = found {
                std::thread::sleep(std::time::Duration::from_millis(5 * attempt));
                if let Ok(f) = fs::OpenOptions::new().write(true).open(e.path()) {
                    cut = f.set_len(4096).is_ok();
                }
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
        }
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.signal(), None, "killed by a signal (attempt {attempt}): {err}");
        if cut && !o.status.success() {
            assert!(err.starts_with("hyperseal: error: "), "{err}");
            assert!(!out.exists(), "a failed run left its output");
        }
        if out.exists() {
            // The run finished before the cut reached it.
            fs::remove_file(&out).unwrap();
        }
    }
}
