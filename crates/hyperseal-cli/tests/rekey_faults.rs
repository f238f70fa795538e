//! Every I/O failure and every kill, not just some: a re-key (in place, rewritten, armored) run
//! under `strace`, which makes the n-th call of one system call fail (EIO, ENOSPC) or kills the
//! process there, for every n until a run completes untouched, as SQLite's I/O-error tests and
//! the crash-consistency tools (ALICE, CrashMonkey) do. The release binary is the one shipped:
//! no hook in it, the kernel boundary is where the faults come from.
//!
//! After every run: the file opens with the old recipient set or the new one (never both, never
//! neither, through `decrypt`, which reads a torn header through its journal); the exit status
//! and the message say truthfully which (`nothing changed`, `the change WAS made`, or a kept
//! journal); a journal left behind is reported by the next re-key, which ends with the new set;
//! no other file appears, except the one documented case of SIGKILL between linking a finished
//! rewrite and renaming it over the file (a complete new file under a hidden
//! `.NAME.hyperseal-link` name, which the next re-key removes and reports).
//!
//! And concurrent writers: the re-key is stopped (SIGSTOP, injected) after the n-th call of each
//! system call it makes, another program saves a new version of the file in place meanwhile
//! (`cat new > file`), and the re-key is resumed: that version must survive every time.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{hs, keypair, ok};

/// The system calls through which a re-key changes anything on disk.
const CHANGING: [&str; 14] = [
    "write",
    "pwrite64",
    "copy_file_range",
    "fsync",
    "fdatasync",
    "rename",
    "renameat",
    "renameat2",
    "linkat",
    "unlink",
    "unlinkat",
    "fchown",
    "fchmod",
    "fsetxattr",
];

/// Points where another writer may get in: after each of these calls.
const POINTS: [&str; 12] = [
    "read",
    "pread64",
    "fcntl",
    "flock",
    "newfstatat",
    "statx",
    "write",
    "pwrite64",
    "fsync",
    "fdatasync",
    "unlink",
    "rename",
];

struct Case {
    label: &'static str,
    size: usize,
    encrypt_args: &'static [&'static str],
}

/// Inputs of 1 MiB and more are written with slack, so the new header (one stanza more) fits
/// in place; smaller ones get none, so they are rewritten; armored files always are.
const CASES: [Case; 3] = [
    Case { label: "in place", size: 1 << 20, encrypt_args: &[] },
    Case { label: "rewrite", size: 20_000, encrypt_args: &[] },
    Case { label: "armored", size: 20_000, encrypt_args: &["-a"] },
];

struct Keys {
    dir: PathBuf,
    alice: (String, String),
    bob: (String, String),
    carol: (String, String),
    dave: (String, String),
}

impl Keys {
    fn new() -> Keys {
        let dir = tempfile::tempdir().unwrap().keep();
        Keys {
            alice: keypair(&dir, "alice", "x25519"),
            bob: keypair(&dir, "bob", "x25519"),
            carol: keypair(&dir, "carol", "x25519"),
            dave: keypair(&dir, "dave", "x25519"),
            dir,
        }
    }

    /// A file of `byte`s to alice and bob, written to `path`.
    fn original(&self, case: &Case, path: &Path, byte: u8) {
        let plain = self.dir.join("plain");
        fs::write(&plain, vec![byte; case.size]).unwrap();
        let mut a =
            vec!["encrypt", "-q", "-r", &self.alice.1, "-r", &self.bob.1, "-o", path.to_str().unwrap()];
        a.extend_from_slice(case.encrypt_args);
        a.push(plain.to_str().unwrap());
        ok(&hs(&a, None));
    }

    /// The re-key under test: from {alice, bob} to {alice, carol, dave}.
    fn rekey_args<'a>(&'a self, file: &'a str) -> Vec<&'a str> {
        vec!["rekey", "-i", &self.alice.0, "-r", &self.alice.1, "-r", &self.carol.1, "-r", &self.dave.1, file]
    }

    /// Which set the file opens with.
    fn state(&self, file: &str) -> State {
        let opens = |id: &str| hs(&["decrypt", "-i", id, "-o", "/dev/null", file], None).status.success();
        match (opens(&self.bob.0), opens(&self.carol.0), opens(&self.alice.0)) {
            (true, false, true) => State::Old,
            (false, true, true) => State::New,
            other => State::Broken(format!("bob, carol, alice open: {other:?}")),
        }
    }
}

#[derive(Debug, PartialEq)]
enum State {
    Old,
    New,
    Broken(String),
}

enum Fault {
    Error(&'static str, &'static str),
    Kill(&'static str),
}

impl Fault {
    fn inject(&self, n: usize) -> String {
        match self {
            Fault::Error(call, errno) => format!("inject={call}:error={errno}:when={n}"),
            Fault::Kill(call) => format!("inject={call}:signal=KILL:when={n}"),
        }
    }

