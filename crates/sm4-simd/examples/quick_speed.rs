//! Quick, criterion-free throughput table per backend and mode on 1 MiB
//! buffers, in MB/s (10^6 B/s) of *thread CPU time* — the same divisor
//! `openssl speed` uses — so figures stay comparable on a shared, busy box.
//!
//! `cargo run --release -p sm4-simd --example quick_speed`
use sm4_simd::aes_gcm::{AeadInOut, AesGcm};
use sm4_simd::cipher::{
    consts::{U12, U16},
    Array, BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser,
    InnerIvInit, KeyInit, StreamCipher,
};
use sm4_simd::{Backend, Sm4};
use std::hint::black_box;

/// Nanoseconds this thread has spent on a CPU (Linux).
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Best of 5 samples, in MB/s of CPU time. Each sample runs until at least
/// 300 ms of CPU time has accumulated, because on some kernels the counter
/// only advances per scheduler tick (4 ms).
fn rate(bytes: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up
    (0..5)
        .map(|_| {
            let t = cpu_ns();
            let mut n = 0usize;
            while cpu_ns() - t < 300_000_000 {
                f();
                n += 1;
            }
            (bytes * n) as f64 / ((cpu_ns() - t) as f64 / 1e9) / 1e6
        })
        .fold(0.0, f64::max)
}

trait Impl: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> + Clone {}
impl<T: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> + Clone> Impl for T {}

fn row<C: Impl>(name: &str, c: C) {
    const LEN: usize = 1 << 20;
    let mut buf = vec![0x5au8; LEN];
    let iv = [7u8; 16];
    let ecb = rate(LEN, || {
        let (b, _) = Array::slice_as_chunks_mut(&mut buf);
        c.encrypt_blocks(black_box(b));
    });
    let cbc_enc = rate(LEN / 4, || {
        let (b, _) = Array::slice_as_chunks_mut(&mut buf[..LEN / 4]);
        cbc::Encryptor::<C>::inner_iv_init(c.clone(), &iv.into()).encrypt_blocks(black_box(b));
    });
    let cbc_dec = rate(LEN, || {
        let (b, _) = Array::slice_as_chunks_mut(&mut buf);
        cbc::Decryptor::<C>::inner_iv_init(c.clone(), &iv.into()).decrypt_blocks(black_box(b));
    });
    let ctr = rate(LEN, || {
        let core = ctr::CtrCore::<C, ctr::flavors::Ctr128BE>::inner_iv_init(c.clone(), &iv.into());
        ctr::Ctr128BE::from_core(core).apply_keystream(black_box(&mut buf));
    });
    let gcm_c = AesGcm::<C, U12>::from(c.clone());
    let gcm = rate(LEN, || {
        black_box(gcm_c.encrypt_inout_detached(&[1u8; 12].into(), b"", (&mut buf[..]).into()).unwrap());
    });
    println!("{name:15} {ecb:8.0} {cbc_enc:8.0} {cbc_dec:8.0} {ctr:8.0} {gcm:8.0}");
}

fn main() {
    println!("default backend: {}", sm4_simd::backend_name());
    println!(
        "{:15} {:>8} {:>8} {:>8} {:>8} {:>8}   (MB/s, CPU time, 1 MiB)",
        "impl", "ecb", "cbc-enc", "cbc-dec", "ctr", "gcm"
    );
    for b in Backend::ALL.into_iter().rev() {
        if let Some(c) = Sm4::with_backend(b, &[1; 16]) {
            row(b.name(), c);
        }
    }
    row("rustcrypto-sm4", sm4::Sm4::new(&[1u8; 16].into()));
    let mut buf = vec![0u8; 1 << 20];
    let ctr_fn = rate(buf.len(), || sm4_simd::modes::ctr_apply(&[1; 16], &[2; 16], black_box(&mut buf)));
    println!("modes::ctr_apply ({}): {ctr_fn:.0} MB/s", sm4_simd::backend_name());
}
