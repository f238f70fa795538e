//! Round trips: every suite × sizes around the chunk boundary × every encryption and decryption
//! path (the shared lists in `common`) × piece sizes and thread counts, plus armor.

use crate::common;

use std::io::Write;

use common::{data, decrypt_every_way, encrypt_every_way, identities, recipients};
use hyperseal::{Decryptor, Encryptor, Options, Profile, Suite};

const C: usize = 16 << 10;

fn opts(suite: Suite) -> Options {
    Options { profile: Profile::Hyperseal, suite, chunk_size: C, slack: false }
}

fn sizes() -> Vec<usize> {
    vec![0, 1, C - 1, C, C + 1, 2 * C + 500, 10 << 20]
}

/// Every encryption path's file opens, with the exact size, and one of them opens on every
/// decryption path.
#[test]
fn every_encrypt_path_through_every_decrypt_path() {
    for suite in Suite::ALL {
        for n in sizes() {
            let pt = data(n, n as u64);
            let files = encrypt_every_way(&opts(suite), &pt);
            let header = Encryptor::with_recipients(&recipients(), opts(suite)).unwrap().header_len();
            let chunks = n / C + usize::from(n % C != 0 || n == 0);
            for (path, f) in &files {
                assert_eq!(f.len(), header + n + 16 * chunks, "{suite} n={n} {path}");
                assert_eq!(hyperseal::decrypt(&identities(), f).unwrap(), pt, "{suite} n={n} {path}");
            }
            for (path, r) in decrypt_every_way(&files[0].1) {
                assert_eq!(r.unwrap(), pt, "{suite} n={n} {path}");
            }
        }
    }
}

/// Pushing in tiny pieces (one byte at a time across the chunk boundaries) changes nothing.
#[test]
fn byte_by_byte_sealer_and_opener() {
    let pt = data(2 * C + 3, 9);
    let mut sealer =
        Encryptor::with_recipients(&recipients(), opts(Suite::ChaCha20Poly1305)).unwrap().sealer();
    let mut file = Vec::new();
    pt.iter().for_each(|b| sealer.update(std::slice::from_ref(b), &mut file));
    sealer.finish(&mut file);
    let mut opener = hyperseal::Opener::new(identities().into());
    let mut back = Vec::new();
    for b in &file {
        opener.update(std::slice::from_ref(b), &mut back).unwrap();
    }
    opener.finish(&mut back).unwrap();
    assert_eq!(back, pt);
    // A Write adapter fed 7 bytes at a time, for good measure.
    let mut w = Encryptor::with_recipients(&recipients(), opts(Suite::Sm4Gcm))
        .unwrap()
        .wrap_output(Vec::new())
        .unwrap();
    pt.chunks(7).for_each(|p| w.write_all(p).unwrap());
    assert_eq!(hyperseal::decrypt(&identities(), &w.finish().unwrap()).unwrap(), pt);
}

#[test]
fn armor_round_trip_and_detection() {
    let pt = data(3 * C + 17, 3);
    let enc = Encryptor::with_recipients(&recipients(), opts(Suite::ChaCha20Poly1305)).unwrap();
    let mut armored = hyperseal::armored(Vec::new(), Profile::Hyperseal);
    enc.encrypt_stream(&mut &pt[..], &mut armored, None).unwrap();
    let text = armored.finish().unwrap();
    assert!(text.starts_with(b"-----BEGIN HYPERSEAL ENCRYPTED FILE-----\n"));
    let dec = Decryptor::new(&text[..]).unwrap();
    assert!(dec.is_armored());
    let mut out = Vec::new();
    dec.decrypt_stream(&identities(), &mut out, None).unwrap();
    assert_eq!(out, pt);
}

#[test]
fn multiple_recipients_each_open() {
    let rs: Vec<Box<dyn hyperseal::Recipient>> = vec![Box::new(common::Plain(1)), Box::new(common::Plain(2))];
    let mut ct = Vec::new();
    Encryptor::with_recipients(&rs, opts(Suite::Aes256Gcm))
        .unwrap()
        .encrypt_slice(b"shared", &mut ct, None)
        .unwrap();
    for id in [1, 2] {
        let ids: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(common::Plain(id))];
        assert_eq!(hyperseal::decrypt(&ids, &ct).unwrap(), b"shared");
    }
    let other: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(common::Plain(3))];
    assert!(matches!(hyperseal::decrypt(&other, &ct), Err(hyperseal::Error::NoIdentityMatched)));
}
