//! The ChaCha20 block function (RFC 8439 §2.3): the 16-word state, the 20 rounds over words of
//! any kind, and one block with plain `u32` arithmetic for the calls that need a single block
//! (the Poly1305 key, a partial last block). Below both the core (`state.rs`) and the four-block
//! SIMD path (`simd128.rs`), which each build on it.

use cipher::array::Array;
use cipher::consts::U64;
use zeroize::Zeroize;

/// The 16-word state: constants, key, block counter (word 12), nonce (words 13–15).
pub(crate) type State = [u32; 16];

/// ChaCha20's 20 rounds (RFC 8439 §2.3) as 10 double rounds, each the four column quarter
/// rounds then the four diagonal ones, over 16 words of any kind: `u32` in [`one_block`], a
/// `v128` holding the same word of four blocks in `simd128.rs`.
#[inline(always)]
pub(crate) fn rounds<T>(x: &mut [T; 16], quarter_round: impl Fn(&mut [T; 16], usize, usize, usize, usize)) {
    for _ in 0..10 {
        quarter_round(x, 0, 4, 8, 12);
        quarter_round(x, 1, 5, 9, 13);
        quarter_round(x, 2, 6, 10, 14);
        quarter_round(x, 3, 7, 11, 15);
        quarter_round(x, 0, 5, 10, 15);
        quarter_round(x, 1, 6, 11, 12);
        quarter_round(x, 2, 7, 8, 13);
        quarter_round(x, 3, 4, 9, 14);
    }
}

/// One keystream block from `state` with `u32` arithmetic (RFC 8439 §2.3); the caller advances
/// the counter. Used where a single block is asked for, so nothing is computed and thrown away.
pub(crate) fn one_block(state: &State, out: &mut Array<u8, U64>) {
    let mut x = *state;
    rounds(&mut x, quarter_round);
    for ((o, w), s) in out.chunks_exact_mut(4).zip(x).zip(state) {
        o.copy_from_slice(&w.wrapping_add(*s).to_le_bytes());
    }
    x.zeroize();
}

#[inline(always)]
fn quarter_round(x: &mut State, a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}
