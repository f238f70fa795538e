//! Differential property test against RustCrypto's `chacha20` (its portable code on wasm32):
//! random keys and nonces; start positions at 0, anywhere, or within 80 blocks of the end of the
//! 32-bit block counter (and past it); streaming `apply_keystream` calls of 0–4 KiB in total,
//! cut at random points, with seeks in between. Every result must match: bytes, errors (running
//! past the counter's end), positions. The cores are also compared raw across the counter's wrap
//! (no length check there), and the AEADs (on the simd128 build composed over the crate's SIMD
//! Poly1305) seal to the same bytes, also into a separate buffer and across several of their
//! seal pieces, and refuse a flipped bit without writing anything.

use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherCore, StreamCipherSeek, StreamCipherSeekCore};
use chacha20poly1305::aead::inout::InOutBuf;
use chacha20poly1305::aead::{AeadInOut, KeyInit};

/// The core type a `ChaCha20` of this build wraps (RustCrypto's own where there is no simd128).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type OurCore = chacha20_simd128::ChaCha20Core;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
type OurCore = chacha20::ChaChaCore<chacha20::R20, chacha20::variants::Ietf>;
type RefCore = chacha20::ChaChaCore<chacha20::R20, chacha20::variants::Ietf>;

/// SplitMix64: small, started from any value, and the same sequence on every platform (reproducible failures).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Bytes in the IETF keystream: 2^32 blocks of 64.
const END: u64 = 64 << 32;

/// A stream position: the start, anywhere, near the counter's end, or past it.
fn position(rng: &mut Rng) -> u64 {
    match rng.below(8) {
        0 => 0,
        1 => rng.below(1 << 24),
        2 => END + rng.below(200),
        _ => END - rng.below(80 * 64 + 1),
    }
}

/// Drives one of ours and one reference cipher through the same random calls.
fn stream_case<A, B>(rng: &mut Rng, nonce_len: usize, case: u32) -> Result<(), String>
where
    A: KeyIvInit + StreamCipher + StreamCipherSeek,
    B: KeyIvInit + StreamCipher + StreamCipherSeek,
{
    let (key, nonce) = (rng.bytes(32), rng.bytes(nonce_len));
    let mut ours = A::new_from_slices(&key, &nonce).map_err(|_| "key/nonce length")?;
    let mut theirs = B::new_from_slices(&key, &nonce).map_err(|_| "key/nonce length")?;
    let fail = |what: String| Err(format!("differential case {case} ({nonce_len}-byte nonce): {what}"));

    let total = rng.below(4097) as usize;
    let mut cuts: Vec<usize> = (0..rng.below(6)).map(|_| rng.below(total as u64 + 1) as usize).collect();
    cuts.push(total);
    cuts.sort_unstable();
    let mut done = 0;
    for (i, &cut) in cuts.iter().enumerate() {
        if i == 0 || rng.below(4) == 0 {
            let to = if i > 0 && rng.below(2) == 0 {
                // Nearby: within a few blocks of where the stream is, back or forth.
                let here: u64 = ours.try_current_pos().unwrap_or(0);
                here.saturating_add(rng.below(512)).saturating_sub(256)
            } else {
                position(rng)
            };
            let (a, b) = (ours.try_seek(to).is_ok(), theirs.try_seek(to).is_ok());
            if a != b {
                return fail(format!("seek to {to}: ours ok={a}, reference ok={b}"));
            }
        }
        let data = rng.bytes(cut - done);
        let (mut x, mut y) = (data.clone(), data);
        let (a, b) = (ours.try_apply_keystream(&mut x).is_ok(), theirs.try_apply_keystream(&mut y).is_ok());
        if a != b || x != y {
            return fail(format!(
                "{} bytes after position {done}: ok {a}/{b}, bytes equal {}",
                x.len(),
                x == y
            ));
        }
        let (p, q) = (ours.try_current_pos::<u64>().ok(), theirs.try_current_pos::<u64>().ok());
        if p != q {
            return fail(format!("position {p:?} vs {q:?}"));
        }
        done = cut;
    }
    Ok(())
}

/// The raw cores across the 32-bit counter's wrap, where the wrapper's length check is not in
/// the way: the counter must wrap to 0 without touching the nonce, as RustCrypto's does.
fn core_wrap_case(rng: &mut Rng, case: u32) -> Result<(), String> {
    let (key, nonce) = (rng.bytes(32), rng.bytes(12));
    let mut ours = OurCore::new_from_slices(&key, &nonce).map_err(|_| "key/nonce length")?;
    let mut theirs = RefCore::new_from_slices(&key, &nonce).map_err(|_| "key/nonce length")?;
    let start = u32::MAX - rng.below(8) as u32;
    // Through the trait: RustCrypto's core also has inherent methods of the same names.
    StreamCipherSeekCore::set_block_pos(&mut ours, start);
    StreamCipherSeekCore::set_block_pos(&mut theirs, start);
    let n = 1 + rng.below(12) as usize;
    let mut a = vec![Default::default(); n];
    let mut b = vec![Default::default(); n];
    ours.write_keystream_blocks(&mut a);
    theirs.write_keystream_blocks(&mut b);
    if a != b || StreamCipherSeekCore::get_block_pos(&ours) != StreamCipherSeekCore::get_block_pos(&theirs) {
        return Err(format!("core wrap case {case}: {n} blocks from counter {start:#x} differ"));
    }
    Ok(())
}