    fn call(&self) -> &'static str {
        match self {
            Fault::Error(c, _) | Fault::Kill(c) => c,
        }
    }
}

/// Runs the re-key with `fault` at the n-th call; `None` once no call was left to fault.
fn run_faulted(
    strace: &Path,
    keys: &Keys,
    file: &str,
    fault: &Fault,
    n: usize,
) -> Option<(Option<i32>, String, bool)> {
    let trace = keys.dir.join("trace");
    let o = Command::new(strace)
        .args(["-f", "-qq", "-o", trace.to_str().unwrap(), "-e"])
        .arg(format!("trace={}", fault.call()))
        .arg("-e")
        .arg(fault.inject(n))
        .arg(env!("CARGO_BIN_EXE_hyperseal"))
        .args(keys.rekey_args(file))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let trace = fs::read_to_string(&trace).unwrap_or_default();
    let injected = trace.lines().find(|l| l.contains("(INJECTED)") || l.contains("SIGKILL"))?;
    // A failed write to stderr loses the message itself: then only the state is checked.
    let to_stderr = injected.contains("write(2,");
    Some((o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), to_stderr))
}

fn leftovers(dir: &Path, file: &str) -> Vec<String> {
    let name = Path::new(file).file_name().unwrap().to_string_lossy().into_owned();
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| *n != name)
        .collect()
}

#[test]
fn every_io_failure_and_kill_leaves_the_old_set_or_the_new_and_says_which() {
    let Some(strace) = common::peer_on_path("strace") else { return };
    let keys = Keys::new();
    let started = Instant::now();
    let mut runs = 0;
    for case in &CASES {
        let work = keys.dir.join(case.label.replace(' ', "-"));
        fs::create_dir_all(&work).unwrap();
        let path = work.join("f.age");
        keys.original(case, &path, 42);
        let original = fs::read(&path).unwrap();
        let file = path.to_str().unwrap();
        let mut faults: Vec<Fault> = Vec::new();
        for call in CHANGING {
            faults.extend([Fault::Error(call, "EIO"), Fault::Error(call, "ENOSPC"), Fault::Kill(call)]);
        }
        for fault in &faults {
            // The first 40 calls of each: past that, a call is one more of the same payload
            // copy (a 20 KB armored file needs fewer).
            for n in 1..=40 {
                fs::write(&path, &original).unwrap();
                let Some((code, err, lost_message)) = run_faulted(&strace, &keys, file, fault, n) else {
                    break;
                };
                runs += 1;
                let what = format!("{} / {} #{n}: exit {code:?}: {err}", case.label, fault.inject(n));
                let state = keys.state(file);
                let journal = hyperseal::rekey::journal_path(&path);
                let killed = matches!(fault, Fault::Kill(_));
                if !killed && !lost_message {
                    match code {
                        Some(0) => assert_eq!(state, State::New, "{what}"),
                        _ if err.contains("nothing changed") => assert_eq!(state, State::Old, "{what}"),
                        _ if err.contains("the change WAS made") => assert_eq!(state, State::New, "{what}"),
                        _ if err.contains("could not be undone") => assert!(journal.exists(), "{what}"),
                        _ => panic!("a failure that does not say what the file was left as: {what}"),
                    }
                    assert!(
                        err.lines().next().unwrap_or("").starts_with(if code == Some(0) {
                            ""
                        } else {
                            "hyperseal: error: "
                        }),
                        "{what}"
                    );
                }
                assert!(matches!(state, State::Old | State::New), "{what}: {state:?}");
                // What is left is reported by the next command, which ends with the new set.
                let left = leftovers(&work, file);
                if !left.is_empty() {
                    let copy = hyperseal::rekey::old_copy_path(&path);
                    let own = format!(".{}.hyperseal-link", path.file_name().unwrap().to_string_lossy());
                    for name in &left {
                        if name.ends_with(".hyperseal-link") {
                            // SIGKILL between linking the finished rewrite and renaming it: a
                            // whole new version under `.NAME.hyperseal-link`.
                            assert!(killed && *name == own, "{what}: left {name}");
                            let p = work.join(name);
                            assert_eq!(
                                keys.state(p.to_str().unwrap()),
                                State::New,
                                "{what}: {name} is not whole"
                            );
                        } else {
                            assert!(
                                *name == journal.file_name().unwrap().to_string_lossy()
                                    || *name == copy.file_name().unwrap().to_string_lossy(),
                                "{what}: left {name}"
                            );
                        }
                    }
                    let o = hs(&keys.rekey_args(file), None);
                    let said = String::from_utf8_lossy(&o.stderr);
                    assert!(o.status.success(), "{what}: the next re-key: {said}");
                    for name in &left {
                        let words = if name.ends_with(".hyperseal-link") {
                            "killed as it replaced the file"
                        } else {
                            "interrupted"
                        };
                        assert!(said.contains(words), "{what}: {name} not reported: {said}");
                        assert!(!work.join(name).exists(), "{what}: {name} is still there");
                    }
                    assert_eq!(keys.state(file), State::New, "{what}");
                }
            }
        }
    }
    eprintln!("rekey faults: {runs} runs in {:.1} s", started.elapsed().as_secs_f64());
}

