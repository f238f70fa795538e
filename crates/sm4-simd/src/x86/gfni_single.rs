//! Latency-optimised single block with GFNI and AVX-512VL (the `gfni512`
//! backend's CBC encryption, CBC-MAC and GCM J0 path).
//!
//! CBC encryption is one dependency chain of 32 rounds per block, so what
//! counts is the latency of a round, not its throughput. The round
//! `X[d] ^= L(S(X[a] ^ X[b] ^ X[c] ^ rk))` is rewritten so that only one GFNI
//! instruction sits on that chain:
//!
//! * **Pre-affine off the chain.** The tracked state is `m = M1(x)` bytewise
//!   (as in `single.rs`), so the S-box input in the AES field is
//!   `m[a] ^ m[b] ^ m[c] ^ K` with `K = M1(rk) + c1`: `vgf2p8affineinvqb`
//!   is applied to it directly, with no `vgf2p8affineqb` before it.
//! * **Post-affine, `L` and the next pre-affine fused.** Byte `k` of
//!   `L(y)` is `A0(y_k) ^ A1(y_{k-1}) ^ A1(y_{k-2}) ^ A3(y_{k-3})` with the
//!   byte maps `A0 = I + (<<2)`, `A1 = rotl 2`, `A3 = I + (>>6)` (the bit
//!   rotations by 2, 10, 18 split at byte borders). `M1` is bytewise and
//!   commutes with byte rotations, so
//!   `M1(L(y)) = P0 ^ rol8(P1) ^ rol16(P1) ^ rol24(P3)` where
//!   `Pi = (M1 * Ai * POST) * inv(t) + M1*Ai*POST_C` is one
//!   `vgf2p8affineinvqb` each. The three are independent, so they issue
//!   together.
//! * **Chain per round:** `vgf2p8affineinvqb` → `vprold` → `vpternlogd`
//!   (the three rotated terms) → `vpternlogd` (with `P0` and everything of the
//!   next S-box input that is already known). The round key's `M1` image is
//!   one more `vgf2p8affineqb`, off the chain.
//! * **Across blocks.** [`cbc_encrypt`] keeps the chain in the M1 domain too:
//!   the next block's state is `M1(P) ^ m_out`, and `M1(P)` and the
//!   ciphertext `M1^-1(m_out)` are computed beside the chain.
//!
//! Each word lives in its own register (dword 0; the other lanes carry the
//! same computation and are ignored). Constant time: no table, no
//! secret-dependent address or branch.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::gfni::matrices::{qword, POST_C, POST_COLS, PRE_C};
use super::{lin_byte, M1_COLS, M1_INV_COLS};

/// The byte maps of `L` by distance `k` from the source byte: `A0`, `A1`, `A3`.
const fn a(k: u8, b: u8) -> u8 {
    match k {
        0 => b ^ (b << 2),
        1 => b.rotate_left(2),
        _ => b ^ (b >> 6),
    }
}

/// `(matrix, constant)` of the fused post-map `M1 * Ak * (POST, POST_C)`.
const fn fused(k: u8) -> (u64, i32) {
    let mut c = [0u8; 8];
    let mut j = 0;
    while j < 8 {
        c[j] = lin_byte(&M1_COLS, a(k, POST_COLS[j]));
        j += 1;
    }
    (qword(&c), lin_byte(&M1_COLS, a(k, POST_C as u8)) as i32)
}

/// The three fused post-maps `P0`, `P1`, `P3`.
const P0: (u64, i32) = fused(0);
const P1: (u64, i32) = fused(1);
const P3: (u64, i32) = fused(3);
/// `M1` and `M1^-1` as GFNI matrices.
const M1: u64 = qword(&M1_COLS);
const M1_INV: u64 = qword(&M1_INV_COLS);

/// `pshufb` pattern broadcasting big-endian word `i` of a block to every dword.
const fn word(i: u8) -> [u8; 16] {
    let mut m = [0u8; 16];
    let mut s = 0;
    while s < 16 {
        m[s] = 4 * i + 3 - (s % 4) as u8;
        s += 1;
    }
    m
}
const WORDS: [[u8; 16]; 4] = [word(0), word(1), word(2), word(3)];
const BSWAP: [u8; 16] = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12];

