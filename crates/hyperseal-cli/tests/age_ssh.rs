//! SSH keys against the real age (v1.3.1, `.tools/bin` from `make age`), with keys made fresh by
//! `ssh-keygen` (Debian's openssh-client, installed by `make tools`): `ssh-ed25519` and `ssh-rsa`
//! in both directions, armored and not, at sizes around the 64 KiB chunk boundary; keys given as
//! `-r "ssh-… AAAA… comment"`, as `-R` files in `authorized_keys` form (options, comments, an
//! ECDSA key age skips) and GitHub `.keys` form; passphrase-protected private keys
//! (aes256-ctr, the default, and aes256-gcm@openssh.com) and PEM keys with legacy encryption
//! (`ssh-keygen -m PEM`, `openssl genrsa -traditional`) opened with `--identity-passphrase-file`.
//!
//! age reads an SSH key's passphrase only from a terminal: the bulk runs hand age an unprotected
//! copy of the same key (`ssh-keygen -p -N ""`), and `protected_keys_on_a_terminal` types the
//! passphrase into both tools on a pseudo-terminal (util-linux `script`).
//! Without age or ssh-keygen every test prints a note and passes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;
use common::on_terminal;

const TOOLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.tools/bin");
const HS: &str = env!("CARGO_BIN_EXE_hyperseal");
const SIZES: [usize; 6] = [0, 1, 65535, 65536, 65537, 2 * 65536 + 500];
const PASS: &str = "correct horse ssh staple";

/// age and a temporary folder for the test's keys and files.
fn tools() -> Option<(PathBuf, tempfile::TempDir)> {
    let age = Path::new(TOOLS).join("age");
    let keygen = Command::new("ssh-keygen").arg("-?").output().is_ok();
    if age.exists() && keygen {
        Some((age, tempfile::tempdir().unwrap()))
    } else {
        eprintln!("note: age ({}) or ssh-keygen missing (run `make tools`); skipping", age.display());
        // `make test` sets this: there a missing peer is a failure, never a quiet skip.
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        None
    }
}

fn run(bin: &Path, args: &[&str]) -> Output {
    let o = Command::new(bin).args(args).output().unwrap();
    assert!(o.status.success(), "{} {args:?} failed: {}", bin.display(), String::from_utf8_lossy(&o.stderr));
    o
}

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 131 + i / 65536) as u8).collect()
}

struct Key {
    /// The private key file, possibly passphrase-protected.
    private: PathBuf,
    /// An unprotected copy of the same key, for age.
    plain: PathBuf,
    /// The `.pub` line: `ssh-… AAAA… comment`.
    public: String,
}

/// `ssh-keygen -t KIND [args]` with passphrase `pass` ("" = none).
fn ssh_keygen(dir: &Path, name: &str, kind_args: &[&str], pass: &str) -> Key {
    let private = dir.join(name);
    let mut args = vec!["-q", "-C", "interop test key", "-N", pass, "-f", private.to_str().unwrap()];
    args.extend(kind_args);
    run(Path::new("ssh-keygen"), &args);
    let public = fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap().trim().to_string();
    let plain = if pass.is_empty() {
        private.clone()
    } else {
        let copy = dir.join(format!("{name}.plain"));
        fs::copy(&private, &copy).unwrap();
        run(Path::new("ssh-keygen"), &["-q", "-p", "-P", pass, "-N", "", "-f", copy.to_str().unwrap()]);
        copy
    };
    Key { private, plain, public }
}

/// Encrypts with each tool to `recipient_args` and decrypts with the other, every size, armored
/// and not. `hs_id` are hyperseal's identity arguments, `age_id` age's identity file.
fn both_directions(
    dir: &Path,
    age: &Path,
    recipient_args: &[&str],
    age_id: &Path,
    hs_id: &[&str],
    label: &str,
) {
    let (plain, ct, out) = (dir.join("plain"), dir.join("ct"), dir.join("out"));
    for &n in &SIZES {
        fs::write(&plain, data(n)).unwrap();
        for armor in [false, true] {
            let a: &[&str] = if armor { &["-a"] } else { &[] };

            let _ = (fs::remove_file(&ct), fs::remove_file(&out));
            let mut args = vec!["encrypt", "--format", "age", "-q", "-o", ct.to_str().unwrap()];
            args.extend(a.iter().chain(recipient_args));
            args.push(plain.to_str().unwrap());
            run(Path::new(HS), &args);
            let head = fs::read(&ct).unwrap();
            assert!(armor || head.starts_with(b"age-encryption.org/v1\n-> ssh-"), "{label}");
            let opened = open_with(age, &["-d", "-i", age_id.to_str().unwrap()], &ct, &out);
            assert_eq!(opened, data(n), "{label} hyperseal→age n={n} armor={armor}");

            let _ = (fs::remove_file(&ct), fs::remove_file(&out));
            let mut args = vec!["-e", "-o", ct.to_str().unwrap()];
            args.extend(a.iter().chain(recipient_args));
            args.push(plain.to_str().unwrap());
            run(age, &args);
            let mut args = vec!["decrypt", "-q", "-o", out.to_str().unwrap()];
            args.extend(hs_id);
            args.push(ct.to_str().unwrap());
            run(Path::new(HS), &args);
            assert_eq!(fs::read(&out).unwrap(), data(n), "{label} age→hyperseal n={n} armor={armor}");
        }
    }
}