/// The re-key under `strace` once it is stopped by the injected SIGSTOP: `None` if it ran to its
/// end instead. A stop must last: strace's own syscall stops also read `t`, for microseconds.
///
/// Only a child running the hyperseal binary is the re-key. strace forks children of its own
/// first (probes of what ptrace supports here, and the re-key's own fork before it execs), and
/// they read `t` too. On a loaded machine such a probe stayed stopped for 50 ms and was taken for
/// the re-key; the real re-key, stopped by the injection, was then never resumed: strace waited
/// in `wait4`, the re-key in `ptrace_stop`, and the test polled a pid that was gone, until the
/// stage deadline (seen twice, with that state, under load).
fn stopped_tracee(strace: &mut std::process::Child) -> Option<i32> {
    let id = strace.id();
    let mut since: Option<(i32, Instant)> = None;
    loop {
        if strace.try_wait().unwrap().is_some() {
            return None;
        }
        let children = fs::read_to_string(format!("/proc/{id}/task/{id}/children")).unwrap_or_default();
        let stopped = children
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .find(|&p| is_hyperseal(p) && matches!(proc_state(p), Some('t' | 'T')));
        since = match (stopped, since) {
            (Some(p), Some((q, t))) if p == q => {
                if t.elapsed() > Duration::from_millis(50) {
                    return Some(p);
                }
                Some((q, t))
            }
            (Some(p), _) => Some((p, Instant::now())),
            (None, _) => None,
        };
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether `pid` runs the hyperseal binary under test.
fn is_hyperseal(pid: i32) -> bool {
    let bin = fs::canonicalize(env!("CARGO_BIN_EXE_hyperseal")).unwrap();
    fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == bin)
}

/// The state letter of `/proc/PID/stat` (`None` once the process is gone).
fn proc_state(pid: i32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().next()?.chars().next()
}

/// SIGCONT until `pid` runs again: the first one can arrive while the tracer is still reporting
/// the SIGSTOP (a signal-delivery stop, which also reads `t`), before the group stop it leads
/// to, and would then be lost. More SIGCONTs to a running process do nothing. `false`: still
/// stopped after [`SIGCONTS`] of them.
fn resume(pid: i32) -> bool {
    let mut running = 0;
    for _ in 0..SIGCONTS {
        // SAFETY: signalling a process we started.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        std::thread::sleep(Duration::from_millis(2));
        running = match proc_state(pid) {
            None | Some('Z') => return true,
            Some('t' | 'T') => 0,
            Some(_) => running + 1,
        };
        if running == 5 {
            return true;
        }
    }
    false
}

/// SIGCONTs [`resume`] sends before it gives up on one stop.
const SIGCONTS: usize = 250;

/// Waits for the re-key under `strace` to end, resuming it whenever it stays stopped. On a loaded
/// machine one of strace's own syscall stops can outlast [`stopped_tracee`]'s 50 ms, so the
/// injected SIGSTOP may come after the test took a stop for it and resumed: nothing would then
/// resume the re-key, and the wait would never end. An extra SIGCONT in a syscall stop does
/// nothing, and a writer that got in earlier than planned is still a writer at some point. A
/// re-key that 20 rounds of SIGCONTs do not move fails the test, with its state and wait channel,
/// rather than hanging it.
fn wait_resuming(mut strace: std::process::Child, tracee: i32) -> std::process::Output {
    let mut err = strace.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let mut stopped_since: Option<Instant> = None;
    let mut stuck = 0;
    let status = loop {
        if let Some(status) = strace.try_wait().unwrap() {
            break status;
        }
        stopped_since = match (proc_state(tracee), stopped_since) {
            (Some('t' | 'T'), Some(t)) if t.elapsed() > Duration::from_millis(50) => {
                if !resume(tracee) {
                    stuck += 1;
                }
                if stuck == 20 {
                    let status = fs::read_to_string(format!("/proc/{tracee}/status")).unwrap_or_default();
                    let wchan = fs::read_to_string(format!("/proc/{tracee}/wchan")).unwrap_or_default();
                    let _ = strace.kill();
                    // SAFETY: signalling a process we started.
                    unsafe { libc::kill(tracee, libc::SIGKILL) };
                    panic!("the re-key under strace stays stopped after 20 rounds of SIGCONTs (wchan {wchan:?}):\n{status}");
                }
                None
            }
            (Some('t' | 'T'), since) => since.or_else(|| Some(Instant::now())),
            _ => None,
        };
        std::thread::sleep(Duration::from_millis(2));
    };
    std::process::Output { status, stdout: Vec::new(), stderr: reader.join().unwrap() }
}

#[test]
fn a_writer_that_gets_in_at_any_point_wins() {
    let Some(strace) = common::peer_on_path("strace") else { return };
    let keys = Keys::new();
    let mut stops = 0;
    for case in &CASES {
        let work = keys.dir.join(format!("w-{}", case.label.replace(' ', "-")));
        fs::create_dir_all(&work).unwrap();
        let path = work.join("f.age");
        keys.original(case, &path, 42);
        let original = fs::read(&path).unwrap();
        // The other program's new version: a fresh encryption to the same people, of other
        // bytes, so that a re-key of it (not of the version it replaced) is told apart.
        let theirs_path = work.join("theirs");
        keys.original(case, &theirs_path, 43);
        let theirs = fs::read(&theirs_path).unwrap();
        fs::remove_file(&theirs_path).unwrap();
        let file = path.to_str().unwrap();
        'calls: for call in POINTS {
            for n in 1..=40 {
                // A refusal with the file as it was is what the re-key owes a program that holds
                // the file open, and one may, for an instant, with no writer here: a child that
                // another test of this process forks holds a copy of every descriptor open in the
                // process until it execs (Rust's `Command` forks where a test sets `pre_exec`), and
                // this thread had the file open just before. So a refusal with nothing changed is
                // tried again.
                let mut refusals = 0;
                let (tracee, child) = loop {
                    fs::write(&path, &original).unwrap();
                    let mut child = Command::new(&strace)
                        .args(["-f", "-qq", "-o", "/dev/null", "-e"])
                        .arg(format!("trace={call}"))
                        .arg("-e")
                        .arg(format!("inject={call}:signal=STOP:when={n}"))
                        .arg(env!("CARGO_BIN_EXE_hyperseal"))
                        .args(keys.rekey_args(file))
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap();
                    if let Some(tracee) = stopped_tracee(&mut child) {
                        break (tracee, child);
                    }
                    // Ran to its end without an n-th call: every point of this call was tried, or
                    // the re-key was refused.
                    let o = child.wait_with_output().unwrap();
                    let err = String::from_utf8_lossy(&o.stderr);
                    let what = format!("{}: {call} #{n}: {err}", case.label);
                    if !o.status.success() && refusals < 5 && err.contains("is open in another program") {
                        assert!(err.contains("nothing changed"), "{what}");
                        assert!(
                            fs::read(&path).unwrap() == original,
                            "{what}: a refused re-key changed the file"
                        );
                        refusals += 1;
                        std::thread::sleep(Duration::from_millis(50 * refusals));
                        continue;
                    }
                    assert!(o.status.success(), "{what}");
                    continue 'calls;
                };
                stops += 1;
                // `cat theirs > file`, from another thread: while the re-key holds its lease, the
                // open waits for it, so the re-key is resumed after a moment either way.
                let (p, t) = (path.clone(), theirs.clone());
                let writer = std::thread::spawn(move || {
                    let mut f = fs::File::create(&p).unwrap();
                    f.write_all(&t).unwrap();
                });
                let until = Instant::now() + Duration::from_millis(300);
                while !writer.is_finished() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(2));
                }
                resume(tracee);
                // The re-key first: a writer waiting on its lease goes on once it has ended.
                let o = wait_resuming(child, tracee);
                writer.join().unwrap();
                let what = format!(
                    "{}: writer after {call} #{n}: {}",
                    case.label,
                    String::from_utf8_lossy(&o.stderr)
                );
                // Their version survives: as they wrote it, or re-keyed if the re-key read it (a
                // writer that got in before the re-key opened the file).
                let now = fs::read(&path).unwrap();
                let plain = hs(&["decrypt", "-i", &keys.alice.0, file], None);
                assert!(plain.status.success(), "{what}: the file does not open");
                assert!(
                    plain.stdout.iter().all(|&b| b == 43),
                    "the other program's version was lost: {what}"
                );
                if !o.status.success() {
                    assert!(now == theirs, "{what}: a failed re-key changed their version");
                    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing changed"), "{what}");
                }
                assert!(leftovers(&work, file).is_empty(), "{what}: {:?}", leftovers(&work, file));
            }
        }
    }
    eprintln!("concurrent writer: {stops} stops");
}
