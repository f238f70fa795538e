//! GB/T 32907-2016 Appendix A vectors, run on every backend this CPU supports.

use sm4_simd::cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt};
use sm4_simd::{Backend, Sm4};

const KEY: [u8; 16] = hex16("0123456789abcdeffedcba9876543210");
const CT1: [u8; 16] = hex16("681edf34d206965e86b3e94f536e4246");
const CT_1M: [u8; 16] = hex16("595298c7c6fd271f0402f804c33d3f66");

const fn hex16(s: &str) -> [u8; 16] {
    let b = s.as_bytes();
    let mut out = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        out[i] = (nib(b[2 * i]) << 4) | nib(b[2 * i + 1]);
        i += 1;
    }
    out
}

const fn nib(c: u8) -> u8 {
    if c <= b'9' {
        c - b'0'
    } else {
        c - b'a' + 10
    }
}

fn backends() -> Vec<Backend> {
    let (ok, skipped): (Vec<_>, Vec<_>) = Backend::ALL.into_iter().partition(|b| b.is_supported());
    if !skipped.is_empty() {
        eprintln!("note: backends not supported on this CPU, skipped: {skipped:?}");
    }
    ok
}

#[test]
fn example_1_single_block() {
    for b in backends() {
        let c = Sm4::with_backend(b, &KEY).unwrap();
        let mut blk = Array::from(KEY);
        c.encrypt_block(&mut blk);
        assert_eq!(<[u8; 16]>::from(blk), CT1, "{b}");
        c.decrypt_block(&mut blk);
        assert_eq!(<[u8; 16]>::from(blk), KEY, "{b}");
    }
}

#[test]
fn example_1_every_batch_position() {
    // The same block at every position of batches of 1..=40 blocks exercises
    // the wide paths, tails and lane transposes of each backend.
    for b in backends() {
        let c = Sm4::with_backend(b, &KEY).unwrap();
        for n in 1..=40 {
            let mut blocks = vec![Array::from(KEY); n];
            c.encrypt_blocks(&mut blocks);
            assert!(blocks.iter().all(|x| <[u8; 16]>::from(*x) == CT1), "{b} n={n}");
            c.decrypt_blocks(&mut blocks);
            assert!(blocks.iter().all(|x| <[u8; 16]>::from(*x) == KEY), "{b} n={n}");
        }
    }
}

/// Example 2: encrypt the plaintext 1,000,000 times. Backends run on their own
/// threads (this is the slow test in unoptimised builds). Decrypting back is
/// only done in optimised builds to keep `make test` fast.
#[test]
fn example_2_million_iterations() {
    let handles: Vec<_> = backends()
        .into_iter()
        .map(|b| {
            std::thread::spawn(move || {
                let c = Sm4::with_backend(b, &KEY).unwrap();
                let mut blk = Array::from(KEY);
                for _ in 0..1_000_000 {
                    c.encrypt_block(&mut blk);
                }
                assert_eq!(<[u8; 16]>::from(blk), CT_1M, "{b}");
                if !cfg!(debug_assertions) {
                    for _ in 0..1_000_000 {
                        c.decrypt_block(&mut blk);
                    }
                    assert_eq!(<[u8; 16]>::from(blk), KEY, "{b}");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("backend thread panicked");
    }
}