/// An optimisation barrier that emits no instruction: it pins a value so that
/// LLVM cannot reassociate the XOR tree and put the early terms on the chain.
#[inline(always)]
fn opaque(mut x: __m128i) -> __m128i {
    // SAFETY: an empty template; the register is passed through unchanged.
    unsafe {
        core::arch::asm!("/* {0} */", inout(xmm_reg) x, options(pure, nomem, nostack, preserves_flags))
    };
    x
}

#[inline]
#[target_feature(enable = "sse2")]
fn v(b: &[u8; 16]) -> __m128i {
    // SAFETY: `b` is a valid 16-byte array; `loadu` has no alignment requirement.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

/// Bytewise `M1` of a register.
#[inline]
#[target_feature(enable = "gfni,sse2")]
fn m1(x: __m128i) -> __m128i {
    _mm_gf2p8affine_epi64_epi8::<0>(x, _mm_set1_epi64x(M1 as i64))
}

/// The four words of a (raw, big-endian) block, one per register.
#[inline]
#[target_feature(enable = "ssse3")]
fn split(b: __m128i) -> [__m128i; 4] {
    core::array::from_fn(|i| _mm_shuffle_epi8(b, v(&WORDS[i])))
}

/// The 32 rounds on the M1-domain words `m` (in place: `m` ends as words
/// 32..35). Inlined into its callers (which carry the target features) so
/// that the words stay in registers: a call would pass them through memory,
/// on the chain.
///
/// # Safety
/// The CPU must support AVX-512 F and VL and GFNI.
#[inline(always)]
#[allow(unused_assignments)] // the last round's `q` is not needed
unsafe fn rounds(rk: &[u32; 32], m: &mut [__m128i; 4]) {
    // SAFETY: the caller guarantees the features; no memory access but `rk`.
    unsafe {
        let (p0m, p1m, p3m) =
            (_mm_set1_epi64x(P0.0 as i64), _mm_set1_epi64x(P1.0 as i64), _mm_set1_epi64x(P3.0 as i64));
        let m1m = _mm_set1_epi64x(M1 as i64);
        // K[r] = M1(rk[r]) + c1, computed as needed (off the chain).
        let key = |r: usize| _mm_gf2p8affine_epi64_epi8::<{ PRE_C }>(_mm_set1_epi32(rk[r] as i32), m1m);
        let mut q = _mm_ternarylogic_epi32::<0x96>(m[1], m[2], _mm_xor_si128(m[3], key(0)));
        macro_rules! round {
            ($r:expr, $d:literal, $e1:literal, $e2:literal) => {{
                let p0 = _mm_gf2p8affineinv_epi64_epi8::<{ P0.1 }>(q, p0m);
                let p1 = _mm_gf2p8affineinv_epi64_epi8::<{ P1.1 }>(q, p1m);
                let p3 = _mm_gf2p8affineinv_epi64_epi8::<{ P3.1 }>(q, p3m);
                let rot = opaque(_mm_ternarylogic_epi32::<0x96>(
                    _mm_rol_epi32::<8>(p1),
                    _mm_rol_epi32::<16>(p1),
                    _mm_rol_epi32::<24>(p3),
                ));
                if $r < 31 {
                    // The next round reads words d+2, d+3 and the new word d.
                    let e = opaque(_mm_ternarylogic_epi32::<0x96>(
                        m[$e1],
                        m[$e2],
                        _mm_xor_si128(m[$d], key($r + 1)),
                    ));
                    q = _mm_ternarylogic_epi32::<0x96>(p0, e, rot);
                }
                m[$d] = _mm_ternarylogic_epi32::<0x96>(m[$d], p0, rot);
            }};
        }
        macro_rules! four {
        ($($r:literal)*) => {$(
            round!($r, 0, 2, 3);
            round!($r + 1, 1, 3, 0);
            round!($r + 2, 2, 0, 1);
            round!($r + 3, 3, 1, 2);
        )*};
    }
        four!(0 4 8 12 16 20 24 28);
    }
}

/// The output block of state words 32..35 (still in the M1 domain): the
/// words in reverse order (R), each big-endian.
#[inline]
#[target_feature(enable = "ssse3")]
fn gather(m: &[__m128i; 4]) -> __m128i {
    let hi = _mm_unpacklo_epi32(m[3], m[2]);
    let lo = _mm_unpacklo_epi32(m[1], m[0]);
    _mm_shuffle_epi8(_mm_unpacklo_epi64(hi, lo), v(&BSWAP))
}

/// Bytewise `M1^-1`: from the M1 domain back to bytes.
#[inline]
#[target_feature(enable = "gfni,sse2")]
fn m1_inv(x: __m128i) -> __m128i {
    _mm_gf2p8affine_epi64_epi8::<0>(x, _mm_set1_epi64x(M1_INV as i64))
}

/// Encrypts (or, with the reversed schedule, decrypts) one block in place.
///
/// # Safety
/// The CPU must support AVX-512 F and VL and GFNI.
#[target_feature(enable = "avx512f,avx512vl,gfni,ssse3")]
pub(crate) unsafe fn crypt1(rk: &[u32; 32], block: &mut [u8; 16]) {
    let mut m = split(m1(v(block)));
    // SAFETY: same contract.
    unsafe { rounds(rk, &mut m) };
    // SAFETY: `block` is 16 writable bytes; `storeu` is unaligned.
    unsafe { _mm_storeu_si128(block.as_mut_ptr().cast(), m1_inv(gather(&m))) };
}

/// CBC-encrypts `blocks` in place from chain value `iv`; returns the last
/// ciphertext block (the next chain value). The chain stays in registers,
/// as words in the M1 domain: output word `j` of a block is state word
/// `3 - j`, and `M1` is linear, so the next block's word `j` is
/// `M1(P)[j] ^ m[3 - j]`, one XOR on the chain.
///
/// # Safety
/// The CPU must support AVX-512 F and VL and GFNI.
#[target_feature(enable = "avx512f,avx512vl,gfni,ssse3")]
pub(crate) unsafe fn cbc_encrypt(rk: &[u32; 32], iv: &[u8; 16], blocks: &mut [[u8; 16]]) -> [u8; 16] {
    // The IV as if it were the output of a previous block.
    let w = split(m1(v(iv)));
    let mut m = [w[3], w[2], w[1], w[0]];
    for b in blocks.iter_mut() {
        let p = split(m1(v(b)));
        m = core::array::from_fn(|j| _mm_xor_si128(p[j], m[3 - j]));
        // SAFETY: same contract.
        unsafe { rounds(rk, &mut m) };
        // SAFETY: `b` is 16 writable bytes; `storeu` is unaligned.
        unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), m1_inv(gather(&m))) };
    }
    let mut last = [0u8; 16];
    // SAFETY: `last` is 16 writable bytes.
    unsafe { _mm_storeu_si128(last.as_mut_ptr().cast(), m1_inv(gather(&m))) };
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::x86::gfni::tests::{affine, affine_inv};

    /// One round's `M1(L(S(x)))` through the software model of the fused maps
    /// equals `M1` of the reference round function.
    #[test]
    fn fused_maps_are_m1_of_l_of_s() {
        let m1w = |w: u32| super::super::lin_word(&M1_COLS, w);
        for x in (0..=u32::MAX).step_by(0x0101_0107 / 3) {
            let t = u32::from_le_bytes(x.to_le_bytes().map(|b| affine(M1, b, PRE_C as u8)));
            let p = |(mat, c): (u64, i32)| {
                u32::from_le_bytes(t.to_le_bytes().map(|b| affine_inv(mat, b, c as u8)))
            };
            let got = p(P0) ^ p(P1).rotate_left(8) ^ p(P1).rotate_left(16) ^ p(P3).rotate_left(24);
            let y = crate::soft::tau(x);
            let l = y ^ y.rotate_left(2) ^ y.rotate_left(10) ^ y.rotate_left(18) ^ y.rotate_left(24);
            assert_eq!(got, m1w(l), "x = {x:#010x}");
        }
    }

    #[test]
    fn word_patterns() {
        assert_eq!(WORDS[1][..4], [7, 6, 5, 4]);
        assert_eq!(WORDS[3][12..], [15, 14, 13, 12]);
    }
}
