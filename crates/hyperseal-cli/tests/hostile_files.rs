//! Hostile files against the release binary, each from a pipe that never ends, under a memory
//! cap and a deadline (`common::bounded`): an endless stanza body (binary and armored), one
//! line of 100 MB, armor that never ends, endless stanzas. Each must end within a few seconds
//! with one clear error, in at most 64 MiB, leaving nothing at `-o`. Each test measures in a
//! fresh process of the test binary (`peak::fresh`): a child's peak RSS starts from its parent's
//! memory, and the other tests running beside it in this binary hold up to hundreds of MiB.

use crate::common;

use std::io::Read;
use std::process::Command;
use std::time::Duration;

use common::bounded::{self, endless};
use common::peak;

const DEADLINE: Duration = Duration::from_secs(20);

/// `make()` where the peak of memory can be measured; `None` (the test is skipped) elsewhere.
fn measurable<T>(make: fn() -> T) -> Option<T> {
    peak::fresh().then(make)
}

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
    let Some(case) = measurable(Case::new) else { return };
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
    if !peak::fresh() {
        return;
    }
    // 37 + 43 x 65 bytes and then 48 x 65 bytes are whole armor lines (multiples of 48).
    let first = [AGE, &body_line().repeat(43)].concat();
    let head = [&b"-----BEGIN AGE ENCRYPTED FILE-----\n"[..], &armor_lines(&first)].concat();
    let line = Case::new().decrypt(&["decrypt"], endless(&head, &armor_lines(&body_line().repeat(48))));
    assert!(line.contains("input too large") && line.contains("stanza body"), "{line}");
}

#[test]
fn one_line_of_100_mb() {
    let Some(case) = measurable(Case::new) else { return };
    let input =
        Box::new(std::io::Cursor::new(AGE[..22].to_vec()).chain(std::io::repeat(b'A').take(100 << 20)));
    let line = case.decrypt(&["decrypt"], input);
    assert!(line.contains("input too large") && line.contains("header line"), "{line}");
}

#[test]
fn armor_that_never_ends() {
    let Some(case) = measurable(Case::new) else { return };
    let line = case.decrypt(&["decrypt"], endless(b"-----BEGIN AGE ENCRYPTED FILE-----\n", b"A"));
    assert!(line.contains("input too large") && line.contains("armor line"), "{line}");
    // Valid stanza lines, forever.
    let line = case.decrypt(&["decrypt"], endless(b"age-encryption.org/v1\n", b"-> X25519 AAAA\nAAAA\n"));
    assert!(line.contains("input too large"), "{line}");
}

/// An identity that never ends on standard input (`pubkey`, and `age -d -i -`).
#[test]
fn an_endless_identity_on_stdin() {
    if !peak::fresh() {
        return;
    }
    let id = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX\n";
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
    cmd.arg("pubkey");
    let line = bounded::run(&mut cmd, Some(endless(b"", id.as_bytes())), DEADLINE).failed_cleanly();
    assert!(line.contains("input too large") && line.contains("identity file"), "{line}");
}

/// A directory for the toolkit's cases: an Ed25519 key pair, a message and its signature.
struct Toolkit {
    dir: tempfile::TempDir,
}

impl Toolkit {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        let hs = |args: &[&std::ffi::OsStr]| {
            let o = Command::new(env!("CARGO_BIN_EXE_hyperseal")).args(args).output().unwrap();
            assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        };
        std::fs::write(at("msg"), b"signed message").unwrap();
        hs(&["keygen".as_ref(), "--kind".as_ref(), "ed25519".as_ref(), "-o".as_ref(), at("key").as_ref()]);
        std::fs::write(at("pub"), hs(&["pubkey".as_ref(), "-i".as_ref(), at("key").as_ref()])).unwrap();
        hs(&[
            "sign".as_ref(),
            "-i".as_ref(),
            at("key").as_ref(),
            "-o".as_ref(),
            at("sig").as_ref(),
            at("msg").as_ref(),
        ]);
        hs(&["token".as_ref(), "keygen".as_ref(), "-o".as_ref(), at("token.key").as_ref()]);
        Toolkit { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }

    /// Runs `hyperseal ARGS…` (names in the directory as `@NAME`) on `input`, checks that it
    /// failed cleanly and left the directory as it was, and returns the error line.
    fn fails(&self, args: &[&str], input: Option<Box<dyn Read + Send>>) -> String {
        let before = self.listing();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
        cmd.args(args.iter().map(|a| a.strip_prefix('@').map_or(a.to_string(), |n| self.path(n))));
        let line = bounded::run(&mut cmd, input, DEADLINE).failed_cleanly();
        assert_eq!(self.listing(), before, "{args:?}");
        line
    }

