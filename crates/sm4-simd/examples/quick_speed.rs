//! Quick, criterion-free throughput check per backend, in MB/s of *CPU
//! time* (like `openssl speed`). Release build:
//! `cargo run --release -p sm4-simd --example quick_speed`
use sm4_simd::cipher::{Array, BlockCipherEncrypt};
use sm4_simd::{Backend, Sm4};

/// Nanoseconds this thread has spent on a CPU (Linux), so that figures are
/// comparable with `openssl speed` (which divides by CPU time) on a busy box.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

struct Timer(u64);
impl Timer {
    fn start() -> Self {
        Timer(cpu_ns())
    }
    fn mb_per_s(&self, bytes: usize) -> f64 {
        bytes as f64 / ((cpu_ns() - self.0) as f64 / 1e9) / 1e6
    }
}

fn main() {
    let mut buf = vec![0u8; 1 << 20];
    for b in Backend::ALL {
        let Some(c) = Sm4::with_backend(b, &[1; 16]) else { continue };
        // Serial chain: the latency of one block (what CBC encryption sees).
        let mut blk = Array::from([0u8; 16]);
        let n = 200_000;
        let t = Timer::start();
        for _ in 0..n {
            c.encrypt_block(&mut blk);
        }
        let serial = t.mb_per_s(n * 16);
        // Bulk ECB: throughput of the wide path.
        let reps = 32;
        let t = Timer::start();
        for _ in 0..reps {
            let (blocks, _) = Array::slice_as_chunks_mut(&mut buf);
            c.encrypt_blocks(blocks);
        }
        let bulk = t.mb_per_s(reps * buf.len());
        println!("{:6}  serial {serial:8.1} MB/s   ecb {bulk:8.1} MB/s  {:?}", b.name(), blk[0]);
    }
}
