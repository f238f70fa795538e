//! x86-64 SIMD backends. All `#[target_feature]` code lives in the leaf files.
//!
//! The AES-NI/VAES backends compute the SM4 S-box with the AES S-box hardware
//! (the GFNI ones with two affine instructions, see `gfni.rs`):
//!
//! ```text
//! S_sm4(x) = M2 * S_aes(M1 * x + c1) + c2
//! ```
//!
//! `M1`, `M2` are GF(2)-linear byte maps (a field isomorphism composed with the
//! SM4 and inverse-AES affine layers), derived by `tools/gen_sbox.py`. A linear
//! byte map is evaluated with two 16-entry `pshufb` lookups, one per nibble.
//! `aesenclast` with a zero round key gives `ShiftRows(SubBytes(state))`, so the
//! input is pre-permuted with the inverse ShiftRows pattern.
//!
//! State layout: after loading, words are byte-swapped (SM4 is big-endian) and
//! a 4x4 transpose gives register `X[j]` = word `j` of every block, so each
//! round is a handful of whole-register operations on all blocks at once.

/// Runs `crypt` in place over a zeroed buffer of `N` blocks that holds `blocks`' input (a
/// message's last, short batch), copies the first `blocks.len()` blocks out, and wipes the
/// buffer: it held plaintext or keystream.
#[inline(always)]
pub(crate) fn padded<const N: usize>(
    mut blocks: InOutBuf<'_, '_, Array<u8, U16>>,
    crypt: impl FnOnce(*mut u8),
) {
    let n = blocks.len();
    debug_assert!(n <= N);
    let mut buf = [[0u8; 16]; N];
    for (dst, src) in buf.iter_mut().zip(blocks.get_in()) {
        dst.copy_from_slice(src);
    }
    crypt(buf.as_mut_ptr().cast::<u8>());
    for (dst, src) in blocks.get_out().iter_mut().zip(&buf[..n]) {
        dst.copy_from_slice(src);
    }
    zeroize::Zeroize::zeroize(&mut buf);
}

/// A SIMD backend's `one` (a single block through `$crypt1`, given the backend and the block)
/// and `par` (a full batch: two of its module's `crypt_n` groups, which is its `ParBlocksSize`).
macro_rules! one_and_par {
    (|$be:ident, $b:ident| $crypt1:expr) => {
        impl Backend<'_> {
            #[inline(always)]
            fn one(&self, mut block: InOut<'_, '_, Block<Self>>) {
                let mut $b: [u8; 16] = (*block.get_in()).into();
                let $be = self;
                // SAFETY: a `Backend` is built only after its features were detected (lib.rs).
                unsafe { $crypt1 };
                block.get_out().copy_from_slice(&$b);
            }

            #[inline(always)]
            fn par(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
                let (i, o) = blocks.into_raw();
                // SAFETY: `ParBlocks` is two `crypt_n` groups of contiguous 16-byte blocks behind
                // both pointers (equal or disjoint per `InOut`); features detected, as above.
                unsafe { crypt_n::<2>(self.rk, i.cast(), o.cast()) };
            }
        }
    };
}

pub(crate) mod aesni;
#[macro_use]
pub(crate) mod avx2;
pub(crate) mod gfni;
pub(crate) mod gfni512;
pub(crate) mod gfni_single;
pub(crate) mod single;

pub(crate) use single::fused_round_keys;

use cipher::{array::Array, consts::U16, inout::InOutBuf, BlockCipherDecClosure, BlockCipherEncClosure};