/// Both AEADs: the same sealed bytes as RustCrypto's over `chacha20`, and a flipped bit refused.
fn aead_case(rng: &mut Rng, case: u32) -> Result<(), String> {
    let key = rng.bytes(32);
    let aad_len = rng.below(65) as usize;
    let aad = rng.bytes(aad_len);
    // Cases 0–599 take every length from 0 to 599 once (the AEAD's first 192 bytes use the
    // keystream pass that also keys the MAC, and its pieces start after them: every edge of
    // that split, of 64-byte blocks and of 256-byte groups is a length here). Then mostly
    // 0–4 KiB; one case in 16 is 16–48 KiB, several of the AEAD's seal pieces.
    let pt_len = if case < 600 {
        case as usize
    } else if rng.below(16) == 0 {
        (16 << 10) * (1 + rng.below(3) as usize) + rng.below(129) as usize - 64
    } else {
        rng.below(4097) as usize
    };
    let pt = rng.bytes(pt_len);
    let fail = |what: &str| Err(format!("AEAD case {case} ({} bytes): {what}", pt.len()));
    let nonce = rng.bytes(12);
    let n12: [u8; 12] = nonce[..].try_into().expect("12");
    let ours = chacha20_simd128::ChaCha20Poly1305::new_from_slice(&key).map_err(|_| "key")?;
    let theirs = chacha20poly1305::ChaCha20Poly1305::new_from_slice(&key).map_err(|_| "key")?;
    let (mut x, mut y) = (pt.clone(), pt.clone());
    let ta = ours.encrypt_inout_detached(&n12.into(), &aad, (&mut x[..]).into()).map_err(|_| "seal")?;
    let tb = theirs.encrypt_inout_detached(&n12.into(), &aad, (&mut y[..]).into()).map_err(|_| "seal")?;
    if x != y || ta != tb {
        return fail("ChaCha20-Poly1305 sealed bytes differ");
    }
    // Input and output in separate buffers: the same bytes.
    let mut out = vec![0u8; pt.len()];
    let inout = InOutBuf::new(&pt, &mut out).map_err(|_| "buffer lengths")?;
    let tc = ours.encrypt_inout_detached(&n12.into(), &aad, inout).map_err(|_| "seal")?;
    if out != y || tc != tb {
        return fail("ChaCha20-Poly1305 sealed into another buffer differs");
    }
    let flip = rng.below(x.len() as u64 * 8 + 128) as usize;
    let mut bad_tag = ta;
    if flip < x.len() * 8 {
        x[flip / 8] ^= 1 << (flip % 8);
    } else {
        bad_tag[(flip - x.len() * 8) / 8] ^= 1 << (flip % 8);
    }
    let tampered = x.clone();
    if ours.decrypt_inout_detached(&n12.into(), &aad, (&mut x[..]).into(), &bad_tag).is_ok() {
        return fail("a flipped bit opened");
    }
    if x != tampered {
        return fail("a refused open changed the buffer");
    }
    // Refused into another buffer: nothing written there either.
    let mut out = vec![0u8; x.len()];
    let inout = InOutBuf::new(&x, &mut out).map_err(|_| "buffer lengths")?;
    if ours.decrypt_inout_detached(&n12.into(), &aad, inout, &bad_tag).is_ok() || out.iter().any(|&b| b != 0)
    {
        return fail("a refused open into another buffer opened or wrote");
    }
    if ours.decrypt_inout_detached(&n12.into(), &aad, (&mut y[..]).into(), &tb).is_err() || y != pt {
        return fail("the reference's ciphertext did not open to the plaintext");
    }

    let n24: [u8; 24] = rng.bytes(24)[..].try_into().expect("24");
    let ours = chacha20_simd128::XChaCha20Poly1305::new_from_slice(&key).map_err(|_| "key")?;
    let theirs = chacha20poly1305::XChaCha20Poly1305::new_from_slice(&key).map_err(|_| "key")?;
    let (mut x, mut y) = (pt.clone(), pt.clone());
    let ta = ours.encrypt_inout_detached(&n24.into(), &aad, (&mut x[..]).into()).map_err(|_| "seal")?;
    let tb = theirs.encrypt_inout_detached(&n24.into(), &aad, (&mut y[..]).into()).map_err(|_| "seal")?;
    if x != y || ta != tb {
        return fail("XChaCha20-Poly1305 sealed bytes differ");
    }
    Ok(())
}

/// `cases` random cases of each kind from the generator state `start`; the number of cases run, or the first
/// difference (with the case number: the same start replays it).
pub fn run(start: u64, cases: u32) -> Result<usize, String> {
    let mut rng = Rng(start);
    for case in 0..cases {
        stream_case::<chacha20_simd128::ChaCha20, chacha20::ChaCha20>(&mut rng, 12, case)?;
        stream_case::<chacha20_simd128::XChaCha20, chacha20::XChaCha20>(&mut rng, 24, case)?;
        core_wrap_case(&mut rng, case)?;
        aead_case(&mut rng, case)?;
    }
    Ok(cases as usize * 4)
}
