//! Identities as age has them, against the real age (v1.3.1 in `.tools/bin`, `make age`):
//! identity files that are passphrase-encrypted age files (`age-keygen | age -p`, binary and
//! armored) and `encrypt -i` (age's `-e -i`: encrypt to one's own identity), both directions.
//!
//! age is fed passphrases non-interactively through `age-plugin-batchpass` (`-j batchpass` with
//! `AGE_PASSPHRASE`) when encrypting; to open an encrypted identity file age insists on a
//! terminal, so that direction runs age under util-linux `script`, which gives it a pseudo-
//! terminal whose input is the passphrase. hyperseal's own prompt is exercised the same way.
//! Without age every test prints a note and passes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{on_terminal, peer};

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");
const PASS: &str = "identity file passphrase";

use common::peer_run as run;

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 65536) as u8).collect()
}

struct Setup {
    _dir: tempfile::TempDir,
    d: PathBuf,
    /// age-keygen's identity file, in the clear.
    key: PathBuf,
    /// Its recipient.
    recipient: String,
    /// `PASS` in a file, for hyperseal's `--identity-passphrase-file`.
    pass_file: PathBuf,
}

fn setup() -> Option<(PathBuf, Setup)> {
    let age = peer("age")?;
    peer("age-plugin-batchpass")?;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let key = d.join("key.txt");
    run(&peer("age-keygen")?, &["-o", key.to_str().unwrap()], &[]);
    let recipient = String::from_utf8(run(&peer("age-keygen")?, &["-y", key.to_str().unwrap()], &[]).stdout)
        .unwrap()
        .trim()
        .to_string();
    let pass_file = d.join("pass");
    fs::write(&pass_file, format!("{PASS}\n")).unwrap();
    Some((age, Setup { _dir: dir, d, key, recipient, pass_file }))
}

/// `hyperseal encrypt --format age -q ARGS` (`decrypt -q ARGS` with `open`), asserted to succeed.
fn hs(open: bool, args: &[&str]) -> Output {
    let mut argv = if open { vec!["decrypt", "-q"] } else { vec!["encrypt", "--format", "age", "-q"] };
    argv.extend(args);
    run(Path::new(HS), &argv, &[])
}

/// `age -e -j batchpass [-a] -o OUT IN`: age's own `age -p`, without a terminal.
fn age_passphrase_encrypt(age: &Path, input: &Path, out: &Path, armor: bool) {
    let mut args = vec!["-e", "-j", "batchpass", "-o", out.to_str().unwrap()];
    if armor {
        args.push("-a");
    }
    args.push(input.to_str().unwrap());
    run(age, &args, &[("AGE_PASSPHRASE", PASS), ("AGE_PASSPHRASE_WORK_FACTOR", "14")]);
}

#[test]
fn encrypted_identity_files_made_by_age() {
    let Some((age, s)) = setup() else { return };
    let p = |x: &Path| x.to_str().unwrap().to_string();
    for armor in [false, true] {
        let enc_key = s.d.join(if armor { "key.asc" } else { "key.age" });
        age_passphrase_encrypt(&age, &s.key, &enc_key, armor);
        let head = fs::read(&enc_key).unwrap();
        assert!(head.starts_with(if armor {
            b"-----BEGIN AGE"
        } else {
            b"age-encryption.org/v1\n-> scrypt"
        }));
        for n in [0usize, 65536, 65537] {
            let (plain, ct, out) = (s.d.join("plain"), s.d.join("ct"), s.d.join("out"));
            let _ = (fs::remove_file(&ct), fs::remove_file(&out));
            fs::write(&plain, data(n)).unwrap();
            // age encrypts to the key; hyperseal opens it with the encrypted identity file.
            run(&age, &["-e", "-r", &s.recipient, "-o", &p(&ct), &p(&plain)], &[]);
            let with_pass = ["-i", &p(&enc_key), "--identity-passphrase-file", &p(&s.pass_file)];
            hs(true, &[&with_pass[..], &["-o", &p(&out), &p(&ct)]].concat());
            assert_eq!(fs::read(&out).unwrap(), data(n), "age→hyperseal n={n} armor={armor}");

            // hyperseal encrypts to the encrypted identity file (-e -i); age opens it with the key.
            let _ = (fs::remove_file(&ct), fs::remove_file(&out));
            hs(false, &[&with_pass[..], &["-o", &p(&ct), &p(&plain)]].concat());
            run(&age, &["-d", "-i", &p(&s.key), "-o", &p(&out), &p(&ct)], &[]);
            assert_eq!(fs::read(&out).unwrap(), data(n), "hyperseal -i → age n={n} armor={armor}");
        }
    }
}

