//! Cross-kind tests: label mixing, and interoperability with the real age (v1.3.1).
//!
//! The age side is exercised two ways: fixed files made by `age` and committed under
//! `tests/data/` (always run), and live round trips through `.tools/bin/age` (skipped with a
//! note when it is not installed). A tiny test-only age v1 header/payload codec lives here so
//! these tests do not depend on the library's own header code.

use std::path::PathBuf;
use std::process::Command;

use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};
use aws_lc_rs::{hkdf, hmac};

use super::*;
use crate::format::{decode_b64, encode_b64, Stanza};
use crate::{error::Error, file_key::FileKey};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
const AGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.tools/bin/age");
const CHUNK: usize = 64 * 1024;

// ---- a test-only age v1 codec ----------------------------------------------------------------

struct AgeFile {
    stanzas: Vec<Stanza>,
    /// The header bytes the MAC covers: everything up to and including `---`.
    mac_input: Vec<u8>,
    mac: Vec<u8>,
    payload: Vec<u8>,
}

fn parse_age(file: &[u8]) -> AgeFile {
    let mut pos = 0;
    let mut next_line = || {
        let end = pos + file[pos..].iter().position(|&b| b == b'\n').expect("header line");
        let line = &file[pos..end];
        let start = pos;
        pos = end + 1;
        (start, line)
    };
    assert_eq!(next_line().1, b"age-encryption.org/v1");
    let mut stanzas = Vec::new();
    loop {
        let (start, line) = next_line();
        if let Some(mac) = line.strip_prefix(b"--- ") {
            let mac_input = file[..start + 3].to_vec();
            return AgeFile {
                stanzas,
                mac_input,
                mac: decode_b64(mac).unwrap(),
                payload: file[pos..].to_vec(),
            };
        }
        let args = line.strip_prefix(b"-> ").expect("stanza line");
        let (tag, args) = Stanza::parse_args(args).unwrap();
        let mut body = Vec::new();
        loop {
            let (b, last) = Stanza::parse_body_line(next_line().1).unwrap();
            body.extend(b);
            if last {
                break;
            }
        }
        stanzas.push(Stanza { tag, args, body });
    }
}

fn hkdf32(ikm: &[u8], salt: &[u8], info: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    hkdf::Salt::new(hkdf::HKDF_SHA256, salt)
        .extract(ikm)
        .expand(&[info], hkdf::HKDF_SHA256)
        .unwrap()
        .fill(&mut out)
        .unwrap();
    out
}

fn header_mac(file_key: &FileKey, mac_input: &[u8]) -> Vec<u8> {
    let k = hmac::Key::new(hmac::HMAC_SHA256, &hkdf32(file_key.expose(), b"", b"header"));
    hmac::sign(&k, mac_input).as_ref().to_vec()
}

fn payload_key(file_key: &FileKey, nonce: &[u8]) -> LessSafeKey {
    let k = hkdf32(file_key.expose(), nonce, b"payload");
    LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &k).unwrap())
}

fn chunk_nonce(i: u64, last: bool) -> Nonce {
    let mut n = [0u8; 12];
    n[3..11].copy_from_slice(&i.to_be_bytes());
    n[11] = last as u8;
    Nonce::assume_unique_for_key(n)
}

fn open_payload(file_key: &FileKey, payload: &[u8]) -> Vec<u8> {
    let key = payload_key(file_key, &payload[..16]);
    let chunks: Vec<&[u8]> = payload[16..].chunks(CHUNK + 16).collect();
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        let mut buf = c.to_vec();
        let last = i + 1 == chunks.len();
        out.extend_from_slice(
            key.open_in_place(chunk_nonce(i as u64, last), Aad::empty(), &mut buf).unwrap(),
        );
    }
    out
}

/// Builds a complete age v1 file around `stanzas` for `plaintext`.
fn build_age(file_key: &FileKey, stanzas: &[Stanza], plaintext: &[u8]) -> Vec<u8> {
    let mut out = b"age-encryption.org/v1\n".to_vec();
    for s in stanzas {
        s.write_to(&mut out);
    }
    out.extend_from_slice(b"---");
    let mac = header_mac(file_key, &out);
    out.extend_from_slice(format!(" {}\n", encode_b64(&mac)).as_bytes());
    let nonce = primitives::random::<16>().unwrap();
    out.extend_from_slice(&nonce);
    let key = payload_key(file_key, &nonce);
    let chunks: Vec<&[u8]> =
        if plaintext.is_empty() { vec![&[][..]] } else { plaintext.chunks(CHUNK).collect() };
    for (i, c) in chunks.iter().enumerate() {
        let mut buf = c.to_vec();
        key.seal_in_place_append_tag(chunk_nonce(i as u64, i + 1 == chunks.len()), Aad::empty(), &mut buf)
            .unwrap();
        out.extend(buf);
    }
    out
}

