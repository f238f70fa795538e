//! The `backup` table's corpus: a generated tree about the size of a home folder (2 GiB nominal,
//! scaled by `--size-scale`): source-like text, documents and media-like incompressible files
//! from 1 KiB to 256 MiB, and 15% of the bytes as duplicated or shifted copies; then mutation
//! rounds that touch 2% of the files (inserts in the middle, appends, deletes, new files).
//! Deterministic, so every tool backs up the same bytes and a run can be repeated.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

/// xorshift64: fast, deterministic, and incompressible enough for zstd.
pub struct Gen(u64);

impl Gen {
    pub fn new(start: u64) -> Gen {
        Gen(start.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.next().to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

const WORDS: &[&str] = &[
    "fn", "let", "mut", "self", "return", "if", "else", "match", "struct", "impl", "pub", "use", "for", "in",
    "while", "loop", "Result", "Option", "Some", "None", "Ok", "Err", "String", "Vec", "u64", "usize",
    "&str", "// why", "{", "}", "(", ")", ";", "=", "==", "->", "=>", "config", "path", "bytes", "reader",
    "writer",
];

/// Source-like text: words from a small vocabulary in indented lines (zstd shrinks it ~4×).
fn text(g: &mut Gen, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 80);
    while out.len() < n {
        let indent = (g.below(4) * 4) as usize;
        out.extend(std::iter::repeat_n(b' ', indent));
        for _ in 0..1 + g.below(10) {
            out.extend_from_slice(WORDS[g.below(WORDS.len() as u64) as usize].as_bytes());
            out.push(b' ');
        }
        out.push(b'\n');
    }
    out.truncate(n);
    out
}

/// Writes the corpus under `root` for `total` bytes (nominal 2 GiB after scaling); returns the
/// files it wrote, relative to `root`.
pub fn make(root: &Path, total: u64, start: u64) -> Result<Vec<PathBuf>> {
    let mut g = Gen::new(start);
    let mut files = Vec::new();
    let mut written = 0u64;
    // 25% source-like text in small files.
    let text_goal = total / 4;
    let mut i = 0;
    while written < text_goal {
        let n = (2048 + g.below(62 << 10)).min(text_goal - written + 1) as usize;
        let rel = PathBuf::from(format!("src/m{}/f{i}.rs", i % 37));
        write(root, &rel, &text(&mut g, n))?;
        (written, i) = (written + n as u64, i + 1);
        files.push(rel);
    }
    // 60% documents and media: sizes spread over 1 KiB .. 256 MiB (scaled), log-uniform.
    let media_goal = written + total * 60 / 100;
    let largest = (total / 8).clamp(1024, 256 << 20);
    while written < media_goal {
        let exp = 10.0 + (g.below(1000) as f64 / 1000.0) * ((largest as f64).log2() - 10.0);
        let n = (2f64.powf(exp) as u64).min(media_goal - written + 1024) as usize;
        let rel = PathBuf::from(format!("docs/d{}/m{i}.bin", i % 11));
        write(root, &rel, &g.bytes(n))?;
        (written, i) = (written + n as u64, i + 1);
        files.push(rel);
    }
    // 15%: copies of earlier files, half of them shifted by a few bytes at the front.
    let copy_goal = written + total * 15 / 100;
    while written < copy_goal && !files.is_empty() {
        let from = files[g.below(files.len() as u64) as usize].clone();
        let mut bytes = fs::read(root.join(&from))?;
        if g.below(2) == 0 {
            let shift = 1 + g.below(64) as usize;
            let mut shifted = g.bytes(shift);
            shifted.append(&mut bytes);
            bytes = shifted;
        }
        let rel = PathBuf::from(format!("copies/c{i}-{}", from.file_name().unwrap().to_string_lossy()));
        write(root, &rel, &bytes)?;
        (written, i) = (written + bytes.len() as u64, i + 1);
        files.push(rel);
    }
    Ok(files)
}

fn write(root: &Path, rel: &Path, bytes: &[u8]) -> Result<()> {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap())?;
    fs::write(path, bytes)?;
    Ok(())
}

/// One mutation round over 2% of `files` (at least one): an insert in the middle, an append, a
/// delete or a new file, in turn. Updates `files`.
pub fn mutate(root: &Path, files: &mut Vec<PathBuf>, round: u64) -> Result<()> {
    let mut g = Gen::new(1000 + round);
    let count = (files.len() / 50).max(1);
    for k in 0..count {
        if files.is_empty() {
            break;
        }
        let at = g.below(files.len() as u64) as usize;
        let path = root.join(&files[at]);
        match k % 4 {
            0 => {
                let mut bytes = fs::read(&path)?;
                let mid = bytes.len() / 2;
                let n = 100 + g.below(4000) as usize;
                let insert = g.bytes(n);
                bytes.splice(mid..mid, insert);
                fs::write(&path, bytes)?;
            }
            1 => {
                let n = 100 + g.below(64 << 10) as usize;
                let extra = g.bytes(n);
                fs::OpenOptions::new().append(true).open(&path)?.write_all(&extra)?;
            }
            2 => {
                fs::remove_file(&path)?;
                files.swap_remove(at);
            }
            _ => {
                let rel = PathBuf::from(format!("new/r{round}-{k}.txt"));
                let n = 4096 + g.below(60 << 10) as usize;
                write(root, &rel, &text(&mut g, n))?;
                files.push(rel);
            }
        }
    }
    Ok(())
}

/// Bytes under `dir` (a repository's size on disk, as its files' lengths).
pub fn size_of(dir: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => size_of(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}
