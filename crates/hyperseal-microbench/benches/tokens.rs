//! Token seal+open latency at FISE's payload sizes (its table: 100, 500, 1000 chars,
//! 4.9 KB, 9.8 KB, 48.8 KB). Run pinned to one core:
//! `taskset -c 0 cargo bench -p hyperseal-microbench --bench tokens`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hyperseal_toolkit::token::{self, KeyRing, Suite, TokenKey};

const SIZES: [(&str, usize); 6] = [
    ("100ch", 100),
    ("500ch", 500),
    ("1000ch", 1000),
    ("4.9KB", 5000),
    ("9.8KB", 10_000),
    ("48.8KB", 50_000),
];

fn bench(c: &mut Criterion) {
    for (suite, sname) in
        [(Suite::XChaCha20Poly1305, "xchacha20poly1305"), (Suite::Aes256GcmSiv, "aes256gcmsiv")]
    {
        let key = TokenKey::from_bytes(&[7u8; 32]).with_suite(suite);
        let ring = KeyRing::new().with(TokenKey::from_bytes(&[7u8; 32]));
        let mut g = c.benchmark_group(format!("token/{sname}"));
        g.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
        for (label, n) in SIZES {
            let pt = vec![b'a'; n];
            g.throughput(Throughput::Bytes(n as u64));
            g.bench_with_input(BenchmarkId::new("seal+open", label), &pt, |b, pt| {
                b.iter(|| {
                    let t = token::seal(&key, black_box(pt), b"aad", None);
                    token::open(&ring, black_box(&t), b"aad").unwrap()
                })
            });
            if suite == Suite::XChaCha20Poly1305 {
                let t = token::seal(&key, &pt, b"aad", None);
                g.bench_with_input(BenchmarkId::new("seal", label), &pt, |b, pt| {
                    b.iter(|| token::seal(&key, black_box(pt), b"aad", None))
                });
                g.bench_with_input(BenchmarkId::new("open", label), &t, |b, t| {
                    b.iter(|| token::open(&ring, black_box(t), b"aad").unwrap())
                });
            }
        }
        g.finish();
    }
}

/// Where a 48.8 KB token's time goes: the raw AEAD pass and the base64 passes.
fn components(c: &mut Criterion) {
    use hyperseal_toolkit::aead;
    let mut g = c.benchmark_group("token_components_50000B");
    g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    let data = vec![7u8; 50_000];
    let enc = base64_simd::URL_SAFE_NO_PAD.encode_to_string(&data);
    g.bench_function("base64_simd_encode", |b| {
        b.iter(|| base64_simd::URL_SAFE_NO_PAD.encode_to_string(black_box(&data)))
    });
    g.bench_function("base64_simd_decode", |b| {
        b.iter(|| base64_simd::URL_SAFE_NO_PAD.decode_to_vec(black_box(&enc)).unwrap())
    });
    {
        use base64::Engine as _;
        let e = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        g.bench_function("base64_scalar_encode", |b| b.iter(|| e.encode(black_box(&data))));
    }
    for alg in [aead::Algorithm::XChaCha20Poly1305, aead::Algorithm::Aes256GcmSiv] {
        // A fixed nonce measures the cipher alone (a benchmark's output is thrown away).
        let k = aead::LessSafeKey::new(alg, &[1u8; 32]).unwrap();
        let nonce = vec![0u8; alg.nonce_len()];
        let mut buf = data.clone();
        g.bench_function(format!("{}_in_place", alg.name()), |b| {
            b.iter(|| k.seal_in_place_detached(&nonce, b"", black_box(&mut buf)).unwrap())
        });
    }
    // `open` returns `Zeroizing<Vec<u8>>`; zeroize 1.9 wipes it with byte-wise volatile writes
    // when the caller drops it, and that drop is inside the seal+open figures above.
    g.bench_function("zeroizing_vec_drop", |b| {
        b.iter_batched(|| zeroize::Zeroizing::new(vec![1u8; 50_000]), drop, criterion::BatchSize::SmallInput)
    });
    g.finish();
}

criterion_group!(benches, bench, components);
criterion_main!(benches);
