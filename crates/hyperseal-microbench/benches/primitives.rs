//! @ldesign/crypto's table on hyperseal: 50-byte messages through AES modes, hashes and HMACs;
//! RSA-2048/4096 keygen, RSA-2048 encrypt/decrypt/sign/verify; PBKDF2 with and without the
//! derivation cache; and the batch crossover (sequential vs rayon) behind
//! `batch::PARALLEL_THRESHOLD`. Run: `cargo bench -p hyperseal-microbench --bench primitives`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hyperseal_toolkit::kdf::{DerivationCache, HashFn, PasswordKdf, Pbkdf2Params};
use hyperseal_toolkit::sign::{self, KeyKind, RsaPadding, SigningKey};
use hyperseal_toolkit::{aead, hash, hazmat, mac};

const MSG: &[u8; 50] = b"The quick brown fox jumps over the lazy dog 123456";

fn quick(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
}

fn symmetric(c: &mut Criterion) {
    let mut g = c.benchmark_group("aes_50B");
    quick(&mut g);
    let iv = [1u8; 16];
    for name in ["aes-128-cbc", "aes-256-cbc", "aes-256-ctr", "aes-128-ctr", "aes-256-ecb"] {
        let cipher = hazmat::Cipher::parse(name).unwrap();
        let key = vec![9u8; cipher.key_len];
        let iv = cipher.needs_iv().then_some(&iv[..]);
        g.bench_function(name, |b| b.iter(|| cipher.encrypt(&key, iv, black_box(MSG)).unwrap()));
    }
    for alg in aead::Algorithm::ALL {
        let key = aead::Key::new(alg, &vec![9u8; alg.key_len()]).unwrap();
        g.bench_function(alg.name(), |b| b.iter(|| key.seal(black_box(MSG), b"").unwrap()));
    }
    g.finish();

    let mut g = c.benchmark_group("hash_50B");
    quick(&mut g);
    for alg in hash::Algorithm::ALL {
        g.bench_function(alg.name(), |b| b.iter(|| hash::hash(alg, black_box(MSG))));
    }
    g.finish();

    let mut g = c.benchmark_group("hmac_50B");
    quick(&mut g);
    for alg in [
        mac::Algorithm::LegacyHmacMd5,
        mac::Algorithm::HmacSha256,
        mac::Algorithm::HmacSha512,
        mac::Algorithm::HmacSm3,
    ] {
        g.bench_function(alg.name(), |b| {
            b.iter(|| mac::sign(alg, b"0123456789abcdef0123456789abcdef", black_box(MSG)))
        });
    }
    g.finish();
}

fn rsa(c: &mut Criterion) {
    let mut g = c.benchmark_group("rsa");
    g.sample_size(10).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_secs(5));
    g.bench_function("keygen_2048", |b| b.iter(|| SigningKey::generate(KeyKind::Rsa2048).unwrap()));
    g.measurement_time(Duration::from_secs(15));
    g.bench_function("keygen_4096", |b| b.iter(|| SigningKey::generate(KeyKind::Rsa4096).unwrap()));
    g.finish();

    let sk_pem = sign::generate(KeyKind::Rsa2048).unwrap();
    let sk = SigningKey::from_pem(&sk_pem).unwrap();
    let vk = sk.verifying_key().unwrap();
    let enc = sign::oaep::RsaOaepPublicKey::from_spki_der(vk.to_spki_der()).unwrap();
    let dec = sign::oaep::RsaOaepPrivateKey::from_pem(&sk_pem).unwrap();
    let ct = enc.encrypt(MSG, b"").unwrap();
    let sig = sk.sign(MSG).unwrap();
    let sig1 = sk.sign_with(MSG, RsaPadding::Pkcs1v15).unwrap();
    let mut g = c.benchmark_group("rsa2048_50B");
    quick(&mut g);
    g.bench_function("encrypt_oaep", |b| b.iter(|| enc.encrypt(black_box(MSG), b"").unwrap()));
    g.bench_function("decrypt_oaep", |b| b.iter(|| dec.decrypt(black_box(&ct), b"").unwrap()));
    g.bench_function("sign_pss", |b| b.iter(|| sk.sign(black_box(MSG)).unwrap()));
    g.bench_function("verify_pss", |b| b.iter(|| vk.verify(black_box(MSG), &sig).unwrap()));
    g.bench_function("sign_pkcs1", |b| {
        b.iter(|| sk.sign_with(black_box(MSG), RsaPadding::Pkcs1v15).unwrap())
    });
    g.bench_function("verify_pkcs1", |b| {
        b.iter(|| vk.verify_with(black_box(MSG), &sig1, RsaPadding::Pkcs1v15).unwrap())
    });
    g.finish();
}

fn kdf_cache(c: &mut Criterion) {
    // @ldesign/crypto used PBKDF2 with 100,000 iterations and a 100-entry, 5-minute cache.
    let kdf = PasswordKdf::Pbkdf2(Pbkdf2Params { hash: HashFn::Sha256, iterations: 100_000 });
    let salt = [5u8; 16];
    let cache = DerivationCache::default();
    let mut g = c.benchmark_group("password_encrypt_50B");
    g.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(3));
    g.bench_function("pbkdf2_100k_no_cache", |b| {
        b.iter(|| {
            let k = kdf.derive(b"user-password", &salt, 32).unwrap();
            aead::seal(aead::Algorithm::Aes256Gcm, &k, black_box(MSG), b"").unwrap()
        })
    });
    g.bench_function("pbkdf2_100k_cache_hit", |b| {
        b.iter(|| {
            let k = cache.get_or_derive(&kdf, b"user-password", &salt, 32).unwrap();
            aead::seal(aead::Algorithm::Aes256Gcm, &k, black_box(MSG), b"").unwrap()
        })
    });
    g.finish();
}

fn batch_crossover(c: &mut Criterion) {
    let key = aead::Key::new(aead::Algorithm::Aes256Gcm, &[3u8; 32]).unwrap();
    let mut g = c.benchmark_group("batch_aes256gcm_1KiB_items");
    quick(&mut g);
    for n in [4usize, 16, 64, 256, 1024] {
        let msgs: Vec<Vec<u8>> = (0..n).map(|_| vec![1u8; 1024]).collect();
        g.throughput(Throughput::Bytes((n * 1024) as u64));
        g.bench_with_input(BenchmarkId::new("sequential", n), &msgs, |b, m| {
            b.iter(|| m.iter().map(|x| key.seal(x, b"").unwrap()).collect::<Vec<_>>())
        });
        // On the library's executor, as `batch` runs above its threshold.
        g.bench_with_input(BenchmarkId::new("executor", n), &msgs, |b, m| {
            b.iter(|| {
                let out: Vec<std::sync::Mutex<Vec<u8>>> = m.iter().map(|_| Default::default()).collect();
                let _ = hyperseal::exec::for_each(m.len(), 0, &|i| {
                    *out[i].lock().unwrap() = key.seal(&m[i], b"").unwrap();
                    Ok(())
                });
                out
            })
        });
    }
    g.finish();
}

criterion_group!(benches, symmetric, rsa, kdf_cache, batch_crossover);
criterion_main!(benches);
