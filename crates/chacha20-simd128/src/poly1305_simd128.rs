//! Poly1305 blocks two at a time in WebAssembly `v128` registers.
//!
//! Horner's rule h = (…((m1·r + m2)·r + m3)·r …) is one long dependency chain. Split by parity
//! it becomes two independent chains that each step by r²:
//!
//! ```text
//! lane A: ((h + m1)·r² + m3)·r² + … + m(n-1)) · r²
//! lane B: ((     m2)·r² + m4)·r² + … + m(n)  ) · r      ← the last step multiplies by r
//! h' = A + B = (h + m1)·r^n + m2·r^(n-1) + … + m(n)·r
//! ```
//!
//! Each 26-bit limb of A and B lives in one vector as `u64x2` between steps; for the
//! multiplication two limbs' low words are packed into one vector (limb 0 of A and B in `u32`
//! lanes 0–1, limb 1 in lanes 2–3, …), where `i64x2.extmul_low_i32x4_u` / `_high_` form both
//! lanes' 32×32→64 products in one instruction. A step is 25 of those against splatted limbs
//! of r² (and 5·r² for the terms that wrap past 2^130, since 2^130 ≡ 5 mod p), then a carry
//! pass by shifts and masks. The last pair multiplies lane A by r² and lane B by r, chosen by
//! position only; the lanes are then added and handed back to the scalar code, which keeps the
//! single blocks and the finalization.
//!
//! Bounds: limbs leave the carry pass below 2^26 + 2^12; adding a message limb keeps them under
//! 2^27.1; 5·(r² limb) is under 2^29.4; a product is under 2^56.5 and a sum of five under 2^59,
//! so no `u64` lane overflows. Every operation is a multiply, add, shift, mask or shuffle by a
//! constant: no table, no branch or index that depends on the key or the message.

use core::arch::wasm32::{
    i32x4_add, i32x4_shl, i32x4_shuffle, i64x2_add, i64x2_extract_lane, i64x2_shl, i64x2_shuffle, u32x4,
    u64x2, u64x2_extmul_high_u32x4, u64x2_extmul_low_u32x4, u64x2_shr, u64x2_splat, v128, v128_and, v128_or,
};

use crate::poly1305_limbs::{carry, Limbs, HIBIT, MASK26};

/// `d` carried once, in two interleaved chains (0→1→2→3 and 3→4→0·5→1) so that the
/// dependency chain is half as long as a single pass; each limb ends below 2^26 + 2^12.
#[inline(always)]
fn carry2(d: [v128; 5]) -> [v128; 5] {
    let m = u64x2_splat(u64::from(MASK26));
    let [mut d0, mut d1, mut d2, mut d3, mut d4] = d;
    d4 = i64x2_add(d4, u64x2_shr(d3, 26));
    d3 = v128_and(d3, m);
    d1 = i64x2_add(d1, u64x2_shr(d0, 26));
    d0 = v128_and(d0, m);
    let c = u64x2_shr(d4, 26);
    d4 = v128_and(d4, m);
    // + 5·c, in 32-bit lanes: c < 2^29.4 (d4 has no wrapped terms: five products under 2^53.1
    // plus d3's carry), so 5·c < 2^32 and the high words stay zero. In 64-bit lanes LLVM folds
    // the shift and add into `i64x2.mul` by 5, which V8 emulates on x86.
    d0 = i64x2_add(d0, i32x4_add(c, i32x4_shl(c, 2)));
    d2 = i64x2_add(d2, u64x2_shr(d1, 26));
    d1 = v128_and(d1, m);
    d3 = i64x2_add(d3, u64x2_shr(d2, 26));
    d2 = v128_and(d2, m);
    d1 = i64x2_add(d1, u64x2_shr(d0, 26));
    d0 = v128_and(d0, m);
    d4 = i64x2_add(d4, u64x2_shr(d3, 26));
    d3 = v128_and(d3, m);
    [d0, d1, d2, d3, d4]
}

/// Multiplier limbs in `u32` lanes 0 (lane A) and 1 (lane B), and five times each.
struct Mul {
    r: [v128; 5],
    s: [v128; 5],
}

impl Mul {
    fn new(a: &Limbs, b: &Limbs) -> Mul {
        Mul {
            r: core::array::from_fn(|i| u32x4(a[i], b[i], a[i], b[i])),
            s: core::array::from_fn(|i| u32x4(a[i] * 5, b[i] * 5, a[i] * 5, b[i] * 5)),
        }
    }
}

