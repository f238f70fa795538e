//! Replays the committed fuzz corpus (`fuzz/corpus/TARGET/*`) through the target bodies on
//! stable Rust, as part of `make test`: every crash the fuzzers found became a corpus file, so
//! this keeps each fix fixed. Running the fuzzers themselves is `make fuzz` (nightly).
//!
//! Each input runs under the fuzzers' memory budget (`-malloc_limit_mb=64`): a counting global
//! allocator records the peak of live heap bytes while one input runs, and an input whose peak
//! passes 64 MiB fails the test, as it would stop the fuzzer.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The fuzzers' per-input memory budget.
const BUDGET: usize = 64 << 20;

/// Counts live heap bytes (every thread: the decrypt paths run on several) and their peak.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes straight to `System` with the caller's arguments; the counters are
// plain atomics and allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            PEAK.fetch_max(LIVE.fetch_add(l.size(), Relaxed) + l.size(), Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(l);
        if !p.is_null() {
            PEAK.fetch_max(LIVE.fetch_add(l.size(), Relaxed) + l.size(), Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            if new >= l.size() {
                let grew = new - l.size();
                PEAK.fetch_max(LIVE.fetch_add(grew, Relaxed) + grew, Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target)
}

/// Runs `f`; returns whether it panicked and the peak of heap bytes it added.
fn measured(f: impl FnOnce() + std::panic::UnwindSafe) -> (bool, usize) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let ok = std::panic::catch_unwind(f).is_ok();
    (ok, PEAK.load(Relaxed).saturating_sub(base))
}

// One test: the counters are global, so nothing else may allocate while an input is measured.
#[test]
fn every_target_replays_its_corpus() {
    // The measure itself: an input that allocates past the budget is caught, one within is not.
    let (ok, peak) = measured(|| drop(std::hint::black_box(vec![1u8; BUDGET + 1])));
    assert!(ok && peak > BUDGET, "peak {peak}");
    let (ok, peak) = measured(|| drop(std::hint::black_box(vec![1u8; 1 << 20])));
    assert!(ok && peak < BUDGET, "peak {peak}");

    let mut summary = Vec::new();
    let mut failures = Vec::new();
    for t in hyperseal_fuzz::TARGETS {
        let dir = corpus_dir(t.name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: empty corpus", dir.display());
        let mut most = 0;
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let (ok, peak) = measured(|| (t.run)(&data));
            most = most.max(peak);
            if !ok {
                failures.push(format!("{} panicked on {}", t.name, f.display()));
            } else if peak > BUDGET {
                failures.push(format!("{} peaked at {} MiB on {}", t.name, peak >> 20, f.display()));
            }
        }
        summary.push(format!("{} {} (peak {} KiB)", t.name, files.len(), most >> 10));
    }
    println!("fuzz corpus replayed: {}", summary.join(", "));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
