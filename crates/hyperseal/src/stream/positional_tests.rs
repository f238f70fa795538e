//! The positional engine against the ordered stream, byte for byte with a fixed key, at several
//! thread counts; the lowest failing chunk
//! is the one reported; a file shorter than announced is an error, not zeros.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

use zeroize::Zeroizing;

use super::*;
use crate::format::Suite;
use crate::stream::{stream, ChunkCipher, Input};

const CHUNK: usize = 16 << 10;

fn cipher() -> ChunkCipher {
    ChunkCipher::new(Suite::ChaCha20Poly1305, CHUNK, &Zeroizing::new([7u8; 32])).unwrap()
}

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 131 + i / 1031) as u8).collect()
}

fn file_with(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> File {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    File::options().read(true).write(true).open(path).unwrap()
}

fn empty(dir: &tempfile::TempDir, name: &str) -> File {
    file_with(dir, name, &[])
}

/// Runs the positional engine from `input[at..]` into `out` after a 7-byte "header".
fn positional(
    dir: Dir,
    input: &File,
    at: u64,
    len: u64,
    out: &File,
    threads: usize,
) -> Result<Vec<u8>, Error> {
    let name = |e: io::Error| e;
    let files =
        Files { input, in_at: at, in_len: len, output: out, out_at: 7, output_error: &name, range: None };
    run(&cipher(), dir, &files, threads, None)?;
    let mut all = std::fs::read(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(out))).unwrap();
    all.drain(..7);
    Ok(all)
}

fn streamed(dir: Dir, input: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    stream(&cipher(), dir, Input::Slice(input), &mut out, 1, None)?;
    Ok(out)
}

#[test]
fn same_bytes_as_the_stream_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let piece = PIECE_BYTES;
    for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, piece - 1, piece, piece + 1, 3 * piece + CHUNK + 5] {
        let plain = data(n);
        let sealed = streamed(Dir::Seal, &plain).unwrap();
        // The plaintext sits after 3 bytes of something else: the run starts at its offset.
        let mut prefixed = vec![9u8; 3];
        prefixed.extend_from_slice(&plain);
        let input = file_with(&tmp, "in", &prefixed);
        let ct_file = file_with(&tmp, "ct", &[]);
        {
            for threads in [1, 2, 4] {
                ct_file.set_len(0).unwrap();
                ct_file.write_all_at(&[0u8; 7], 0).unwrap();
                let got = positional(Dir::Seal, &input, 3, n as u64, &ct_file, threads).unwrap();
                assert!(
                    got == sealed,
                    "seal {n} bytes, {threads} threads: {} bytes, {} expected",
                    got.len(),
                    sealed.len()
                );
                let pt_file = empty(&tmp, "pt");
                (&pt_file).write_all(&[0u8; 7]).unwrap();
                let opened =
                    positional(Dir::Open, &ct_file, 7, sealed.len() as u64, &pt_file, threads).unwrap();
                assert!(opened == plain, "open {n} bytes, {threads} threads");
            }
        }
    }
}

#[test]
fn the_lowest_damaged_chunk_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = data(5 * PIECE_BYTES);
    let mut sealed = streamed(Dir::Seal, &plain).unwrap();
    let full = CHUNK + TAG_LEN;
    // Damage chunk 200 (the fourth piece) and chunk 70 (the second): 70 must be named.
    sealed[200 * full + 5] ^= 1;
    sealed[70 * full + 9] ^= 1;
    let ct = file_with(&tmp, "ct", &sealed);
    {
        for threads in [1, 2, 4] {
            let out = empty(&tmp, "out");
            let e = positional(Dir::Open, &ct, 0, sealed.len() as u64, &out, threads).unwrap_err();
            assert!(matches!(e, Error::ChunkAuth(70)), "{e:?} ({threads} threads)");
        }
    }
}

#[test]
fn a_cut_at_a_chunk_boundary_is_a_truncation() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = data(3 * PIECE_BYTES);
    let sealed = streamed(Dir::Seal, &plain).unwrap();
    let cut = 100 * (CHUNK + TAG_LEN);
    let ct = file_with(&tmp, "ct", &sealed[..cut]);
    {
        let out = empty(&tmp, "out");
        let e = positional(Dir::Open, &ct, 0, cut as u64, &out, 4).unwrap_err();
        assert!(matches!(e, Error::Truncated(99)), "{e:?}");
    }
}

#[test]
fn an_input_shorter_than_announced_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let input = file_with(&tmp, "in", &data(2 * PIECE_BYTES));
    {
        let out = empty(&tmp, "out");
        let e = positional(Dir::Seal, &input, 0, 3 * PIECE_BYTES as u64, &out, 2).unwrap_err();
        assert!(e.to_string().contains("changed size"), "{e}");
    }
}

#[test]
fn a_range_opens_to_exactly_its_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let n = 3 * PIECE_BYTES + 777;
    let plain = data(n);
    let sealed = streamed(Dir::Seal, &plain).unwrap();
    let ct = file_with(&tmp, "ct", &sealed);
    let c = CHUNK as u64;
    let ranges = [
        (0, 1),
        (5, c),
        (c - 3, 7),
        (c, c),
        (PIECE_BYTES as u64 - 1, 2 * PIECE_BYTES as u64),
        (n as u64 - 10, 100),
        (0, n as u64),
    ];
    for (offset, take) in ranges {
        for threads in [1, 3] {
            let out = empty(&tmp, "out");
            let name = |e: io::Error| e;
            let (start, end) = (offset / c, (offset + take).min(n as u64).div_ceil(c));
            let take_now = (offset + take).min(n as u64) - offset;
            let range = Range { start, end, skip: offset % c, take: take_now };
            let files = Files {
                input: &ct,
                in_at: 0,
                in_len: sealed.len() as u64,
                output: &out,
                out_at: 0,
                output_error: &name,
                range: Some(range),
            };
            run(&cipher(), Dir::Open, &files, threads, None).unwrap();
            let got =
                std::fs::read(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&out))).unwrap();
            let want = &plain[offset as usize..(offset + take_now) as usize];
            assert!(
                got == want,
                "range {offset}+{take} on {threads} threads: {} bytes, {} expected",
                got.len(),
                want.len()
            );
        }
    }
}
