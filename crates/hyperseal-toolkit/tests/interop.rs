//! Byte-for-byte agreement with the system tools: coreutils checksums, `openssl dgst`,
//! `openssl enc`, `openssl pkeyutl`/`dgst` signatures and OAEP, plus BLAKE3's official
//! vectors. A missing tool skips its test with a message instead of failing, so the suite
//! still runs on minimal machines; on the reference machine all tools are present.
//! (Native backend only: it checks the hazmat modes and RSA, which the `portable` one lacks.)
#![cfg(not(feature = "portable"))]

use std::path::{Path, PathBuf};
use std::process::Command;

use hyperseal_toolkit::{hash, hazmat, sign};

fn have(tool: &str) -> bool {
    let ok = Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
        || Command::new(tool).arg("version").output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        eprintln!("SKIPPED: {tool} not installed");
    }
    ok
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("spawn");
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn random(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    aws_lc_rs::rand::fill(&mut v).unwrap();
    v
}

fn rand_below(n: usize) -> usize {
    let mut b = [0u8; 4];
    aws_lc_rs::rand::fill(&mut b).unwrap();
    u32::from_le_bytes(b) as usize % n
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

/// First whitespace-separated field (coreutils) or text after `= ` (openssl dgst).
fn tool_hex(out: &[u8]) -> String {
    let s = String::from_utf8_lossy(out);
    match s.split_once("= ") {
        Some((_, h)) => h.trim().to_owned(),
        None => s.split_whitespace().next().unwrap().to_owned(),
    }
}

#[test]
fn hashes_match_coreutils_and_openssl() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], hash::Algorithm); 9] = [
        ("sha256sum", &[], hash::Algorithm::Sha256),
        ("sha384sum", &[], hash::Algorithm::Sha384),
        ("sha512sum", &[], hash::Algorithm::Sha512),
        ("b2sum", &[], hash::Algorithm::Blake2b512),
        ("md5sum", &[], hash::Algorithm::LegacyMd5),
        ("sha1sum", &[], hash::Algorithm::LegacySha1),
        ("openssl", &["dgst", "-sm3"], hash::Algorithm::Sm3),
        ("openssl", &["dgst", "-sha3-256"], hash::Algorithm::Sha3_256),
        ("openssl", &["dgst", "-sha3-512"], hash::Algorithm::Sha3_512),
    ];
    let sizes = [0usize, 1, 63, 64, 1000, 65_537, 1 << 20, (1 << 20) + 4099];
    let files: Vec<(PathBuf, Vec<u8>)> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let d = random(n);
            (write(dir.path(), &format!("f{i}"), &d), d)
        })
        .collect();
    let mut checked = 0;
    for (tool, args, alg) in cases {
        if !have(tool) {
            continue;
        }
        for (path, data) in &files {
            let expected = tool_hex(&run(Command::new(tool).args(args).arg(path)));
            assert_eq!(
                hex::encode(hash::hash_file(alg, path).unwrap()),
                expected,
                "{alg} {}",
                path.display()
            );
            assert_eq!(hex::encode(hash::hash(alg, data)), expected, "{alg} one-shot");
            checked += 1;
        }
    }
    println!("hash interop: {checked} (algorithm, file) pairs agree");
}

