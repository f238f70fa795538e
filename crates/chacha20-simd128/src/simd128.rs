//! Four ChaCha20 blocks at once in WebAssembly `v128` registers.
//!
//! Layout: sixteen vectors, vector `i` holding state word `i` of four consecutive blocks (one per
//! 32-bit lane; the counter vector is `ctr, ctr+1, ctr+2, ctr+3`, wrapping modulo 2^32 like the
//! scalar code). A quarter round is then the scalar one applied lane-wise, so the column and
//! diagonal rounds need no shuffling of words between lanes. Rotation by 16 moves whole 16-bit
//! halves and is one `i8x16.shuffle`; 12, 8 and 7 are a shift pair and an OR (see `rotl8` for why
//! 8 is not a byte shuffle too). At the end, each group of four vectors (words 4k..4k+3 of the
//! four blocks) is transposed in registers with 32- and 64-bit lane shuffles, so each block's 64
//! bytes are four 16-byte stores — or, for [`xor_four`], four loads, XORs and stores straight
//! between the caller's input and output, so the keystream never goes through memory.
//!
//! Layouts tried in Chromium 156 on a Zen 4 (min of 31 runs of 192 KiB, MB/s): this one 1,512;
//! the same through `cipher`'s keystream buffer 1,356; the row layout (one block in four
//! vectors, diagonals by lane rotation) 661 / 1,049 / 1,248 / 1,268 for 1 / 2 / 3 / 4 blocks
//! interleaved. The row layout keeps its live set in the 15 registers V8 allocates, but it pays
//! three lane shuffles per half round per block, and in V8 a shuffle V8 does not recognise is a
//! `pshufb` whose mask is built in a general register and moved across (about five instructions).
//!
//! Every operation is an add, xor, shift or shuffle by a constant: nothing depends on secret
//! values for its timing or memory address.

use core::arch::wasm32::{
    i32x4_add, i32x4_shl, i32x4_shuffle, i64x2_shuffle, i8x16_shuffle, u32x4, u32x4_shr, u32x4_splat, v128,
    v128_load, v128_or, v128_store, v128_xor,
};

use cipher::array::Array;
use cipher::consts::{U256, U4, U64};
use cipher::inout::{InOut, InOutBuf};
use cipher::{Block, BlockSizeUser, ParBlocks, ParBlocksSizeUser, StreamCipherBackend};
use zeroize::Zeroize;

use crate::block::{one_block, rounds, State};

/// Blocks per SIMD pass.
const LANES: usize = 4;

/// The stream-cipher backend over a core's state; it advances the block counter (word 12) by
/// the number of blocks it hands out.
pub(crate) struct Backend<'a> {
    state: &'a mut State,
}

impl<'a> Backend<'a> {
    pub(crate) fn new(state: &'a mut State) -> Self {
        Backend { state }
    }

    fn advance(&mut self, blocks: u32) {
        self.state[12] = self.state[12].wrapping_add(blocks);
    }
}

impl BlockSizeUser for Backend<'_> {
    type BlockSize = U64;
}

impl ParBlocksSizeUser for Backend<'_> {
    type ParBlocksSize = U4;
}

impl StreamCipherBackend for Backend<'_> {
    fn gen_ks_block(&mut self, block: &mut Block<Self>) {
        one_block(self.state, block);
        self.advance(1);
    }

    fn gen_par_ks_blocks(&mut self, blocks: &mut ParBlocks<Self>) {
        four_blocks(self.state, blocks);
        self.advance(LANES as u32);
    }

    /// One to three blocks: from two on, one SIMD pass costs less than that many scalar blocks.
    fn gen_tail_blocks(&mut self, blocks: &mut [Block<Self>]) {
        match blocks {
            [] => {}
            [one] => self.gen_ks_block(one),
            _ => {
                let mut all = ParBlocks::<Self>::default();
                four_blocks(self.state, &mut all);
                for (dst, src) in blocks.iter_mut().zip(all.iter()) {
                    dst.copy_from_slice(src);
                }
                all.iter_mut().for_each(|b| b.zeroize());
                self.advance(blocks.len() as u32);
            }
        }
    }
}

/// `x <<< 16`: bytes (0 1 2 3) of each little-endian word become (2 3 0 1).
#[inline(always)]
fn rotl16(x: v128) -> v128 {
    i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(x, x)
}

/// `x <<< 8` as shifts, not the byte shuffle it also is: V8 compiles that shuffle to a `pshufb`
/// whose 16-byte mask it rebuilds each time through a general register (Node 20's disassembly:
/// two `movq` immediates, `vmovq`, `vpinsrq`), where the shifts are three instructions. Measured
/// in Chromium 156: 1,512 against 1,380 MB/s.
#[inline(always)]
fn rotl8(x: v128) -> v128 {
    v128_or(i32x4_shl(x, 8), u32x4_shr(x, 24))
}

#[inline(always)]
fn rotl12(x: v128) -> v128 {
    v128_or(i32x4_shl(x, 12), u32x4_shr(x, 20))
}

#[inline(always)]
fn rotl7(x: v128) -> v128 {
    v128_or(i32x4_shl(x, 7), u32x4_shr(x, 25))
}

