//! Run-time backend selection.
//!
//! CPU features are detected once (`std` caches them) and the choice is
//! cached in a `OnceLock`. The environment variable `SM4_SIMD_BACKEND`
//! (`soft`, `aesni`, `avx2`, `vaes`, `gfni`, `gfni512`) overrides the
//! automatic choice for every `Sm4` built with [`Sm4::new`](crate::Sm4)
//! afterwards in the process; a value naming a backend the CPU cannot run is
//! ignored with one line on stderr (we never execute unsupported
//! instructions). Tests use [`Sm4::with_backend`](crate::Sm4::with_backend)
//! instead, which is per instance.
//!
//! The GFNI backends are opt-in: [`Backend::best`] only considers them when
//! the crate is built with the `gfni` feature or `SM4_SIMD_GFNI=1` is set
//! (or `SM4_SIMD_BACKEND` names one). They were written on a CPU without
//! GFNI and stay out of the default until they have passed the crate's
//! tests on a GFNI machine.

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
    /// AVX-512 (F + BW) + GFNI, 32 blocks per batch. Opt-in.
    Gfni512,
}

impl Backend {
    /// Every backend, slowest first.
    pub const ALL: [Backend; 6] =
        [Backend::Soft, Backend::AesNi, Backend::Avx2, Backend::Vaes, Backend::Gfni, Backend::Gfni512];

    /// Short lowercase name, as accepted by `SM4_SIMD_BACKEND`.
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
            // AES-NI too: the single-block path and short tails use it.
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Gfni => Backend::Avx2.is_supported() && std::is_x86_feature_detected!("gfni"),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Gfni512 => {
                Backend::Gfni.is_supported()
                    && std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            _ => false,
        }
    }

    /// Whether the backend may be picked automatically: every supported
    /// one except the GFNI backends, which need the opt-in (module docs).
    pub fn is_default_eligible(self) -> bool {
        match self {
            Backend::Gfni | Backend::Gfni512 => gfni_opted_in() && self.is_supported(),
            _ => self.is_supported(),
        }
    }

    /// The fastest backend this CPU supports and the opt-ins allow.
    pub fn best() -> Backend {
        Backend::ALL.into_iter().rev().find(|b| b.is_default_eligible()).unwrap_or(Backend::Soft)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `gfni` cargo feature, or `SM4_SIMD_GFNI=1` in the environment.
fn gfni_opted_in() -> bool {
    cfg!(feature = "gfni") || std::env::var("SM4_SIMD_GFNI").is_ok_and(|v| v.trim() == "1")
}

/// The backend `Sm4::new` uses: `SM4_SIMD_BACKEND` if set and supported,
/// otherwise [`Backend::best`]. Decided once per process.
pub fn default_backend() -> Backend {
    static CHOICE: OnceLock<Backend> = OnceLock::new();
    *CHOICE.get_or_init(|| {
        let forced = std::env::var("SM4_SIMD_BACKEND").ok().and_then(|v| Backend::from_name(&v));
        match forced {
            Some(b) if b.is_supported() => b,
            Some(b) => {
                let best = Backend::best();
                eprintln!("sm4-simd: SM4_SIMD_BACKEND={b} is not supported by this CPU, using {best}");
                best
            }
            None => Backend::best(),
        }
    })
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
    fn gfni_is_never_picked_without_the_opt_in() {
        if gfni_opted_in() {
            eprintln!("note: GFNI opted in (feature or SM4_SIMD_GFNI=1), nothing to check");
            return;
        }
        assert!(!Backend::Gfni.is_default_eligible() && !Backend::Gfni512.is_default_eligible());
        assert!(!matches!(Backend::best(), Backend::Gfni | Backend::Gfni512));
        assert!(Backend::best().is_supported());
    }
}
