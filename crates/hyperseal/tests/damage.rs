//! Every kind of damage fails: each flipped byte, truncation at every chunk boundary and one byte
//! short, swapped, appended, dropped chunks, trailing bytes, wrong key. Checked through the
//! pipeline (1 and 2 threads) and the Read adapter.

mod common;

use std::io::Read;

use common::{data, identities, recipients};
use hyperseal::{Decryptor, Error, Options, Profile, Suite};

const C: usize = 16 << 10;
const FULL: usize = C + 16;

fn file(n: usize) -> (Vec<u8>, usize) {
    let opts = Options { profile: Profile::Hyperseal, suite: Suite::Aes256Gcm, chunk_size: C, threads: 1 };
    let ct = hyperseal::encrypt_with(&recipients(), opts.clone(), &data(n, 1)).unwrap();
    let header = hyperseal::Encryptor::with_recipients(&recipients(), opts).unwrap().header_len();
    (ct, header)
}

fn all_paths_fail(ct: &[u8]) -> Vec<String> {
    let mut errors = Vec::new();
    for threads in [1, 2] {
        let mut out = Vec::new();
        let r =
            Decryptor::new(ct).and_then(|d| d.threads(threads).decrypt_stream(&identities(), &mut out, None));
        errors.push(format!("{:?}", r.expect_err("pipeline accepted damaged file")));
    }
    let r = Decryptor::new(ct).and_then(|d| d.into_reader(&identities())).and_then(|mut r| {
        let mut out = Vec::new();
        r.read_to_end(&mut out).map_err(Error::from_io)
    });
    errors.push(format!("{:?}", r.expect_err("reader accepted damaged file")));
    let r = hyperseal::decrypt(&identities(), ct);
    errors.push(format!("{:?}", r.expect_err("one-shot accepted damaged file")));
    let mut sink = Vec::new();
    let r = hyperseal::decrypt_slice(&identities(), ct, &mut sink, 2, None);
    errors.push(format!("{:?}", r.expect_err("slice path accepted damaged file")));
    errors
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
}

#[test]
fn truncation_at_every_boundary_and_one_short() {
    let (ct, h) = file(3 * C + 100);
    let payload = h..ct.len();
    for cut in [h, h + 1, h + FULL, h + 2 * FULL, h + 3 * FULL, ct.len() - 1, h + FULL - 1] {
        assert!(payload.contains(&cut) || cut == h);
        let errs = all_paths_fail(&ct[..cut]);
        if cut == h + FULL || cut == h + 2 * FULL || cut == h + 3 * FULL {
            assert!(errs.iter().all(|e| e.starts_with("Truncated")), "cut {cut}: {errs:?}");
        }
    }
    // A file cut inside the header or salt fails too.
    for cut in [0, 5, h - 16, h - 1] {
        assert!(Decryptor::new(&ct[..cut]).and_then(|d| d.into_reader(&identities())).is_err(), "cut {cut}");
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
    ];
    for (name, bad) in cases {
        let errs = all_paths_fail(&bad);
        assert!(errs.iter().all(|e| e.contains("ChunkAuth") || e.contains("Truncated")), "{name}: {errs:?}");
    }
}

#[test]
fn wrong_key_and_header_edits() {
    let (ct, _) = file(100);
    let other: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(common::Plain(9))];
    assert!(matches!(hyperseal::decrypt(&other, &ct), Err(Error::NoIdentityMatched)));
    // Changing the suite or the chunk size in the header breaks the MAC.
    let text = ct.clone();
    let edited = String::from_utf8_lossy(&text[..60]).replace("aes-256-gcm 16384", "aes-256-gcm 32768");
    let mut bad = edited.into_bytes();
    bad.extend_from_slice(&ct[60..]);
    assert!(matches!(hyperseal::decrypt(&identities(), &bad), Err(Error::HeaderMac)));
    assert!(matches!(hyperseal::decrypt(&identities(), b"not a file\n"), Err(Error::UnknownFormat)));
}