/// Entry points that run a `cipher` closure with a SIMD backend. They carry
/// `#[target_feature]` so the closure body (the mode's loop) is compiled with
/// those features too and the backend's `#[inline(always)]` methods inline.
macro_rules! entry {
    ($enc:ident, $dec:ident, $feat:literal, $($backend:ident)::+) => {
        /// # Safety
        #[doc = concat!("The CPU must support `", $feat, "`.")]
        #[inline]
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn $enc(rk: &[u32; 32], fk: &crate::FusedKeys, f: impl BlockCipherEncClosure<BlockSize = U16>) {
            f.call(&$($backend)::+ { rk, fk })
        }

        /// # Safety
        #[doc = concat!("The CPU must support `", $feat, "`.")]
        #[inline]
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn $dec(rk: &[u32; 32], fk: &crate::FusedKeys, f: impl BlockCipherDecClosure<BlockSize = U16>) {
            f.call(&$($backend)::+ { rk, fk })
        }
    };
}

entry!(enc_aesni, dec_aesni, "ssse3,aes", aesni::Backend);
entry!(enc_avx2, dec_avx2, "avx2,aes", avx2::split::Backend);
entry!(enc_vaes, dec_vaes, "avx2,aes,vaes", avx2::vaes::Backend);
entry!(enc_gfni, dec_gfni, "avx2,aes,gfni", gfni::gfni::Backend);
entry!(enc_gfni512, dec_gfni512, "avx512f,avx512bw,avx512vl,avx2,aes,gfni", gfni512::Backend);

/// Nibble tables for the pre-map `x -> M1*x + c1` (constant folded into LO).
pub(crate) const PRE_LO: [u8; 16] =
    [0x3e, 0xb2, 0x0e, 0x82, 0xbb, 0x37, 0x8b, 0x07, 0xa1, 0x2d, 0x91, 0x1d, 0x24, 0xa8, 0x14, 0x98];
pub(crate) const PRE_HI: [u8; 16] =
    [0x00, 0xdc, 0x2e, 0xf2, 0xc5, 0x19, 0xeb, 0x37, 0x08, 0xd4, 0x26, 0xfa, 0xcd, 0x11, 0xe3, 0x3f];
/// Nibble tables for the post-map `y -> M2*y + c2`.
pub(crate) const POST_LO: [u8; 16] =
    [0x6c, 0xd4, 0xa6, 0x1e, 0x52, 0xea, 0x98, 0x20, 0x0b, 0xb3, 0xc1, 0x79, 0x35, 0x8d, 0xff, 0x47];
pub(crate) const POST_HI: [u8; 16] =
    [0x00, 0xe0, 0x50, 0xb0, 0x9d, 0x7d, 0xcd, 0x2d, 0xc0, 0x20, 0x90, 0x70, 0x5d, 0xbd, 0x0d, 0xed];

/// `pshufb` pattern: inverse ShiftRows, so that `aesenclast`'s ShiftRows
/// puts every S-box output back in its input byte position.
pub(crate) const INV_SHIFT_ROWS: [u8; 16] = {
    let mut m = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let (r, c) = (i % 4, i / 4);
        m[i] = (r + 4 * ((c + 4 - r) % 4)) as u8;
        i += 1;
    }
    m
};

/// `pshufb` pattern rotating every 32-bit lane left by `8*n` bits.
const fn rol_bytes(n: usize) -> [u8; 16] {
    let mut m = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        m[i] = ((i & !3) + ((i + 4 - n) % 4)) as u8;
        i += 1;
    }
    m
}
pub(crate) const ROL8: [u8; 16] = rol_bytes(1);
pub(crate) const ROL16: [u8; 16] = rol_bytes(2);
pub(crate) const ROL24: [u8; 16] = rol_bytes(3);

/// `pshufb` pattern converting each 32-bit lane between big and little endian.
pub(crate) const BSWAP32: [u8; 16] = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12];

// ---- Latency-optimised single-block path (see `single.rs`) --------------
//
// Instead of the state words x, the single-block path tracks m = M1(x)
// (M1 = linear part of the pre-map, applied bytewise). Because M1 is linear,
// the S-box input image M1(x1^x2^x3^rk) + c1 is just m1^m2^m3^K with
// K = M1(rk) + c1, so `aesenclast` can be fed directly, and the whole
// post-map + L + next pre-map collapses into one affine map
// F(y) = M1(L(M2*y + c2)) evaluated with nibble tables. This removes the
// pre-map from the serial dependency chain that bounds CBC encryption.

