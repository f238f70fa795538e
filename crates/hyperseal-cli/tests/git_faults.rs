//! `hyperseal git` when things go wrong: a filter killed in the middle of `git add` fails the
//! command and leaves no plaintext blob and nothing staged, and the work tree as it was.

use crate::common;
use crate::git_support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use git_support::{filters_in, git_tmp, isolated, unlocked};

/// Bytes the process `pid` has read so far.
fn read_by(pid: i32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    io.lines().find_map(|l| l.strip_prefix("rchar: ")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

#[test]
fn a_killed_filter_leaves_no_plaintext_and_nothing_staged() {
    let Some(tmp) = git_tmp() else { return };
    let (r, _) = unlocked(tmp.path(), "r");
    // Enough work that the filter is still busy when it is found and killed: 2 MiB files,
    // each with a marker the object store must never hold.
    let files: Vec<(String, Vec<u8>)> = (0..48)
        .map(|i| {
            let mut data = common::data(2 << 20, i);
            data[..24].copy_from_slice(format!("PLAINTEXT-MARKER-{i:06}\n").as_bytes());
            (format!("f{i:02}.env"), data)
        })
        .collect();
    for (name, data) in &files {
        r.write(name, data);
    }
    let dir = r.dir.canonicalize().unwrap();
    let mut add = isolated("git", &dir)
        .args(["add", "-A"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut killed = false;
    while start.elapsed() < Duration::from_secs(30) && add.try_wait().unwrap().is_none() {
        // Killed once it has read a fifth of the files: some are done, most are not.
        if let Some(pid) = filters_in(&dir).first().filter(|pid| read_by(**pid) > 20 << 20) {
            // SAFETY: kill(2) on a process id this test just found; no memory is involved.
            killed = unsafe { libc::kill(*pid, libc::SIGKILL) } == 0;
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = add.wait_with_output().unwrap();
    assert!(killed, "the filter was found and killed while git add ran");
    assert!(!out.status.success(), "git add fails when its required filter dies");
    assert_eq!(r.ok(&["ls-files", "--", "*.env"]), "", "nothing marked is staged");
    for b in r.all_blobs() {
        assert!(!b.windows(17).any(|w| w == b"PLAINTEXT-MARKER-"), "a plaintext blob was stored");
    }
    for (name, data) in &files {
        assert_eq!(&r.read(name), data, "{name} is as it was");
    }
    assert!(!r.dir.join(".git/index.lock").exists(), "git left no lock behind");
}