/// `PROGRAM ARGS -o OUT CT` (age's `-d -i KEY`, hyperseal's `decrypt -q -i KEY`), asserted to
/// succeed, after removing what an earlier run left at `out`: what it wrote.
fn open_with(program: &Path, args: &[&str], ct: &Path, out: &Path) -> Vec<u8> {
    let _ = fs::remove_file(out);
    let mut argv = args.to_vec();
    argv.extend(["-o", out.to_str().unwrap(), ct.to_str().unwrap()]);
    run(program, &argv);
    fs::read(out).unwrap()
}

#[test]
fn ssh_ed25519_both_directions() {
    let Some((age, dir)) = tools() else { return };
    let k = ssh_keygen(dir.path(), "id_ed25519", &["-t", "ed25519"], "");
    let id = ["-i", k.private.to_str().unwrap()];
    both_directions(dir.path(), &age, &["-r", &k.public], &k.plain, &id, "ssh-ed25519");
}

#[test]
fn ssh_rsa_both_directions() {
    let Some((age, dir)) = tools() else { return };
    for bits in ["2048", "3072"] {
        let k = ssh_keygen(dir.path(), &format!("id_rsa{bits}"), &["-t", "rsa", "-b", bits], "");
        let id = ["-i", k.private.to_str().unwrap()];
        both_directions(dir.path(), &age, &["-r", &k.public], &k.plain, &id, &format!("ssh-rsa {bits}"));
    }
}

#[test]
fn passphrase_protected_keys() {
    let Some((age, dir)) = tools() else { return };
    let d = dir.path();
    let keys = [
        ssh_keygen(d, "ed_ctr", &["-t", "ed25519"], PASS),
        ssh_keygen(d, "ed_gcm", &["-t", "ed25519", "-Z", "aes256-gcm@openssh.com"], PASS),
        ssh_keygen(d, "rsa_ctr", &["-t", "rsa", "-b", "3072"], PASS),
    ];
    for k in &keys {
        assert!(fs::read_to_string(&k.private).unwrap() != fs::read_to_string(&k.plain).unwrap());
    }
    let t = Protected::new(d, &age, &keys);

    // Without a passphrase (no terminal here) or with a wrong one: one clear error, no output.
    let ct = t.small(&keys[0]);
    for pass in [None, Some(&t.wrong)] {
        t.refused(&keys[0], pass.map(|p| p.as_path()), &ct, "");
    }
}

/// Passphrase-protected keys' shared set-up: the right passphrase and a wrong one in files,
/// both directions with age already checked for each key.
struct Protected<'a> {
    d: &'a Path,
    age: &'a Path,
    pass_file: PathBuf,
    wrong: PathBuf,
    out: PathBuf,
}

impl<'a> Protected<'a> {
    /// Writes the passphrase files and runs [`both_directions`] for each of `keys`, hyperseal
    /// reading the passphrase from its file.
    fn new(d: &'a Path, age: &'a Path, keys: &[Key]) -> Self {
        let t = Protected { d, age, pass_file: d.join("pass"), wrong: d.join("wrong"), out: d.join("never") };
        fs::write(&t.pass_file, format!("{PASS}\n")).unwrap();
        fs::write(&t.wrong, "not the passphrase\n").unwrap();
        for k in keys {
            let id = [
                "-i",
                k.private.to_str().unwrap(),
                "--identity-passphrase-file",
                t.pass_file.to_str().unwrap(),
            ];
            let label = k.private.file_name().unwrap().to_str().unwrap();
            both_directions(d, age, &["-r", &k.public], &k.plain, &id, label);
        }
        t
    }

    /// A 1000-byte file age sealed to `k`: the ciphertext's path.
    fn small(&self, k: &Key) -> PathBuf {
        let (plain, ct) = (self.d.join("small"), self.d.join("small.age"));
        fs::write(&plain, data(1000)).unwrap();
        run(self.age, &["-e", "-r", &k.public, "-o", ct.to_str().unwrap(), plain.to_str().unwrap()]);
        ct
    }

