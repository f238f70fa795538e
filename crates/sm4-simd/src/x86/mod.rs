//! x86-64 SIMD backends. All `#[target_feature]` code lives in the leaf files.
//!
//! Both backends compute the SM4 S-box with the AES S-box hardware:
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

pub(crate) mod aesni;
pub(crate) mod avx2;

use cipher::{consts::U16, BlockCipherDecClosure, BlockCipherEncClosure};

/// Entry points that run a `cipher` closure with a SIMD backend. They carry
/// `#[target_feature]` so the closure body (the mode's loop) is compiled with
/// those features too and the backend's `#[inline(always)]` methods inline.
macro_rules! entry {
    ($enc:ident, $dec:ident, $feat:literal, $($backend:ident)::+) => {
        /// # Safety
        #[doc = concat!("The CPU must support `", $feat, "`.")]
        #[inline]
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn $enc(rk: &[u32; 32], f: impl BlockCipherEncClosure<BlockSize = U16>) {
            f.call(&$($backend)::+ { rk })
        }

        /// # Safety
        #[doc = concat!("The CPU must support `", $feat, "`.")]
        #[inline]
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn $dec(rk: &[u32; 32], f: impl BlockCipherDecClosure<BlockSize = U16>) {
            f.call(&$($backend)::+ { rk })
        }
    };
}

entry!(enc_aesni, dec_aesni, "ssse3,aes", aesni::Backend);
entry!(enc_avx2, dec_avx2, "avx2,aes", avx2::split::Backend);
entry!(enc_vaes, dec_vaes, "avx2,aes,vaes", avx2::vaes::Backend);

/// Nibble tables for the pre-map `x -> M1*x + c1` (constant folded into LO).
pub(crate) const PRE_LO: [u8; 16] = [
    0x3e, 0xb2, 0x0e, 0x82, 0xbb, 0x37, 0x8b, 0x07, 0xa1, 0x2d, 0x91, 0x1d, 0x24, 0xa8, 0x14, 0x98,
];
pub(crate) const PRE_HI: [u8; 16] = [
    0x00, 0xdc, 0x2e, 0xf2, 0xc5, 0x19, 0xeb, 0x37, 0x08, 0xd4, 0x26, 0xfa, 0xcd, 0x11, 0xe3, 0x3f,
];
/// Nibble tables for the post-map `y -> M2*y + c2`.
pub(crate) const POST_LO: [u8; 16] = [
    0x6c, 0xd4, 0xa6, 0x1e, 0x52, 0xea, 0x98, 0x20, 0x0b, 0xb3, 0xc1, 0x79, 0x35, 0x8d, 0xff, 0x47,
];
pub(crate) const POST_HI: [u8; 16] = [
    0x00, 0xe0, 0x50, 0xb0, 0x9d, 0x7d, 0xcd, 0x2d, 0xc0, 0x20, 0x90, 0x70, 0x5d, 0xbd, 0x0d, 0xed,
];

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_patterns() {
        assert_eq!(INV_SHIFT_ROWS, [0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3]);
        assert_eq!(&ROL8[..4], &[3, 0, 1, 2]);
        assert_eq!(&ROL24[4..8], &[5, 6, 7, 4]);
    }
}
