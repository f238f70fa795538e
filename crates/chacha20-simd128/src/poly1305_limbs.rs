//! Poly1305's arithmetic on five 26-bit limbs (a 130-bit value, limb `i` holding bits
//! `26*i .. 26*i+26`; 2^130 ≡ 5 mod p): the block bit, the carry pass and the multiplication
//! modulo p. Below both the scalar Poly1305 (`poly1305.rs`) and its two-lane SIMD loop
//! (`poly1305_simd128.rs`), which share it.

/// The 2^128 bit every full message block carries, in limb 4 (bit 128 = 4·26 + 24).
pub(crate) const HIBIT: u32 = 1 << 24;
pub(crate) const MASK26: u32 = 0x3ff_ffff;

/// Five 26-bit limbs.
pub(crate) type Limbs = [u32; 5];

/// `d` (five sums of products, each below 2^62) carried once into limbs of at most 26 bits
/// (limb 1 may exceed it by a few units): enough for the next multiplication, not a full reduction.
#[inline(always)]
pub(crate) fn carry(d: [u64; 5]) -> Limbs {
    let mask = u64::from(MASK26);
    let mut d = d;
    for i in 0..4 {
        d[i + 1] += d[i] >> 26;
        d[i] &= mask;
    }
    d[0] += (d[4] >> 26) * 5;
    d[4] &= mask;
    d[1] += d[0] >> 26;
    d[0] &= mask;
    [d[0] as u32, d[1] as u32, d[2] as u32, d[3] as u32, d[4] as u32]
}

/// `h · r mod p`, partially reduced. `h`'s limbs below 2^28 and `r`'s below 2^27 keep every sum
/// of five products under 2^62.
#[inline(always)]
pub(crate) fn mul(h: &Limbs, r: &Limbs) -> Limbs {
    let [h0, h1, h2, h3, h4] = h.map(u64::from);
    let [r0, r1, r2, r3, r4] = r.map(u64::from);
    let (s1, s2, s3, s4) = (r1 * 5, r2 * 5, r3 * 5, r4 * 5);
    carry([
        h0 * r0 + h1 * s4 + h2 * s3 + h3 * s2 + h4 * s1,
        h0 * r1 + h1 * r0 + h2 * s4 + h3 * s3 + h4 * s2,
        h0 * r2 + h1 * r1 + h2 * r0 + h3 * s4 + h4 * s3,
        h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * s4,
        h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0,
    ])
}
