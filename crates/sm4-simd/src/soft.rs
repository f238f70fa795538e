//! Portable, constant-time SM4.
//!
//! There are no secret-indexed memory accesses anywhere in this module: the
//! S-box is evaluated as a Boolean circuit on bit planes ("bitslicing").
//!
//! SM4's S-box is `S(x) = A * inv(A*x + 0xD3) + 0xD3` with inversion in
//! GF(2^8) mod `x^8+x^7+x^6+x^5+x^4+x^2+1`. We move the argument by a linear
//! isomorphism into the tower field GF((2^4)^2) (GF(16) = GF(2)[t]/(t^4+t+1),
//! GF(256) = GF(16)[y]/(y^2+y+8)), where inversion is three GF(16)
//! multiplications plus one GF(16) inversion, and come back with another
//! linear map. The maps (with SM4's affine parts folded in) were derived and
//! checked against the S-box table by `tools/gen_sbox.py`.
//!
//! Lane layout: a `u64` "plane" `p[i]` holds bit `i` of up to 64 S-box input
//! bytes. For 16 blocks a round needs exactly 64 S-box evaluations, so the
//! batch path fills every lane; the single-block path uses 4 lanes but skips
//! the transposition.
#![deny(unsafe_code)]

use cipher::{
    array::Array,
    consts::U16,
    inout::{InOut, InOutBuf},
    Block, ParBlocks,
};

/// System parameter FK and fixed parameters CK from GB/T 32907.
const FK: [u32; 4] = [0xa3b1_bac6, 0x56aa_3350, 0x677d_9197, 0xb270_22dc];

/// `CK[i]` byte `j` is `(4i + j) * 7 mod 256`; computed rather than tabulated.
const CK: [u32; 32] = {
    let mut ck = [0u32; 32];
    let mut i = 0;
    while i < 32 {
        let mut w = 0u32;
        let mut j = 0;
        while j < 4 {
            w = (w << 8) | (((4 * i + j) * 7) % 256) as u32;
            j += 1;
        }
        ck[i] = w;
        i += 1;
    }
    ck
};

type Planes = [u64; 8];
type Nib = [u64; 4];

/// GF(16) multiplication mod t^4+t+1, schoolbook (16 AND, 15 XOR).
#[inline(always)]
fn mul16(a: Nib, b: Nib) -> Nib {
    let p0 = a[0] & b[0];
    let p1 = (a[0] & b[1]) ^ (a[1] & b[0]);
    let p2 = (a[0] & b[2]) ^ (a[1] & b[1]) ^ (a[2] & b[0]);
    let p3 = (a[0] & b[3]) ^ (a[1] & b[2]) ^ (a[2] & b[1]) ^ (a[3] & b[0]);
    let p4 = (a[1] & b[3]) ^ (a[2] & b[2]) ^ (a[3] & b[1]);
    let p5 = (a[2] & b[3]) ^ (a[3] & b[2]);
    let p6 = a[3] & b[3];
    // t^4 = t + 1, t^5 = t^2 + t, t^6 = t^3 + t^2
    [p0 ^ p4, p1 ^ p4 ^ p5, p2 ^ p5 ^ p6, p3 ^ p6]
}

/// GF(16) inversion (0 -> 0) from its algebraic normal form.
#[inline(always)]
fn inv16(a: Nib) -> Nib {
    let [a0, a1, a2, a3] = a;
    let a01 = a0 & a1;
    let a02 = a0 & a2;
    let a12 = a1 & a2;
    let a03 = a0 & a3;
    let a13 = a1 & a3;
    let a23 = a2 & a3;
    let a012 = a01 & a2;
    let a123 = a12 & a3;
    let a013 = a01 & a3;
    let a023 = a02 & a3;
    [
        a0 ^ a1 ^ a2 ^ a02 ^ a12 ^ a012 ^ a3 ^ a123,
        a01 ^ a02 ^ a12 ^ a3 ^ a13 ^ a013,
        a01 ^ a2 ^ a02 ^ a3 ^ a03 ^ a023,
        a1 ^ a2 ^ a3 ^ a03 ^ a13 ^ a23 ^ a123,
    ]
}