#[test]
fn encrypt_to_identity_like_age_e_i() {
    let Some((age, s)) = setup() else { return };
    let p = |x: &Path| x.to_str().unwrap().to_string();
    let plain = s.d.join("plain");
    fs::write(&plain, data(70000)).unwrap();
    // age -e -i KEY → hyperseal -d -i KEY, and hyperseal encrypt -i KEY → age -d -i KEY.
    for (armor, name) in [(false, "a"), (true, "b")] {
        let ct = s.d.join(format!("age-{name}"));
        let mut args = vec!["-e", "-i", s.key.to_str().unwrap(), "-o", ct.to_str().unwrap()];
        if armor {
            args.push("-a");
        }
        args.push(plain.to_str().unwrap());
        run(&age, &args, &[]);
        let out = s.d.join(format!("out-{name}"));
        hs(true, &["-i", &p(&s.key), "-o", &p(&out), &p(&ct)]);
        assert_eq!(fs::read(&out).unwrap(), data(70000));

        let ct = s.d.join(format!("hs-{name}"));
        let (key, ct_path, plain_path) = (p(&s.key), p(&ct), p(&plain));
        let mut args = vec!["-i", &key, "-o", &ct_path];
        args.extend(armor.then_some("-a"));
        args.push(&plain_path);
        hs(false, &args);
        let head = fs::read(&ct).unwrap();
        assert!(armor || head.starts_with(b"age-encryption.org/v1\n-> X25519 "));
        let out = s.d.join(format!("age-out-{name}"));
        run(&age, &["-d", "-i", &p(&s.key), "-o", &p(&out), &p(&ct)], &[]);
        assert_eq!(fs::read(&out).unwrap(), data(70000));
    }
    // -i with a post-quantum identity makes a post-quantum file; -i and -r of another kind mix
    // only if age's rule allows (classic + pq is refused, as in age).
    let pq = s.d.join("pq.txt");
    run(&peer("age-keygen").unwrap(), &["-pq", "-o", &p(&pq)], &[]);
    let ct = s.d.join("pq.age");
    hs(false, &["-i", &p(&pq), "-o", &p(&ct), &p(&plain)]);
    assert!(fs::read(&ct).unwrap().starts_with(b"age-encryption.org/v1\n-> mlkem768x25519 "));
    let out = s.d.join("pq.out");
    run(&age, &["-d", "-i", &p(&pq), "-o", &p(&out), &p(&ct)], &[]);
    assert_eq!(fs::read(&out).unwrap(), data(70000));
    let mixed = p(&s.d.join("mixed"));
    let o = Command::new(HS)
        .args(["encrypt", "--format", "age", "-i", &p(&pq), "-r", &s.recipient, "-o", &mixed, &p(&plain)])
        .output()
        .unwrap();
    assert!(!o.status.success() && !s.d.join("mixed").exists());
}

#[test]
fn age_opens_identity_files_encrypted_by_hyperseal_and_prompts_work() {
    let Some((age, s)) = setup() else { return };
    let p = |x: &Path| x.to_str().unwrap().to_string();
    // hyperseal makes the encrypted identity file (scrypt, as age -p); age opens it, typing the
    // passphrase on its terminal.
    let enc_key = s.d.join("hs-key.age");
    hs(false, &["-a", "--passphrase-file", &p(&s.pass_file), "-o", &p(&enc_key), &p(&s.key)]);
    let plain = s.d.join("plain");
    fs::write(&plain, data(65537)).unwrap();
    let ct = s.d.join("ct");
    run(&age, &["-e", "-r", &s.recipient, "-o", &p(&ct), &p(&plain)], &[]);
    let out = s.d.join("age-out");
    let o = on_terminal(
        &format!("{} -d -i {} -o {} {}", p(&age), p(&enc_key), p(&out), p(&ct)),
        &format!("{PASS}\n"),
    );
    assert!(o.status.success(), "age: {}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(fs::read(&out).unwrap(), data(65537), "age opened hyperseal's encrypted identity file");

    // hyperseal asks on the terminal too when no passphrase file is given.
    let out = s.d.join("hs-out");
    let o = on_terminal(
        &format!("{HS} decrypt -q -i {} -o {} {}", p(&enc_key), p(&out), p(&ct)),
        &format!("{PASS}\n"),
    );
    assert!(o.status.success(), "hyperseal: {}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Enter passphrase for"));
    assert_eq!(fs::read(&out).unwrap(), data(65537));
}

#[test]
fn wrong_or_missing_passphrase_for_an_identity_file() {
    let Some((age, s)) = setup() else { return };
    let p = |x: &Path| x.to_str().unwrap().to_string();
    let enc_key = s.d.join("key.age");
    age_passphrase_encrypt(&age, &s.key, &enc_key, false);
    let plain = s.d.join("plain");
    fs::write(&plain, data(10)).unwrap();
    let ct = s.d.join("ct");
    run(&age, &["-e", "-r", &s.recipient, "-o", &p(&ct), &p(&plain)], &[]);
    let wrong = s.d.join("wrong");
    fs::write(&wrong, "not it\n").unwrap();
    let out = s.d.join("never");
    for (extra, want, hint) in [
        (
            vec!["--identity-passphrase-file", wrong.to_str().unwrap()],
            "incorrect passphrase",
            "check the identity file's passphrase",
        ),
        (vec![], "no passphrase was given", "--identity-passphrase-file"),
    ] {
        let mut args = vec!["decrypt", "-i", enc_key.to_str().unwrap(), "-o", out.to_str().unwrap()];
        args.extend(&extra);
        args.push(ct.to_str().unwrap());
        let o = Command::new(HS).args(&args).stdin(Stdio::null()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(lines[0].starts_with("hyperseal: error: ") && lines[0].contains(want), "{err}");
        assert!(lines[1].starts_with("hyperseal: hint: ") && lines[1].contains(hint), "{err}");
        assert!(!err.contains("not it") && !err.contains(PASS));
        assert!(!out.exists());
    }
}
