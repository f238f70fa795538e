//! Every backend, one shared check (BLAKE3-style): ECB, CBC, CTR, GCM and CCM over
//! random keys, IVs and lengths (0 .. several MiB, unaligned buffers),
//! compared with the RustCrypto `sm4` crate driven through the same mode
//! crates.

use sm4_simd::aes_gcm::{AeadInOut, AesGcm};
use sm4_simd::ccm::Ccm;
use sm4_simd::cipher::{
    consts::{U12, U16},
    Array, BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, InnerIvInit, KeyInit,
    StreamCipher,
};
use sm4_simd::{Backend, Sm4, Sm4Ccm};

type RefSm4 = sm4::Sm4;

/// SplitMix64: a tiny deterministic generator so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        self.fill(&mut a);
        a
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Lengths to try: every small length, random medium ones, a few large.
fn lengths(rng: &mut Rng) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=300).collect();
    v.extend((0..40).map(|_| rng.below(70_000)));
    let big: &[usize] =
        if cfg!(debug_assertions) { &[(1 << 20) + 13] } else { &[(1 << 20) + 13, (3 << 20) + 5, 4 << 20] };
    v.extend_from_slice(big);
    v
}

/// Data at a random misalignment inside a larger allocation.
fn unaligned(rng: &mut Rng, len: usize) -> (Vec<u8>, usize) {
    let off = rng.below(16);
    let mut v = vec![0u8; len + off];
    rng.fill(&mut v[off..]);
    (v, off)
}

fn check_backend(backend: Backend) {
    if !backend.is_supported() {
        eprintln!("note: {backend} not supported on this CPU, skipped");
        return;
    }
    let mut rng = Rng(0x5344_3400 ^ backend as u64);
    for len in lengths(&mut rng) {
        let key: [u8; 16] = rng.array();
        let iv: [u8; 16] = rng.array();
        let ours = Sm4::with_backend(backend, &key).unwrap();
        assert_eq!(ours.backend(), backend);
        let theirs = RefSm4::new(&key.into());
        let (buf, off) = unaligned(&mut rng, len);
        let msg = &buf[off..];
        let blocks_len = len / 16 * 16;

        // ECB, in place and buffer-to-buffer (distinct in/out pointers).
        {
            let mut a = buf.clone();
            let (ab, _) = Array::slice_as_chunks_mut(&mut a[off..off + blocks_len]);
            let mut b = msg[..blocks_len].to_vec();
            let (bb, _) = Array::slice_as_chunks_mut(&mut b);
            ours.encrypt_blocks(ab);
            theirs.encrypt_blocks(bb);
            assert!(ab == bb, "{backend} ECB enc len={len}");
            let mut out = vec![Array::default(); ab.len()];
            ours.decrypt_blocks_b2b(ab, &mut out).unwrap();
            let (orig, _) = Array::slice_as_chunks(&msg[..blocks_len]);
            assert!(out == orig, "{backend} ECB dec len={len}");
        }

        // CBC (no padding; padding is the mode crate's business).
        {
            let mut a = msg[..blocks_len].to_vec();
            let mut b = a.clone();
            let (ab, _) = Array::slice_as_chunks_mut(&mut a);
            let (bb, _) = Array::slice_as_chunks_mut(&mut b);
            cbc::Encryptor::<Sm4>::inner_iv_init(ours.clone(), &iv.into()).encrypt_blocks(ab);
            cbc::Encryptor::<RefSm4>::inner_iv_init(theirs.clone(), &iv.into()).encrypt_blocks(bb);
            assert!(ab == bb, "{backend} CBC enc len={len}");
            cbc::Decryptor::<Sm4>::inner_iv_init(ours.clone(), &iv.into()).decrypt_blocks(ab);
            assert!(a == msg[..blocks_len], "{backend} CBC dec len={len}");
        }

        // CTR (128-bit BE counter), arbitrary length; start near a carry.
        {
            let mut ctr_iv = iv;
            ctr_iv[8..].copy_from_slice(&(u64::MAX - rng.below(40) as u64).to_be_bytes());
            let mut a = buf.clone();
            let mut b = msg.to_vec();
            let core =
                ctr::CtrCore::<Sm4, ctr::flavors::Ctr128BE>::inner_iv_init(ours.clone(), &ctr_iv.into());
            ctr::Ctr128BE::from_core(core).apply_keystream(&mut a[off..]);
            let core =
                ctr::CtrCore::<RefSm4, ctr::flavors::Ctr128BE>::inner_iv_init(theirs.clone(), &ctr_iv.into());
            ctr::Ctr128BE::from_core(core).apply_keystream(&mut b);
            assert!(a[off..] == b[..], "{backend} CTR len={len}");
        }

        // GCM (skip the biggest sizes in debug builds: the reference is slow).
        if len <= 100_000 || !cfg!(debug_assertions) {
            let nonce: [u8; 12] = rng.array();
            let aad_len = rng.below(100);
            let aad = &msg[..aad_len.min(len)];
            let mut a = buf.clone();
            let mut b = msg.to_vec();
            let ta = AesGcm::<Sm4, U12>::from(ours.clone())
                .encrypt_inout_detached(&nonce.into(), aad, (&mut a[off..]).into())
                .unwrap();
            let tb = AesGcm::<RefSm4, U12>::from(theirs.clone())
                .encrypt_inout_detached(&nonce.into(), aad, (&mut b[..]).into())
                .unwrap();
            assert!(a[off..] == b[..] && ta == tb, "{backend} GCM seal len={len}");
            let gcm = AesGcm::<Sm4, U12>::from(ours.clone());
            gcm.decrypt_inout_detached(&nonce.into(), aad, (&mut a[off..]).into(), &ta).unwrap();
            assert!(a[off..] == *msg, "{backend} GCM open len={len}");

            // CCM (12-byte nonce, 16-byte tag): CTR plus a serial CBC-MAC.
            let mut a = buf.clone();
            let mut b = msg.to_vec();
            let ta = Sm4Ccm::from(ours.clone())
                .encrypt_inout_detached(&nonce.into(), aad, (&mut a[off..]).into())
                .unwrap();
            let tb = Ccm::<RefSm4, U16, U12>::from(theirs.clone())
                .encrypt_inout_detached(&nonce.into(), aad, (&mut b[..]).into())
                .unwrap();
            assert!(a[off..] == b[..] && ta == tb, "{backend} CCM seal len={len}");
            Sm4Ccm::from(ours.clone())
                .decrypt_inout_detached(&nonce.into(), aad, (&mut a[off..]).into(), &ta)
                .unwrap();
            assert!(a[off..] == *msg, "{backend} CCM open len={len}");
        }
    }
}

