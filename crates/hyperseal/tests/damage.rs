//! Every kind of damage fails, on every decryption path (the shared list in `common`): each
//! flipped byte, truncation at every chunk boundary and one byte short, swapped, appended,
//! dropped chunks, trailing bytes, wrong key.

use crate::common;

use common::{data, decrypt_every_way, identities, recipients};
use hyperseal::{Decryptor, Error, Options, Profile, Suite};

const C: usize = 16 << 10;
const FULL: usize = C + 16;

fn opts() -> Options {
    Options { profile: Profile::Hyperseal, suite: Suite::Aes256Gcm, chunk_size: C, slack: false }
}

fn file(n: usize) -> (Vec<u8>, usize) {
    let enc = hyperseal::Encryptor::with_recipients(&recipients(), opts()).unwrap();
    let header = enc.header_len();
    let mut ct = vec![0; enc.encrypted_len(n)];
    enc.encrypt_into(&data(n, 1), &mut ct).unwrap();
    (ct, header)
}

/// Every path's error, as `Debug` text; panics if any path accepted the file.
fn all_paths_fail(ct: &[u8]) -> Vec<String> {
    decrypt_every_way(ct)
        .into_iter()
        .map(|(path, r)| format!("{:?}", r.err().unwrap_or_else(|| panic!("{path} accepted a damaged file"))))
        .collect()
}

#[test]
fn every_flipped_byte_fails() {
    let (ct, _) = file(C + 500);
    for i in 0..ct.len() {
        let mut bad = ct.clone();
        bad[i] ^= 0x01;
        let mut out = Vec::new();
        let r =
            Decryptor::new(&bad[..]).and_then(|d| d.threads(1).decrypt_stream(&identities(), &mut out, None));
        assert!(r.is_err(), "flip at byte {i} of {} went unnoticed", ct.len());
    }
    // And every path, for one flipped byte in each chunk, the tag, and the header.
    for i in [10, ct.len() - FULL - 600, ct.len() - 520, ct.len() - 1] {
        let mut bad = ct.clone();
        bad[i] ^= 0x80;
        all_paths_fail(&bad);
    }
}

#[test]
fn truncation_at_every_boundary_and_one_short() {
    let (ct, h) = file(3 * C + 100);
    for cut in [h, h + 1, h + 15, h + 16, h + FULL, h + 2 * FULL, h + 3 * FULL, ct.len() - 1, h + FULL - 1] {
        let errs = all_paths_fail(&ct[..cut]);
        if cut == h + FULL || cut == h + 2 * FULL || cut == h + 3 * FULL || cut == h {
            assert!(errs.iter().all(|e| e.starts_with("Truncated")), "cut {cut}: {errs:?}");
        }
    }
    // A file cut inside the header or salt fails too, with a header error, on every path.
    for cut in [0, 5, h - 16, h - 1] {
        let errs = all_paths_fail(&ct[..cut]);
        assert!(
            errs.iter()
                .all(|e| ["MalformedHeader", "UnknownFormat", "EmptyInput"].iter().any(|k| e.starts_with(k))),
            "cut {cut}: {errs:?}"
        );
    }
}

#[test]
fn swapped_dropped_appended_chunks_and_trailing_bytes() {
    let (ct, h) = file(3 * C + 100);
    let chunk = |i: usize| ct[h + i * FULL..(h + (i + 1) * FULL).min(ct.len())].to_vec();
    let head = ct[..h].to_vec();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("swap 0,1", [head.clone(), chunk(1), chunk(0), chunk(2), chunk(3)].concat()),
        ("drop 1", [head.clone(), chunk(0), chunk(2), chunk(3)].concat()),
        ("drop final", [head.clone(), chunk(0), chunk(1), chunk(2)].concat()),
        ("append copy", [head.clone(), chunk(0), chunk(1), chunk(2), chunk(3), chunk(3)].concat()),
        ("duplicate", [head.clone(), chunk(0), chunk(0), chunk(1), chunk(2), chunk(3)].concat()),
        ("trailing byte", [ct.clone(), vec![0]].concat()),
        (
            "final chunk of 5 bytes",
            [head.clone(), chunk(0), chunk(1), chunk(2), chunk(3)[..5].to_vec()].concat(),
        ),
    ];
    for (name, bad) in cases {
        let errs = all_paths_fail(&bad);
        assert!(errs.iter().all(|e| e.contains("ChunkAuth") || e.contains("Truncated")), "{name}: {errs:?}");
    }
}

#[test]
fn a_damaged_chunk_anywhere_in_a_parallel_sized_file() {
    let (ct, _) = file(9 << 20);
    for at in [ct.len() / 3, ct.len() / 2, ct.len() * 5 / 6, ct.len() - 5] {
        let mut bad = ct.clone();
        bad[at] ^= 1;
        let errs = all_paths_fail(&bad);
        assert!(errs.iter().all(|e| e.starts_with("ChunkAuth")), "byte {at}: {errs:?}");
    }
}

#[test]
fn wrong_key_and_header_edits() {
    let (ct, _) = file(100);
    let other: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(common::Plain(9))];
    assert!(matches!(hyperseal::decrypt(&other, &ct), Err(Error::NoIdentityMatched)));
    // Changing the suite or the chunk size in the header breaks the MAC.
    let edited = String::from_utf8_lossy(&ct[..60]).replace("aes-256-gcm 16384", "aes-256-gcm 32768");
    let mut bad = edited.into_bytes();
    bad.extend_from_slice(&ct[60..]);
    let errs = all_paths_fail(&bad);
    assert!(errs.iter().all(|e| e == "HeaderMac"), "{errs:?}");
    let errs = all_paths_fail(b"not a file\n");
    assert!(errs.iter().all(|e| e == "UnknownFormat"), "{errs:?}");
}