/// The SM4 S-box applied to every lane of the bit planes.
#[inline(always)]
fn sbox_planes(x: &Planes) -> Planes {
    // Input map: u = phi(A*x + 0xD3), phi: SM4 field -> tower field.
    let u: Planes = [
        x[3] ^ x[4] ^ x[6] ^ x[7],
        x[0] ^ x[2] ^ x[5] ^ x[6],
        !(x[1] ^ x[2] ^ x[3] ^ x[4] ^ x[5] ^ x[7]),
        !(x[0] ^ x[1] ^ x[5] ^ x[6] ^ x[7]),
        x[0] ^ x[1] ^ x[4] ^ x[7],
        !x[6],
        x[2] ^ x[6] ^ x[7],
        !(x[0] ^ x[1] ^ x[2] ^ x[3] ^ x[4] ^ x[5] ^ x[6]),
    ];
    let a0: Nib = [u[0], u[1], u[2], u[3]];
    let a1: Nib = [u[4], u[5], u[6], u[7]];
    // (a1*y + a0)^-1 = (a1*d)*y + (a0+a1)*d with d = (8*a1^2 + a1*a0 + a0^2)^-1.
    let p = mul16(a1, a0);
    let delta: Nib = [
        u[0] ^ u[2] ^ u[6] ^ p[0],
        u[2] ^ u[5] ^ u[6] ^ u[7] ^ p[1],
        u[1] ^ u[3] ^ u[5] ^ p[2],
        u[3] ^ u[4] ^ u[6] ^ u[7] ^ p[3],
    ];
    let d = inv16(delta);
    let hi = mul16(a1, d);
    let lo = mul16([a0[0] ^ a1[0], a0[1] ^ a1[1], a0[2] ^ a1[2], a0[3] ^ a1[3]], d);
    let v: Planes = [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]];
    // Output map: A * phi^-1(v) + 0xD3.
    [
        !(v[0] ^ v[1] ^ v[4] ^ v[7]),
        !(v[0] ^ v[2] ^ v[6]),
        v[2] ^ v[5] ^ v[6] ^ v[7],
        v[0] ^ v[2] ^ v[4] ^ v[7],
        !(v[1] ^ v[3] ^ v[4]),
        v[1] ^ v[3] ^ v[4] ^ v[5] ^ v[7],
        !(v[0] ^ v[1] ^ v[2] ^ v[4] ^ v[6]),
        !(v[0] ^ v[3] ^ v[4]),
    ]
}

/// Swap-move 8x8 bit transpose inside every byte position of eight words.
/// Afterwards word `i` holds bit `i` of every byte; it is an involution.
#[inline(always)]
fn transpose8(w: &mut Planes) {
    const MASKS: [(u32, u64); 3] =
        [(1, 0x5555_5555_5555_5555), (2, 0x3333_3333_3333_3333), (4, 0x0f0f_0f0f_0f0f_0f0f)];
    for (shift, mask) in MASKS {
        let s = shift as usize;
        for j in 0..8 {
            if j & s == 0 {
                let t = ((w[j] >> shift) ^ w[j + s]) & mask;
                w[j + s] ^= t;
                w[j] ^= t << shift;
            }
        }
    }
}

/// tau: the S-box on the four bytes of one word (4 live lanes, no transpose).
#[inline(always)]
pub(crate) fn tau(a: u32) -> u32 {
    const LANES: u64 = 0x0101_0101;
    let a = u64::from(a);
    let mut x = [0u64; 8];
    for (i, p) in x.iter_mut().enumerate() {
        *p = (a >> i) & LANES;
    }
    let y = sbox_planes(&x);
    let mut r = 0u64;
    for (i, p) in y.iter().enumerate() {
        r |= (p & LANES) << i;
    }
    r as u32
}

/// The round function's linear transform L.
#[inline(always)]
fn l_enc(b: u32) -> u32 {
    b ^ b.rotate_left(2) ^ b.rotate_left(10) ^ b.rotate_left(18) ^ b.rotate_left(24)
}

/// The key schedule's linear transform L'.
#[inline(always)]
fn l_key(b: u32) -> u32 {
    b ^ b.rotate_left(13) ^ b.rotate_left(23)
}

/// Expands a 128-bit key into the 32 encryption round keys.
pub(crate) fn expand_key(key: &[u8; 16]) -> [u32; 32] {
    let mut k = [0u32; 4];
    for i in 0..4 {
        let w = u32::from_be_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]]);
        k[i] = w ^ FK[i];
    }
    let mut rk = [0u32; 32];
    for (i, out) in rk.iter_mut().enumerate() {
        let t = k[(i + 1) % 4] ^ k[(i + 2) % 4] ^ k[(i + 3) % 4] ^ CK[i];
        k[i % 4] ^= l_key(tau(t));
        *out = k[i % 4];
    }
    // `k` is a copy of key material on the stack; clear it.
    zeroize::Zeroize::zeroize(&mut k);
    rk
}

#[inline(always)]
fn load_block(b: &[u8; 16]) -> [u32; 4] {
    core::array::from_fn(|i| u32::from_be_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]))
}