#[inline(always)]
fn quarter_round(x: &mut [v128; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = i32x4_add(x[a], x[b]);
    x[d] = rotl16(v128_xor(x[d], x[a]));
    x[c] = i32x4_add(x[c], x[d]);
    x[b] = rotl12(v128_xor(x[b], x[c]));
    x[a] = i32x4_add(x[a], x[b]);
    x[d] = rotl8(v128_xor(x[d], x[a]));
    x[c] = i32x4_add(x[c], x[d]);
    x[b] = rotl7(v128_xor(x[b], x[c]));
}

/// Words `k` of four blocks (one vector per word, one lane per block) → four vectors, one per
/// block, each holding that block's four words in order.
#[inline(always)]
fn transpose(a: v128, b: v128, c: v128, d: v128) -> [v128; 4] {
    let ab_lo = i32x4_shuffle::<0, 4, 1, 5>(a, b); // a0 b0 a1 b1
    let ab_hi = i32x4_shuffle::<2, 6, 3, 7>(a, b); // a2 b2 a3 b3
    let cd_lo = i32x4_shuffle::<0, 4, 1, 5>(c, d); // c0 d0 c1 d1
    let cd_hi = i32x4_shuffle::<2, 6, 3, 7>(c, d); // c2 d2 c3 d3
    [
        i64x2_shuffle::<0, 2>(ab_lo, cd_lo), // a0 b0 c0 d0: block 0
        i64x2_shuffle::<1, 3>(ab_lo, cd_lo), // block 1
        i64x2_shuffle::<0, 2>(ab_hi, cd_hi), // block 2
        i64x2_shuffle::<1, 3>(ab_hi, cd_hi), // block 3
    ]
}

/// Stores 16 bytes.
#[inline(always)]
#[allow(unsafe_code)]
fn store16(dst: &mut [u8; 16], v: v128) {
    // SAFETY: `dst` is a valid, exclusive 16-byte region; `v128.store` has no alignment
    // requirement in WebAssembly (Rust's `v128_store` takes a `*mut v128` only as the address).
    unsafe { v128_store(dst.as_mut_ptr().cast::<v128>(), v) }
}

/// Words of keystream blocks `ctr .. ctr+4` (counter wrapping modulo 2^32), one vector per
/// state word and one lane per block, after the feed-forward.
#[inline(always)]
fn four_block_words(state: &State) -> [v128; 16] {
    let mut init = [u32x4_splat(0); 16];
    for (v, w) in init.iter_mut().zip(state) {
        *v = u32x4_splat(*w);
    }
    init[12] = i32x4_add(init[12], u32x4(0, 1, 2, 3));

    let mut x = init;
    rounds(&mut x, quarter_round);
    for (v, i) in x.iter_mut().zip(init) {
        *v = i32x4_add(*v, i);
    }
    x
}

/// Keystream blocks `ctr .. ctr+4` into `out`; the caller advances the counter.
#[inline(always)]
fn four_blocks(state: &State, out: &mut ParBlocks<Backend<'_>>) {
    keystream_four(state, out.as_flattened_mut().try_into().expect("4 blocks of 64 bytes"));
}

/// XORs keystream from the state's block counter on into `buf` (input to output) and advances
/// the counter past every block used; a partial last block counts as used, so a caller passes
/// whole blocks except at the end of its message. Four blocks at a time go through [`xor_four`];
/// the last one to three (or a partial one) through the backend's tail path and a buffer that
/// is wiped after.
pub(crate) fn apply(state: &mut State, buf: InOutBuf<'_, '_, u8>) {
    let (groups, mut tail) = buf.into_chunks::<U256>();
    for group in groups {
        xor_four(state, group);
        state[12] = state[12].wrapping_add(LANES as u32);
    }
    if tail.is_empty() {
        return;
    }
    let mut keystream = ParBlocks::<Backend<'_>>::default();
    let used = tail.len().div_ceil(64);
    Backend::new(state).gen_tail_blocks(&mut keystream[..used]);
    let flat: &mut [u8] = keystream.as_flattened_mut();
    tail.xor_in2out(&flat[..tail.len()]);
    wipe(flat);
}

/// Overwrites keystream with zeros the optimiser may not drop (the buffer is handed to
/// `black_box` after): `zeroize` on bytes is one volatile store per byte, which on a 256-byte
/// buffer costs a noticeable part of sealing a short message.
pub(crate) fn wipe(buf: &mut [u8]) {
    buf.fill(0);
    core::hint::black_box(buf);
}

/// Keystream blocks `ctr .. ctr+4` as 256 bytes; the caller advances the counter and wipes `out`.
#[inline(always)]
pub(crate) fn keystream_four(state: &State, out: &mut [u8; 256]) {
    let x = four_block_words(state);
    for k in 0..4 {
        let rows = transpose(x[4 * k], x[4 * k + 1], x[4 * k + 2], x[4 * k + 3]);
        for (b, row) in rows.into_iter().enumerate() {
            let at = 64 * b + 16 * k;
            let dst: &mut [u8; 16] = (&mut out[at..at + 16]).try_into().expect("16 bytes");
            store16(dst, row);
        }
    }
}

/// Four blocks' worth of data (256 bytes) XORed with keystream blocks `ctr .. ctr+4` from its
/// input into its output (the same bytes when in place); the caller advances the counter.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn xor_four(state: &State, data: InOut<'_, '_, Array<u8, U256>>) {
    let x = four_block_words(state);
    let (src, dst) = data.into_raw();
    let (src, dst) = (src.cast::<u8>(), dst.cast::<u8>());
    for k in 0..4 {
        let rows = transpose(x[4 * k], x[4 * k + 1], x[4 * k + 2], x[4 * k + 3]);
        for (b, row) in rows.into_iter().enumerate() {
            let at = 64 * b + 16 * k;
            // SAFETY: `InOut` guarantees that `src` is valid for 256 bytes of reads and `dst` for
            // 256 bytes of writes, and that they are either the same region or do not overlap;
            // `at + 16 <= 256`. Each 16 bytes are loaded before the same 16 are stored, so the
            // in-place case reads no byte already written. WebAssembly's `v128.load`/`store` have
            // no alignment requirement.
            unsafe {
                let v = v128_load(src.add(at).cast::<v128>());
                v128_store(dst.add(at).cast::<v128>(), v128_xor(v, row));
            }
        }
    }
}
