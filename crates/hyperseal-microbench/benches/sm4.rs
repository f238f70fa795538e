//! Throughput on 1 MiB buffers, one thread: every supported backend of this
//! crate plus the RustCrypto `sm4` crate as the peer, through the same mode
//! crates. Run: `cargo bench -p hyperseal-microbench --bench sm4`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sm4_simd::aes_gcm::{AeadInOut, AesGcm};
use sm4_simd::cipher::{
    consts::{U12, U16},
    Array, BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser,
    InnerIvInit, KeyInit, StreamCipher,
};
use sm4_simd::{Backend, Sm4};
use std::hint::black_box;
use std::time::Duration;

const LEN: usize = 1 << 20;
const KEY: [u8; 16] = [0x42; 16];
const IV: [u8; 16] = [0x24; 16];

/// Any SM4 implementation with the traits the modes need.
trait Impl: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> + Clone {}
impl<T: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> + Clone> Impl for T {}

fn run_all<C: Impl>(c: &mut Criterion, name: &str, cipher: C) {
    let mut buf = vec![0x5au8; LEN];
    let mut group = c.benchmark_group("sm4");
    group.throughput(Throughput::Bytes(LEN as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));

    group.bench_function(BenchmarkId::new("ecb-enc", name), |b| {
        b.iter(|| {
            let (blocks, _) = Array::slice_as_chunks_mut(&mut buf);
            cipher.encrypt_blocks(black_box(blocks));
        })
    });
    group.bench_function(BenchmarkId::new("cbc-enc", name), |b| {
        b.iter(|| {
            let (blocks, _) = Array::slice_as_chunks_mut(&mut buf);
            cbc::Encryptor::<C>::inner_iv_init(cipher.clone(), &IV.into()).encrypt_blocks(black_box(blocks));
        })
    });
    group.bench_function(BenchmarkId::new("cbc-dec", name), |b| {
        b.iter(|| {
            let (blocks, _) = Array::slice_as_chunks_mut(&mut buf);
            cbc::Decryptor::<C>::inner_iv_init(cipher.clone(), &IV.into()).decrypt_blocks(black_box(blocks));
        })
    });
    group.bench_function(BenchmarkId::new("ctr", name), |b| {
        b.iter(|| {
            let core = ctr::CtrCore::<C, ctr::flavors::Ctr128BE>::inner_iv_init(cipher.clone(), &IV.into());
            ctr::Ctr128BE::from_core(core).apply_keystream(black_box(&mut buf));
        })
    });
    let gcm = AesGcm::<C, U12>::from(cipher.clone());
    group.bench_function(BenchmarkId::new("gcm-seal", name), |b| {
        b.iter(|| gcm.encrypt_inout_detached(&[7u8; 12].into(), b"", black_box(&mut buf[..]).into()).unwrap())
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    eprintln!("sm4-simd default backend: {}", sm4_simd::backend_name());
    for backend in Backend::ALL.into_iter().rev() {
        match Sm4::with_backend(backend, &KEY) {
            Some(cipher) => run_all(c, backend.name(), cipher),
            None => eprintln!("backend {backend} not supported here, skipped"),
        }
    }
    run_all(c, "rustcrypto-sm4", sm4::Sm4::new(&KEY.into()));
}

criterion_group!(sm4_benches, benches);
criterion_main!(sm4_benches);
