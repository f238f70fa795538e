//! The toolkit commands as a user runs them: output formats byte-for-byte against coreutils and
//! OpenSSL, exit codes, error lines, and files on disk.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

use crate::common;
use common::{hs, ok, p};

fn fails(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(1), "expected exit 1; stderr: {}", String::from_utf8_lossy(&o.stderr));
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(e.contains("hyperseal: error: "), "{e}");
    e
}

fn tool(cmd: &mut Command) -> Vec<u8> {
    let o = cmd.output().expect("spawn tool");
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

fn have(t: &str) -> bool {
    let ok = Command::new(t).arg("--version").output().is_ok_and(|o| o.status.success())
        || Command::new(t).arg("version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: {t} not installed");
    }
    ok
}

/// A `kdf` case: hyperseal's `kdf --algo` arguments and standard input, then openssl's key
/// length, `-kdfopt` options and algorithm name.
type KdfCase<'a> = (&'a [&'a str], Option<&'a [u8]>, &'a str, &'a [&'a str], &'a str);

/// A temporary folder for a test against openssl, or `None` (skipped) without openssl.
fn openssl_tmp() -> Option<tempfile::TempDir> {
    have("openssl").then(|| tempfile::tempdir().unwrap())
}

/// `dir/NAME` holding `n` random bytes: its path and the bytes.
fn random_file(dir: &std::path::Path, name: &str, n: usize) -> (std::path::PathBuf, Vec<u8>) {
    let (path, bytes) = (dir.join(name), random(n));
    fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

fn random(n: usize) -> Vec<u8> {
    common::data(n, 0x9e37_79b9_7f4a_7c15 ^ n as u64)
}

#[test]
fn hash_output_equals_coreutils_and_check_works() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a.bin");
    let b = d.path().join("b file.txt");
    fs::write(&a, random(100_000)).unwrap();
    fs::write(&b, b"hello\n").unwrap();
    for (algo, t) in
        [("sha256", "sha256sum"), ("sha512", "sha512sum"), ("blake2b512", "b2sum"), ("legacy-md5", "md5sum")]
    {
        if !have(t) {
            continue;
        }
        let ours = ok(&hs(&["hash", "--algo", algo, p(&a), p(&b)], None));
        let theirs = String::from_utf8(tool(Command::new(t).arg(&a).arg(&b))).unwrap();
        assert_eq!(ours, theirs, "{algo}");
        // stdin as `-`
        let ours = ok(&hs(&["hash", "--algo", algo, "-"], Some(b"hello\n")));
        let theirs =
            String::from_utf8(tool(Command::new("sh").arg("-c").arg(format!("printf 'hello\\n' | {t} -"))))
                .unwrap();
        assert_eq!(ours, theirs);
    }
    if !have("sha256sum") {
        return;
    }
    // --check accepts sha256sum's own list…
    let list = d.path().join("SUMS");
    fs::write(&list, tool(Command::new("sha256sum").arg(&a).arg(&b))).unwrap();
    let out = ok(&hs(&["hash", "--check", p(&list)], None));
    assert_eq!(out, format!("{}: OK\n{}: OK\n", p(&a), p(&b)));
    // …and reports a changed file as FAILED with exit 1.
    fs::write(&b, b"hellO\n").unwrap();
    let o = hs(&["hash", "--check", p(&list)], None);
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{}: OK\n{}: FAILED\n", p(&a), p(&b)));
    fails(&o);
    // sha256sum agrees that our list is valid.
    fs::write(&b, b"hello\n").unwrap();
    let ours = d.path().join("OURS");
    fs::write(&ours, ok(&hs(&["hash", p(&a), p(&b)], None))).unwrap();
    tool(Command::new("sha256sum").arg("--check").arg(&ours));
    // Bare md5 is refused (a usage error): legacy algorithms need their explicit name.
    assert_eq!(hs(&["hash", "--algo", "md5", p(&a)], None).status.code(), Some(2));
}

#[test]
fn mac_matches_openssl_hmac() {
    let Some(d) = openssl_tmp() else { return };
    let (kf, key) = random_file(d.path(), "k", 32);
    let (f, _) = random_file(d.path(), "f", 5000);
    for (algo, md) in [
        ("hmac-sha256", "sha256"),
        ("hmac-sha512", "sha512"),
        ("hmac-sm3", "sm3"),
        ("hmac-sha3-256", "sha3-256"),
    ] {
        let ours = ok(&hs(&["mac", "--algo", algo, "--key-file", p(&kf), p(&f)], None));
        let theirs = String::from_utf8(tool(
            Command::new("openssl")
                .args(["dgst", &format!("-{md}"), "-mac", "HMAC", "-macopt"])
                .arg(format!("hexkey:{}", hex::encode(&key)))
                .arg(&f),
        ))
        .unwrap();
        let theirs = theirs.split("= ").nth(1).unwrap().trim();
        assert_eq!(ours, format!("{theirs}  {}\n", p(&f)), "{algo}");
    }
}

#[test]
fn kdf_matches_openssl_kdf() {
    let Some(d) = openssl_tmp() else { return };
    let pw = d.path().join("pw");
    fs::write(&pw, b"correct horse battery staple\n").unwrap();
    let salt = "000102030405060708090a0b0c0d0e0f";
    // `openssl kdf -keylen LEN -kdfopt OPT… NAME`, as hex.
    let openssl = |keylen: &str, opts: &[&str], name: &str| -> String {
        let mut c = Command::new("openssl");
        c.args(["kdf", "-keylen", keylen]);
        for opt in opts {
            c.args(["-kdfopt", opt]);
        }
        let out = String::from_utf8(tool(c.arg(name))).unwrap();
        out.trim().replace(':', "").to_ascii_lowercase()
    };
    let (pass, hex_salt) = ("pass:correct horse battery staple", format!("hexsalt:{salt}"));
    let from_stdin: &[u8] = b"correct horse battery staple\n";
    // Each: hyperseal's `kdf --algo` arguments and standard input, openssl's length, options, name.
    let cases: [KdfCase; 3] = [
        (
            &["pbkdf2", "--password-file", p(&pw), "--salt", salt, "--iterations", "1000"],
            None,
            "32",
            &["digest:SHA256", pass, &hex_salt, "iter:1000"],
            "PBKDF2",
        ),
        (
            &["scrypt", "--salt", salt, "--log-n", "10", "-r", "8", "-p", "1", "-l", "48"],
            Some(from_stdin),
            "48",
            &[pass, &hex_salt, "n:1024", "r:8", "p:1"],
            "SCRYPT",
        ),
        (
            &["hkdf", "--password-file", p(&pw), "--salt", salt, "--info", "696e666f", "-l", "42"],
            None,
            "42",
            &["digest:SHA256", "key:correct horse battery staple", &hex_salt, "hexinfo:696e666f"],
            "HKDF",
        ),
    ];
    for (ours, stdin, keylen, opts, name) in cases {
        let ours = ok(&hs(&[&["kdf", "--algo"], ours].concat(), stdin));
        assert_eq!(ours.trim(), openssl(keylen, opts, name), "{name}");
    }
    let a = ok(&hs(
        &["kdf", "--algo", "argon2id", "--salt", salt, "--m-cost", "64", "--t-cost", "1"],
        Some(b"pw"),
    ));
    assert_eq!(a.trim().len(), 64);
    // Too-short salt is refused with a hint.
    let e = fails(&hs(&["kdf", "--algo", "pbkdf2", "--salt", "0011"], Some(b"pw")));
    assert!(e.contains("hyperseal: hint: "), "{e}");
}

#[test]
fn hazmat_is_openssl_enc_compatible_and_always_warns() {
    let Some(d) = openssl_tmp() else { return };
    let (ptf, pt) = random_file(d.path(), "pt", 3001);
    for (algo, klen) in [
        ("aes-256-cbc", 32),
        ("aes-128-cbc", 16),
        ("aes-256-ctr", 32),
        ("aes-128-ctr", 16),
        ("aes-256-ecb", 32),
        ("aes-128-ecb", 16),
    ] {
        let key = hex::encode(&random(klen + 1)[1..]);
        let iv = hex::encode(&random(17)[1..]);
        let ecb = algo.ends_with("ecb");
        let mut ours_args = vec!["hazmat", "encrypt", "--algo", algo, "--key", &key];
        let mut ossl_args = vec!["enc".to_string(), format!("-{algo}"), "-K".into(), key.clone()];
        if !ecb {
            ours_args.extend(["--iv", &iv]);
            ossl_args.extend(["-iv".into(), iv.clone()]);
        }
        let ctf = d.path().join(format!("{algo}.ct"));
        let mut args = ours_args.clone();
        args.extend(["-o", p(&ctf), p(&ptf)]);
        let o = hs(&args, None);
        ok(&o);
        let warn = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(
            warn.starts_with(&format!("hyperseal: warning: hazmat: {algo} is unauthenticated")),
            "{warn}"
        );
        let ours_ct = fs::read(&ctf).unwrap();
        let theirs_ct = tool(Command::new("openssl").args(&ossl_args).arg("-in").arg(&ptf));
        assert_eq!(ours_ct, theirs_ct, "{algo}");
        // openssl decrypts ours; we decrypt openssl's (from stdin, to stdout).
        assert_eq!(tool(Command::new("openssl").args(&ossl_args).arg("-d").arg("-in").arg(&ctf)), pt);
        let mut dec = ours_args.clone();
        dec[1] = "decrypt";
        let o = hs(&dec, Some(&theirs_ct));
        assert!(o.status.success());
        assert_eq!(o.stdout, pt, "{algo}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("hyperseal: warning: hazmat:"));
        // An existing output is never overwritten without --force, and nothing partial is left.
        let before = fs::read(&ctf).unwrap();
        let mut again = ours_args.clone();
        again.extend(["-o", p(&ctf), p(&ptf)]);
        fails(&hs(&again, None));
        assert_eq!(fs::read(&ctf).unwrap(), before);
        again.push("--force");
        ok(&hs(&again, None));
    }
    assert!(fs::read_dir(d.path()).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("partial")));
    // Wrong key on CBC: padding error, exit 1, hint, and no output file.
    let ct = d.path().join("aes-256-cbc.ct");
    let out = d.path().join("never");
    let e = fails(&hs(
        &[
            "hazmat",
            "decrypt",
            "--algo",
            "aes-256-cbc",
            "--key",
            &"00".repeat(32),
            "--iv",
            &"00".repeat(16),
            "-o",
            p(&out),
            p(&ct),
        ],
        None,
    ));
    assert!(e.contains("hint"), "{e}");
    assert!(!out.exists());
}

#[test]
fn sign_and_verify_interoperate_with_openssl() {
    let Some(d) = openssl_tmp() else { return };
    let msg = d.path().join("msg");
    fs::write(&msg, random(10_000)).unwrap();
    let cases: [(&str, &[&str], &[&str]); 3] = [
        ("ed25519", &["-algorithm", "ed25519"], &[]),
        ("ecdsa", &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], &[]),
        (
            "rsa",
            &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
            &["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32"],
        ),
    ];
    for (name, gen, sigopts) in cases {
        let key = d.path().join(format!("{name}.pem"));
        let pubk = d.path().join(format!("{name}.pub"));
        tool(Command::new("openssl").arg("genpkey").args(gen).arg("-out").arg(&key));
        tool(Command::new("openssl").args(["pkey", "-pubout", "-in"]).arg(&key).arg("-out").arg(&pubk));
        let sig = d.path().join(format!("{name}.sig"));
        ok(&hs(&["sign", "-i", p(&key), "-o", p(&sig), p(&msg)], None));
        assert_eq!(
            fs::metadata(&sig).unwrap().permissions().mode() & 0o077,
            0,
            "signature file is private by default"
        );
        let o = hs(&["verify", "--pubkey", p(&pubk), "--sig", p(&sig), p(&msg)], None);
        assert_eq!(ok(&o), "Signature OK\n");
        // openssl verifies ours…
        let verified = if name == "ed25519" {
            Command::new("openssl")
                .args(["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey"])
                .arg(&pubk)
                .arg("-sigfile")
                .arg(&sig)
                .arg("-in")
                .arg(&msg)
                .output()
        } else {
            Command::new("openssl")
                .args(["dgst", "-sha256"])
                .args(sigopts)
                .arg("-verify")
                .arg(&pubk)
                .arg("-signature")
                .arg(&sig)
                .arg(&msg)
                .output()
        }
        .unwrap();
        assert!(verified.status.success(), "{name}: {}", String::from_utf8_lossy(&verified.stdout));
        // …and we verify openssl's.
        let osig = d.path().join(format!("{name}.osig"));
        if name == "ed25519" {
            tool(
                Command::new("openssl")
                    .args(["pkeyutl", "-sign", "-rawin", "-inkey"])
                    .arg(&key)
                    .arg("-in")
                    .arg(&msg)
                    .arg("-out")
                    .arg(&osig),
            );
        } else {
            tool(
                Command::new("openssl")
                    .args(["dgst", "-sha256"])
                    .args(sigopts)
                    .arg("-sign")
                    .arg(&key)
                    .arg("-out")
                    .arg(&osig)
                    .arg(&msg),
            );
        }
        ok(&hs(&["verify", "--pubkey", p(&pubk), "--sig", p(&osig), p(&msg)], None));
        // A modified message fails with exit 1.
        let other = d.path().join("other");
        fs::write(&other, b"something else").unwrap();
        let e = fails(&hs(&["verify", "--pubkey", p(&pubk), "--sig", p(&sig), p(&other)], None));
        assert!(e.contains("signature verification failed"), "{e}");
    }
}