#[test]
fn blake3_official_vectors_and_parallel_file_path() {
    // BLAKE3-team/BLAKE3 test_vectors/test_vectors.json, default 32-byte output, input i % 251.
    let vectors = [
        (0usize, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"),
        (1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"),
        (1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"),
        (1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"),
        (1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"),
        (31744, "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47"),
        (102400, "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (len, expected) in vectors {
        let input: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        assert_eq!(hex::encode(hash::hash(hash::Algorithm::Blake3, &input)), expected, "len {len}");
        let p = write(dir.path(), "v", &input);
        assert_eq!(hex::encode(hash::hash_file(hash::Algorithm::Blake3, &p).unwrap()), expected);
    }
    // Above the threshold hash_file hashes subtrees on all cores; it must agree with one-shot.
    let big = random(3 * hash::BLAKE3_PARALLEL_THRESHOLD as usize + 12345);
    let p = write(dir.path(), "big", &big);
    assert_eq!(
        hash::hash_file(hash::Algorithm::Blake3, &p).unwrap(),
        hash::hash(hash::Algorithm::Blake3, &big)
    );
}

#[test]
fn hazmat_matches_openssl_enc_both_ways() {
    if !have("openssl") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for cipher in hazmat::Cipher::ALL {
        for round in 0..6 {
            let len = match round {
                0 => 0,
                1 => 16,
                _ => rand_below(5000),
            };
            let key = random(cipher.key_len);
            let iv = random(16);
            let iv_opt = cipher.needs_iv().then_some(&iv[..]);
            let pt = random(len);
            let mut base = vec![format!("-{}", cipher.name()), "-K".into(), hex::encode(&key)];
            if cipher.needs_iv() {
                base.extend(["-iv".into(), hex::encode(&iv)]);
            }
            let ptf = write(dir.path(), "pt", &pt);
            // openssl encrypts; we must produce the same bytes and decrypt them.
            let ossl_ct = run(Command::new("openssl").arg("enc").args(&base).arg("-in").arg(&ptf));
            let ours = cipher.encrypt(&key, iv_opt, &pt).unwrap();
            assert_eq!(ours, ossl_ct, "{cipher} len {len}");
            assert_eq!(*cipher.decrypt(&key, iv_opt, &ossl_ct).unwrap(), pt);
            // we encrypt; openssl decrypts.
            let ctf = write(dir.path(), "ct", &ours);
            let back = run(Command::new("openssl").args(["enc", "-d"]).args(&base).arg("-in").arg(&ctf));
            assert_eq!(back, pt, "{cipher} len {len} openssl -d");
        }
    }
}

fn openssl_genpkey(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, String) {
    let p = dir.join(name);
    run(Command::new("openssl").arg("genpkey").args(args).arg("-out").arg(&p));
    let pem = std::fs::read_to_string(&p).unwrap();
    (p, pem)
}

#[test]
fn signatures_interoperate_with_openssl() {
    if !have("openssl") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let msg = random(1234);
    let msgf = write(d, "msg", &msg);
    let pss =
        ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32", "-sigopt", "rsa_mgf1_md:sha256"];

    struct Case {
        kind: sign::KeyKind,
        padding: sign::RsaPadding,
        genpkey: &'static [&'static str],
    }
    let cases = [
        Case {
            kind: sign::KeyKind::Ed25519,
            padding: sign::RsaPadding::Pss,
            genpkey: &["-algorithm", "ed25519"],
        },
        Case {
            kind: sign::KeyKind::EcdsaP256,
            padding: sign::RsaPadding::Pss,
            genpkey: &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
        },
        Case {
            kind: sign::KeyKind::Rsa2048,
            padding: sign::RsaPadding::Pss,
            genpkey: &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        },
        Case {
            kind: sign::KeyKind::Rsa2048,
            padding: sign::RsaPadding::Pkcs1v15,
            genpkey: &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        },
    ];
    for c in cases {
        let label = format!("{} {:?}", c.kind, c.padding);
        // Our key, our signature, openssl verifies.
        let sk_pem = sign::generate(c.kind).unwrap();
        let skf = write(d, "ours.pem", sk_pem.as_bytes());
        let pub_pem = sign::public_pem_from_private(&sk_pem).unwrap();
        let pubf = write(d, "ours.pub", pub_pem.as_bytes());
        // openssl reads both our PKCS#8 and our SPKI, and derives the same public key.
        let ossl_pub = run(Command::new("openssl").args(["pkey", "-pubout", "-in"]).arg(&skf));
        assert_eq!(String::from_utf8(ossl_pub).unwrap(), pub_pem, "{label}");
        run(Command::new("openssl").args(["pkey", "-pubin", "-noout", "-in"]).arg(&pubf));

        let sk = sign::SigningKey::from_pem(&sk_pem).unwrap();
        let sig = sk.sign_with(&msg, c.padding).unwrap();
        let sigf = write(d, "sig", &sig);
        let verify = match c.kind {
            sign::KeyKind::Ed25519 => Command::new("openssl")
                .args(["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey"])
                .arg(&pubf)
                .arg("-sigfile")
                .arg(&sigf)
                .arg("-in")
                .arg(&msgf)
                .output()
                .unwrap(),
            _ => {
                let mut cmd = Command::new("openssl");
                cmd.args(["dgst", "-sha256"]);
                if c.kind.is_rsa() && c.padding == sign::RsaPadding::Pss {
                    cmd.args(pss);
                }
                cmd.arg("-verify").arg(&pubf).arg("-signature").arg(&sigf).arg(&msgf).output().unwrap()
            }
        };
        assert!(
            verify.status.success(),
            "{label}: openssl rejected our signature: {}",
            String::from_utf8_lossy(&verify.stdout)
        );

        // openssl key, openssl signature, we verify (and parse its PEM private key).
        let (okf, ok_pem) = openssl_genpkey(d, "theirs.pem", c.genpkey);
        let osig = match c.kind {
            sign::KeyKind::Ed25519 => run(Command::new("openssl")
                .args(["pkeyutl", "-sign", "-rawin", "-inkey"])
                .arg(&okf)
                .arg("-in")
                .arg(&msgf)),
            _ => {
                let mut cmd = Command::new("openssl");
                cmd.args(["dgst", "-sha256"]);
                if c.kind.is_rsa() && c.padding == sign::RsaPadding::Pss {
                    cmd.args(pss);
                }
                run(cmd.arg("-sign").arg(&okf).arg(&msgf))
            }
        };
        let vk = sign::VerifyingKey::from_pem(&sign::public_pem_from_private(&ok_pem).unwrap()).unwrap();
        assert_eq!(vk.kind(), c.kind);
        vk.verify_with(&msg, &osig, c.padding)
            .unwrap_or_else(|_| panic!("{label}: openssl signature rejected"));
        let mut bad = osig.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(vk.verify_with(&msg, &bad, c.padding).is_err(), "{label}");
    }
}

#[test]
fn rsa_oaep_interoperates_with_openssl() {
    if !have("openssl") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sk_pem = sign::generate(sign::KeyKind::Rsa2048).unwrap();
    let skf = write(d, "k.pem", sk_pem.as_bytes());
    let pubf = write(d, "k.pub", sign::public_pem_from_private(&sk_pem).unwrap().as_bytes());
    let opts = [
        "-pkeyopt",
        "rsa_padding_mode:oaep",
        "-pkeyopt",
        "rsa_oaep_md:sha256",
        "-pkeyopt",
        "rsa_mgf1_md:sha256",
    ];
    let secret = random(32);
    let secf = write(d, "secret", &secret);
    let ct = run(Command::new("openssl")
        .args(["pkeyutl", "-encrypt", "-pubin", "-inkey"])
        .arg(&pubf)
        .args(opts)
        .arg("-in")
        .arg(&secf));
    let dk = sign::oaep::RsaOaepPrivateKey::from_pem(&sk_pem).unwrap();
    assert_eq!(*dk.decrypt(&ct, b"").unwrap(), secret);
    let pk = sign::oaep::RsaOaepPublicKey::from_pem(&std::fs::read_to_string(&pubf).unwrap()).unwrap();
    let ours = write(d, "ct", &pk.encrypt(&secret, b"").unwrap());
    let back = run(Command::new("openssl")
        .args(["pkeyutl", "-decrypt", "-inkey"])
        .arg(&skf)
        .args(opts)
        .arg("-in")
        .arg(&ours));
    assert_eq!(back, secret);
}
