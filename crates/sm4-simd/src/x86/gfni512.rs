//! AVX-512 + GFNI backend (`gfni512`): 16 blocks per 512-bit register set,
//! two sets interleaved per call (32 blocks in flight).
//!
//! The S-box is `vgf2p8affineqb` + `vgf2p8affineinvqb` with the matrices of
//! `gfni::matrices` (their derivation is there); `L` is four `vprold` and
//! `vpternlogd` three-way XORs. Byte shuffles and unpacks work within
//! 128-bit lanes, so the 4x4 transpose of `aesni.rs` carries over per lane:
//! register `X[j]` holds word `j` of blocks (l, 4+l, 8+l, 12+l) in lane l.
//!
//! Not selected by default (see `autodetect.rs`); written on a CPU without
//! AVX-512 or GFNI, so only the matrices are checked there (in `gfni.rs`).
//! Constant time: no secret-dependent addresses or branches.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::gfni::matrices as gf;
use super::{aesni, gfni_single, BSWAP32};
use crate::FusedKeys;
use cipher::{
    array::Array,
    consts::{U16, U32},
    inout::{InOut, InOutBuf},
    Block, ParBlocks,
};

/// XOR of three registers in one `vpternlogd` (truth table 0x96).
#[inline]
#[target_feature(enable = "avx512f")]
fn xor3(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    _mm512_ternarylogic_epi32::<0x96>(a, b, c)
}

/// The SM4 S-box on every byte (see `gfni::matrices`).
#[inline]
#[target_feature(enable = "avx512f,gfni")]
fn sbox(x: __m512i) -> __m512i {
    let t = _mm512_gf2p8affine_epi64_epi8::<{ gf::PRE_C }>(x, _mm512_set1_epi64(gf::PRE as i64));
    _mm512_gf2p8affineinv_epi64_epi8::<{ gf::POST_C }>(t, _mm512_set1_epi64(gf::POST as i64))
}

/// 32 rounds over `G` independent 16-block register sets.
#[inline]
#[target_feature(enable = "avx512f,gfni")]
fn rounds<const G: usize>(x: &mut [[__m512i; 4]; G], rk: &[u32; 32]) {
    macro_rules! round {
        ($r:expr, $d:literal, $a:literal, $b:literal, $c:literal) => {{
            let key = _mm512_set1_epi32(rk[$r + $d] as i32);
            for g in 0..G {
                let s = sbox(_mm512_xor_si512(xor3(x[g][$a], x[g][$b], x[g][$c]), key));
                // X[d] ^= L(s), L(s) = s ^ rol2 ^ rol10 ^ rol18 ^ rol24.
                let t = xor3(s, _mm512_rol_epi32::<2>(s), _mm512_rol_epi32::<10>(s));
                let u = xor3(x[g][$d], _mm512_rol_epi32::<18>(s), _mm512_rol_epi32::<24>(s));
                x[g][$d] = _mm512_xor_si512(t, u);
            }
        }};
    }
    for r in (0..32).step_by(4) {
        round!(r, 0, 1, 2, 3);
        round!(r, 1, 2, 3, 0);
        round!(r, 2, 3, 0, 1);
        round!(r, 3, 0, 1, 2);
    }
}

/// Per-128-bit-lane 4x4 transpose of 32-bit words.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose(a: __m512i, b: __m512i, c: __m512i, d: __m512i) -> [__m512i; 4] {
    let t0 = _mm512_unpacklo_epi32(a, b);
    let t1 = _mm512_unpacklo_epi32(c, d);
    let t2 = _mm512_unpackhi_epi32(a, b);
    let t3 = _mm512_unpackhi_epi32(c, d);
    [
        _mm512_unpacklo_epi64(t0, t1),
        _mm512_unpackhi_epi64(t0, t1),
        _mm512_unpacklo_epi64(t2, t3),
        _mm512_unpackhi_epi64(t2, t3),
    ]
}

/// Encrypts (or decrypts, given reversed keys) `16 * G` blocks.
///
/// # Safety
/// `inp` readable and `out` writable for `256 * G` bytes, equal or disjoint;
/// the CPU must support AVX-512 F and BW and GFNI.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,gfni")]
pub(crate) unsafe fn crypt_n<const G: usize>(rk: &[u32; 32], inp: *const u8, out: *mut u8) {
    // SAFETY: a 16-byte array; `loadu` is unaligned.
    let bswap = _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(BSWAP32.as_ptr().cast()) });
    let mut x = [[_mm512_setzero_si512(); 4]; G];
    for (g, xg) in x.iter_mut().enumerate() {
        // SAFETY: the caller guarantees 256*G readable bytes.
        let b: [__m512i; 4] = core::array::from_fn(|i| unsafe {
            _mm512_shuffle_epi8(_mm512_loadu_si512(inp.add(256 * g + 64 * i).cast()), bswap)
        });
        *xg = transpose(b[0], b[1], b[2], b[3]);
    }
    rounds::<G>(&mut x, rk);
    for (g, xg) in x.iter().enumerate() {
        // Output is the word-reversed state (R transform).
        let b = transpose(xg[3], xg[2], xg[1], xg[0]);
        for (i, bi) in b.iter().enumerate() {
            let o = _mm512_shuffle_epi8(*bi, bswap);
            // SAFETY: the caller guarantees 256*G writable bytes.
            unsafe { _mm512_storeu_si512(out.add(256 * g + 64 * i).cast(), o) };
        }
    }
}