    fn listing(&self) -> Vec<std::ffi::OsString> {
        let mut names: Vec<_> =
            std::fs::read_dir(self.dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        names
    }
}

/// The signature is the file that comes from strangers: `/dev/zero` and a 200 MiB (sparse)
/// signature file are refused at the signature budget, after reading 64 KiB + 1 bytes.
#[test]
fn a_signature_that_never_ends() {
    let Some(t) = measurable(Toolkit::new) else { return };
    let verify = |sig: &str| t.fails(&["verify", "--pubkey", "@pub", "--sig", sig, "@msg"], None);
    // The setup is sound: the real signature verifies.
    let ok = Command::new(env!("CARGO_BIN_EXE_hyperseal"))
        .args(["verify", "--pubkey", &t.path("pub"), "--sig", &t.path("sig"), &t.path("msg")])
        .output()
        .unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let line = verify("/dev/zero");
    assert_eq!(line, "hyperseal: error: input too large: the signature is longer than 64 KiB");
    let big = std::fs::File::create(t.dir.path().join("big.sig")).unwrap();
    big.set_len(200 << 20).unwrap();
    let line = verify("@big.sig");
    assert_eq!(line, "hyperseal: error: input too large: the signature is longer than 64 KiB");
}

#[test]
fn an_hmac_key_file_that_never_ends() {
    let Some(t) = measurable(Toolkit::new) else { return };
    let line = t.fails(&["mac", "--key-file", "/dev/zero", "@msg"], None);
    assert_eq!(line, "hyperseal: error: input too large: the --key-file is longer than 256 KiB");
}

/// Base64url that never ends is refused at the longest token `seal` writes.
#[test]
fn a_token_that_never_ends() {
    let Some(t) = measurable(Toolkit::new) else { return };
    let line = t.fails(&["token", "open", "--key", "@token.key"], Some(endless(b"", b"AQ")));
    assert!(line.starts_with("hyperseal: error: input too large: the token is longer than "), "{line}");
}

/// A checksum list comes from wherever the files came from: a line that never ends.
#[test]
fn a_checksum_line_that_never_ends() {
    let Some(t) = measurable(Toolkit::new) else { return };
    let line = t.fails(&["hash", "--check", "/dev/zero"], None);
    assert!(line.contains("input too large: a line of the checksum list"), "{line}");
    let line = t.fails(&["hash", "--check", "-"], Some(endless(b"", &[b'a'; 64])));
    assert!(line.contains("input too large: a line of the checksum list"), "{line}");
}

/// An age file of 200 bytes whose scrypt stanza asks for log2 N = 22 (age's own cap, so it is
/// accepted), that is 4 GiB of working memory: more than the address-space cap lets the process
/// have. One error line naming the work factor and the size, exit 1, nothing at `-o`, for the
/// passphrase of the file and for the passphrase of an encrypted identity file alike.
#[test]
fn an_scrypt_work_factor_past_the_memory_cap() {
    if !peak::fresh() {
        return;
    }
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD_NO_PAD.encode(b);
    let header = format!(
        "age-encryption.org/v1\n-> scrypt {} 22\n{}\n--- {}\n",
        b64(&[7; 16]),
        b64(&[0; 32]),
        b64(&[0; 32])
    );
    let file = [header.as_bytes(), &[0; 50]].concat();
    assert_eq!(file.len(), 200);
    // The cap is below what the file asks for, so the allocation must fail.
    const _: () = assert!(bounded::ADDRESS_SPACE < 4 << 30);
    let t = Toolkit::new();
    std::fs::write(t.dir.path().join("file.age"), &file).unwrap();
    std::fs::write(t.dir.path().join("pass"), "a passphrase\n").unwrap();
    let want =
        "the file's scrypt work factor (log2 N = 22) needs 4 GiB of memory, which could not be allocated";
    let line = t.fails(&["decrypt", "--passphrase-file", "@pass", "-o", "@out", "@file.age"], None);
    assert_eq!(line, format!("hyperseal: error: {want}"));
    let line = t.fails(
        &["decrypt", "-i", "@file.age", "--identity-passphrase-file", "@pass", "-o", "@out", "@msg"],
        None,
    );
    assert!(line.starts_with("hyperseal: error: ") && line.ends_with(want), "{line}");
}
