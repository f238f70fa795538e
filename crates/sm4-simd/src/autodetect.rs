//! Run-time backend selection.
//!
//! CPU features are detected once (`std` caches them) and the choice is
//! cached in a `OnceLock`: [`Sm4::new`](crate::Sm4) uses the fastest backend
//! the CPU supports. A caller that wants another one (a benchmark, a test of
//! every backend) asks for it with [`Sm4::with_backend`](crate::Sm4::with_backend),
//! per instance; the crate reads no environment and prints nothing.
//!
//! The GFNI backends are chosen wherever the CPU has GFNI: they pass every
//! test of this crate (the known-answer and 1,000,000-iteration vectors,
//! Wycheproof SM4-GCM and SM4-CCM, the differential test against RustCrypto's
//! `sm4`) on an AMD Zen 4 with AVX-512 and GFNI, and those tests run them on
//! any machine that has GFNI.

use core::fmt;
use std::sync::OnceLock;

/// An SM4 implementation strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable bitsliced implementation (constant time, 16 blocks per batch).
    Soft,
    /// SSSE3 + AES-NI, 128-bit registers, 8 blocks per batch.
    AesNi,
    /// AVX2 + AES-NI (128-bit `aesenclast` per lane), 16 blocks per batch.
    Avx2,
    /// AVX2 + VAES (256-bit `vaesenclast`), 16 blocks per batch.
    Vaes,
    /// AVX2 + GFNI (S-box as two GF(2^8) affine steps), 16 blocks per batch.
    /// Opt-in, see the module docs.
    Gfni,
    /// AVX-512 (F + BW + VL) + GFNI, 32 blocks per batch.
    Gfni512,
}

impl Backend {
    /// Every backend, slowest first.
    pub const ALL: [Backend; 6] =
        [Backend::Soft, Backend::AesNi, Backend::Avx2, Backend::Vaes, Backend::Gfni, Backend::Gfni512];

    /// Short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::AesNi => "aesni",
            Backend::Avx2 => "avx2",
            Backend::Vaes => "vaes",
            Backend::Gfni => "gfni",
            Backend::Gfni512 => "gfni512",
        }
    }

    /// Parses a [`name`](Self::name) (case-insensitive).
    pub fn from_name(s: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name().eq_ignore_ascii_case(s.trim()))
    }

    /// Whether this CPU can run the backend.
    pub fn is_supported(self) -> bool {
        match self {
            Backend::Soft => true,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::AesNi => std::is_x86_feature_detected!("ssse3") && std::is_x86_feature_detected!("aes"),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Avx2 => Backend::AesNi.is_supported() && std::is_x86_feature_detected!("avx2"),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Vaes => Backend::Avx2.is_supported() && std::is_x86_feature_detected!("vaes"),
            // AES-NI too: the single-block path and short tails use it.
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Gfni => Backend::Avx2.is_supported() && std::is_x86_feature_detected!("gfni"),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Gfni512 => {
                Backend::Gfni.is_supported()
                    && std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    // The single-block path's `vprold`/`vpternlogd` on xmm.
                    && std::is_x86_feature_detected!("avx512vl")
            }
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            _ => false,
        }
    }

    /// The fastest backend this CPU supports.
    pub fn best() -> Backend {
        Backend::ALL.into_iter().rev().find(|b| b.is_supported()).unwrap_or(Backend::Soft)
    }

    /// Every backend this CPU supports, slowest first (what the tests run).
    pub fn supported() -> Vec<Backend> {
        Backend::ALL.into_iter().filter(|b| b.is_supported()).collect()
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The backend `Sm4::new` uses: [`Backend::best`], decided once per process.
pub fn default_backend() -> Backend {
    static CHOICE: OnceLock<Backend> = OnceLock::new();
    *CHOICE.get_or_init(Backend::best)
}

/// Name of the backend `Sm4::new` uses (for benchmarks and diagnostics).
pub fn backend_name() -> &'static str {
    default_backend().name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for b in Backend::ALL {
            assert_eq!(Backend::from_name(b.name()), Some(b));
        }
        assert_eq!(Backend::from_name(" GFNI512 "), Some(Backend::Gfni512));
        assert_eq!(Backend::from_name("avx512"), None);
    }

    #[test]
    fn the_default_is_the_fastest_supported() {
        let best = default_backend();
        assert!(best.is_supported());
        assert_eq!(Backend::supported().last(), Some(&best));
        if Backend::Gfni512.is_supported() {
            assert_eq!(best, Backend::Gfni512);
        }
    }
}
