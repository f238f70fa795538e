//! The binary as a user runs it: exit codes, the exact error lines, and files on disk.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common;
use common::{hs, names, ok, peak, stderr};

fn keypair(dir: &Path, kind: &str) -> (String, String) {
    let key = dir.join(format!("{kind}.key"));
    let o = hs(&["keygen", "--kind", kind, "-o", key.to_str().unwrap()], None);
    ok(&o);
    assert!(stderr(&o).starts_with("Public key:"));
    assert_eq!(fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
    let public = ok(&hs(&["pubkey", "-i", key.to_str().unwrap()], None)).trim().to_string();
    (key.to_str().unwrap().to_string(), public)
}

#[test]
fn keygen_never_overwrites() {
    let d = tempfile::tempdir().unwrap();
    let (key, _) = keypair(d.path(), "x25519");
    let before = fs::read(&key).unwrap();
    let o = hs(&["keygen", "--kind", "x25519", "-o", &key], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("hyperseal: error: "), "{}", stderr(&o));
    assert_eq!(fs::read(&key).unwrap(), before);
    // An unknown kind is a usage error, like an unknown flag.
    assert_eq!(hs(&["keygen", "--kind", "nope"], None).status.code(), Some(2));
    assert_eq!(hs(&["keygen", "--bogus-flag"], None).status.code(), Some(2));
}

#[test]
fn file_round_trips_for_kinds_and_suites() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("plain.bin");
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 31 % 251) as u8).collect();
    fs::write(&input, &data).unwrap();
    for kind in ["hybrid", "x25519", "mlkem1024", "rsa3072"] {
        let (key, public) = keypair(d.path(), kind);
        // RSA recipients are PEM blocks: pass them as a recipients file.
        let pub_file = d.path().join(format!("{kind}.pub"));
        fs::write(&pub_file, &public).unwrap();
        let public = if kind.starts_with("rsa") { String::new() } else { public };
        for suite in ["aes-256-gcm", "chacha20-poly1305"] {
            for extra in [&[][..], &["-a"][..], &["--threads", "1", "--chunk-size", "16K"][..]] {
                let enc = d.path().join("x.hs");
                let dec = d.path().join("x.out");
                let mut args = vec!["encrypt", "--suite", suite, "-o", enc.to_str().unwrap()];
                if public.is_empty() {
                    args.extend(["-R", pub_file.to_str().unwrap()]);
                } else {
                    args.extend(["-r", &public]);
                }
                args.extend_from_slice(extra);
                args.push(input.to_str().unwrap());
                ok(&hs(&args, None));
                ok(&hs(&["decrypt", "-i", &key, "-o", dec.to_str().unwrap(), enc.to_str().unwrap()], None));
                assert_eq!(fs::read(&dec).unwrap(), data, "{kind} {suite} {extra:?}");
                fs::remove_file(&enc).unwrap();
                fs::remove_file(&dec).unwrap();
            }
        }
    }
}

