//! Poly1305 (RFC 8439 §2.5) for the simd128 build: the key set-up, a streaming `update` that
//! buffers a partial block, the AEAD's zero padding, single blocks and the finalization, all in
//! scalar code on five 26-bit limbs (`u32`, products in `u64`: WebAssembly has no 64×64→128
//! multiply, so this radix is the fast one there; their arithmetic is `poly1305_limbs.rs`). Runs
//! of two blocks or more go to the two-lane SIMD loop in `poly1305_simd128.rs`, which needs r² as
//! well as r.
//!
//! Limb `i` of a 130-bit value holds bits `26*i .. 26*i+26`; 2^130 ≡ 5 (mod p), which is where
//! every `* 5` comes from. Constant-time by construction: multiplications, additions, shifts and
//! masks; the final reduction selects with a mask, never a branch; no table, no secret index.

use zeroize::Zeroize;

use crate::poly1305_limbs::{mul, Limbs, HIBIT, MASK26};
use crate::poly1305_simd128;

/// Bytes per Poly1305 block.
pub(crate) const BLOCK: usize = 16;
/// From this many bytes of whole blocks on, the SIMD loop pays for its set-up (splatting r and
/// r² into vectors); below, blocks go one at a time.
const SIMD_MIN: usize = 4 * BLOCK;

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// A 16-byte block as limbs (bytes 0, 3, 6, 9, 12 start limbs 0–4), with `hibit` added.
#[inline(always)]
fn block_limbs(m: &[u8], hibit: u32) -> Limbs {
    [
        le32(&m[0..4]) & MASK26,
        (le32(&m[3..7]) >> 2) & MASK26,
        (le32(&m[6..10]) >> 4) & MASK26,
        (le32(&m[9..13]) >> 6) & MASK26,
        (le32(&m[12..16]) >> 8) | hibit,
    ]
}

/// Poly1305 under a one-time key (r ‖ s, 32 bytes). The key must never authenticate two messages.
pub struct Poly1305 {
    /// r, clamped (RFC 8439 §2.5.1), as limbs.
    r: Limbs,
    /// r² mod p, for the SIMD loop's two lanes.
    r2: Limbs,
    /// The accumulator.
    h: Limbs,
    /// s, added at the end modulo 2^128.
    s: [u32; 4],
    /// A partial block waiting for more bytes.
    buf: [u8; BLOCK],
    buf_len: usize,
}

impl Poly1305 {
    /// Poly1305 keyed with `key` = r ‖ s.
    pub fn new(key: &[u8; 32]) -> Self {
        // The masks clamp r: the top four bits of bytes 3, 7, 11, 15 and the bottom two of bytes
        // 4, 8, 12 cleared, placed where each limb's bits land.
        let r = [
            le32(&key[0..4]) & 0x3ff_ffff,
            (le32(&key[3..7]) >> 2) & 0x3ff_ff03,
            (le32(&key[6..10]) >> 4) & 0x3ff_c0ff,
            (le32(&key[9..13]) >> 6) & 0x3f0_3fff,
            (le32(&key[12..16]) >> 8) & 0x00f_ffff,
        ];
        let s = [le32(&key[16..20]), le32(&key[20..24]), le32(&key[24..28]), le32(&key[28..32])];
        Poly1305 { r, r2: mul(&r, &r), h: [0; 5], s, buf: [0; BLOCK], buf_len: 0 }
    }

    /// Which implementation runs the blocks: `"simd128"`.
    pub const BACKEND: &'static str = "simd128";

