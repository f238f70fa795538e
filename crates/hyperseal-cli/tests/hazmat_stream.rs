//! `hyperseal hazmat` streams: the same bytes as `openssl enc` at every length around its 4 MiB
//! batches (where carries, held-back blocks and padding meet), constant memory on a large input,
//! and nothing written to `-o` when the padding turns out wrong at the end.

use std::fs;
use std::process::Command;

use crate::common;
use common::{hs, ok, p, peak};

/// The toolkit's batch size (`hazmat/stream.rs`, `BATCH`): the lengths below straddle it.
const BATCH: usize = 4 << 20;

fn have_openssl() -> bool {
    let ok = Command::new("openssl").arg("version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: openssl not installed");
    }
    ok
}

fn data(n: usize) -> Vec<u8> {
    common::data(n, 0x2545_f491_4f6c_dd1d ^ n as u64)
}

/// `(ours, openssl's)` arguments for `cipher` with a fixed key and IV.
fn args(cipher: &str) -> (Vec<String>, Vec<String>) {
    let key = if cipher.contains("256") { "42".repeat(32) } else { "42".repeat(16) };
    let mut ours = vec!["--algo".into(), cipher.into(), "--key".into(), key.clone()];
    let mut theirs = vec![format!("-{cipher}"), "-K".into(), key];
    if !cipher.ends_with("ecb") {
        ours.extend(["--iv".into(), "0f".repeat(16)]);
        theirs.extend(["-iv".into(), "0f".repeat(16)]);
    }
    (ours, theirs)
}

/// `hyperseal hazmat VERB OURS… TAIL…` (`ours`: [`args`]'s), `stdin` on standard input.
fn hazmat(verb: &str, ours: &[String], tail: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    let mut argv: Vec<&str> = vec!["hazmat", verb];
    argv.extend(ours.iter().map(String::as_str));
    argv.extend(tail);
    hs(&argv, stdin)
}

const CIPHERS: [&str; 9] = [
    "aes-128-cbc",
    "aes-256-cbc",
    "aes-128-ctr",
    "aes-256-ctr",
    "aes-128-ecb",
    "aes-256-ecb",
    "sm4-cbc",
    "sm4-ctr",
    "sm4-ecb",
];

#[test]
fn streams_match_openssl_around_batch_boundaries() {
    if !have_openssl() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let lens = [0, 1, 16, BATCH - 16, BATCH - 1, BATCH, BATCH + 1, BATCH + 16, 2 * BATCH + 17];
    let biggest = data(*lens.iter().max().unwrap());
    for n in lens {
        let ptf = d.path().join(format!("pt{n}"));
        fs::write(&ptf, &biggest[..n]).unwrap();
        for cipher in CIPHERS {
            let (ours, theirs) = args(cipher);
            let ctf = d.path().join("ct");
            ok(&hazmat("encrypt", &ours, &["--force", "-o", p(&ctf), p(&ptf)], None));
            let ours_ct = fs::read(&ctf).unwrap();
            let o = Command::new("openssl").arg("enc").args(&theirs).arg("-in").arg(&ptf).output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(ours_ct == o.stdout, "{cipher}, {n} bytes: ciphertext differs from openssl enc");
            // Back through stdin and stdout.
            let back = hazmat("decrypt", &ours, &[], Some(&ours_ct));
            ok(&back);
            assert!(back.stdout == biggest[..n], "{cipher}, {n} bytes: decryption differs");
        }
    }
}

/// Padding is checked on the last block only, after everything before it streamed through:
/// with `-o`, a wrong last block must still leave no file at all.
#[test]
fn bad_padding_after_a_batch_leaves_no_output() {
    let d = tempfile::tempdir().unwrap();
    let ptf = d.path().join("pt");
    fs::write(&ptf, data(BATCH + 100)).unwrap();
    for cipher in ["aes-256-cbc", "sm4-ecb"] {
        let (ours, _) = args(cipher);
        let ctf = d.path().join("ct");
        ok(&hazmat("encrypt", &ours, &["--force", "-o", p(&ctf), p(&ptf)], None));
        let mut ct = fs::read(&ctf).unwrap();
        *ct.last_mut().unwrap() ^= 0x80;
        let out = d.path().join("out");
        let o = hazmat("decrypt", &ours, &["-o", p(&out)], Some(&ct));
        assert_eq!(o.status.code(), Some(1), "{cipher}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("hyperseal: error: decryption failed: bad padding or length"), "{err}");
        assert!(!out.exists(), "{cipher}: an output file was left behind");
        let left: Vec<_> = fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "only pt and ct remain: {left:?}");
    }
}

/// A 1 GiB sparse file through `hazmat encrypt | hazmat decrypt`: both processes stay far below
/// 64 MiB (peak RSS from the OS, not timed), and the zeros come back, all of them.
#[test]
fn constant_memory_on_a_large_input() {
    if !peak::fresh() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("sparse");
    let size: u64 = 1 << 30;
    fs::File::create(&big).unwrap().set_len(size).unwrap();
    // Parallel CTR, serial CBC encryption with parallel decryption, and SM4 ECB.
    for cipher in ["aes-256-ctr", "aes-128-cbc", "sm4-ecb"] {
        let (ours, _) = args(cipher);
        let ours: Vec<&str> = ours.iter().map(String::as_str).collect();
        let enc = [&["hazmat", "encrypt"][..], &ours].concat();
        let dec = [&["hazmat", "decrypt"][..], &ours].concat();
        let (e, d) = peak::pipeline_file(&enc, &dec, &big, size);
        assert!(e < 64.0, "{cipher} encrypt: peak RSS {e:.1} MiB");
        assert!(d < 64.0, "{cipher} decrypt: peak RSS {d:.1} MiB");
    }
}