/// (h + m) · multiplier, lane-wise, carried.
#[inline(always)]
fn step(h: [v128; 5], m: [v128; 5], k: &Mul) -> [v128; 5] {
    // The low words of two limbs packed into one vector (limb 0 of A and B in u32 lanes 0–1,
    // limb 1 in lanes 2–3, …), h's and m's added there: the sums stay below 2^28.
    let pack = |v: &[v128; 5], i: usize, j: usize| i32x4_shuffle::<0, 2, 4, 6>(v[i], v[j]);
    let a01 = i32x4_add(pack(&h, 0, 1), pack(&m, 0, 1));
    let a23 = i32x4_add(pack(&h, 2, 3), pack(&m, 2, 3));
    // Limb 4 with limb 0 in the high half, unused: a shuffle of one vector with itself lets
    // LLVM see through it and turn the extmuls back into `i64x2.mul`.
    let a44 = i32x4_add(pack(&h, 4, 0), pack(&m, 4, 0));
    let lo = |x: v128, y: v128| u64x2_extmul_low_u32x4(x, y);
    let hi = |x: v128, y: v128| u64x2_extmul_high_u32x4(x, y);
    let sum = |t: [v128; 5]| i64x2_add(i64x2_add(i64x2_add(t[0], t[1]), i64x2_add(t[2], t[3])), t[4]);
    let (r, s) = (&k.r, &k.s);
    carry2([
        sum([lo(a01, r[0]), hi(a01, s[4]), lo(a23, s[3]), hi(a23, s[2]), lo(a44, s[1])]),
        sum([lo(a01, r[1]), hi(a01, r[0]), lo(a23, s[4]), hi(a23, s[3]), lo(a44, s[2])]),
        sum([lo(a01, r[2]), hi(a01, r[1]), lo(a23, r[0]), hi(a23, s[4]), lo(a44, s[3])]),
        sum([lo(a01, r[3]), hi(a01, r[2]), lo(a23, r[1]), hi(a23, r[0]), lo(a44, s[4])]),
        sum([lo(a01, r[4]), hi(a01, r[3]), lo(a23, r[2]), hi(a23, r[1]), lo(a44, r[0])]),
    ])
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

/// Two 16-byte blocks (32 bytes) as limbs, block 0 in lane A and block 1 in lane B, each with
/// its 2^128 bit. Built from four 64-bit loads, so no `unsafe` pointer load is needed.
#[inline(always)]
fn load(pair: &[u8]) -> [v128; 5] {
    let lo = u64x2(le64(&pair[0..8]), le64(&pair[16..24]));
    let hi = u64x2(le64(&pair[8..16]), le64(&pair[24..32]));
    let m = u64x2_splat(u64::from(MASK26));
    [
        v128_and(lo, m),
        v128_and(u64x2_shr(lo, 26), m),
        v128_and(v128_or(u64x2_shr(lo, 52), i64x2_shl(hi, 12)), m),
        v128_and(u64x2_shr(hi, 14), m),
        v128_or(u64x2_shr(hi, 40), u64x2_splat(u64::from(HIBIT))),
    ]
}

/// The accumulator after the blocks of `data` (a non-zero multiple of 32 bytes), starting
/// from `h`; `r` and `r2` are r and r² mod p as limbs.
pub(crate) fn pairs(h: &Limbs, r: &Limbs, r2: &Limbs, data: &[u8]) -> Limbs {
    debug_assert!(!data.is_empty() && data.len().is_multiple_of(32));
    let both = Mul::new(r2, r2);
    let last = Mul::new(r2, r);
    let mut acc: [v128; 5] = core::array::from_fn(|i| u64x2(u64::from(h[i]), 0));
    let (body, tail) = data.split_at(data.len() - 32);
    // `black_box` keeps the multipliers opaque. Otherwise LLVM splits each extmul into two
    // zero-extensions and an `i64x2.mul`, hoists the multiplier's extension out of the loop, and
    // leaves `i64x2.mul` inside it, which V8 has to emulate on x86 with about eight instructions
    // (three `pmuludq`) where an extmul is one `pmuludq` and two unpacks. Measured in Node 20:
    // 1.06× RustCrypto's scalar Poly1305 without it, 1.6–1.7× with it.
    for pair in body.chunks_exact(32) {
        acc = step(acc, load(pair), core::hint::black_box(&both));
    }
    acc = step(acc, load(tail), core::hint::black_box(&last));
    // A + B, then one scalar carry pass (each sum is below 2^28).
    let folded: [u64; 5] = core::array::from_fn(|i| {
        let x = i64x2_add(acc[i], i64x2_shuffle::<1, 0>(acc[i], acc[i]));
        i64x2_extract_lane::<0>(x) as u64
    });
    carry(folded)
}