    /// `hyperseal decrypt -i KEY` of `ct` with the passphrase file `pass`, if any.
    fn decrypt(&self, k: &Key, pass: Option<&Path>, ct: &Path) -> Output {
        let mut args = vec!["decrypt", "-i", k.private.to_str().unwrap(), "-o", self.out.to_str().unwrap()];
        if let Some(p) = pass {
            args.extend(["--identity-passphrase-file", p.to_str().unwrap()]);
        }
        args.push(ct.to_str().unwrap());
        Command::new(HS).args(&args).stdin(std::process::Stdio::null()).output().unwrap()
    }

    /// Asserts that `ct` does not open with `pass` (none, or a wrong one): one clear error that
    /// says which, holds no secret, and leaves no output.
    fn refused(&self, k: &Key, pass: Option<&Path>, ct: &Path, case: &str) {
        let o = self.decrypt(k, pass, ct);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{case} {pass:?}");
        assert!(err.starts_with("hyperseal: error: ") && err.lines().count() <= 2, "{err}");
        let want = if pass.is_none() { "no passphrase was given" } else { "incorrect passphrase" };
        assert!(err.contains(want), "{err}");
        assert!(!err.contains("not the passphrase") && !err.contains(PASS), "no secret in errors");
        assert!(!self.out.exists());
    }
}

/// PEM keys with legacy encryption (`Proc-Type: 4,ENCRYPTED`) as `ssh-keygen -m PEM` (AES-128)
/// and OpenSSL (`genrsa -traditional`: AES-256, AES-192, 3DES) write them, with their passphrase
/// from a file: both directions with age (which gets an unprotected copy). Without the `.pub`
/// file the passphrase is needed at once; a wrong one is one clear error without the secret.
#[test]
fn legacy_pem_keys() {
    let Some((age, dir)) = tools() else { return };
    if Command::new("openssl").arg("version").output().is_err() {
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "openssl missing under make test");
        return;
    }
    let d = dir.path();
    let mut keys = vec![ssh_keygen(d, "pem_aes128", &["-t", "rsa", "-b", "2048", "-m", "PEM"], PASS)];
    for (name, cipher) in [("pem_aes256", "-aes256"), ("pem_aes192", "-aes192"), ("pem_des3", "-des3")] {
        let private = d.join(name);
        let pass_arg = format!("pass:{PASS}");
        let p = private.to_str().unwrap();
        run(
            Path::new("openssl"),
            &["genrsa", "-traditional", cipher, "-passout", &pass_arg, "-out", p, "2048"],
        );
        let public =
            String::from_utf8(run(Path::new("ssh-keygen"), &["-y", "-P", PASS, "-f", p]).stdout).unwrap();
        fs::write(d.join(format!("{name}.pub")), &public).unwrap();
        let plain = d.join(format!("{name}.plain"));
        fs::copy(&private, &plain).unwrap();
        run(Path::new("ssh-keygen"), &["-q", "-p", "-P", PASS, "-N", "", "-f", plain.to_str().unwrap()]);
        keys.push(Key { private, plain, public: public.trim().to_string() });
    }
    for k in &keys {
        let text = fs::read_to_string(&k.private).unwrap();
        assert!(text.contains("Proc-Type: 4,ENCRYPTED") && text.contains("DEK-Info: "), "{text}");
    }
    let t = Protected::new(d, &age, &keys);

    let ct = t.small(&keys[3]);
    for with_pub in [true, false] {
        if !with_pub {
            fs::remove_file(d.join("pem_des3.pub")).unwrap();
        }
        for pass in [None, Some(&t.wrong)] {
            t.refused(&keys[3], pass.map(|p| p.as_path()), &ct, &format!("with .pub {with_pub},"));
        }
        let o = t.decrypt(&keys[3], Some(&t.pass_file), &ct);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(fs::read(&t.out).unwrap(), data(1000));
        fs::remove_file(&t.out).unwrap();
    }
}

