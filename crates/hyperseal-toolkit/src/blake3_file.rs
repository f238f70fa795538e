//! BLAKE3 of a whole file on every core, on the library's one executor (`hyperseal::exec`).
//!
//! BLAKE3 is a tree: the file is cut into [`PIECE`]-byte pieces, each a whole subtree because a
//! piece is a power-of-two number of BLAKE3's 1 KiB chunks, so the pieces are hashed at the same
//! time (each from its own offset, `HasherExt::set_input_offset`) and their chaining values are
//! merged the way BLAKE3's left-full tree splits the input (`left_subtree_len`). The result is
//! `blake3::hash` of the file, bit for bit (tests: against the one-shot hash, on both sides of
//! every split that matters).
//!
//! Each piece is read with a positional read (`pread`) rather than from a memory map: a file that
//! another process truncates or rewrites while it is hashed then gives an I/O error or a wrong
//! hash, never a `SIGBUS`. And not with `blake3`'s `update_mmap_rayon`: that runs on rayon's
//! pool, and the workspace has one thread design.

use std::fs::File;
use std::sync::Mutex;

use blake3::hazmat::{left_subtree_len, merge_subtrees_non_root, merge_subtrees_root};
use blake3::hazmat::{ChainingValue, HasherExt, Mode};

use crate::Result;

/// Bytes per piece: 1024 chunks of 1 KiB (a power of two, so a piece is a whole subtree), large
/// enough that a read per piece costs nothing next to hashing it.
const PIECE: u64 = 1 << 20;
/// Pieces per job on the executor: each job reads into one buffer it allocates once, so a large
/// file costs one allocation per 8 MiB, and there are still many jobs to share between threads.
const PIECES_PER_JOB: usize = 8;

/// The BLAKE3 hash of the `len` bytes of `file` (read from offset 0), at least two pieces long.
pub(crate) fn hash(file: &File, len: u64) -> Result<[u8; 32]> {
    assert!(len > PIECE, "a parallel hash needs at least two pieces");
    let pieces = len.div_ceil(PIECE) as usize;
    let cvs: Vec<Mutex<Option<std::io::Result<ChainingValue>>>> =
        (0..pieces).map(|_| Mutex::new(None)).collect();
    let _ = hyperseal::exec::for_each(pieces.div_ceil(PIECES_PER_JOB), 0, &|job| {
        let mut buf = vec![0u8; PIECE as usize];
        let first = job * PIECES_PER_JOB;
        for (i, slot) in cvs.iter().enumerate().skip(first).take(PIECES_PER_JOB) {
            let at = i as u64 * PIECE;
            let piece = &mut buf[..PIECE.min(len - at) as usize];
            let cv = hyperseal::exec::read_exact_at(file, piece, at).map(|()| {
                let mut h = blake3::Hasher::new();
                h.set_input_offset(at);
                h.update(piece);
                h.finalize_non_root()
            });
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(cv);
        }
        Ok(())
    });
    let mut done = Vec::with_capacity(pieces);
    for cv in cvs {
        done.push(cv.into_inner().unwrap_or_else(|p| p.into_inner()).expect("every piece ran")?);
    }
    let (left, right) = split(&done, len);
    Ok(*merge_subtrees_root(&left, &right, Mode::Hash).as_bytes())
}

/// The chaining values of the left and right subtrees of the `len` bytes whose pieces have the
/// chaining values `cvs` (at least two pieces).
fn split(cvs: &[ChainingValue], len: u64) -> (ChainingValue, ChainingValue) {
    // Every split point of a tree over more than one piece falls on a piece boundary: the left
    // side is the largest power-of-two number of chunks below `len`, a multiple of PIECE.
    let left = left_subtree_len(len);
    let k = (left / PIECE) as usize;
    (subtree(&cvs[..k], left), subtree(&cvs[k..], len - left))
}

fn subtree(cvs: &[ChainingValue], len: u64) -> ChainingValue {
    if cvs.len() == 1 {
        return cvs[0];
    }
    let (left, right) = split(cvs, len);
    merge_subtrees_non_root(&left, &right, Mode::Hash)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// Bit for bit `blake3::hash` on both sides of the lengths where the tree's shape changes:
    /// two pieces exactly and one byte more, a power of two pieces and around it, and an odd
    /// count with a short last piece.
    #[test]
    fn equals_the_one_shot_hash() {
        let data: Vec<u8> = (0..(9 * PIECE + 3) as usize).map(|i| (i * 31 + i / 1021) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        for len in
            [PIECE + 1, 2 * PIECE, 2 * PIECE + 1, 3 * PIECE - 1, 4 * PIECE, 4 * PIECE + 1024, 9 * PIECE + 3]
        {
            let want = blake3::hash(&data[..len as usize]);
            assert_eq!(hash(&f, len).unwrap(), *want.as_bytes(), "{len} bytes");
        }
    }

    /// A file shorter than the length asked for (truncated while hashed) is an error.
    #[test]
    fn a_short_file_is_an_error() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; (2 * PIECE) as usize]).unwrap();
        assert!(hash(&f, 3 * PIECE).is_err());
    }
}
