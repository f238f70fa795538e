//! Peak resident memory of `hyperseal` runs, as the kernel counts it (`wait4`'s `ru_maxrss`).
//!
//! Linux starts a process's `ru_maxrss` from the memory it had before `exec`: a child spawned
//! the way `Command` does it (vfork-like, sharing the parent's memory until `exec`) inherits the
//! parent's high-water mark, and a forked child its parent's current size. A test binary runs its
//! tests in parallel and some of them hold tens of MiB (whole ciphertexts from `openssl enc`),
//! so a child measured from there can report the test binary's peak instead of its own (65 MiB
//! for a run whose own peak was 21 MiB). [`fresh`] therefore repeats the measuring test in a new
//! process of the same binary, alone, whose own memory stays at a few MiB.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Set in the process [`fresh`] starts, to the name of the test it runs.
const FRESH: &str = "HYPERSEAL_TEST_FRESH_PROCESS";

/// Whether the calling test should measure here. In the test binary as started, runs the calling
/// test again in a fresh process of this binary, by itself, asserts it passed, and returns
/// `false`; in that fresh process, returns `true`. The test is named by its thread: libtest runs
/// each test on a thread named with its whole path (`cli::constant_memory_on_a_large_input`),
/// so the name cannot drift from where the test lives.
pub fn fresh() -> bool {
    let me = std::thread::current();
    let test = me.name().expect("a test's thread (libtest names it after the test)");
    if let Ok(t) = std::env::var(FRESH) {
        // The fresh process runs this one test (`--exact`): never a third process.
        assert_eq!(t, test, "a fresh process runs only the test it was started for");
        return true;
    }
    let o = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1", "--nocapture"])
        .env(FRESH, test)
        .output()
        .unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{test} in a fresh process failed:\n{log}");
    assert!(log.contains("1 passed"), "{test} did not run in the fresh process:\n{log}");
    false
}

/// Streams `size` zero bytes (a sparse file in a temporary directory) through
/// `hyperseal ENC… FILE | hyperseal DEC…`, checks that every byte comes back, all zeros, and
/// returns the peak RSS in MiB of (encrypt, decrypt). Both must exit 0.
pub fn pipeline(enc: &[&str], dec: &[&str], size: u64) -> (f64, f64) {
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("sparse");
    std::fs::File::create(&big).unwrap().set_len(size).unwrap();
    pipeline_file(enc, dec, &big, size)
}

/// [`pipeline`] over an existing sparse file of `size` bytes.
pub fn pipeline_file(enc: &[&str], dec: &[&str], big: &Path, size: u64) -> (f64, f64) {
    let mut e = Command::new(env!("CARGO_BIN_EXE_hyperseal"))
        .args(enc)
        .arg(big)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut d = Command::new(env!("CARGO_BIN_EXE_hyperseal"))
        .args(dec)
        .stdin(e.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The plaintext streams back without being held.
    let mut out = d.stdout.take().unwrap();
    let (mut total, mut buf) = (0u64, vec![0u8; 1 << 20]);
    while let n @ 1.. = out.read(&mut buf).unwrap() {
        assert!(buf[..n].iter().all(|&b| b == 0), "{dec:?}: wrong plaintext");
        total += n as u64;
    }
    assert_eq!(total, size, "{dec:?}");
    let dec_peak = peak_mib(d);
    (peak_mib(e), dec_peak)
}

/// Reaps `child` and returns its peak RSS in MiB, asserting it exited 0.
fn peak_mib(child: Child) -> f64 {
    let mut status = 0;
    // SAFETY: all-zero bytes are a valid rusage (a plain C struct of integers).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 reaps our own child and writes into locals we own; the Child handle is not
    // waited on again.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "status {status}");
    usage.ru_maxrss as f64 / 1024.0
}
