//! The library's executor (`hyperseal::exec`, crates/hyperseal/src/exec.rs) against
//! rayon's pool on the engine's shape of work: pieces of 1 MiB, each sealed in 64 KiB chunks
//! with ChaCha20-Poly1305 (aws-lc), spread over every core. Three loads: one 4 MiB job (where a
//! helper's wake-up is a large part of the time), one 64 MiB job, and four 16 MiB jobs started
//! at once from four threads (Node running four `encryptFile` calls). Minimum and median of the
//! runs, in ms.
//!
//! `cargo run --release -p hyperseal-bench --example executors [RUNS]`

use std::time::Instant;

use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};
use rayon::prelude::*;

const PIECE: usize = 1 << 20;
const CHUNK: usize = 64 << 10;

fn seal_piece(key: &LessSafeKey, buf: &mut [u8], i: usize) {
    for (j, chunk) in buf.chunks_mut(CHUNK).enumerate() {
        let mut n = [0u8; 12];
        n[..8].copy_from_slice(&((i * 64 + j) as u64).to_be_bytes());
        let tag = key
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(n), Aad::empty(), chunk)
            .expect("seal");
        let _ = std::hint::black_box(tag);
    }
}

fn job(key: &LessSafeKey, bufs: &[std::sync::Mutex<Vec<u8>>], rayon: bool) {
    let f = |i: usize| seal_piece(key, &mut bufs[i].lock().unwrap(), i);
    match rayon {
        true => (0..bufs.len()).into_par_iter().for_each(f),
        false => hyperseal::exec::for_each(bufs.len(), 0, &|i| {
            f(i);
            Ok(())
        })
        .unwrap(),
    }
}

fn time(runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[0], t[runs / 2])
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(50);
    let key = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &[7; 32]).unwrap());
    let bufs = |mib: usize| -> Vec<std::sync::Mutex<Vec<u8>>> {
        (0..mib).map(|_| std::sync::Mutex::new(vec![1u8; PIECE])).collect()
    };
    println!("cores: {}; {runs} runs each; ms, min (median)", hyperseal::available_threads());
    for (name, mib, jobs) in
        [("one 4 MiB job", 4, 1), ("one 64 MiB job", 64, 1), ("four 16 MiB jobs at once", 16, 4)]
    {
        let sets: Vec<_> = (0..jobs).map(|_| bufs(mib)).collect();
        let mut row = Vec::new();
        for rayon in [false, true] {
            job(&key, &sets[0], rayon); // warm-up: start the pool
            let (min, med) = time(runs, || {
                std::thread::scope(|s| {
                    for set in &sets[1..] {
                        s.spawn(|| job(&key, set, rayon));
                    }
                    job(&key, &sets[0], rayon);
                })
            });
            row.push(format!("{}: {min:.2} ({med:.2})", if rayon { "rayon" } else { "hyperseal::exec" }));
        }
        println!("{name:<26} {}", row.join("   "));
    }
}