/// CTR keystream for `16 * G` blocks from counter `ctr`, XORed from `inp`
/// into `out`. The counter blocks are never written out and transposed:
/// in the transposed layout the three high words are broadcasts and the
/// low word is `lo + lane offset`, so this needs `lo + 16 * G` not to wrap
/// (the caller checks; the counter is public).
///
/// # Safety
/// `inp` readable and `out` writable for `256 * G` bytes, equal or disjoint;
/// the CPU must support AVX-512 F and BW and GFNI.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,gfni")]
unsafe fn ctr_n<const G: usize>(rk: &[u32; 32], ctr: u128, inp: *const u8, out: *mut u8) {
    // SAFETY: a 16-byte array; `loadu` is unaligned.
    let bswap = _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(BSWAP32.as_ptr().cast()) });
    // Dword e of a register is word i = e % 4 of block 4 * i + e / 4 (lane e / 4).
    let lane = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    let word = |k: u32| _mm512_set1_epi32((ctr >> (32 * (3 - k))) as u32 as i32);
    let mut x = [[_mm512_setzero_si512(); 4]; G];
    for (g, xg) in x.iter_mut().enumerate() {
        let lo = _mm512_add_epi32(word(3), _mm512_add_epi32(lane, _mm512_set1_epi32(16 * g as i32)));
        *xg = [word(0), word(1), word(2), lo];
    }
    rounds::<G>(&mut x, rk);
    for (g, xg) in x.iter().enumerate() {
        let b = transpose(xg[3], xg[2], xg[1], xg[0]);
        for (i, bi) in b.iter().enumerate() {
            let at = 256 * g + 64 * i;
            // SAFETY: the caller guarantees 256*G readable and writable bytes.
            unsafe {
                let d = _mm512_loadu_si512(inp.add(at).cast());
                let o = _mm512_xor_si512(d, _mm512_shuffle_epi8(*bi, bswap));
                _mm512_storeu_si512(out.add(at).cast(), o);
            }
        }
    }
}

/// XORs the CTR keystream from counter block `iv` (128-bit big-endian,
/// wrapping) into `data`: 32 blocks per step straight from registers, the
/// generic padded batch where the low counter word wraps and for the tail.
///
/// # Safety
/// The CPU must support AVX-512 F and BW, GFNI, SSSE3 and AES-NI.
#[target_feature(enable = "avx512f,avx512bw,gfni,ssse3,aes")]
pub(crate) unsafe fn ctr_apply(rk: &[u32; 32], iv: &[u8; 16], data: &mut [u8]) {
    let mut ctr = u128::from_be_bytes(*iv);
    let mut chunks = data.chunks_exact_mut(512);
    for chunk in &mut chunks {
        if (ctr as u32).checked_add(31).is_some() {
            let p = chunk.as_mut_ptr();
            // SAFETY: 512 bytes, in place; the features are this function's.
            unsafe { ctr_n::<2>(rk, ctr, p, p) };
        } else {
            // SAFETY: the features are this function's.
            unsafe { ctr_slow(rk, ctr, chunk) };
        }
        ctr = ctr.wrapping_add(32);
    }
    // SAFETY: as above.
    unsafe { ctr_slow(rk, ctr, chunks.into_remainder()) };
}

/// CTR over at most 32 blocks through a buffer of counter blocks.
///
/// # Safety
/// As [`ctr_apply`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,gfni,ssse3,aes")]
unsafe fn ctr_slow(rk: &[u32; 32], mut ctr: u128, data: &mut [u8]) {
    if data.is_empty() {
        return;
    }
    let mut ks = [[0u8; 16]; 32];
    for b in ks.iter_mut() {
        *b = ctr.to_be_bytes();
        ctr = ctr.wrapping_add(1);
    }
    let p = ks.as_mut_ptr().cast::<u8>();
    // SAFETY: `ks` holds 512 bytes; in place is allowed.
    unsafe { crypt_n::<2>(rk, p, p) };
    for (d, k) in data.iter_mut().zip(ks.as_flattened()) {
        *d ^= k;
    }
    zeroize::Zeroize::zeroize(&mut ks);
}

/// # Safety
/// `blocks.len() <= 16 * G <= 32`; the CPU features of this module.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,gfni")]
unsafe fn crypt_padded<const G: usize>(rk: &[u32; 32], blocks: InOutBuf<'_, '_, Array<u8, U16>>) {
    debug_assert!(blocks.len() <= 16 * G && G <= 2);
    // SAFETY: the buffer holds the `G` groups `crypt_n::<G>` reads and writes (asserted above);
    // in place is allowed; this function's features were detected by its caller.
    super::padded::<32>(blocks, |p| unsafe { crypt_n::<G>(rk, p, p) });
}

/// `cipher` backend; only constructed inside `#[target_feature]` functions
/// after run-time feature detection (see `lib.rs`).
pub(crate) struct Backend<'a> {
    pub(crate) rk: &'a [u32; 32],
    /// Round keys of the AES-NI single-block path; unused here (the single
    /// block runs on GFNI, `gfni_single.rs`), kept for the common entry macro.
    #[allow(dead_code)]
    pub(crate) fk: &'a FusedKeys,
}

block_backend!(U32);

one_and_par!(|be, b| gfni_single::crypt1(be.rk, &mut b));

impl Backend<'_> {
    #[inline(always)]
    fn tail(&self, mut blocks: InOutBuf<'_, '_, Block<Self>>) {
        match blocks.len() {
            0 => {}
            1 => self.one(blocks.get(0)),
            // SAFETY: 2..=4 blocks fit; detection includes SSSE3 + AES-NI.
            2..=4 => unsafe { aesni::crypt_padded::<1>(self.rk, blocks) },
            // SAFETY: 5..=16 blocks fit 16; this module's features were detected.
            5..=16 => unsafe { crypt_padded::<1>(self.rk, blocks) },
            // SAFETY: `tail` gets < 32 blocks, which fit 32; features detected.
            _ => unsafe { crypt_padded::<2>(self.rk, blocks) },
        }
    }
}
