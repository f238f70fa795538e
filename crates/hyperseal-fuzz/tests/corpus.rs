//! Replays the committed fuzz corpus (`fuzz/corpus/TARGET/*`) through the target bodies on
//! stable Rust, as part of `make test`: every crash the fuzzers found became a corpus file, so
//! this keeps each fix fixed. Running the fuzzers themselves is `make fuzz` (nightly).

use std::path::PathBuf;

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target)
}

#[test]
fn every_target_replays_its_corpus() {
    let mut summary = Vec::new();
    for t in hyperseal_fuzz::TARGETS {
        let dir = corpus_dir(t.name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: empty corpus", dir.display());
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let r = std::panic::catch_unwind(|| (t.run)(&data));
            assert!(r.is_ok(), "{} panicked on {}", t.name, f.display());
        }
        summary.push(format!("{} {}", t.name, files.len()));
    }
    println!("fuzz corpus replayed: {}", summary.join(", "));
}
