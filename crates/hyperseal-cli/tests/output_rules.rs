//! Where output may go, and what the messages say when it may not: stdout that is the input
//! (`f >> f`), a directory, a dangling symbolic link, `/dev/stdout`, a missing input, and a
//! damaged file decrypted to stdout (bytes already went out: no "no output file was written").

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{hs, names, ok, stderr};

/// A directory with an x25519 key pair (`k.key`, `k.pub`), a 1 MiB file `f` and `f.hs`.
fn setup() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    ok(&hs(&["keygen", "--kind", "x25519", "-o", &p("k.key")], None));
    let public = ok(&hs(&["pubkey", "-i", &p("k.key")], None));
    fs::write(d.path().join("k.pub"), public).unwrap();
    fs::write(d.path().join("f"), (0..1 << 20).map(|i| (i * 7 % 251) as u8).collect::<Vec<u8>>()).unwrap();
    ok(&hs(&["encrypt", "-R", &p("k.pub"), "--chunk-size", "16K", "-o", &p("f.hs"), &p("f")], None));
    d
}

/// Runs hyperseal with stdout appended to `stdout_file` (and stdin from `stdin_file`), under a
/// 16 MiB file-size limit so that a binary that does not refuse stops instead of filling the
/// disk.
fn with_stdout_file(args: &[&str], stdout_file: &Path, stdin_file: Option<&Path>) -> Output {
    let out = fs::OpenOptions::new().append(true).open(stdout_file).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
    c.args(args).stdout(out).stderr(Stdio::piped());
    c.stdin(stdin_file.map_or(Stdio::null(), |p| fs::File::open(p).unwrap().into()));
    // SAFETY: setrlimit is async-signal-safe and reads only the struct on our stack.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 16 << 20, rlim_max: 16 << 20 };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            Ok(())
        })
    };
    c.output().unwrap()
}

#[test]
fn stdout_that_is_the_input_is_refused_like_cat_does() {
    let d = setup();
    let (f, fhs, key, public) =
        (d.path().join("f"), d.path().join("f.hs"), d.path().join("k.key"), d.path().join("k.pub"));
    let (before, before_hs) = (fs::read(&f).unwrap(), fs::read(&fhs).unwrap());
    // hyperseal encrypt -R k.pub f >> f
    let o = with_stdout_file(&["encrypt", "-R", public.to_str().unwrap(), f.to_str().unwrap()], &f, None);
    assert_eq!(o.status.code(), Some(1), "{:?} {}", o.status, stderr(&o));
    assert_eq!(
        stderr(&o),
        format!("hyperseal: error: input file is output file: standard output is {}\n", f.display())
    );
    assert_eq!(fs::read(&f).unwrap(), before);
    // hyperseal decrypt -i k.key f.hs >> f.hs
    let o = with_stdout_file(&["decrypt", "-i", key.to_str().unwrap(), fhs.to_str().unwrap()], &fhs, None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("hyperseal: error: input file is output file"), "{}", stderr(&o));
    assert_eq!(fs::read(&fhs).unwrap(), before_hs);
    // hyperseal encrypt -R k.pub < f >> f
    let o = with_stdout_file(&["encrypt", "-R", public.to_str().unwrap()], &f, Some(&f));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "hyperseal: error: input file is output file: standard output is standard input\n"
    );
    assert_eq!(fs::read(&f).unwrap(), before);
    // hyperseal encrypt -R k.pub -o f < f (the same file through stdin and -o)
    let o = with_stdout_file(
        &["encrypt", "-R", public.to_str().unwrap(), "--force", "-o", f.to_str().unwrap()],
        &d.path().join("k.pub"),
        Some(&f),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), format!("hyperseal: error: input file is output file: {}\n", f.display()));
    assert_eq!(fs::read(&f).unwrap(), before);
}

