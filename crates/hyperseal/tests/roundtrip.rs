//! Round trips: every suite × sizes around the chunk boundary × write sizes × thread counts,
//! through every API (Write adapter, pipeline, Read adapter, one-shots), plus armor.

mod common;

use std::io::{Read, Write};

use common::{data, identities, recipients};
use hyperseal::{Decryptor, Encryptor, Options, Profile, Suite};

const C: usize = 16 << 10;

fn opts(suite: Suite, threads: usize) -> Options {
    Options { profile: Profile::Hyperseal, suite, chunk_size: C, threads }
}

fn sizes() -> Vec<usize> {
    vec![0, 1, C - 1, C, C + 1, 2 * C + 500, 10 << 20]
}

#[test]
fn write_adapter_then_pipeline_reader() {
    for suite in Suite::ALL {
        for n in sizes() {
            let pt = data(n, n as u64);
            for write_size in [7usize, 4096, C + 3, usize::MAX] {
                if n > (1 << 20) && write_size < 4096 {
                    continue; // 10 MiB in 7-byte writes proves nothing new and takes long
                }
                for threads in [1, 3] {
                    let enc = Encryptor::with_recipients(&recipients(), opts(suite, threads)).unwrap();
                    let mut w = enc.wrap_output(Vec::new()).unwrap();
                    for piece in pt.chunks(write_size.min(pt.len().max(1))) {
                        w.write_all(piece).unwrap();
                    }
                    let ct = w.finish().unwrap();
                    // Decrypt through both the pipeline and the Read adapter.
                    let mut out = Vec::new();
                    let n_out = Decryptor::new(&ct[..])
                        .unwrap()
                        .threads(threads)
                        .decrypt_stream(&identities(), &mut out, None)
                        .unwrap();
                    assert_eq!(n_out, n as u64, "decrypt_stream returns the plaintext length");
                    let mut sink = Vec::new();
                    let n_slice =
                        hyperseal::decrypt_slice(&identities(), &ct, &mut sink, threads, None).unwrap();
                    assert_eq!((n_slice, &sink), (n as u64, &pt));
                    assert_eq!(out, pt, "{suite} n={n} ws={write_size} t={threads}");
                    let mut r = Decryptor::new(&ct[..]).unwrap().into_reader(&identities()).unwrap();
                    let mut out2 = Vec::new();
                    r.read_to_end(&mut out2).unwrap();
                    assert_eq!(out2, pt);
                }
            }
        }
    }
}

#[test]
fn pipeline_then_write_adapter_sizes_match() {
    for n in sizes() {
        let pt = data(n, 7);
        let ct = hyperseal::encrypt_with(&recipients(), opts(Suite::Aes256Gcm, 2), &pt).unwrap();
        let enc = Encryptor::with_recipients(&recipients(), opts(Suite::Aes256Gcm, 1)).unwrap();
        let header = enc.header_len();
        let chunks = n / C + usize::from(n % C != 0 || n == 0);
        assert_eq!(ct.len(), header + n + 16 * chunks, "n={n}");
        assert_eq!(hyperseal::decrypt(&identities(), &ct).unwrap(), pt);
    }
}

#[test]
fn armor_round_trip_and_detection() {
    let pt = data(3 * C + 17, 3);
    let enc = Encryptor::with_recipients(&recipients(), opts(Suite::ChaCha20Poly1305, 2)).unwrap();
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
    let ct = hyperseal::encrypt_with(&rs, opts(Suite::Aes256Gcm, 1), b"shared").unwrap();
    for id in [1, 2] {
        let ids: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(common::Plain(id))];
        assert_eq!(hyperseal::decrypt(&ids, &ct).unwrap(), b"shared");
    }
    let other: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(common::Plain(3))];
    assert!(matches!(hyperseal::decrypt(&other, &ct), Err(hyperseal::Error::NoIdentityMatched)));
}
