//! Cycles per block and per round of SM4-CBC encryption (a serial chain: the
//! latency of 32 rounds) on each backend, through `modes::cbc_encrypt_nopad`
//! on 16 KiB buffers. Run it under `perf stat -e cycles,instructions` for
//! core cycles; without perf it prints CPU nanoseconds per block.
//!
//! `cargo run --release -p sm4-simd --example cbc_cycles [backend] [MiB]`
use sm4_simd::cipher::{Array, BlockModeEncrypt, InnerIvInit};
use sm4_simd::{modes, Backend, Sm4};
use std::hint::black_box;

/// Nanoseconds this thread has spent on a CPU (Linux): the machine may be
/// shared, and wall time would count the time others ran.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let backend = args.get(1).and_then(|s| Backend::from_name(s)).unwrap_or_else(Backend::best);
    let mib: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
    let mut buf = vec![0x5au8; 16 << 10];
    let blocks = (mib << 20) / 16;
    let t = cpu_ns();
    if backend == sm4_simd::default_backend() {
        // The crate's own CBC path (the chain kept in registers where it can).
        for _ in 0..(mib << 20) / buf.len() {
            modes::cbc_encrypt_nopad(&[1; 16], &[7; 16], black_box(&mut buf)).unwrap();
        }
    } else {
        let c = Sm4::with_backend(backend, &[1; 16]).expect("backend not supported here");
        for _ in 0..(mib << 20) / buf.len() {
            let (b, _) = Array::slice_as_chunks_mut(&mut buf);
            cbc::Encryptor::<Sm4>::inner_iv_init(c.clone(), &[7u8; 16].into()).encrypt_blocks(black_box(b));
        }
    }
    let ns = (cpu_ns() - t) as f64 / blocks as f64;
    println!("{backend}: {blocks} blocks, {ns:.1} ns/block, {:.1} MB/s", 16e3 / ns);
}