#[test]
fn a_missing_input_says_why() {
    let d = setup();
    let missing = d.path().join("nonexist");
    let public = d.path().join("k.pub");
    let o = hs(&["encrypt", "-R", public.to_str().unwrap(), missing.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("hyperseal: error: cannot open {}: No such file or directory\n", missing.display())
    );
    let o = hs(&["decrypt", "-i", missing.to_str().unwrap(), d.path().join("f.hs").to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "hyperseal: error: cannot read identity file {}: No such file or directory\n",
            missing.display()
        )
    );
}

#[test]
fn a_directory_destination_is_named_as_such_without_a_force_hint() {
    let d = setup();
    let (f, public) = (d.path().join("f"), d.path().join("k.pub"));
    for force in [&[][..], &["--force"][..]] {
        let mut args = vec!["encrypt", "-R", public.to_str().unwrap(), "-o", d.path().to_str().unwrap()];
        args.extend_from_slice(force);
        args.push(f.to_str().unwrap());
        let o = hs(&args, None);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stderr(&o), format!("hyperseal: error: {} is a directory\n", d.path().display()));
    }
    assert_eq!(names(d.path()), ["f", "f.hs", "k.key", "k.pub"]);
}

#[test]
fn a_dangling_symlink_destination_is_explained_and_not_followed() {
    let d = setup();
    let (f, public, link) = (d.path().join("f"), d.path().join("k.pub"), d.path().join("link"));
    std::os::unix::fs::symlink(d.path().join("planted"), &link).unwrap();
    for force in [&[][..], &["--force"][..]] {
        let mut args = vec!["encrypt", "-R", public.to_str().unwrap(), "-o", link.to_str().unwrap()];
        args.extend_from_slice(force);
        args.push(f.to_str().unwrap());
        let o = hs(&args, None);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert_eq!(
            err.lines().next().unwrap(),
            format!(
                "hyperseal: error: output file {} is a symbolic link to a file that does not exist",
                link.display()
            )
        );
        assert!(!err.contains("os error"), "{err}");
    }
    assert_eq!(names(d.path()), ["f", "f.hs", "k.key", "k.pub", "link"]);
}

#[test]
fn dev_stdout_is_written_through_without_force() {
    let d = setup();
    let (fhs, key) = (d.path().join("f.hs"), d.path().join("k.key"));
    let o = hs(&["decrypt", "-i", key.to_str().unwrap(), "-o", "/dev/stdout", fhs.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, fs::read(d.path().join("f")).unwrap());
}

#[test]
fn a_damaged_file_decrypted_to_stdout_does_not_claim_nothing_was_written() {
    let d = setup();
    let (fhs, key) = (d.path().join("f.hs"), d.path().join("k.key"));
    let mut bytes = fs::read(&fhs).unwrap();
    let n = bytes.len();
    bytes[n - 100] ^= 1; // the last chunk: all the others decrypt and go out first
    fs::write(&fhs, &bytes).unwrap();
    let o = hs(&["decrypt", "--threads", "1", "-i", key.to_str().unwrap(), fhs.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(!o.stdout.is_empty(), "authenticated chunks went out before the damaged one");
    let err = stderr(&o);
    assert!(!err.contains("no output file was written"), "{err}");
    assert!(
        err.contains(&format!("the {} bytes already written to standard output", o.stdout.len())),
        "{err}"
    );
    // To a file, the claim is true, and kept.
    let out = d.path().join("out");
    let o = hs(
        &["decrypt", "-i", key.to_str().unwrap(), "-o", out.to_str().unwrap(), fhs.to_str().unwrap()],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no output file was written"), "{}", stderr(&o));
    assert!(!out.exists());
}

/// The error line and its hint leave in one write(2): git runs `hyperseal git filter-process` on
/// its own stderr and writes its "fatal: …" line there too, so a message written in pieces came
/// out cut in two ("hyperseal: error: fatal: …"). strace shows each write the process makes.
#[test]
fn an_error_and_its_hint_are_one_write() {
    let Some(strace) = common::peer_on_path("strace") else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("writes");
    let o = Command::new(&strace)
        .args(["-f", "-qq", "-s", "4096", "-e", "trace=write", "-e", "signal=none", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_hyperseal"))
        .args(["encrypt", "-r", "age1notakey"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("hyperseal: hint: "), "{}", stderr(&o));
    let writes = fs::read_to_string(&log).unwrap();
    let to_stderr: Vec<&str> = writes.lines().filter(|l| l.contains("write(2, ")).collect();
    assert_eq!(to_stderr.len(), 1, "the message went out in {} writes:\n{writes}", to_stderr.len());
    let w = to_stderr[0];
    assert!(w.contains("\"hyperseal: error: invalid recipient") && w.contains("\\nhyperseal: hint: "), "{w}");
}
