//! Constant-time SM4 (GB/T 32907-2016) with SIMD backends.
//!
//! [`Sm4`] implements the RustCrypto `cipher` 0.5 block-cipher traits, so it
//! plugs into the generic `ecb`, `cbc`, `ctr`, `aes-gcm` and `ccm` crates; the
//! [`modes`] module wraps the common cases in small byte-slice functions.
//!
//! Backends (see [`Backend`]), chosen at run time:
//! * `gfni512` – AVX-512 + GFNI, 32 blocks in flight,
//! * `gfni`  – AVX2 + GFNI, 16 blocks in flight,
//! * `vaes`  – AVX2 + VAES, 16 blocks in flight,
//! * `avx2`  – AVX2 + AES-NI, 16 blocks in flight,
//! * `aesni` – SSSE3 + AES-NI, 8 blocks in flight,
//! * `soft`  – portable bitsliced code, 16 blocks per batch.
//!
//! No backend performs secret-dependent table lookups or branches: the x86
//! backends evaluate the S-box with `aesenclast` plus `pshufb` affine maps or
//! with GFNI's affine instructions, the portable one with a Boolean circuit.
//! `Sm4::new` picks the fastest backend the CPU supports, GFNI included
//! (see [`Backend`]); `Sm4::with_backend` picks one explicitly.
//!
//! ```
//! use sm4_simd::{Sm4, cipher::{BlockCipherEncrypt, KeyInit}};
//! let key = [0u8; 16];
//! let sm4 = Sm4::new(&key.into());
//! let mut block = [0u8; 16].into();
//! sm4.encrypt_block(&mut block);
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

pub use aes_gcm;
pub use ccm;
pub use cipher;

/// The `cipher` traits of a backend's `Backend<'_>`: blocks of 16 bytes, `$par` of them in
/// flight, and encryption and decryption both through its `one`, `par` and `tail` (SM4's
/// decryption is its encryption with the round keys reversed, so one body serves both).
macro_rules! block_backend {
    ($par:ty) => {
        impl ::cipher::BlockSizeUser for Backend<'_> {
            type BlockSize = ::cipher::consts::U16;
        }

        impl ::cipher::ParBlocksSizeUser for Backend<'_> {
            type ParBlocksSize = $par;
        }

        block_backend!(@one_way BlockCipherEncBackend, encrypt_block, encrypt_par_blocks, encrypt_tail_blocks);
        block_backend!(@one_way BlockCipherDecBackend, decrypt_block, decrypt_par_blocks, decrypt_tail_blocks);
    };
    (@one_way $backend:ident, $block:ident, $par_blocks:ident, $tail_blocks:ident) => {
        impl ::cipher::$backend for Backend<'_> {
            #[inline(always)]
            fn $block(&self, block: InOut<'_, '_, Block<Self>>) {
                self.one(block);
            }
            #[inline(always)]
            fn $par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
                self.par(blocks);
            }
            #[inline(always)]
            fn $tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
                self.tail(blocks);
            }
        }
    };
}

mod autodetect;
pub mod modes;
mod soft;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x86;

pub use autodetect::{backend_name, default_backend, Backend};
pub use modes::{Error, Sm4CbcDec, Sm4CbcEnc, Sm4Ccm, Sm4Ctr, Sm4EcbDec, Sm4EcbEnc, Sm4Gcm};

use cipher::{
    consts::U16, AlgorithmName, BlockCipherDecClosure, BlockCipherDecrypt, BlockCipherEncClosure,
    BlockCipherEncrypt, BlockSizeUser, Key, KeyInit, KeySizeUser,
};
use core::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// SM4 block cipher with expanded round keys and a fixed backend.
///
/// Round keys are zeroized on drop; `Debug` prints only the backend.
#[derive(Clone)]
pub struct Sm4 {
    /// Encryption round keys rk[0..32].
    enc: [u32; 32],
    /// Decryption round keys: the same keys in reverse order.
    dec: [u32; 32],
    /// `enc`/`dec` transformed for the x86 single-block path.
    #[cfg_attr(not(any(target_arch = "x86", target_arch = "x86_64")), allow(dead_code))]
    enc_fused: FusedKeys,
    #[cfg_attr(not(any(target_arch = "x86", target_arch = "x86_64")), allow(dead_code))]
    dec_fused: FusedKeys,
    backend: Backend,
}

/// Round keys of the x86 single-block path: one 16-byte register image per
/// round (see `x86/single.rs`).
pub(crate) type FusedKeys = [[u8; 16]; 32];