/// Unwraps a real age file with `identity`, then proves the key right with the header MAC and
/// returns the plaintext.
fn decrypt_age(identity: &dyn Identity, file: &[u8]) -> Vec<u8> {
    let f = parse_age(file);
    let fk = identity.unwrap_stanzas(&f.stanzas).expect("stanza should be ours").expect("unwrap");
    assert_eq!(fk.expose().len(), 16, "age uses 16-byte file keys");
    assert_eq!(header_mac(&fk, &f.mac_input), f.mac, "header MAC must match");
    open_payload(&fk, &f.payload)
}

// ---- running the real age --------------------------------------------------------------------

fn age_binary() -> Option<PathBuf> {
    let p = PathBuf::from(AGE);
    if p.exists() {
        Some(p)
    } else {
        println!("NOTE: {AGE} not found; skipping the live age interoperability test (run `make tools`)");
        // `make test` sets this: there a missing peer is a failure, never a quiet skip.
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        None
    }
}

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("hyperseal-recip-{}-{name}", std::process::id()))
}

/// Our recipient wraps, we build the file, the real `age -d` must decrypt it; then the real
/// `age -r` encrypts to our recipient string and our identity must decrypt that.
fn live_age_round_trip(kind: Kind) {
    let Some(age) = age_binary() else { return };
    let key = generate(kind).unwrap();
    let id_path = temp_path(&format!("{}.key", kind.name()));
    std::fs::write(&id_path, format!("# test key\n{}\n", &*key.secret)).unwrap();

    // hyperseal -> age
    let plaintext: Vec<u8> = (0..CHUNK + 500).map(|i| (i % 251) as u8).collect();
    let fk = FileKey::generate(16);
    let stanzas = wrap_all(&[parse_recipient(&key.public).unwrap()], &fk).unwrap();
    let file_path = temp_path(&format!("{}.age", kind.name()));
    std::fs::write(&file_path, build_age(&fk, &stanzas, &plaintext)).unwrap();
    let out = Command::new(&age).arg("-d").arg("-i").arg(&id_path).arg(&file_path).output().unwrap();
    assert!(out.status.success(), "age -d failed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, plaintext, "age decrypted something else");

    // age -> hyperseal
    let msg_path = temp_path(&format!("{}.txt", kind.name()));
    std::fs::write(&msg_path, b"from the real age\n").unwrap();
    let out = Command::new(&age).arg("-r").arg(&key.public).arg(&msg_path).output().unwrap();
    assert!(out.status.success(), "age -r failed: {}", String::from_utf8_lossy(&out.stderr));
    let ids = parse_identities(&key.secret).unwrap();
    assert_eq!(decrypt_age(ids[0].as_ref(), &out.stdout), b"from the real age\n");

    for p in [id_path, file_path, msg_path] {
        let _ = std::fs::remove_file(p);
    }
    println!("age interop ({}): both directions OK", kind.name());
}

fn fixed_vector(identity_file: &str, age_file: &str) {
    let ids = parse_identities(&std::fs::read_to_string(format!("{DATA}{identity_file}")).unwrap()).unwrap();
    let file = std::fs::read(format!("{DATA}{age_file}")).unwrap();
    assert_eq!(decrypt_age(ids[0].as_ref(), &file), b"hello from age v1.3.1\n");
}

// ---- the tests -------------------------------------------------------------------------------

#[test]
fn x25519_decrypts_file_made_by_age() {
    fixed_vector("age_x25519_identity.txt", "age_x25519.age");
}

#[test]
fn x25519_interoperates_with_live_age() {
    live_age_round_trip(Kind::X25519);
}

#[test]
fn public_of_matches_age_keygen() {
    let text = std::fs::read_to_string(format!("{DATA}age_x25519_identity.txt")).unwrap();
    let expected = text.lines().find_map(|l| l.strip_prefix("# public key: ")).unwrap();
    assert_eq!(public_of(&text).unwrap(), expected);
}

#[test]
fn parse_recipient_dispatches_and_rejects_garbage() {
    let k = generate(Kind::X25519).unwrap();
    assert!(parse_recipient(&k.public).is_ok());
    assert!(matches!(parse_recipient("nonsense"), Err(Error::InvalidRecipient(_))));
    assert!(parse_identities("# only a comment\n").is_err());
}

#[test]
fn hybrid_decrypts_file_made_by_age() {
    fixed_vector("age_pq_identity.txt", "age_pq.age");
}

#[test]
fn hybrid_interoperates_with_live_age() {
    live_age_round_trip(Kind::Hybrid);
}

#[test]
fn hybrid_public_of_matches_age_keygen() {
    let text = std::fs::read_to_string(format!("{DATA}age_pq_identity.txt")).unwrap();
    let expected = text.lines().find_map(|l| l.strip_prefix("# public key: ")).unwrap();
    assert_eq!(public_of(&text).unwrap(), expected);
}

#[test]
fn wrap_all_refuses_postquantum_with_classic() {
    let pq = parse_recipient(&generate(Kind::Hybrid).unwrap().public).unwrap();
    let pq2 = parse_recipient(&generate(Kind::Hybrid).unwrap().public).unwrap();
    let classic = parse_recipient(&generate(Kind::X25519).unwrap().public).unwrap();
    let fk = FileKey::generate(32);
    assert!(matches!(wrap_all(&[pq, classic], &fk), Err(Error::IncompatibleRecipients(_))));
    let pq = parse_recipient(&generate(Kind::Hybrid).unwrap().public).unwrap();
    assert_eq!(wrap_all(&[pq, pq2], &fk).unwrap().len(), 2);
}

/// Every kind's key strings go through the parsing that chooses between kinds: a secret is an
/// identity and never a recipient, and `public_of` gives back the recipient it was made with.
#[test]
fn every_kind_parses_and_gives_back_its_recipient() {
    // The portable build has no P-256 and no RSA (`unavailable.rs`, the test below).
    let kinds: &[Kind] =
        if cfg!(portable_backend) { &[Kind::Hybrid, Kind::X25519, Kind::Mlkem1024] } else { &Kind::ALL };
    for &kind in kinds {
        let k = generate(kind).unwrap();
        let name = kind.name();
        assert!(parse_recipient(&k.public).is_ok(), "{name}");
        assert_eq!(
            parse_identities(&k.secret).unwrap().len(),
            1 + (name.starts_with("rsa") as usize),
            "{name}"
        );
        assert_eq!(public_of(&k.secret).unwrap(), k.public, "{name}");
        assert!(looks_like_identity(&k.secret) && !looks_like_identity(&k.public), "{name}");
        assert!(matches!(parse_recipient(&k.secret), Err(Error::InvalidRecipient(_))), "{name}");
    }
}

/// The portable build (WebAssembly) has no P-256: every P-256 key, native or age tag, recipient
/// or identity, fails with one clear message rather than as a malformed key.
#[cfg(portable_backend)]
#[test]
fn p256_unavailable_in_the_portable_build() {
    let says = |e: Error| assert!(e.to_string().contains("not available in this build"), "{e}");
    for kind in [Kind::P256, Kind::P256Mlkem768] {
        says(generate(kind).err().unwrap());
    }
    let recipients = [
        "age1tag1qwe0kafsjrar4txm6heqnhpfuggzr0gvznz7fvygxrlq90u5mq2pysxtw6h".to_string(),
        std::fs::read_to_string(format!("{DATA}age_tagtest_hybrid_recipient.txt"))
            .unwrap()
            .trim()
            .to_string(),
        // A compressed P-256 point (33 bytes); an MLKEM768-P256 public key (1184 + 65 bytes).
        super::bech32_long::encode("hs-p256", &[2; 33]),
        super::bech32_long::encode("hs-mlkem768p256", &[0; 1249]),
    ];
    for r in recipients {
        match parse_recipient(&r) {
            Err(e @ Error::InvalidRecipient(_)) => says(e),
            other => panic!("{r}: {:?}", other.map(|_| ())),
        }
    }
    let ids = std::fs::read_to_string(format!("{DATA}age_tagtest_identities.txt")).unwrap();
    for line in ids.lines().filter(|l| !l.starts_with('#')) {
        match parse_identities(line) {
            Err(e @ Error::InvalidKey(_)) => says(e),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}
