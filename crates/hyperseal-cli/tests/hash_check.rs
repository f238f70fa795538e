//! `hash` against coreutils itself (sha256sum, b2sum, run in the same test): several files with
//! one missing, `--tag` lines, escaped names, and the names that used to forge an `OK` line.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::stderr;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs a coreutils tool in `dir`.
fn coreutils(dir: &Path, tool: &str, args: &[&str]) -> Output {
    Command::new(tool).args(args).current_dir(dir).output().unwrap()
}

/// Runs hyperseal in `dir`.
fn hs_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hyperseal")).args(args).current_dir(dir).output().unwrap()
}

const NEWLINE_NAME: &str = "new\nline";
const BACKSLASH_NAME: &str = "back\\slash";

fn files(dir: &Path) {
    fs::write(dir.join("f"), b"hello\n").unwrap();
    fs::write(dir.join("g"), b"world\n").unwrap();
    fs::write(dir.join(NEWLINE_NAME), b"nl").unwrap();
    fs::write(dir.join(BACKSLASH_NAME), b"bs").unwrap();
    fs::write(dir.join("pa(re)n = s"), b"paren").unwrap();
}

#[test]
fn a_missing_file_does_not_stop_the_others() {
    let d = tempfile::tempdir().unwrap();
    files(d.path());
    let ours = hs_in(d.path(), &["hash", "nonexist", "f", "g"]);
    let theirs = coreutils(d.path(), "sha256sum", &["nonexist", "f", "g"]);
    assert_eq!(stdout(&ours), stdout(&theirs));
    assert_eq!(stdout(&ours).lines().count(), 2);
    assert_eq!((ours.status.code(), theirs.status.code()), (Some(1), Some(1)));
    assert_eq!(stderr(&ours), "hyperseal: error: nonexist: No such file or directory\n");
    // mac behaves the same way.
    fs::write(d.path().join("key"), b"k").unwrap();
    let o = hs_in(d.path(), &["mac", "--key-file", "key", "nonexist", "f"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o).lines().count(), 1);
}

#[test]
fn lines_and_tag_lines_match_coreutils() {
    let d = tempfile::tempdir().unwrap();
    files(d.path());
    let names = ["f", NEWLINE_NAME, BACKSLASH_NAME, "pa(re)n = s"];
    for (algo, tool) in [("sha256", "sha256sum"), ("blake2b512", "b2sum")] {
        for tag in [false, true] {
            let mut ours = vec!["hash", "--algo", algo];
            let mut theirs = vec![];
            if tag {
                ours.push("--tag");
                theirs.push("--tag");
            }
            ours.extend(names);
            theirs.extend(names);
            let (o, t) = (hs_in(d.path(), &ours), coreutils(d.path(), tool, &theirs));
            assert!(o.status.success() && t.status.success());
            assert_eq!(stdout(&o), stdout(&t), "{algo} tag={tag}");
            // A name with a newline stays on one line.
            assert_eq!(stdout(&o).lines().count(), names.len());
        }
    }
}

#[test]
fn check_reads_what_coreutils_writes() {
    let d = tempfile::tempdir().unwrap();
    files(d.path());
    let names = ["f", "g", NEWLINE_NAME, BACKSLASH_NAME, "pa(re)n = s"];
    for (algo, tool, flags) in [
        ("sha256", "sha256sum", &[][..]),
        ("sha256", "sha256sum", &["--tag"][..]),
        ("sha256", "sha256sum", &["-b"][..]),
        ("blake2b512", "b2sum", &["--tag"][..]),
    ] {
        let mut args = flags.to_vec();
        args.extend(names);
        let list = coreutils(d.path(), tool, &args);
        assert!(list.status.success());
        fs::write(d.path().join("SUMS"), &list.stdout).unwrap();
        let ours = hs_in(d.path(), &["hash", "--algo", algo, "--check", "SUMS"]);
        let theirs = coreutils(d.path(), tool, &["--check", "SUMS"]);
        assert!(ours.status.success(), "{tool} {flags:?}: {}", stderr(&ours));
        assert_eq!(stdout(&ours), stdout(&theirs), "{tool} {flags:?}");
        // CRLF line ends (lists written on Windows) are read too.
        let crlf = String::from_utf8(list.stdout.clone()).unwrap().replace('\n', "\r\n");
        fs::write(d.path().join("SUMS"), crlf).unwrap();
        let o = hs_in(d.path(), &["hash", "--algo", algo, "--check", "SUMS"]);
        assert!(o.status.success(), "{tool} {flags:?} CRLF: {}", stderr(&o));
    }
}

/// A file whose name holds a newline and a fake entry used to print a forged `OK` line under
/// `--check` (and, hashed, a second checksum line naming another file).
#[test]
fn a_newline_in_a_name_cannot_forge_a_line() {
    let d = tempfile::tempdir().unwrap();
    files(d.path());
    let forged = "x: OK\nimportant.tar";
    fs::write(d.path().join(forged), b"whatever").unwrap();
    let list = hs_in(d.path(), &["hash", forged]);
    assert!(list.status.success());
    assert_eq!(stdout(&list).lines().count(), 1);
    assert_eq!(list.stdout, coreutils(d.path(), "sha256sum", &[forged]).stdout);
    fs::write(d.path().join("SUMS"), &list.stdout).unwrap();
    let o = hs_in(d.path(), &["hash", "--check", "SUMS"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(!out.lines().any(|l| l == "x: OK" || l == "important.tar: OK"), "{out}");
    assert_eq!(out, stdout(&coreutils(d.path(), "sha256sum", &["--check", "SUMS"])));
}

#[test]
fn check_rejects_what_coreutils_rejects() {
    let d = tempfile::tempdir().unwrap();
    files(d.path());
    let hex = stdout(&coreutils(d.path(), "sha256sum", &["f"]))[..64].to_string();
    for bad in [
        format!("MD5 (f) = {hex}"),    // another algorithm's tag
        format!("sha256 (f) = {hex}"), // tags are case-sensitive
        format!("\\{hex}  f\\q"),      // an escape coreutils never writes
        format!("{}  f", &hex[..63]),  // short digest
    ] {
        fs::write(d.path().join("SUMS"), format!("{bad}\n")).unwrap();
        let o = hs_in(d.path(), &["hash", "--check", "SUMS"]);
        let t = coreutils(d.path(), "sha256sum", &["--check", "SUMS"]);
        assert_eq!((o.status.code(), t.status.code()), (Some(1), Some(1)), "{bad}");
        assert_eq!(stdout(&o), "", "{bad}");
    }
    // A missing file is reported with its cause and counted.
    fs::write(d.path().join("SUMS"), format!("{hex}  nonexist\n{hex}  f\n")).unwrap();
    let o = hs_in(d.path(), &["hash", "--check", "SUMS"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "nonexist: FAILED open or read\nf: OK\n");
    assert!(stderr(&o).contains("nonexist: No such file or directory"), "{}", stderr(&o));
}