impl Sm4 {
    /// Builds a cipher that uses `backend`, or `None` if this CPU cannot run
    /// it. Mostly for tests and benchmarks; [`KeyInit::new`] picks the best.
    pub fn with_backend(backend: Backend, key: &[u8; 16]) -> Option<Self> {
        if !backend.is_supported() {
            return None;
        }
        let enc = soft::expand_key(key);
        let mut dec = enc;
        dec.reverse();
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        let (enc_fused, dec_fused) = (x86::fused_round_keys(&enc), x86::fused_round_keys(&dec));
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        let (enc_fused, dec_fused) = ([[0u8; 16]; 32], [[0u8; 16]; 32]);
        Some(Self { enc, dec, enc_fused, dec_fused, backend })
    }

    /// The backend this instance runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// CBC-encrypts whole blocks in place from chain value `iv` with the
    /// chain kept in registers across blocks, where the backend has such a
    /// loop (`gfni512`); returns the next chain value, or `None` (nothing
    /// done) for the generic `cbc` crate path.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    pub(crate) fn cbc_encrypt_chain(&self, iv: &[u8; 16], blocks: &mut [[u8; 16]]) -> Option<[u8; 16]> {
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `self.backend` was checked with `is_supported()` when
            // this instance was built, which includes AVX-512 F/VL and GFNI.
            Backend::Gfni512 => Some(unsafe { x86::gfni_single::cbc_encrypt(&self.enc, iv, blocks) }),
            _ => None,
        }
    }

    /// XORs the CTR keystream into `data` with the backend's own loop
    /// (`gfni512`: counters made in registers); `false` (nothing done) where
    /// the backend has none.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    pub(crate) fn ctr_apply_fast(&self, iv: &[u8; 16], data: &mut [u8]) -> bool {
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Gfni512 => {
                // SAFETY: `self.backend` was checked with `is_supported()`
                // when this instance was built (AVX-512 F/BW, GFNI, AES-NI).
                unsafe { x86::gfni512::ctr_apply(&self.enc, iv, data) };
                true
            }
            _ => false,
        }
    }
}

impl KeySizeUser for Sm4 {
    type KeySize = U16;
}

impl KeyInit for Sm4 {
    fn new(key: &Key<Self>) -> Self {
        let key: &[u8; 16] = key.as_ref();
        // The default backend is always supported (checked at selection).
        Self::with_backend(default_backend(), key)
            .or_else(|| Self::with_backend(Backend::Soft, key))
            .expect("the soft backend is always supported")
    }
}

impl BlockSizeUser for Sm4 {
    type BlockSize = U16;
}

impl BlockCipherEncrypt for Sm4 {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        let rk = &self.enc;
        match self.backend {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: `self.backend` was checked with `is_supported()` when
            // this instance was built, so the required CPU features exist.
            Backend::AesNi => unsafe { x86::enc_aesni(rk, &self.enc_fused, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above.
            Backend::Avx2 => unsafe { x86::enc_avx2(rk, &self.enc_fused, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above.
            Backend::Vaes => unsafe { x86::enc_vaes(rk, &self.enc_fused, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above.
            Backend::Gfni => unsafe { x86::enc_gfni(rk, &self.enc_fused, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above.
            Backend::Gfni512 => unsafe { x86::enc_gfni512(rk, &self.enc_fused, f) },
            _ => f.call(&soft::Backend { rk }),
        }
    }
}

impl BlockCipherDecrypt for Sm4 {
    #[inline]
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = U16>) {
        let rk = &self.dec;
        match self.backend {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: `self.backend` was checked with `is_supported()` when
            // this instance was built, so the required CPU features exist.
            Backend::AesNi => unsafe { x86::dec_aesni(rk, &self.dec_fused, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above.
            Backend::Avx2 => unsafe { x86::dec_avx2(rk, &self.dec_fused, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above.
            Backend::Vaes => unsafe { x86::dec_vaes(rk, &self.dec_fused, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above.
            Backend::Gfni => unsafe { x86::dec_gfni(rk, &self.dec_fused, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above.
            Backend::Gfni512 => unsafe { x86::dec_gfni512(rk, &self.dec_fused, f) },
            _ => f.call(&soft::Backend { rk }),
        }
    }
}

impl fmt::Debug for Sm4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sm4").field("backend", &self.backend).finish_non_exhaustive()
    }
}

impl AlgorithmName for Sm4 {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SM4")
    }
}

impl Drop for Sm4 {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
        self.enc_fused.zeroize();
        self.dec_fused.zeroize();
    }
}

impl ZeroizeOnDrop for Sm4 {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_keys() {
        let c = Sm4::with_backend(Backend::Soft, &[0x42; 16]).unwrap();
        let s = format!("{c:?}");
        assert!(s.contains("Soft") && !s.contains("rk") && !s.contains("66"), "{s}");
    }
}