/// Applies the bytewise linear map with columns `cols` (constant time: masks, no indexing).
pub(crate) const fn lin_byte(cols: &[u8; 8], b: u8) -> u8 {
    let mut r = 0u8;
    let mut j = 0;
    while j < 8 {
        r ^= cols[j] & 0u8.wrapping_sub((b >> j) & 1);
        j += 1;
    }
    r
}

/// `lin_byte` on each byte of a word.
pub(crate) const fn lin_word(cols: &[u8; 8], w: u32) -> u32 {
    let b = w.to_le_bytes();
    u32::from_le_bytes([
        lin_byte(cols, b[0]),
        lin_byte(cols, b[1]),
        lin_byte(cols, b[2]),
        lin_byte(cols, b[3]),
    ])
}

/// Columns of M1 (pre-map without its constant).
pub(crate) const M1_COLS: [u8; 8] = {
    let mut c = [0u8; 8];
    let mut j = 0;
    while j < 4 {
        c[j] = PRE_LO[1 << j] ^ PRE_LO[0];
        c[j + 4] = PRE_HI[1 << j];
        j += 1;
    }
    c
};

/// Columns of M1^-1, found by exhaustive search at compile time.
pub(crate) const M1_INV_COLS: [u8; 8] = {
    let mut c = [0u8; 8];
    let mut b = 0usize;
    while b < 256 {
        let img = lin_byte(&M1_COLS, b as u8);
        if img.count_ones() == 1 {
            c[img.trailing_zeros() as usize] = b as u8;
        }
        b += 1;
    }
    c
};

/// Nibble tables of the byte map with columns `cols` (for `pshufb`).
const fn nibble_tables(cols: &[u8; 8]) -> [[u8; 16]; 2] {
    let mut t = [[0u8; 16]; 2];
    let mut n = 0;
    while n < 16 {
        t[0][n] = lin_byte(cols, n as u8);
        t[1][n] = lin_byte(cols, (n as u8) << 4);
        n += 1;
    }
    t
}

/// `[lo, hi]` nibble tables of M1 and of M1^-1.
pub(crate) const M1_TABLES: [[u8; 16]; 2] = nibble_tables(&M1_COLS);
pub(crate) const M1_INV_TABLES: [[u8; 16]; 2] = nibble_tables(&M1_INV_COLS);

/// Nibble tables of F: `F_TABLES[2j]` / `[2j+1]` give byte j of F's value
/// for the low / high nibble of one input byte (constant folded into low).
pub(crate) const F_TABLES: [[u8; 16]; 8] = {
    let mut t = [[0u8; 16]; 8];
    let mut n = 0;
    while n < 16 {
        let lo = l_word(POST_LO[n] as u32);
        let hi = l_word(POST_HI[n] as u32);
        let mut j = 0;
        while j < 4 {
            t[2 * j][n] = lin_byte(&M1_COLS, (lo >> (8 * j)) as u8);
            t[2 * j + 1][n] = lin_byte(&M1_COLS, (hi >> (8 * j)) as u8);
            j += 1;
        }
        n += 1;
    }
    t
};

const fn l_word(b: u32) -> u32 {
    b ^ b.rotate_left(2) ^ b.rotate_left(10) ^ b.rotate_left(18) ^ b.rotate_left(24)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_patterns() {
        assert_eq!(INV_SHIFT_ROWS, [0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3]);
        assert_eq!(&ROL8[..4], &[3, 0, 1, 2]);
        assert_eq!(&ROL24[4..8], &[5, 6, 7, 4]);
    }

    #[test]
    fn m1_inverse() {
        for b in 0..=255u8 {
            assert_eq!(lin_byte(&M1_INV_COLS, lin_byte(&M1_COLS, b)), b);
        }
    }
}
