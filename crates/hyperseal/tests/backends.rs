//! Files made by one backend open with the other: the native one (aws-lc, ring) and the portable
//! one (RustCrypto, what WebAssembly builds run).
//!
//! `tests/data/backends/<backend>/` holds one set of files per backend, made by
//! `regenerate_backend_vectors` (below, ignored) from the table in [`CASES`], with the keys in
//! `tests/data/backends/keys/`. The test that opens them runs in both builds —
//! `cargo test -p hyperseal` (native) and `cargo test -p hyperseal --features portable` — so each
//! backend opens the files the other made, and its own (whose bytes it must still reproduce
//! nothing of: every file has a fresh key and salt, so only decryption is compared).
//!
//! To remake a set: `cargo test --release -p hyperseal [--features portable] --test suite --
//! --ignored backends::regenerate`.

use crate::common;

use std::path::PathBuf;

use std::io::Write;

use hyperseal::recipient::{parse_identities, parse_recipient, passphrase_identity_for, Identity};
use hyperseal::{Decryptor, Encryptor, Options, Profile, Suite};
use zeroize::Zeroizing;

/// Who wraps the file key.
#[derive(Clone, Copy)]
enum To {
    X25519,
    Hybrid,
    Mlkem1024,
    Passphrase,
}

struct Case {
    name: &'static str,
    to: To,
    profile: Profile,
    suite: Suite,
    chunk: usize,
    len: usize,
    armor: bool,
}

const KIB16: usize = 16 * 1024;
const KIB64: usize = 64 * 1024;
const PASSPHRASE: &str = "correct horse battery staple";

#[rustfmt::skip]
const CASES: &[Case] = &[
    // every payload suite, across a chunk boundary (one full chunk and one byte)
    Case { name: "x25519-aes", to: To::X25519, profile: Profile::Hyperseal, suite: Suite::Aes256Gcm, chunk: KIB16, len: KIB16 + 1, armor: false },
    Case { name: "x25519-chacha", to: To::X25519, profile: Profile::Hyperseal, suite: Suite::ChaCha20Poly1305, chunk: KIB16, len: KIB16 + 1, armor: false },
    Case { name: "x25519-sm4", to: To::X25519, profile: Profile::Hyperseal, suite: Suite::Sm4Gcm, chunk: KIB16, len: KIB16 + 1, armor: false },
    // every recipient kind; the empty payload and an exact multiple of the chunk
    Case { name: "hybrid-empty", to: To::Hybrid, profile: Profile::Hyperseal, suite: Suite::ChaCha20Poly1305, chunk: KIB16, len: 0, armor: false },
    Case { name: "hybrid-two-chunks", to: To::Hybrid, profile: Profile::Hyperseal, suite: Suite::Aes256Gcm, chunk: KIB16, len: 2 * KIB16, armor: false },
    Case { name: "mlkem1024", to: To::Mlkem1024, profile: Profile::Hyperseal, suite: Suite::Aes256Gcm, chunk: KIB16, len: 1, armor: true },
    Case { name: "passphrase-argon2id", to: To::Passphrase, profile: Profile::Hyperseal, suite: Suite::ChaCha20Poly1305, chunk: KIB16, len: 100, armor: false },
    // age files (64 KiB chunks, ChaCha20-Poly1305, 128-bit file keys)
    Case { name: "age-x25519", to: To::X25519, profile: Profile::Age, suite: Suite::ChaCha20Poly1305, chunk: KIB64, len: KIB64 + 1, armor: false },
    Case { name: "age-hybrid-armored", to: To::Hybrid, profile: Profile::Age, suite: Suite::ChaCha20Poly1305, chunk: KIB64, len: 1000, armor: true },
];

const BACKENDS: [&str; 2] = ["aws-lc", "RustCrypto"];

fn dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/backends").join(sub)
}

/// The backend this test binary runs (`Suite::backend` names it).
fn this_backend() -> &'static str {
    match Suite::ChaCha20Poly1305.backend() {
        "RustCrypto" => "RustCrypto",
        _ => "aws-lc",
    }
}

fn key_text(to: To) -> String {
    let name = match to {
        To::X25519 => "x25519",
        To::Hybrid => "hybrid",
        To::Mlkem1024 => "mlkem1024",
        To::Passphrase => unreachable!("no key file"),
    };
    std::fs::read_to_string(dir("keys").join(format!("{name}.key"))).unwrap()
}

fn file_name(c: &Case) -> String {
    format!("{}.{}", c.name, if c.profile == Profile::Age { "age" } else { "hs" })
}

fn plaintext(i: usize, c: &Case) -> Vec<u8> {
    common::data(c.len, 1000 + i as u64)
}

fn decrypt(c: &Case, file: &[u8]) -> Result<Vec<u8>, hyperseal::Error> {
    let dec = Decryptor::new(file)?;
    assert_eq!(dec.is_armored(), c.armor);
    let ids: Vec<Box<dyn Identity>> = match c.to {
        To::Passphrase => vec![passphrase_identity_for(dec.header(), Zeroizing::new(PASSPHRASE.into()))],
        to => parse_identities(&key_text(to))?,
    };
    let mut out = Vec::new();
    dec.decrypt_stream(&ids, &mut out, None)?;
    Ok(out)
}

#[test]
fn files_made_by_either_backend_open() {
    println!("this build runs the {} backend", this_backend());
    for backend in BACKENDS {
        for (i, c) in CASES.iter().enumerate() {
            let path = dir(backend).join(file_name(c));
            let file = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let pt = decrypt(c, &file).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(pt, plaintext(i, c), "{}", path.display());
            // and a flipped byte in the last chunk's tag is refused by this backend too
            if !c.armor {
                let mut bad = file.clone();
                *bad.last_mut().unwrap() ^= 1;
                let e = decrypt(c, &bad).unwrap_err();
                assert_eq!(e.code(), hyperseal::ErrorCode::Auth, "{}: {e}", path.display());
            }
        }
    }
}

/// Writes this backend's set. Ignored: run by hand (see the module docs).
#[test]
#[ignore]
fn regenerate_backend_vectors() {
    let out = dir(this_backend());
    std::fs::create_dir_all(&out).unwrap();
    for (i, c) in CASES.iter().enumerate() {
        let opts = Options { profile: c.profile, suite: c.suite, chunk_size: c.chunk, slack: false };
        let enc = match c.to {
            To::Passphrase => Encryptor::with_passphrase(Zeroizing::new(PASSPHRASE.into()), opts),
            to => {
                let public = hyperseal::recipient::public_of(&key_text(to)).unwrap();
                Encryptor::with_recipients(&[parse_recipient(&public).unwrap()], opts)
            }
        }
        .unwrap();
        let mut file = Vec::new();
        enc.encrypt_slice(&plaintext(i, c), &mut file, None).unwrap();
        if c.armor {
            let mut w = hyperseal::armored(Vec::new(), c.profile);
            w.write_all(&file).unwrap();
            file = w.finish().unwrap();
        }
        std::fs::write(out.join(file_name(c)), file).unwrap();
    }
}
