//! Differential property test of the simd128 Poly1305 against RustCrypto's `poly1305` (its
//! portable code on wasm32): random keys and also the extremes (r with every bit clamping
//! allows, r = 1 or 2, s = 0, s = 2^128 − 1 and just below); messages of 0–4 KiB that are
//! random, all 0xff (the largest limbs, so every carry is taken), all zero, or a mix of such
//! blocks; fed in random pieces. Unpadded messages (the final partial block with its 0x01
//! byte) against `compute_unpadded`, and the AEAD's zero padding against `update_padded`.

use poly1305::universal_hash::{KeyInit, UniversalHash};

use crate::differential::Rng;

/// This build's Poly1305: the crate's simd128 one on the SIMD build.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) use chacha20_simd128::Poly1305 as Mac;

/// Natively there is no SIMD Poly1305: the same calls on RustCrypto's, buffered, so the vectors
/// and this harness are checked before they can mislead the wasm run.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(crate) struct Mac {
    key: [u8; 32],
    msg: Vec<u8>,
    /// How many bytes of `msg` were zero-padded as AEAD segments.
    padded: usize,
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
impl Mac {
    pub(crate) fn new(key: &[u8; 32]) -> Self {
        Mac { key: *key, msg: Vec::new(), padded: 0 }
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        self.msg.extend_from_slice(data);
    }

    pub(crate) fn pad(&mut self) {
        self.msg.resize(self.msg.len().next_multiple_of(16), 0);
        self.padded = self.msg.len();
    }

    pub(crate) fn finalize(self) -> [u8; 16] {
        let mut r = poly1305::Poly1305::new(&self.key.into());
        r.update_padded(&self.msg[..self.padded]);
        let rest = &self.msg[self.padded..];
        if rest.len().is_multiple_of(16) {
            // Whole blocks: padded or not, the same.
            r.update_padded(rest);
            return r.finalize().into();
        }
        // RustCrypto's API has no partial block after padded segments; the harness never asks.
        assert_eq!(self.padded, 0, "the native stand-in takes a partial tail only alone");
        r.compute_unpadded(rest).into()
    }
}

/// The one-time key: random, or with r or s at an extreme.
fn key(rng: &mut Rng) -> [u8; 32] {
    let mut k: [u8; 32] = rng.bytes(32).try_into().expect("32");
    match rng.below(8) {
        0 => k[..16].fill(0xff), // r: every bit the clamp leaves
        1 => {
            k[..16].fill(0);
            k[0] = 1 + rng.below(2) as u8; // r = 1 or 2
        }
        _ => {}
    }
    match rng.below(6) {
        0 => k[16..].fill(0xff), // s = 2^128 - 1
        1 => {
            k[16..].fill(0xff);
            k[16] = 0xfb; // s = 2^128 - 5
        }
        2 => k[16..].fill(0),
        _ => {}
    }
    k
}

/// A message: random, all 0xff, all zero, or blocks of each.
fn message(rng: &mut Rng) -> Vec<u8> {
    let n = rng.below(4097) as usize;
    match rng.below(4) {
        0 => vec![0xff; n],
        1 => vec![0; n],
        2 => rng.bytes(n),
        _ => (0..n.div_ceil(16))
            .flat_map(|_| match rng.below(3) {
                0 => vec![0xff; 16],
                1 => vec![0; 16],
                _ => rng.bytes(16),
            })
            .take(n)
            .collect(),
    }
}

/// `msg` cut at up to 8 random points.
fn pieces<'a>(rng: &mut Rng, msg: &'a [u8]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = (0..rng.below(9)).map(|_| rng.below(msg.len() as u64 + 1) as usize).collect();
    cuts.push(msg.len());
    cuts.sort_unstable();
    let mut at = 0;
    cuts.iter()
        .map(|&c| {
            let p = &msg[at..c];
            at = c;
            p
        })
        .collect()
}

/// `cases` random cases from the generator state `start`: the number of comparisons, or the
/// first difference (the same start replays it).
pub fn run(start: u64, cases: u32) -> Result<usize, String> {
    let mut rng = Rng(start);
    for case in 0..cases {
        let k = key(&mut rng);
        let msg = message(&mut rng);
        let fail = |what: &str| Err(format!("poly1305 case {case} ({} bytes): {what}", msg.len()));

        let mut ours = Mac::new(&k);
        pieces(&mut rng, &msg).iter().for_each(|p| ours.update(p));
        let want: [u8; 16] = poly1305::Poly1305::new(&k.into()).compute_unpadded(&msg).into();
        if ours.finalize() != want {
            return fail("unpadded tag differs");
        }

        // AEAD style: two segments, each zero-padded, then one full block.
        let cut = rng.below(msg.len() as u64 + 1) as usize;
        let (a, b) = msg.split_at(cut);
        let mut ours = Mac::new(&k);
        for seg in [a, b] {
            pieces(&mut rng, seg).iter().for_each(|p| ours.update(p));
            ours.pad();
        }
        ours.update(&[0x5a; 16]);
        let mut theirs = poly1305::Poly1305::new(&k.into());
        theirs.update_padded(a);
        theirs.update_padded(b);
        theirs.update_padded(&[0x5a; 16]);
        let want: [u8; 16] = theirs.finalize().into();
        if ours.finalize() != want {
            return fail(&format!("padded tag differs (segments {} + {})", a.len(), b.len()));
        }
    }
    Ok(cases as usize * 2)
}
