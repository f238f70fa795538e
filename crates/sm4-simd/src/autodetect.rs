//! Run-time backend selection.
//!
//! CPU features are detected once (`std` caches them) and the choice is
//! cached in a `OnceLock`. The environment variable `SM4_SIMD_BACKEND`
//! (`soft`, `aesni`, `avx2`, `vaes`) overrides the automatic choice for every
//! `Sm4` built with [`Sm4::new`](crate::Sm4) afterwards in the process; a value
//! naming a backend the CPU cannot run is ignored (we never execute
//! unsupported instructions). Tests use [`Sm4::with_backend`](crate::Sm4::with_backend)
//! instead, which is per instance.

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
}

impl Backend {
    /// Every backend, slowest first.
    pub const ALL: [Backend; 4] = [Backend::Soft, Backend::AesNi, Backend::Avx2, Backend::Vaes];

    /// Short lowercase name, as accepted by `SM4_SIMD_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::AesNi => "aesni",
            Backend::Avx2 => "avx2",
            Backend::Vaes => "vaes",
        }
    }

    /// Parses a name as accepted by `SM4_SIMD_BACKEND`.
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
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            _ => false,
        }
    }

    /// The fastest backend this CPU supports.
    pub fn best() -> Backend {
        Backend::ALL.into_iter().rev().find(|b| b.is_supported()).unwrap_or(Backend::Soft)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The backend `Sm4::new` uses: `SM4_SIMD_BACKEND` if set and supported,
/// otherwise [`Backend::best`]. Decided once per process.
pub fn default_backend() -> Backend {
    static CHOICE: OnceLock<Backend> = OnceLock::new();
    *CHOICE.get_or_init(|| {
        std::env::var("SM4_SIMD_BACKEND")
            .ok()
            .and_then(|v| Backend::from_name(&v))
            .filter(|b| b.is_supported())
            .unwrap_or_else(Backend::best)
    })
}

/// Name of the backend `Sm4::new` uses (for benchmarks and diagnostics).
pub fn backend_name() -> &'static str {
    default_backend().name()
}