#[test]
fn token_keygen_seal_open_and_errors() {
    let d = tempfile::tempdir().unwrap();
    let k = d.path().join("token.key");
    let o = hs(&["token", "keygen", "-o", p(&k)], None);
    ok(&o);
    assert_eq!(fs::metadata(&k).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(fs::read_to_string(&k).unwrap().starts_with("HYPERSEAL-TOKEN-KEY-1"));
    let before = fs::read(&k).unwrap();
    fails(&hs(&["token", "keygen", "-o", p(&k)], None));
    assert_eq!(fs::read(&k).unwrap(), before);

    let t =
        ok(&hs(&["token", "seal", "--key", p(&k), "--aad", "user=1", "--ttl", "15m"], Some(b"top secret")));
    assert!(
        t.ends_with('\n') && t.trim().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    );
    let o = hs(&["token", "open", "--key", p(&k), "--aad", "user=1"], Some(t.as_bytes()));
    assert!(o.status.success());
    assert_eq!(o.stdout, b"top secret");

    let e = fails(&hs(&["token", "open", "--key", p(&k), "--aad", "user=2"], Some(t.as_bytes())));
    assert!(e.contains("authentication failed") && e.contains("hint"), "{e}");
    let e = fails(&hs(&["token", "open", "--key", p(&k)], Some(b"garbage!")));
    assert!(e.contains("malformed"), "{e}");
    let k2 = d.path().join("other.key");
    ok(&hs(&["token", "keygen", "-o", p(&k2)], None));
    let e = fails(&hs(&["token", "open", "--key", p(&k2), "--aad", "user=1"], Some(t.as_bytes())));
    assert!(e.contains("not in the key ring"), "{e}");
    let expired = ok(&hs(&["token", "seal", "--key", p(&k), "--ttl", "0s"], Some(b"x")));
    let e = fails(&hs(&["token", "open", "--key", p(&k)], Some(expired.as_bytes())));
    assert!(e.contains("expired"), "{e}");

    // Rotation: a ring file with the new key first still opens tokens of the old key.
    let ring = d.path().join("ring.key");
    fs::write(&ring, [fs::read(&k2).unwrap(), fs::read(&k).unwrap()].concat()).unwrap();
    let o = hs(&["token", "open", "--key", p(&ring), "--aad", "user=1"], Some(t.as_bytes()));
    assert_eq!(o.stdout, b"top secret");
    let t2 = ok(&hs(&["token", "seal", "--key", p(&ring), "--suite", "aes-256-gcm-siv"], Some(b"new")));
    let o = hs(&["token", "open", "--key", p(&k2)], Some(t2.as_bytes()));
    assert_eq!(o.stdout, b"new");
}
