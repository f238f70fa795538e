//! SM4-CBC encryption (serial: one block's latency per 16 bytes) against
//! `openssl speed -evp sm4-cbc` in the same run, alternating the two so that
//! load changes hit both. Figures are MB/s (10^6 B/s) of CPU time, the
//! divisor `openssl speed` uses without `-elapsed`, on 16 KiB buffers (its
//! largest default size).
//!
//! `cargo run --release -p sm4-simd --example cbc_speed [rounds]`
use sm4_simd::cipher::{Array, BlockModeEncrypt, InnerIvInit};
use sm4_simd::{Backend, Sm4};
use std::hint::black_box;
use std::process::Command;

const LEN: usize = 16 * 1024;

/// Nanoseconds this thread has spent on a CPU (Linux).
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Best of 3 samples of >= 1 s CPU time each, MB/s.
fn ours(c: &Sm4) -> f64 {
    let mut buf = vec![0x5au8; LEN];
    let mut run = || {
        let (b, _) = Array::slice_as_chunks_mut(&mut buf);
        cbc::Encryptor::<Sm4>::inner_iv_init(c.clone(), &[7u8; 16].into()).encrypt_blocks(black_box(b));
    };
    run();
    (0..3)
        .map(|_| {
            let t = cpu_ns();
            let mut n = 0usize;
            while cpu_ns() - t < 1_000_000_000 {
                run();
                n += 1;
            }
            (LEN * n) as f64 / ((cpu_ns() - t) as f64 / 1e9) / 1e6
        })
        .fold(0.0, f64::max)
}

/// `openssl speed -evp sm4-cbc` at 16 KiB, MB/s (its figure is in 1000s of B/s).
fn openssl() -> Option<f64> {
    let out = Command::new("openssl")
        .args(["speed", "-evp", "sm4-cbc", "-bytes", &LEN.to_string(), "-seconds", "3", "-mr"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // Machine-readable line: "+F:<n>:<name>:<rate for each size>".
    let line = text.lines().find(|l| l.starts_with("+F:"))?;
    line.rsplit(':').next()?.trim().parse::<f64>().ok().map(|v| v / 1e6)
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let backends: Vec<Backend> = Backend::ALL.into_iter().filter(|b| b.is_supported()).collect();
    println!("SM4-CBC encrypt, 16 KiB, MB/s of CPU time; {rounds} alternating rounds");
    for r in 0..rounds {
        let o = openssl();
        let mut line = format!("round {r}: openssl {:>6.1}", o.unwrap_or(f64::NAN));
        for &b in &backends {
            let c = Sm4::with_backend(b, &[1; 16]).unwrap();
            let v = ours(&c);
            line += &format!("  {b} {v:>6.1}");
            if let Some(o) = o {
                line += &format!(" ({:.2}x)", v / o);
            }
        }
        println!("{line}");
    }
}
