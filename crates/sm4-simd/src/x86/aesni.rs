//! SSSE3 + AES-NI backend: 4 blocks per 128-bit register set, two sets
//! interleaved per call (8 blocks) so the `aesenclast` latency overlaps.
//!
//! Constant time: only register shuffles with secret *data* and public
//! shuffle patterns/tables; no secret-dependent addresses or branches.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::{single, BSWAP32, INV_SHIFT_ROWS, POST_HI, POST_LO, PRE_HI, PRE_LO, ROL16, ROL24, ROL8};
use crate::FusedKeys;
use cipher::{
    array::Array,
    consts::{U16, U8},
    inout::{InOut, InOutBuf},
    Block, ParBlocks,
};

/// Shuffle patterns and tables, loaded into registers once per call.
#[derive(Clone, Copy)]
pub(crate) struct Consts {
    mask: __m128i,
    pre_lo: __m128i,
    pre_hi: __m128i,
    post_lo: __m128i,
    post_hi: __m128i,
    isr: __m128i,
    rol8: __m128i,
    rol16: __m128i,
    rol24: __m128i,
    bswap: __m128i,
}

#[inline]
#[target_feature(enable = "sse2")]
fn v(b: &[u8; 16]) -> __m128i {
    // SAFETY: `b` is a valid 16-byte array; `loadu` has no alignment requirement.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

impl Consts {
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(crate) fn new() -> Self {
        Self {
            mask: _mm_set1_epi8(0x0f),
            pre_lo: v(&PRE_LO),
            pre_hi: v(&PRE_HI),
            post_lo: v(&POST_LO),
            post_hi: v(&POST_HI),
            isr: v(&INV_SHIFT_ROWS),
            rol8: v(&ROL8),
            rol16: v(&ROL16),
            rol24: v(&ROL24),
            bswap: v(&BSWAP32),
        }
    }
}

/// Linear byte map via two nibble lookups.
#[inline]
#[target_feature(enable = "ssse3")]
fn nibble_map(x: __m128i, lo_t: __m128i, hi_t: __m128i, mask: __m128i) -> __m128i {
    let lo = _mm_and_si128(x, mask);
    let hi = _mm_and_si128(_mm_srli_epi32::<4>(x), mask);
    _mm_xor_si128(_mm_shuffle_epi8(lo_t, lo), _mm_shuffle_epi8(hi_t, hi))
}

/// T = L(tau(x)) on every 32-bit lane.
#[inline]
#[target_feature(enable = "ssse3,aes")]
fn t(x: __m128i, k: &Consts) -> __m128i {
    // Inverse ShiftRows first: the pre-map is bytewise, so it commutes with
    // the byte permutation, and LLVM then keeps it a single shuffle.
    let x = _mm_shuffle_epi8(x, k.isr);
    let y = _mm_aesenclast_si128(nibble_map(x, k.pre_lo, k.pre_hi, k.mask), _mm_setzero_si128());
    let s = nibble_map(y, k.post_lo, k.post_hi, k.mask);
    // L(s) = s ^ rol24(s) ^ rol2(s ^ rol8(s) ^ rol16(s))
    let a = _mm_xor_si128(_mm_xor_si128(s, _mm_shuffle_epi8(s, k.rol8)), _mm_shuffle_epi8(s, k.rol16));
    let a = _mm_or_si128(_mm_slli_epi32::<2>(a), _mm_srli_epi32::<30>(a));
    _mm_xor_si128(_mm_xor_si128(s, _mm_shuffle_epi8(s, k.rol24)), a)
}

/// 32 rounds over `G` independent 4-block register sets.
#[inline]
#[target_feature(enable = "ssse3,aes")]
fn rounds<const G: usize>(x: &mut [[__m128i; 4]; G], rk: &[u32; 32], k: &Consts) {
    macro_rules! round {
        ($r:expr, $d:literal, $a:literal, $b:literal, $c:literal) => {{
            let key = _mm_set1_epi32(rk[$r + $d] as i32);
            for g in 0..G {
                let s = _mm_xor_si128(_mm_xor_si128(x[g][$a], x[g][$b]), _mm_xor_si128(x[g][$c], key));
                x[g][$d] = _mm_xor_si128(x[g][$d], t(s, k));
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

/// 4x4 transpose of 32-bit lanes.
#[inline]
#[target_feature(enable = "sse2")]
fn transpose(a: __m128i, b: __m128i, c: __m128i, d: __m128i) -> [__m128i; 4] {
    let t0 = _mm_unpacklo_epi32(a, b);
    let t1 = _mm_unpacklo_epi32(c, d);
    let t2 = _mm_unpackhi_epi32(a, b);
    let t3 = _mm_unpackhi_epi32(c, d);
    [
        _mm_unpacklo_epi64(t0, t1),
        _mm_unpackhi_epi64(t0, t1),
        _mm_unpacklo_epi64(t2, t3),
        _mm_unpackhi_epi64(t2, t3),
    ]
}

/// Encrypts (or decrypts, given reversed keys) `4 * G` blocks from `inp` to
/// `out`.
///
/// # Safety
/// `inp` must be readable and `out` writable for `64 * G` bytes. They may be
/// equal (everything is loaded before anything is stored) but must not
/// otherwise overlap. The CPU must support SSSE3 and AES-NI.
#[inline]
#[target_feature(enable = "ssse3,aes")]
pub(crate) unsafe fn crypt_n<const G: usize>(rk: &[u32; 32], inp: *const u8, out: *mut u8) {
    let k = Consts::new();
    let mut x = [[_mm_setzero_si128(); 4]; G];
    for (g, xg) in x.iter_mut().enumerate() {
        // SAFETY: the caller guarantees 64*G readable bytes at `inp`.
        let b: [__m128i; 4] = core::array::from_fn(|i| unsafe {
            _mm_shuffle_epi8(_mm_loadu_si128(inp.add(64 * g + 16 * i).cast()), k.bswap)
        });
        *xg = transpose(b[0], b[1], b[2], b[3]);
    }
    rounds::<G>(&mut x, rk, &k);
    for (g, xg) in x.iter().enumerate() {
        // Output is the word-reversed state (R transform).
        let b = transpose(xg[3], xg[2], xg[1], xg[0]);
        for (i, bi) in b.iter().enumerate() {
            // SAFETY: the caller guarantees 64*G writable bytes at `out`.
            unsafe { _mm_storeu_si128(out.add(64 * g + 16 * i).cast(), _mm_shuffle_epi8(*bi, k.bswap)) };
        }
    }
}

/// Processes `n < 16` blocks through a zero-padded buffer of `4 * G` blocks.
///
/// # Safety
/// `4 * G` must be at least `blocks.len()` and at most 16; SSSE3 and AES-NI
/// must be available.
#[inline]
#[target_feature(enable = "ssse3,aes")]
pub(crate) unsafe fn crypt_padded<const G: usize>(rk: &[u32; 32], blocks: InOutBuf<'_, '_, Array<u8, U16>>) {
    debug_assert!(blocks.len() <= 4 * G && G <= 4);
    // SAFETY: the buffer holds the `G` groups `crypt_n::<G>` reads and writes (asserted above);
    // in place is allowed; this function's features were detected by its caller.
    super::padded::<16>(blocks, |p| unsafe { crypt_n::<G>(rk, p, p) });
}

/// `cipher` backend; only constructed inside `#[target_feature]` functions
/// after run-time detection of SSSE3 + AES-NI (see `lib.rs`).
pub(crate) struct Backend<'a> {
    pub(crate) rk: &'a [u32; 32],
    /// Round keys in the single-block path's form (`single::fused_round_keys`).
    pub(crate) fk: &'a FusedKeys,
}

block_backend!(U8);

one_and_par!(|be, b| single::crypt1(be.fk, &mut b));

impl Backend<'_> {
    #[inline(always)]
    fn tail(&self, mut blocks: InOutBuf<'_, '_, Block<Self>>) {
        match blocks.len() {
            0 => {}
            1 => self.one(blocks.get(0)),
            // SAFETY: 2..=4 blocks fit the 4-block batch; features detected.
            2..=4 => unsafe { crypt_padded::<1>(self.rk, blocks) },
            // SAFETY: `tail` is only called with len < 8; features detected.
            _ => unsafe { crypt_padded::<2>(self.rk, blocks) },
        }
    }
}