#[test]
fn authorized_keys_and_github_keys_files() {
    let Some((age, dir)) = tools() else { return };
    let d = dir.path();
    let ed = ssh_keygen(d, "ed", &["-t", "ed25519"], "");
    let rsa = ssh_keygen(d, "rsa", &["-t", "rsa", "-b", "2048"], "");
    let ecdsa = ssh_keygen(d, "ecdsa", &["-t", "ecdsa"], "");
    let bare = |k: &Key| k.public.split(' ').take(2).collect::<Vec<_>>().join(" ");
    // authorized_keys: comments, options before a key, and a key type age skips.
    let authorized = d.join("authorized_keys");
    let text = format!(
        "# keys allowed in\n{}\nno-pty,command=\"echo hi there\" {}\n{}\n",
        ed.public, rsa.public, ecdsa.public
    );
    fs::write(&authorized, text).unwrap();
    // GitHub's USER.keys: bare `type base64` lines (age reads this form too).
    let github = d.join("github.keys");
    fs::write(&github, format!("{}\n{}\n{}\n", bare(&ed), bare(&rsa), bare(&ecdsa))).unwrap();

    let plain = d.join("plain");
    fs::write(&plain, data(65537)).unwrap();
    let (ct, pl) = (d.join("ct"), plain.to_str().unwrap());
    for file in [&authorized, &github] {
        let _ = fs::remove_file(&ct);
        let (f, c) = (file.to_str().unwrap(), ct.to_str().unwrap());
        let o = run(Path::new(HS), &["encrypt", "--format", "age", "-q", "-R", f, "-o", c, pl]);
        let note = String::from_utf8_lossy(&o.stderr);
        assert!(
            note.contains("ignoring an SSH key of unsupported type ecdsa-sha2-nistp256 at line"),
            "{note}"
        );
        for k in [&ed, &rsa] {
            let opened = open_with(&age, &["-d", "-i", k.private.to_str().unwrap()], &ct, &d.join("out"));
            assert_eq!(opened, data(65537));
        }
    }
    // age with the GitHub file (it skips the ECDSA key too), hyperseal decrypts with either key.
    let ct = d.join("age.ct");
    run(&age, &["-e", "-R", github.to_str().unwrap(), "-o", ct.to_str().unwrap(), plain.to_str().unwrap()]);
    for k in [&ed, &rsa] {
        let out = d.join(format!("hs-{}", k.private.file_name().unwrap().to_str().unwrap()));
        let opened =
            open_with(Path::new(HS), &["decrypt", "-q", "-i", k.private.to_str().unwrap()], &ct, &out);
        assert_eq!(opened, data(65537));
    }
    // `pubkey` of a private SSH key is its authorized_keys line (without the comment).
    let o = run(Path::new(HS), &["pubkey", "-i", ed.private.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), bare(&ed));
}

#[test]
fn wrong_and_unusable_keys_are_refused() {
    let Some((age, dir)) = tools() else { return };
    let d = dir.path();
    let ed = ssh_keygen(d, "ed", &["-t", "ed25519"], "");
    let other = ssh_keygen(d, "other", &["-t", "ed25519"], "");
    let small = ssh_keygen(d, "small", &["-t", "rsa", "-b", "1024"], "");
    let plain = d.join("plain");
    fs::write(&plain, data(100)).unwrap();
    let ct = d.join("ct");
    run(&age, &["-e", "-r", &ed.public, "-o", ct.to_str().unwrap(), plain.to_str().unwrap()]);
    let out = d.join("never");
    let fail = |args: &[&str], want: &str| {
        let o = Command::new(HS).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{args:?}: {err}");
        assert!(!out.exists());
    };
    let (o, c) = (out.to_str().unwrap(), ct.to_str().unwrap());
    fail(&["decrypt", "-i", other.private.to_str().unwrap(), "-o", o, c], "no identity matched");
    fail(&["decrypt", "-i", small.private.to_str().unwrap(), "-o", o, c], "2048");
    fail(&["encrypt", "--format", "age", "-r", &small.public, "-o", o, plain.to_str().unwrap()], "2048");
}

/// A protected key typed at the terminal, in both tools, on the same files; and `encrypt -i`
/// with a protected key needs no passphrase (the public key is in the clear).
#[test]
fn protected_keys_on_a_terminal() {
    let Some((age, dir)) = tools() else { return };
    let d = dir.path();
    let p = |x: &Path| x.to_str().unwrap().to_string();
    for (name, kind) in [("ed", &["-t", "ed25519"][..]), ("rsa", &["-t", "rsa", "-b", "2048"][..])] {
        let k = ssh_keygen(d, name, kind, PASS);
        let plain = d.join("plain");
        fs::write(&plain, data(65537)).unwrap();
        let ct = d.join(format!("{name}.age"));
        run(
            Path::new(HS),
            &["encrypt", "--format", "age", "-q", "-i", &p(&k.private), "-o", &p(&ct), &p(&plain)],
        );
        let out = d.join(format!("{name}.age-out"));
        let o = on_terminal(
            &format!("{} -d -i {} -o {} {}", p(&age), p(&k.private), p(&out), p(&ct)),
            &format!("{PASS}\n"),
        );
        assert!(o.status.success(), "age: {}", String::from_utf8_lossy(&o.stdout));
        assert_eq!(fs::read(&out).unwrap(), data(65537), "age opened it with the protected key");
        let out = d.join(format!("{name}.hs-out"));
        let o = on_terminal(
            &format!("{HS} decrypt -q -i {} -o {} {}", p(&k.private), p(&out), p(&ct)),
            &format!("{PASS}\n"),
        );
        assert!(o.status.success(), "hyperseal: {}", String::from_utf8_lossy(&o.stdout));
        assert!(String::from_utf8_lossy(&o.stdout).contains("Enter passphrase for"));
        assert_eq!(fs::read(&out).unwrap(), data(65537));
    }
}