#[inline(always)]
fn store_block(x: &[u32; 4], b: &mut [u8; 16]) {
    // The final reverse transform R outputs the words in reverse order.
    for i in 0..4 {
        b[4 * i..4 * i + 4].copy_from_slice(&x[3 - i].to_be_bytes());
    }
}

/// Encrypts (or, with reversed round keys, decrypts) one block.
pub(crate) fn crypt1(rk: &[u32; 32], block: &mut [u8; 16]) {
    let mut x = load_block(block);
    for (r, k) in rk.iter().enumerate() {
        let t = x[(r + 1) % 4] ^ x[(r + 2) % 4] ^ x[(r + 3) % 4] ^ k;
        x[r % 4] ^= l_enc(tau(t));
    }
    store_block(&x, block);
}

/// Processes 16 blocks with all 64 lanes of the bitsliced S-box in use.
pub(crate) fn crypt16(rk: &[u32; 32], blocks: &mut [[u8; 16]; 16]) {
    let mut x: [[u32; 4]; 16] = core::array::from_fn(|b| load_block(&blocks[b]));
    for (r, k) in rk.iter().enumerate() {
        let j = r % 4;
        let mut w: Planes = core::array::from_fn(|p| {
            let t0 = x[2 * p][(j + 1) % 4] ^ x[2 * p][(j + 2) % 4] ^ x[2 * p][(j + 3) % 4] ^ k;
            let t1 = x[2 * p + 1][(j + 1) % 4] ^ x[2 * p + 1][(j + 2) % 4] ^ x[2 * p + 1][(j + 3) % 4] ^ k;
            u64::from(t0) | (u64::from(t1) << 32)
        });
        transpose8(&mut w);
        let mut s = sbox_planes(&w);
        transpose8(&mut s);
        for p in 0..8 {
            x[2 * p][j] ^= l_enc(s[p] as u32);
            x[2 * p + 1][j] ^= l_enc((s[p] >> 32) as u32);
        }
    }
    for (b, out) in blocks.iter_mut().enumerate() {
        store_block(&x[b], out);
    }
}

/// Runs `n <= 16` blocks through the 16-wide path using a padded buffer.
fn crypt_tail(rk: &[u32; 32], mut blocks: InOutBuf<'_, '_, Block<Backend<'_>>>) {
    let n = blocks.len();
    let mut buf = [[0u8; 16]; 16];
    for (dst, src) in buf.iter_mut().zip(blocks.get_in()) {
        dst.copy_from_slice(src);
    }
    crypt16(rk, &mut buf);
    for (dst, src) in blocks.get_out().iter_mut().zip(&buf[..n]) {
        dst.copy_from_slice(src);
    }
    zeroize::Zeroize::zeroize(&mut buf);
}

/// Backend handed to `cipher` closures. The same type serves encryption and
/// decryption: SM4 decryption is encryption with the round keys reversed.
pub(crate) struct Backend<'a> {
    pub(crate) rk: &'a [u32; 32],
}

block_backend!(U16);

impl Backend<'_> {
    #[inline(always)]
    fn one(&self, mut block: InOut<'_, '_, Block<Self>>) {
        let mut b: [u8; 16] = (*block.get_in()).into();
        crypt1(self.rk, &mut b);
        *block.get_out() = Array::from(b);
    }

    #[inline(always)]
    fn par(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let mut buf: [[u8; 16]; 16] = core::array::from_fn(|i| blocks.get_in()[i].into());
        crypt16(self.rk, &mut buf);
        for (dst, src) in blocks.get_out().iter_mut().zip(&buf) {
            dst.copy_from_slice(src);
        }
    }

    #[inline(always)]
    fn tail(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        if blocks.len() == 1 {
            for b in blocks {
                self.one(b);
            }
        } else if !blocks.is_empty() {
            crypt_tail(self.rk, blocks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ck_matches_standard() {
        assert_eq!(CK[0], 0x00070e15);
        assert_eq!(CK[1], 0x1c232a31);
        assert_eq!(CK[31], 0x646b7279);
    }

    #[test]
    fn transpose_is_involution() {
        let orig: Planes = core::array::from_fn(|i| 0x0123_4567_89ab_cdefu64.rotate_left(7 * i as u32));
        let mut w = orig;
        transpose8(&mut w);
        assert_ne!(w, orig);
        transpose8(&mut w);
        assert_eq!(w, orig);
    }

    #[test]
    fn batch_equals_single() {
        let rk = expand_key(&[7u8; 16]);
        let mut blocks: [[u8; 16]; 16] = core::array::from_fn(|i| [i as u8 * 13 + 1; 16]);
        let mut singles = blocks;
        crypt16(&rk, &mut blocks);
        for b in singles.iter_mut() {
            crypt1(&rk, b);
        }
        assert_eq!(blocks, singles);
    }
}
