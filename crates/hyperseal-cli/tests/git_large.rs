//! A 1 GiB marked file through `git add` and a checkout. git holds a blob whole (it hashes the
//! filter's answer in memory), but the filter must stream: its peak resident memory stays
//! within 64 MiB both ways, and the blob is an age file of the whole plaintext.
//!
//! The peak is the filter's own `VmHWM`, read from /proc while git runs: git starts the filter,
//! so no `wait4` here can see its resource usage, and `VmHWM` (unlike `ru_maxrss`) counts only
//! the memory of the program after its `exec`.

use crate::git_support;

use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use git_support::{filters_in, git_tmp, isolated, unlocked_with, Repo, AGE_INTRO};

const SIZE: u64 = 1 << 30;
const BUDGET_KIB: u64 = 64 << 10;

/// The `VmHWM` of a process, KiB (0 once it is gone).
fn high_water_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Runs `git ARGS` in `r` and returns the highest `VmHWM` of the filter processes seen while
/// it ran (KiB), asserting that git succeeded and that a filter was seen.
fn git_watching_the_filter(r: &Repo, args: &[&str]) -> u64 {
    let dir = r.dir.canonicalize().unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let (mut peak, mut seen) = (0, false);
            while !done.load(Ordering::Relaxed) {
                for pid in filters_in(&dir) {
                    seen = true;
                    peak = peak.max(high_water_kib(pid));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            (peak, seen)
        });
        let out = git_support::git_in(&dir, args);
        done.store(true, Ordering::Relaxed);
        let (peak, seen) = watcher.join().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(seen, "git {args:?} ran no hyperseal filter");
        peak
    })
}

/// Whether `path` holds exactly `SIZE` zero bytes, read in 1 MiB pieces.
fn all_zeros(path: &Path) -> bool {
    let mut f = std::fs::File::open(path).unwrap();
    let (mut buf, mut total) = (vec![0u8; 1 << 20], 0u64);
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return total == SIZE;
        }
        if buf[..n].iter().any(|b| *b != 0) {
            return false;
        }
        total += n as u64;
    }
}

#[test]
fn a_1_gib_file_streams_through_the_filter_both_ways() {
    let Some(tmp) = git_tmp() else { return };
    let (r, _) = unlocked_with(tmp.path(), "r", "hybrid", &["*.bin"], &[]);
    // Ciphertext does not compress: storing it saves git a minute of deflate, nothing else.
    r.ok(&["config", "core.compression", "0"]);
    // Zeros, sparse: nothing to write, and every byte checkable on the way back.
    let big = r.dir.join("big.bin");
    std::fs::File::create(&big).unwrap().set_len(SIZE).unwrap();

    let add = git_watching_the_filter(&r, &["add", "big.bin"]);
    assert!(add > 0 && add <= BUDGET_KIB, "the filter peaked at {add} KiB adding 1 GiB");
    let stored: u64 = r.ok(&["cat-file", "-s", ":big.bin"]).trim().parse().unwrap();
    assert!(stored > SIZE, "the blob holds the whole sealed file: {stored} bytes");
    let mut head = vec![0u8; AGE_INTRO.len()];
    let mut cat = isolated("git", &r.dir)
        .args(["cat-file", "blob", ":big.bin"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    cat.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let _ = cat.kill();
    let _ = cat.wait();
    assert_eq!(head, AGE_INTRO, "the stored blob is an age file");
    r.ok(&["commit", "-q", "-m", "big"]);

    std::fs::remove_file(&big).unwrap();
    let checkout = git_watching_the_filter(&r, &["checkout", "--", "big.bin"]);
    assert!(checkout > 0 && checkout <= BUDGET_KIB, "the filter peaked at {checkout} KiB checking out 1 GiB");
    eprintln!("the filter's peak: {add} KiB adding, {checkout} KiB checking out");
    assert!(all_zeros(&big), "the checked-out file is the 1 GiB of plaintext");
    let status = r.ok(&["status", "--porcelain", "--", "big.bin"]);
    assert_eq!(status, "", "the checked-out file is clean (no churn)");
}
