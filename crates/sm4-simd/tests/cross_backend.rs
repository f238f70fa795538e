//! Every backend against the portable `soft` one, through one shared check:
//! the fast paths that exist on only some backends (`gfni512`'s register-held
//! CBC chain and its register-made CTR counters) must give the soft bytes,
//! including CBC chains carried from one call to the next and CTR counters
//! whose low 32-bit word wraps inside a batch.

use sm4_simd::{Backend, Sm4};

/// xorshift64*: deterministic test data.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

fn check_against_soft(backend: Backend) {
    let Some(_) = Sm4::with_backend(backend, &[0; 16]) else {
        eprintln!("note: {backend} not supported on this CPU, skipped");
        return;
    };
    for seed in 1..=4u64 {
        let key: [u8; 16] = bytes(seed, 16).try_into().unwrap();
        let iv: [u8; 16] = bytes(seed + 100, 16).try_into().unwrap();
        let (ours, soft) =
            (Sm4::with_backend(backend, &key).unwrap(), Sm4::with_backend(Backend::Soft, &key).unwrap());
        for blocks in [0usize, 1, 2, 31, 32, 33, 64, 65, 257, 1000] {
            let pt = bytes(seed + blocks as u64, 16 * blocks);
            // CBC in one call, and the same chain split into calls at batch
            // boundaries (the next call starts from the returned block).
            let mut want = pt.clone();
            let (wb, _) = want.as_chunks_mut::<16>();
            let want_next = soft.cbc_encrypt_blocks(&iv, wb);
            let mut got = pt.clone();
            let (gb, _) = got.as_chunks_mut::<16>();
            assert_eq!(ours.cbc_encrypt_blocks(&iv, gb), want_next, "{backend} cbc next, {blocks} blocks");
            assert_eq!(got, want, "{backend} cbc, {blocks} blocks");
            for split in [1usize, 16, 32, 33] {
                let mut got = pt.clone();
                let (gb, _) = got.as_chunks_mut::<16>();
                let mut chain = iv;
                for piece in gb.chunks_mut(split) {
                    chain = ours.cbc_encrypt_blocks(&chain, piece);
                }
                assert_eq!(got, want, "{backend} cbc split {split}, {blocks} blocks");
                assert_eq!(chain, want_next, "{backend} cbc split {split} next");
            }
            // CTR at odd lengths, from counters whose low word wraps early,
            // late, or not at all, and from the top of the 128-bit range.
            for ctr_lo in [0u32, 0xffff_ffe0, 0xffff_fff1, u32::MAX] {
                for (hi, extra) in [(iv, 0usize), ([0xff; 16], 7)] {
                    let mut start = hi;
                    start[12..].copy_from_slice(&ctr_lo.to_be_bytes());
                    let n = (16 * blocks + extra).saturating_sub(seed as usize);
                    let mut want = pt.iter().copied().chain(bytes(seed, 16)).take(n).collect::<Vec<_>>();
                    let mut got = want.clone();
                    soft.ctr_apply(&start, &mut want);
                    ours.ctr_apply(&start, &mut got);
                    assert_eq!(got, want, "{backend} ctr from ..{ctr_lo:08x}, {n} bytes");
                }
            }
        }
    }
}

test_each_backend!(check_against_soft:
    aesni_matches_soft => AesNi,
    avx2_matches_soft => Avx2,
    vaes_matches_soft => Vaes,
    gfni_matches_soft => Gfni,
    gfni512_matches_soft => Gfni512,
);
