#![allow(unsafe_code)] // Signals, rlimits and kill in the tests of the interrupt cleanup.

//! One test per rule of the module documentation, on both the `O_TMPFILE` path and the named
//! fallback. Rules about signals, SIGKILL, `ulimit -f` and stdout run in a child process (this
//! test binary again, see `child`), so the harness itself is never killed or limited.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::*;

const CHILD_ENV: &str = "HYPERSEAL_OUTPUT_TEST_CHILD";

fn tmp() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("hs-output-").tempdir().unwrap()
}

/// Every name in `dir`, hidden ones included.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn opts(named: bool) -> OutputOptions {
    OutputOptions::new().named_temporary(named)
}

#[test]
fn a_new_file_appears_only_on_commit_complete_and_private() {
    for named in [false, true] {
        let d = tmp();
        let dest = d.path().join("out");
        let mut o = opts(named).create(&dest).unwrap();
        o.write_all(b"hello ").unwrap();
        o.write_all(b"world").unwrap();
        assert!(!dest.exists(), "named={named}: visible before commit");
        let during = names(d.path());
        if named {
            assert_eq!(during.len(), 1);
            assert!(during[0].starts_with(".hyperseal-") && during[0].ends_with(".partial"), "{during:?}");
            assert_eq!(o.temporary_path().unwrap(), d.path().join(&during[0]));
        } else {
            // O_TMPFILE: not even a hidden name exists while the output is written.
            assert_eq!(during, Vec::<String>::new());
            assert!(o.temporary_path().is_none());
        }
        assert_eq!(o.bytes_written(), 11);
        assert!(!o.is_write_through());
        o.commit().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"hello world");
        assert_eq!(names(d.path()), ["out"]);
        assert_eq!(fs::metadata(&dest).unwrap().permissions().mode() & 0o777, 0o600);
    }
}

#[test]
fn dropping_without_commit_leaves_nothing() {
    for named in [false, true] {
        let d = tmp();
        let dest = d.path().join("out");
        let mut o = opts(named).create(&dest).unwrap();
        o.write_all(&[7u8; 100_000]).unwrap();
        drop(o);
        assert_eq!(names(d.path()), Vec::<String>::new(), "named={named}");
    }
}

#[test]
fn an_existing_file_is_refused_without_force_and_left_alone() {
    for named in [false, true] {
        let d = tmp();
        let dest = d.path().join("out");
        fs::write(&dest, b"precious").unwrap();
        let e = opts(named).create(&dest).unwrap_err();
        assert_eq!(e.kind(), OutputErrorKind::AlreadyExists);
        assert_eq!(e.to_string(), format!("output file {} already exists", dest.display()));
        assert_eq!(fs::read(&dest).unwrap(), b"precious");
        assert_eq!(names(d.path()), ["out"]);
    }
}

#[test]
fn force_replaces_atomically_at_commit_and_not_before() {
    for named in [false, true] {
        let d = tmp();
        let dest = d.path().join("out");
        fs::write(&dest, b"old").unwrap();
        let mut o = opts(named).force(true).create(&dest).unwrap();
        o.write_all(b"new contents").unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"old", "named={named}");
        o.commit().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"new contents");
        assert_eq!(names(d.path()), ["out"]);

        // A forced output that fails (is dropped) leaves the old file as it was.
        let mut o = opts(named).force(true).create(&dest).unwrap();
        o.write_all(b"half").unwrap();
        drop(o);
        assert_eq!(fs::read(&dest).unwrap(), b"new contents");
        assert_eq!(names(d.path()), ["out"]);
    }
}

#[test]
fn a_file_that_appears_during_the_run_is_not_clobbered() {
    for named in [false, true] {
        let d = tmp();
        let dest = d.path().join("out");
        let mut o = opts(named).create(&dest).unwrap();
        o.write_all(b"ours").unwrap();
        fs::write(&dest, b"theirs").unwrap();
        let e = o.commit().unwrap_err();
        assert_eq!(e.kind(), OutputErrorKind::AlreadyExists, "named={named}: {e}");
        assert_eq!(fs::read(&dest).unwrap(), b"theirs");
        assert_eq!(names(d.path()), ["out"]);

        // With force, it is replaced as an existing file would have been.
        fs::remove_file(&dest).unwrap();
        let mut o = opts(named).force(true).create(&dest).unwrap();
        o.write_all(b"ours").unwrap();
        fs::write(&dest, b"theirs").unwrap();
        o.commit().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"ours");
        assert_eq!(names(d.path()), ["out"]);
    }
}

