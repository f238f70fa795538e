//! Hostile files against the release binary, each from a pipe that never ends, under a memory
//! cap and a deadline (`common::bounded`): an endless stanza body (binary and armored), one
//! line of 100 MB, armor that never ends, endless stanzas. Each must end within a few seconds
//! with one clear error, in at most 64 MiB, leaving nothing at `-o`.

mod common;

use std::io::Read;
use std::process::Command;
use std::time::Duration;

use common::bounded::{self, endless};

const DEADLINE: Duration = Duration::from_secs(20);

/// `-o OUT` in a fresh directory, the identity file, and the directory.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let key = Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(["keygen", "--kind", "x25519", "-o"])
            .arg(dir.path().join("key"))
            .output()
            .unwrap();
        assert!(key.status.success(), "{}", String::from_utf8_lossy(&key.stderr));
        Case { dir }
    }

    /// Runs `hyperseal ARGS… -i key -o out` on `input`, and checks that it failed cleanly and
    /// left only the key in the directory. Returns the error line.
    fn decrypt(&self, args: &[&str], input: Box<dyn Read + Send>) -> String {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
        cmd.args(args).arg("-i").arg(self.dir.path().join("key")).arg("-o").arg(self.dir.path().join("out"));
        let run = bounded::run(&mut cmd, Some(input), DEADLINE);
        let line = run.failed_cleanly();
        let left: Vec<_> =
            std::fs::read_dir(self.dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["key"], "left behind: {left:?}");
        line
    }
}

const AGE: &[u8] = b"age-encryption.org/v1\n-> X25519 AAAA\n";

fn body_line() -> Vec<u8> {
    [&[b'A'; 64][..], b"\n"].concat()
}

#[test]
fn an_endless_stanza_body_from_a_pipe() {
    let case = Case::new();
    for args in [&["decrypt"][..], &["age", "-d"]] {
        let line = case.decrypt(args, endless(AGE, &body_line()));
        assert!(line.contains("input too large") && line.contains("stanza body"), "{args:?}: {line}");
    }
}

/// Base64 armor lines of `bin` (a multiple of 48 bytes).
fn armor_lines(bin: &[u8]) -> Vec<u8> {
    use base64::Engine;
    assert_eq!(bin.len() % 48, 0);
    let mut out = Vec::new();
    for part in bin.chunks(48) {
        out.extend_from_slice(base64::engine::general_purpose::STANDARD.encode(part).as_bytes());
        out.push(b'\n');
    }
    out
}

#[test]
fn an_endless_armored_stanza_body_from_a_pipe() {
    // 37 + 43 x 65 bytes and then 48 x 65 bytes are whole armor lines (multiples of 48).
    let first = [AGE, &body_line().repeat(43)].concat();
    let head = [&b"-----BEGIN AGE ENCRYPTED FILE-----\n"[..], &armor_lines(&first)].concat();
    let line = Case::new().decrypt(&["decrypt"], endless(&head, &armor_lines(&body_line().repeat(48))));
    assert!(line.contains("input too large") && line.contains("stanza body"), "{line}");
}

#[test]
fn one_line_of_100_mb() {
    let case = Case::new();
    let input =
        Box::new(std::io::Cursor::new(AGE[..22].to_vec()).chain(std::io::repeat(b'A').take(100 << 20)));
    let line = case.decrypt(&["decrypt"], input);
    assert!(line.contains("input too large") && line.contains("header line"), "{line}");
}

#[test]
fn armor_that_never_ends() {
    let case = Case::new();
    let line = case.decrypt(&["decrypt"], endless(b"-----BEGIN AGE ENCRYPTED FILE-----\n", b"A"));
    assert!(line.contains("input too large") && line.contains("armor line"), "{line}");
    // Valid stanza lines, forever.
    let line = case.decrypt(&["decrypt"], endless(b"age-encryption.org/v1\n", b"-> X25519 AAAA\nAAAA\n"));
    assert!(line.contains("input too large"), "{line}");
}

/// An identity that never ends on standard input (`pubkey`, and `age -d -i -`).
#[test]
fn an_endless_identity_on_stdin() {
    let id = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX\n";
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
    cmd.arg("pubkey");
    let line = bounded::run(&mut cmd, Some(endless(b"", id.as_bytes())), DEADLINE).failed_cleanly();
    assert!(line.contains("input too large") && line.contains("identity file"), "{line}");
}
