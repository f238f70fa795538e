//! GFNI backend at AVX2 width (`gfni`): the same 16-blocks-in-flight body as
//! `vaes`/`avx2` (see `avx2.rs`), with the S-box as two GF(2^8) affine
//! instructions and no tables. The AVX-512 version is `gfni512.rs`.
//!
//! Not selected by default (see `autodetect.rs`): this code was written on a
//! CPU without GFNI and has only been checked against a software model of
//! the instructions (tests below) until it passes the crate's tests on a
//! GFNI machine.

/// The two affine steps of the S-box, as GFNI operands.
///
/// Derivation. The x86 backends already write the SM4 S-box through the AES
/// one (`x86/mod.rs`, constants from `tools/gen_sbox.py`):
///
/// ```text
/// S_sm4(x) = M2 * S_aes(M1 * x + c1) + c2,   S_aes(z) = A * inv(z) + 0x63
/// ```
///
/// with `inv` the inversion in the AES field (0 -> 0) and `A` AES's affine
/// matrix (bit i of `A*v` = v_i + v_{i+4} + v_{i+5} + v_{i+6} + v_{i+7}, so
/// column j is 0x1F rotated left by j). Substituting:
///
/// ```text
/// S_sm4(x) = (M2*A) * inv(M1 * x + c1) + (M2 * 0x63 + c2)
///            \______/  \_____________/   \_____________/
///            POST      gf2p8affineqb      POST_C
///                      (PRE, PRE_C)
/// ```
///
/// `gf2p8affineqb(x, PRE, PRE_C)` gives `M1*x + c1`, and
/// `gf2p8affineinvqb(t, POST, POST_C)` gives `(M2*A) * inv(t) + POST_C`,
/// `inv` being exactly AES's inversion. GFNI encodes a matrix as a qword
/// whose byte `7 - i` is row `i` (bit `j` of row `i` = bit `i` of column
/// `j`); the constant is the instruction's immediate. Both matrices are
/// computed below from the column vectors, at compile time.
pub(crate) mod matrices {
    use crate::x86::{lin_byte, M1_COLS, POST_HI, POST_LO, PRE_LO};

    /// Columns of M2 (the post-map without its constant).
    const M2_COLS: [u8; 8] = {
        let mut c = [0u8; 8];
        let mut j = 0;
        while j < 4 {
            c[j] = POST_LO[1 << j] ^ POST_LO[0];
            c[j + 4] = POST_HI[1 << j];
            j += 1;
        }
        c
    };

    /// Columns of AES's affine matrix A.
    const AES_COLS: [u8; 8] = {
        let mut c = [0u8; 8];
        let mut j = 0;
        while j < 8 {
            c[j] = 0x1fu8.rotate_left(j as u32);
            j += 1;
        }
        c
    };

    /// GFNI qword of the linear map with columns `cols`.
    pub(crate) const fn qword(cols: &[u8; 8]) -> u64 {
        let mut q = 0u64;
        let mut i = 0;
        while i < 8 {
            let mut row = 0u8;
            let mut j = 0;
            while j < 8 {
                row |= ((cols[j] >> i) & 1) << j;
                j += 1;
            }
            q |= (row as u64) << (8 * (7 - i));
            i += 1;
        }
        q
    }

    /// M1, for `gf2p8affineqb`.
    pub(crate) const PRE: u64 = qword(&M1_COLS);
    /// c1, its immediate.
    pub(crate) const PRE_C: i32 = PRE_LO[0] as i32;
    /// Columns of M2 * A.
    pub(crate) const POST_COLS: [u8; 8] = {
        let mut c = [0u8; 8];
        let mut j = 0;
        while j < 8 {
            c[j] = lin_byte(&M2_COLS, AES_COLS[j]);
            j += 1;
        }
        c
    };
    /// M2 * A, for `gf2p8affineinvqb`.
    pub(crate) const POST: u64 = qword(&POST_COLS);
    /// M2 * 0x63 + c2, its immediate.
    pub(crate) const POST_C: i32 = (lin_byte(&M2_COLS, 0x63) ^ POST_LO[0]) as i32;
}

avx2_backend!(
    gfni,
    "avx2,aes,gfni",
    "AVX2 + GFNI: the S-box as `vgf2p8affineqb` + `vgf2p8affineinvqb` on 256 bits.",
    |x, k| {
        let t = _mm256_gf2p8affine_epi64_epi8::<{ gf::PRE_C }>(x, _mm256_set1_epi64x(gf::PRE as i64));
        _mm256_gf2p8affineinv_epi64_epi8::<{ gf::POST_C }>(t, _mm256_set1_epi64x(gf::POST as i64))
    }
);

#[cfg(test)]
pub(crate) mod tests {
    use super::matrices::*;

    /// Software model of one byte of `gf2p8affineqb` (Intel SDM): bit `i`
    /// of the result is parity(byte `7 - i` of `a` AND `x`) XOR bit `i` of `b`.
    pub(crate) fn affine(a: u64, x: u8, b: u8) -> u8 {
        (0..8).fold(0u8, |r, i| {
            let row = (a >> (8 * (7 - i))) as u8;
            r | ((((row & x).count_ones() & 1) as u8) << i)
        }) ^ b
    }

    /// Multiplication in the AES field (x^8 + x^4 + x^3 + x + 1).
    fn gmul(mut a: u8, mut b: u8) -> u8 {
        let mut p = 0;
        while b != 0 {
            if b & 1 != 0 {
                p ^= a;
            }
            a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
            b >>= 1;
        }
        p
    }

    /// Model of `gf2p8affineinvqb`: the affine map applied to the AES-field inverse.
    pub(crate) fn affine_inv(a: u64, x: u8, b: u8) -> u8 {
        let inv = (1..=255u8).find(|&y| gmul(x, y) == 1).unwrap_or(0);
        affine(a, inv, b)
    }

    /// The S-box as the two GFNI steps compute it.
    pub(crate) fn sbox(x: u8) -> u8 {
        affine_inv(POST, affine(PRE, x, PRE_C as u8), POST_C as u8)
    }

    #[test]
    fn model_matches_aes_sbox() {
        // The model itself: AES's own GFNI constants give the AES S-box.
        let aes = |x| affine_inv(0xf1e3_c78f_1f3e_7cf8, x, 0x63);
        assert_eq!([aes(0x00), aes(0x01), aes(0x53), aes(0x52)], [0x63, 0x7c, 0xed, 0x00]);
    }

    #[test]
    fn two_affine_steps_are_the_sm4_sbox() {
        assert_eq!([sbox(0x00), sbox(0x01), sbox(0x02), sbox(0xff)], [0xd6, 0x90, 0xe9, 0x48]);
        for x in 0..=255u8 {
            let reference = crate::soft::tau(u32::from(x)) as u8;
            assert_eq!(sbox(x), reference, "x = {x:#04x}");
        }
    }
}