#[test]
fn a_directory_is_refused_as_such_with_or_without_force() {
    let d = tmp();
    for force in [false, true] {
        let e = opts(false).force(force).create(d.path()).unwrap_err();
        assert_eq!(e.kind(), OutputErrorKind::IsDirectory);
        assert_eq!(e.to_string(), format!("{} is a directory", d.path().display()));
    }
    // `missing/` names a directory that does not exist: no file called `missing` appears.
    let slash = PathBuf::from(format!("{}/missing/", d.path().display()));
    let e = opts(false).create(&slash).unwrap_err();
    assert_eq!(e.kind(), OutputErrorKind::Create);
    assert!(e.to_string().ends_with(": Is a directory"), "{e}");
    assert_eq!(names(d.path()), Vec::<String>::new());
}

#[test]
fn a_dangling_symlink_is_refused_clearly_and_nothing_is_created_through_it() {
    let d = tmp();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(d.path().join("planted"), &link).unwrap();
    for (named, force) in [(false, false), (false, true), (true, true)] {
        let e = opts(named).force(force).create(&link).unwrap_err();
        assert_eq!(e.kind(), OutputErrorKind::DanglingSymlink);
        let msg = e.to_string();
        assert!(msg.contains("symbolic link to a file that does not exist"), "{msg}");
        assert!(!msg.contains("os error"), "{msg}");
    }
    assert_eq!(names(d.path()), ["link"]);
}

#[test]
fn force_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    for named in [false, true] {
        let d = tmp();
        let (target, link) = (d.path().join("target"), d.path().join("link"));
        fs::write(&target, b"old").unwrap();
        std::os::unix::fs::symlink("target", &link).unwrap();
        assert_eq!(opts(named).create(&link).unwrap_err().kind(), OutputErrorKind::AlreadyExists);
        let mut o = opts(named).force(true).create(&link).unwrap();
        o.write_all(b"new").unwrap();
        o.commit().unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(names(d.path()), ["link", "target"]);
    }
}

#[test]
fn the_input_file_is_refused_by_inode_even_with_force() {
    let d = tmp();
    let input = d.path().join("f");
    fs::write(&input, b"data").unwrap();
    fs::hard_link(&input, d.path().join("g")).unwrap();
    std::os::unix::fs::symlink("f", d.path().join("s")).unwrap();
    let meta = fs::metadata(&input).unwrap();
    for name in ["f", "./f", "g", "s"] {
        let dest = d.path().join(name);
        let e = opts(false).force(true).input(&meta).create(&dest).unwrap_err();
        assert_eq!(e.kind(), OutputErrorKind::SameFile, "{name}");
        assert_eq!(e.to_string(), format!("input file is output file: {}", dest.display()));
    }
    assert_eq!(fs::read(&input).unwrap(), b"data");
}

#[test]
fn a_fifo_is_written_through_never_replaced() {
    for force in [false, true] {
        // A FIFO of its own for each round. Other tests fork while this one runs, and a child
        // keeps a copy of the last round's read end until it execs: a writer of the next round
        // on the same FIFO could open against that copy, and its bytes vanish with it when the
        // child execs, leaving this reader blocked for ever.
        let d = tmp();
        let fifo = d.path().join("fifo");
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        let mut o = opts(false).force(force).create(&fifo).unwrap();
        assert!(o.is_write_through());
        o.write_all(b"through the pipe").unwrap();
        o.commit().unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "force={force}");
        assert_eq!(names(d.path()), ["fifo"]);
    }
}

#[test]
fn dev_null_is_written_through_and_stays_a_device() {
    for force in [false, true] {
        let mut o = opts(false).force(force).create("/dev/null").unwrap();
        assert!(o.is_write_through());
        o.write_all(b"gone").unwrap();
        o.commit().unwrap();
        assert!(fs::symlink_metadata("/dev/null").unwrap().file_type().is_char_device());
    }
}

#[test]
fn write_errors_name_the_destination_with_the_os_reason() {
    if !Path::new("/dev/full").exists() {
        println!("skipped: no /dev/full");
        return;
    }
    let mut o = opts(false).create("/dev/full").unwrap();
    let e = o.write_all(&[0u8; 4096]).and_then(|_| o.flush()).unwrap_err();
    assert_eq!(e.to_string(), "writing /dev/full: No space left on device");
    assert_eq!(e.raw_os_error(), None, "wrapped so the path travels with it");
}

#[test]
fn creation_errors_say_the_os_reason() {
    let d = tmp();
    let dest = d.path().join("no/such/out");
    for named in [false, true] {
        let e = opts(named).create(&dest).unwrap_err();
        assert_eq!(e.kind(), OutputErrorKind::Create);
        assert_eq!(e.to_string(), format!("cannot create {}: No such file or directory", dest.display()));
    }
}

// ---- rules that need a process of their own ----

