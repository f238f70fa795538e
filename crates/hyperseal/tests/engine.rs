//! The engine: identical bytes whatever the thread count, and random access equal to a full
//! decrypt at random offsets, failing on a tampered final chunk.

mod common;

use std::io::{Cursor, Read, Seek, SeekFrom, Write};

use common::{data, identities, recipients};
use hyperseal::stream::{
    decrypt_pipeline, encrypt_pipeline, encrypt_slice, open_into, seal_into, sealed_len, ChunkCipher,
    StreamWriter,
};
use hyperseal::{Decryptor, Options, Profile, Suite};
use zeroize::Zeroizing;

fn cipher(suite: Suite, chunk: usize) -> ChunkCipher {
    ChunkCipher::new(suite, chunk, &Zeroizing::new([42u8; 32])).unwrap()
}

#[test]
fn output_is_identical_for_every_thread_count_and_api() {
    for suite in Suite::ALL {
        for n in [0usize, 1, 16 << 10, (5 << 20) + 3] {
            let pt = data(n, 5);
            let reference = {
                let mut w = StreamWriter::new(Vec::new(), cipher(suite, 16 << 10), 1);
                w.write_all(&pt).unwrap();
                w.finish().unwrap()
            };
            for threads in [1, 2, 3, 8] {
                let mut out = Vec::new();
                encrypt_pipeline(&cipher(suite, 16 << 10), &mut &pt[..], &mut out, threads, None).unwrap();
                assert_eq!(out, reference, "{suite} n={n} threads={threads}");
                let mut w = StreamWriter::new(Vec::new(), cipher(suite, 16 << 10), threads);
                w.write_all(&pt).unwrap();
                assert_eq!(w.finish().unwrap(), reference);
                let mut direct = vec![0u8; sealed_len(&cipher(suite, 16 << 10), n)];
                seal_into(&cipher(suite, 16 << 10), &pt, &mut direct, threads);
                assert_eq!(direct, reference, "borrowed-input path, threads={threads}");
                let mut streamed = Vec::new();
                encrypt_slice(&cipher(suite, 16 << 10), &pt, &mut streamed, threads, None).unwrap();
                assert_eq!(streamed, reference, "borrowed-input stream, threads={threads}");
                let mut opened = vec![0u8; out.len()];
                let k = open_into(&cipher(suite, 16 << 10), &out, &mut opened, threads).unwrap();
                assert_eq!(opened[..k], pt[..]);
                let mut back = Vec::new();
                decrypt_pipeline(&cipher(suite, 16 << 10), &mut &out[..], &mut back, threads, None).unwrap();
                assert_eq!(back, pt);
            }
        }
    }
}

fn encrypted(n: usize) -> (Vec<u8>, Vec<u8>) {
    let pt = data(n, 11);
    let opts =
        Options { profile: Profile::Hyperseal, suite: Suite::Aes256Gcm, chunk_size: 16 << 10, threads: 2 };
    (hyperseal::encrypt_with(&recipients(), opts, &pt).unwrap(), pt)
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

/// The one-shot paths split inputs of 4 MiB and more across threads: a damaged chunk in any
/// part, or the final one, must fail the whole call whatever the thread count.
#[test]
fn parallel_one_shot_refuses_a_damaged_chunk_anywhere() {
    let (ct, pt) = encrypted(9 << 20);
    for threads in [1, 2, 4] {
        assert_eq!(hyperseal::decrypt_with(&identities(), &ct, threads).unwrap(), pt);
    }
    for at in [ct.len() / 3, ct.len() / 2, ct.len() * 5 / 6, ct.len() - 5] {
        let mut bad = ct.clone();
        bad[at] ^= 1;
        for threads in [1, 2, 4] {
            let r = hyperseal::decrypt_with(&identities(), &bad, threads);
            assert!(matches!(r, Err(hyperseal::Error::ChunkAuth(_))), "byte {at}, {threads} threads: {r:?}");
        }
    }
}

/// The caller-buffer one-shots (for callers that recycle large buffers) write every byte they
/// report, whatever the buffer held before, and refuse buffers of the wrong size.
#[test]
fn into_buffers_overwrite_stale_contents_and_check_sizes() {
    for n in [0usize, 1, 70_000, 3 << 20] {
        let pt = data(n, 3);
        let opts = || Options { chunk_size: 16 << 10, threads: 2, ..Options::default() };
        let enc = hyperseal::Encryptor::with_recipients(&recipients(), opts()).unwrap();
        let len = enc.encrypted_len(n);
        let mut out = vec![0xa5u8; len + 1];
        let short = hyperseal::Encryptor::with_recipients(&recipients(), opts()).unwrap();
        assert!(matches!(
            short.encrypt_into(&pt, &mut out[..len - 1]),
            Err(hyperseal::Error::InvalidArgument(_))
        ));
        enc.encrypt_into(&pt, &mut out[..len]).unwrap();
        let ct = &out[..len];
        assert_eq!(hyperseal::decrypt(&identities(), ct).unwrap(), pt);
        let mut back = vec![0x5au8; ct.len() + 7];
        if n > 0 {
            let r = hyperseal::decrypt_into(&identities(), ct, &mut back[..n - 1], 2);
            assert!(matches!(r, Err(hyperseal::Error::InvalidArgument(_))), "{r:?}");
        }
        let k = hyperseal::decrypt_into(&identities(), ct, &mut back[..n], 2).unwrap();
        assert_eq!(back[..k], pt[..]);
    }
}
