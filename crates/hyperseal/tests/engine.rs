//! The engine through the public API: random access equal to a full decrypt at random offsets,
//! failing on a tampered final chunk; caller buffers overwritten and size-checked. (Byte
//! identity across thread counts and paths, with a fixed key, is a unit test in `stream/`.)

use crate::common;

use std::io::{Cursor, Read, Seek, SeekFrom};

use common::{data, identities, recipients};
use hyperseal::{Decryptor, Encryptor, Options};

fn opts() -> Options {
    Options { chunk_size: 16 << 10, ..Options::default() }
}

fn encrypted(n: usize) -> (Vec<u8>, Vec<u8>) {
    let pt = data(n, 11);
    let mut f = Vec::new();
    Encryptor::with_recipients(&recipients(), opts()).unwrap().encrypt_slice(&pt, &mut f, None).unwrap();
    (f, pt)
}

#[test]
fn seek_reads_equal_full_decrypt() {
    for n in [0usize, 1, 16 << 10, (16 << 10) + 1, 3 << 20] {
        let (ct, pt) = encrypted(n);
        let mut r = Decryptor::new(Cursor::new(ct)).unwrap().threads(2).into_reader(&identities()).unwrap();
        assert_eq!(r.plaintext_len().unwrap(), n as u64);
        let mut state = 12345u64;
        for _ in 0..200 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let off = if n == 0 { 0 } else { (state >> 20) as usize % (n + 1) };
            let len = ((state >> 8) as usize) % 40_000;
            r.seek(SeekFrom::Start(off as u64)).unwrap();
            let mut got = Vec::new();
            (&mut r).take(len as u64).read_to_end(&mut got).unwrap();
            let end = (off + len).min(n);
            assert_eq!(got, pt[off..end], "n={n} off={off} len={len}");
        }
        // Seeking from the end and relative to the current position.
        if n > 10 {
            r.seek(SeekFrom::End(-10)).unwrap();
            let mut tail = Vec::new();
            r.read_to_end(&mut tail).unwrap();
            assert_eq!(tail, pt[n - 10..]);
        }
    }
}

#[test]
fn seek_fails_on_tampered_final_chunk() {
    let (mut ct, _) = encrypted((2 << 20) + 5);
    let last = ct.len() - 3;
    ct[last] ^= 1;
    let mut r = Decryptor::new(Cursor::new(ct)).unwrap().into_reader(&identities()).unwrap();
    assert!(r.seek(SeekFrom::Start(0)).is_err());
    assert!(r.plaintext_len().is_err());
}

/// The caller-buffer one-shots (for callers that recycle large buffers) write every byte they
/// report, whatever the buffer held before, and refuse buffers of the wrong size.
#[test]
fn into_buffers_overwrite_stale_contents_and_check_sizes() {
    for n in [0usize, 1, 70_000, 3 << 20] {
        let pt = data(n, 3);
        let enc = Encryptor::with_recipients(&recipients(), opts()).unwrap().threads(2);
        let len = enc.encrypted_len(n);
        let mut out = vec![0xa5u8; len + 1];
        let short = Encryptor::with_recipients(&recipients(), opts()).unwrap();
        assert!(matches!(
            short.encrypt_into(&pt, &mut out[..len - 1]),
            Err(hyperseal::Error::InvalidArgument(_))
        ));
        enc.encrypt_into(&pt, &mut out[..len]).unwrap();
        let ct = &out[..len];
        assert_eq!(hyperseal::decrypt(&identities(), ct).unwrap(), pt);
        let mut back = vec![0x5au8; ct.len() + 7];
        if n > 0 {
            let r =
                Decryptor::from_slice(ct).unwrap().threads(2).decrypt_into(&identities(), &mut back[..n - 1]);
            assert!(matches!(r, Err(hyperseal::Error::InvalidArgument(_))), "{r:?}");
        }
        let k = Decryptor::from_slice(ct)
            .unwrap()
            .threads(2)
            .decrypt_into(&identities(), &mut back[..n])
            .unwrap();
        assert_eq!(back[..k], pt[..]);
    }
}

/// The header predicts a payload's plaintext length from its size, and says when no file could
/// have that size (a cut at a chunk boundary still looks valid: only decryption tells).
#[test]
fn payload_shape_from_the_size() {
    for n in [0usize, 1, 16 << 10, (16 << 10) + 1, 3 * (16 << 10)] {
        let (ct, _) = encrypted(n);
        let dec = Decryptor::from_slice(&ct).unwrap();
        let head = dec.header().encode_len() + hyperseal::format::SALT_LEN;
        let shape = dec.header().payload_shape((ct.len() - head) as u64);
        assert_eq!(shape.map(|(_, p)| p), Some(n as u64), "n={n}");
        for cut in [1u64, 15, 16] {
            let short = dec.header().payload_shape((ct.len() - head) as u64 - cut);
            if n == 0 || (n > 16 << 10 && n % (16 << 10) == 1 && cut >= 1) {
                assert_eq!(short, None, "n={n} cut={cut}");
            }
        }
    }
    let (ct, _) = encrypted(0);
    let dec = Decryptor::from_slice(&ct).unwrap();
    assert_eq!(dec.header().payload_shape(0), None, "no payload at all");
    assert_eq!(dec.header().payload_shape(16), Some((1, 0)), "one empty final chunk");
    assert_eq!(dec.header().payload_shape((16 << 10) + 16 + 16), None, "an empty chunk after a full one");
}