#[test]
fn stdin_to_stdout_and_random_access() {
    let d = tempfile::tempdir().unwrap();
    let (key, public) = keypair(d.path(), "x25519");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
    let ct = hs(&["encrypt", "-r", &public, "--chunk-size", "16K"], Some(&data));
    assert!(ct.status.success());
    let pt = hs(&["decrypt", "-i", &key], Some(&ct.stdout));
    assert_eq!(pt.stdout, data);
    let f = d.path().join("ra.hs");
    fs::write(&f, &ct.stdout).unwrap();
    let part =
        hs(&["decrypt", "-i", &key, "--offset", "16380", "--length", "40000", f.to_str().unwrap()], None);
    assert!(part.status.success(), "{}", stderr(&part));
    assert_eq!(part.stdout, data[16380..56380]);
    // Random access needs a file.
    let o = hs(&["decrypt", "-i", &key, "--offset", "5"], Some(&ct.stdout));
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn damaged_file_leaves_nothing_behind() {
    let d = tempfile::tempdir().unwrap();
    let (key, public) = keypair(d.path(), "x25519");
    let input = d.path().join("in");
    fs::write(&input, vec![7u8; 100_000]).unwrap();
    let enc = d.path().join("in.hs");
    ok(&hs(
        &[
            "encrypt",
            "-r",
            &public,
            "--chunk-size",
            "16K",
            "-o",
            enc.to_str().unwrap(),
            input.to_str().unwrap(),
        ],
        None,
    ));
    let mut bytes = fs::read(&enc).unwrap();
    let n = bytes.len();
    bytes[n - 40_000] ^= 1;
    fs::write(&enc, &bytes).unwrap();
    let before = names(d.path());
    let out = d.path().join("out");
    let o = hs(&["decrypt", "-i", &key, "-o", out.to_str().unwrap(), enc.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.starts_with("hyperseal: error: payload chunk 3 failed to authenticate"), "{err}");
    assert!(err.contains("\nhyperseal: hint: "), "{err}");
    assert_eq!(err.lines().count(), 2);
    assert_eq!(names(d.path()), before, "no output or temporary file may remain");
    // Truncated: named as such, and still nothing written.
    fs::write(&enc, &bytes[..n - 10]).unwrap();
    let o = hs(&["decrypt", "-i", &key, "-o", out.to_str().unwrap(), enc.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
    assert_eq!(names(d.path()), before);
    // The input is never modified.
    assert_eq!(fs::read(&enc).unwrap(), bytes[..n - 10]);
}

#[test]
fn refuses_to_overwrite_and_wrong_key_hints() {
    let d = tempfile::tempdir().unwrap();
    let (key, public) = keypair(d.path(), "x25519");
    let (other, _) = keypair(d.path(), "hybrid");
    let enc = d.path().join("f.hs");
    ok(&hs(&["encrypt", "-r", &public, "-o", enc.to_str().unwrap()], Some(b"secret")));
    let existing = d.path().join("exists");
    fs::write(&existing, b"keep me").unwrap();
    let o = hs(&["decrypt", "-i", &key, "-o", existing.to_str().unwrap(), enc.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("already exists") && stderr(&o).contains("--force"));
    assert_eq!(fs::read(&existing).unwrap(), b"keep me");
    ok(&hs(
        &["decrypt", "-i", &key, "--force", "-o", existing.to_str().unwrap(), enc.to_str().unwrap()],
        None,
    ));
    assert_eq!(fs::read(&existing).unwrap(), b"secret");
    let o = hs(&["decrypt", "-i", &other, enc.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).lines().next().unwrap(),
        "hyperseal: error: no identity matched any of the file's recipients"
    );
    let o = hs(&["decrypt", "-i", &key], Some(b"garbage that is not a file\n"));
    assert!(stderr(&o).starts_with("hyperseal: error: unknown file format"), "{}", stderr(&o));
}

#[test]
fn inspect_reports_without_secrets() {
    let d = tempfile::tempdir().unwrap();
    let (_, public) = keypair(d.path(), "hybrid");
    let enc = d.path().join("f.hs");
    ok(&hs(
        &["encrypt", "-r", &public, "--suite", "chacha20-poly1305", "-o", enc.to_str().unwrap()],
        Some(&[1u8; 70_000]),
    ));
    let j: serde_json::Value =
        serde_json::from_str(&ok(&hs(&["inspect", "--json", enc.to_str().unwrap()], None))).unwrap();
    assert_eq!(j["suite"], "chacha20-poly1305");
    assert_eq!(j["chunk_size"], 65536);
    assert_eq!(j["recipients"]["mlkem768x25519"], 1);
    assert_eq!(j["postquantum"], "yes");
    assert_eq!(j["sizes"]["min_payload"], 70_000);
    assert_eq!(j["chunks"], 2);
}

#[test]
fn mixing_post_quantum_and_classic_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let (_, a) = keypair(d.path(), "hybrid");
    let (_, b) = keypair(d.path(), "x25519");
    let o = hs(&["encrypt", "-r", &a, "-r", &b], Some(b"x"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("hyperseal: error: incompatible recipients"));
    assert!(o.stdout.is_empty());
}

/// Peak RSS stays flat: encrypt a 1 GiB sparse file and decrypt the stream back, reading each
/// child's peak resident set from the OS (wait4), not timing anything.
#[test]
fn constant_memory_on_a_large_input() {
    if !peak::fresh() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (key, public) = keypair(d.path(), "x25519");
    let (e, d) = peak::pipeline(&["encrypt", "-q", "-r", &public], &["decrypt", "-q", "-i", &key], 1 << 30);
    assert!(e < 64.0 && d < 64.0, "peak RSS: encrypt {e:.1} MiB, decrypt {d:.1} MiB");
}

#[test]
fn passphrase_files() {
    let d = tempfile::tempdir().unwrap();
    let pass = d.path().join("pass");
    fs::write(&pass, "correct horse battery staple\n").unwrap();
    let wrong = d.path().join("wrong");
    fs::write(&wrong, "incorrect horse\n").unwrap();
    let enc = d.path().join("p.hs");
    ok(&hs(
        &["encrypt", "--passphrase-file", pass.to_str().unwrap(), "-o", enc.to_str().unwrap()],
        Some(b"by passphrase"),
    ));
    let j: serde_json::Value =
        serde_json::from_str(&ok(&hs(&["inspect", "--json", enc.to_str().unwrap()], None))).unwrap();
    assert_eq!(j["recipients"]["argon2id"], 1);
    let out = hs(&["decrypt", "--passphrase-file", pass.to_str().unwrap(), enc.to_str().unwrap()], None);
    assert_eq!(ok(&out), "by passphrase");
    let o = hs(&["decrypt", "--passphrase-file", wrong.to_str().unwrap(), enc.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().next().unwrap(), "hyperseal: error: incorrect passphrase");
    // A passphrase cannot be combined with recipients (a usage error).
    let o = hs(&["encrypt", "--passphrase-file", pass.to_str().unwrap(), "-r", "age1xyz"], Some(b"x"));
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn signing_keys_from_keygen() {
    let d = tempfile::tempdir().unwrap();
    let msg = d.path().join("msg");
    fs::write(&msg, b"signed message").unwrap();
    for kind in ["ed25519", "ecdsa-p256"] {
        let key = d.path().join(format!("{kind}.pem"));
        ok(&hs(&["keygen", "--kind", kind, "-o", key.to_str().unwrap()], None));
        let public = d.path().join(format!("{kind}.pub"));
        fs::write(&public, ok(&hs(&["pubkey", "-i", key.to_str().unwrap()], None))).unwrap();
        let sig = d.path().join(format!("{kind}.sig"));
        ok(&hs(
            &["sign", "-i", key.to_str().unwrap(), "-o", sig.to_str().unwrap(), msg.to_str().unwrap()],
            None,
        ));
        let verify = |m: &Path| {
            hs(
                &[
                    "verify",
                    "--pubkey",
                    public.to_str().unwrap(),
                    "--sig",
                    sig.to_str().unwrap(),
                    m.to_str().unwrap(),
                ],
                None,
            )
        };
        assert!(verify(&msg).status.success(), "{kind}");
        let other = d.path().join("other");
        fs::write(&other, b"signed messagE").unwrap();
        assert_eq!(verify(&other).status.code(), Some(1), "{kind}");
    }
}