test_each_backend!(check_backend:
    backend_soft => Soft,
    backend_aesni => AesNi,
    backend_avx2 => Avx2,
    backend_vaes => Vaes,
    backend_gfni => Gfni,
    backend_gfni512 => Gfni512,
);

/// The convenience API goes through the default backend; check it against
/// the reference too, including PKCS#7 CBC and the GCM functions.
#[test]
fn convenience_api_matches_reference() {
    use sm4_simd::modes::*;
    let mut rng = Rng(42);
    for len in [0usize, 1, 15, 16, 17, 255, 4096, 70_001] {
        let key: [u8; 16] = rng.array();
        let iv: [u8; 16] = rng.array();
        let mut msg = vec![0u8; len];
        rng.fill(&mut msg);
        let ct = cbc_encrypt_pkcs7(&key, &iv, &msg);
        let reference = cbc::Encryptor::<RefSm4>::inner_iv_init(RefSm4::new(&key.into()), &iv.into())
            .encrypt_padded_vec::<sm4_simd::cipher::block_padding::Pkcs7>(&msg);
        assert_eq!(ct, reference, "cbc len={len}");
        assert_eq!(cbc_decrypt_pkcs7(&key, &iv, &ct).unwrap(), msg);
        let mut bad = ct.clone();
        *bad.last_mut().unwrap() ^= 0x80;
        assert!(cbc_decrypt_pkcs7(&key, &iv, &bad).is_err());

        // ctr_apply has its own counter loop: check it against the reference,
        // also across the 2^128 wrap.
        for ctr_iv in [iv, [0xff; 16]] {
            let mut c = msg.clone();
            ctr_apply(&key, &ctr_iv, &mut c);
            let mut r = msg.clone();
            let core = ctr::CtrCore::<RefSm4, ctr::flavors::Ctr128BE>::inner_iv_init(
                RefSm4::new(&key.into()),
                &ctr_iv.into(),
            );
            ctr::Ctr128BE::from_core(core).apply_keystream(&mut r);
            assert_eq!(c, r, "ctr_apply len={len}");
            ctr_apply(&key, &ctr_iv, &mut c);
            assert_eq!(c, msg);
        }

        let nonce: [u8; 12] = rng.array();
        let mut c = msg.clone();
        let tag = gcm_seal_in_place_detached(&key, &nonce, b"aad", &mut c).unwrap();
        let mut bad_tag = tag;
        bad_tag[0] ^= 1;
        assert!(gcm_open_in_place_detached(&key, &nonce, b"aad", &mut c, &bad_tag).is_err());
        gcm_open_in_place_detached(&key, &nonce, b"aad", &mut c, &tag).unwrap();
        assert_eq!(c, msg);

        let blocks = len / 16 * 16;
        let mut e = msg[..blocks].to_vec();
        ecb_encrypt(&key, &mut e).unwrap();
        ecb_decrypt(&key, &mut e).unwrap();
        assert_eq!(e, msg[..blocks]);
    }
}