/// Runs this test binary's `child` test with `mode`, `dir` and the given stdout.
fn spawn_child(mode: &str, dir: &Path, stdout: Stdio) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["output::tests::child", "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(CHILD_ENV, mode)
        .env("HYPERSEAL_OUTPUT_TEST_DIR", dir)
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The child side: does nothing in a normal test run.
#[test]
fn child() {
    let Ok(mode) = std::env::var(CHILD_ENV) else { return };
    let dir = PathBuf::from(std::env::var_os("HYPERSEAL_OUTPUT_TEST_DIR").unwrap());
    let named = mode.ends_with("-named");
    // The harness may run under `nohup` (SIGHUP ignored, inherited): the library rightly keeps an
    // ignored signal ignored, but these children are about what happens when one is delivered.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: restoring a standard signal's default disposition has no memory effects.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    match mode.trim_end_matches("-named") {
        // Write, say so, and wait to be killed.
        "hold" => {
            let mut o = opts(named).create(dir.join("out")).unwrap();
            o.write_all(&[1u8; 1 << 16]).unwrap();
            println!("ready");
            std::io::stdout().flush().unwrap();
            std::thread::sleep(std::time::Duration::from_secs(60));
            std::process::exit(9);
        }
        // Write past a 64 KiB `ulimit -f`; print the error.
        "fsize" => {
            ignore_file_size_signal();
            let limit = libc::rlimit { rlim_cur: 1 << 16, rlim_max: 1 << 16 };
            // SAFETY: a valid rlimit struct, read by the call only.
            assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &limit) }, 0);
            let mut o = opts(named).create(dir.join("out")).unwrap();
            let e = o.write_all(&[2u8; 1 << 20]).unwrap_err();
            drop(o);
            println!("error: {e}");
            std::process::exit(0);
        }
        // stdout was opened on `dir/f` (or another file) by the parent.
        "stdout" => {
            let meta = fs::metadata(dir.join("f")).unwrap();
            let refused = refuse_stdout_is_input(&meta, &dir.join("f"));
            std::process::exit(if refused.is_err() { 3 } else { 4 });
        }
        other => panic!("unknown child mode {other}"),
    }
}

/// Reads the child's stdout up to its "ready" line (the harness prints its own lines first).
fn wait_ready(c: &mut std::process::Child) {
    let mut r = BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != "ready" {
        line.clear();
        assert_ne!(r.read_line(&mut line).unwrap(), 0, "the child ended before it was ready");
    }
    // Keep the pipe open: a child writing to a closed pipe would die of SIGPIPE instead.
    c.stdout = Some(r.into_inner());
}

fn kill(child: &std::process::Child, sig: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid; no memory is involved.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

#[test]
fn signals_remove_the_named_temporary_and_still_end_the_process() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let d = tmp();
        let mut c = spawn_child("hold-named", d.path(), Stdio::piped());
        wait_ready(&mut c);
        assert_eq!(names(d.path()).len(), 1, "the named temporary exists while writing");
        kill(&c, sig);
        let status = c.wait().unwrap();
        assert_eq!(status.signal(), Some(sig), "the process ends by the signal it was sent");
        assert_eq!(names(d.path()), Vec::<String>::new(), "signal {sig} left a file");
    }
}

#[test]
fn sigkill_leaves_no_file_on_the_o_tmpfile_path() {
    let d = tmp();
    let mut c = spawn_child("hold", d.path(), Stdio::piped());
    wait_ready(&mut c);
    kill(&c, libc::SIGKILL);
    assert_eq!(c.wait().unwrap().signal(), Some(libc::SIGKILL));
    assert_eq!(names(d.path()), Vec::<String>::new());
}

#[test]
fn a_file_size_limit_is_an_error_naming_the_destination_and_leaves_nothing() {
    for mode in ["fsize", "fsize-named"] {
        let d = tmp();
        let out = spawn_child(mode, d.path(), Stdio::piped()).wait_with_output().unwrap();
        assert!(out.status.success(), "{mode}: {:?}", out.status);
        let text = String::from_utf8_lossy(&out.stdout);
        let want = format!("error: writing {}: File too large", d.path().join("out").display());
        assert!(text.lines().any(|l| l == want), "{mode}: {text}");
        assert_eq!(names(d.path()), Vec::<String>::new(), "{mode}");
    }
}

#[test]
fn stdout_being_the_input_is_refused() {
    let d = tmp();
    fs::write(d.path().join("f"), b"input").unwrap();
    let same = fs::OpenOptions::new().append(true).open(d.path().join("f")).unwrap();
    let status = spawn_child("stdout", d.path(), Stdio::from(same)).wait().unwrap();
    assert_eq!(status.code(), Some(3), "stdout appending to the input was not refused");
    let other = fs::File::create(d.path().join("other")).unwrap();
    let status = spawn_child("stdout", d.path(), Stdio::from(other)).wait().unwrap();
    assert_eq!(status.code(), Some(4), "a different stdout file was refused");
}