    /// Feeds message bytes; any split of a message into calls gives the same tag.
    pub fn update(&mut self, mut data: &[u8]) {
        if self.buf_len > 0 {
            let take = (BLOCK - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < BLOCK {
                return;
            }
            let block = self.buf;
            self.blocks(&block);
            self.buf_len = 0;
        }
        let whole = data.len() - data.len() % BLOCK;
        self.blocks(&data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    /// Pads the message so far with zeros to a whole number of blocks (RFC 8439 §2.8's pad16:
    /// the padded block is a full block, 2^128 bit included). Nothing happens on a boundary.
    pub fn pad(&mut self) {
        if self.buf_len > 0 {
            self.buf[self.buf_len..].fill(0);
            let block = self.buf;
            self.blocks(&block);
            self.buf_len = 0;
        }
    }

    /// Whole blocks (`data.len()` a multiple of 16), each with its 2^128 bit.
    fn blocks(&mut self, data: &[u8]) {
        let simd = if data.len() >= SIMD_MIN { data.len() & !(2 * BLOCK - 1) } else { 0 };
        if simd > 0 {
            self.h = poly1305_simd128::pairs(&self.h, &self.r, &self.r2, &data[..simd]);
        }
        for m in data[simd..].chunks_exact(BLOCK) {
            self.block(m, HIBIT);
        }
    }

    /// h = (h + m) · r for one block.
    fn block(&mut self, m: &[u8], hibit: u32) {
        let mut h = self.h;
        for (x, y) in h.iter_mut().zip(block_limbs(m, hibit)) {
            *x += y;
        }
        self.h = mul(&h, &self.r);
    }

    /// The tag: the last partial block (with its 0x01 byte, no 2^128 bit), h reduced fully
    /// modulo p, plus s modulo 2^128.
    pub fn finalize(mut self) -> [u8; 16] {
        if self.buf_len > 0 {
            let mut last = [0u8; BLOCK];
            last[..self.buf_len].copy_from_slice(&self.buf[..self.buf_len]);
            last[self.buf_len] = 1;
            self.block(&last, 0);
            last.zeroize();
        }
        let h = self.h.map(u64::from);
        // Two full carry passes leave every limb below 2^26, so h < 2^130; after the first, only
        // a carry of at most 1 can ripple through, and if it leaves limb 4 the value wrapped to
        // something small, so the second pass's `* 5` cannot overflow limb 0.
        let mut h = [h[0], h[1], h[2], h[3], h[4]];
        let mask = u64::from(MASK26);
        for _ in 0..2 {
            for i in 0..4 {
                h[i + 1] += h[i] >> 26;
                h[i] &= mask;
            }
            h[0] += (h[4] >> 26) * 5;
            h[4] &= mask;
        }
        // g = h + 5 - 2^130: non-negative exactly when h ≥ p. Choose g then, h otherwise, by a
        // mask from g's sign bit.
        let mut g = [0u64; 5];
        let mut c = 5;
        for i in 0..5 {
            g[i] = h[i] + c;
            c = g[i] >> 26;
            g[i] &= mask;
        }
        let take_g = 0u64.wrapping_sub(c); // c = 1 exactly when h + 5 ≥ 2^130
        for i in 0..5 {
            h[i] = (h[i] & !take_g) | (g[i] & take_g);
        }
        // 130 bits → 128 (the top two are dropped: the tag is modulo 2^128), then + s.
        let words = [
            (h[0] | (h[1] << 26)) as u32,
            ((h[1] >> 6) | (h[2] << 20)) as u32,
            ((h[2] >> 12) | (h[3] << 14)) as u32,
            ((h[3] >> 18) | (h[4] << 8)) as u32,
        ];
        let mut tag = [0u8; 16];
        let mut carry = 0u64;
        for i in 0..4 {
            let f = u64::from(words[i]) + u64::from(self.s[i]) + carry;
            tag[4 * i..4 * i + 4].copy_from_slice(&(f as u32).to_le_bytes());
            carry = f >> 32;
        }
        h.zeroize();
        g.zeroize();
        tag
    }
}

impl Drop for Poly1305 {
    fn drop(&mut self) {
        self.r.zeroize();
        self.r2.zeroize();
        self.h.zeroize();
        self.s.zeroize();
        self.buf.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for Poly1305 {}

impl core::fmt::Debug for Poly1305 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Poly1305 { .. }")
    }
}
