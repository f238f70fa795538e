//! The primitives every recipient and the key schedule use — HKDF-SHA-256, HMAC-SHA-256, the
//! ChaCha20-Poly1305 file-key wrap, X25519 and ML-KEM — from one of two backends chosen at
//! compile time:
//!
//! - `native.rs`: aws-lc (what every native build runs: the fastest, and FIPS-validated code);
//! - `portable.rs`: RustCrypto (`hkdf`, `hmac`, `chacha20poly1305`, `x25519-dalek`, `ml-kem`,
//!   `aes`/`ctr`/`aes-gcm`, `rsa`),
//!   pure Rust, so it builds for `wasm32-unknown-unknown`, where aws-lc cannot.
//!
//! `cfg(portable_backend)` (set by `build.rs`: always on WebAssembly, natively with the
//! `portable` feature) picks the second. Both compute the same standard functions, so the choice
//! changes speed and code size, never bytes: `tests.rs` runs both on the same inputs (natively,
//! where both are built) and the Wycheproof vectors run through whichever one is in use. The
//! payload AEADs have the same seam in `suite/` (`suite/portable.rs`).
//!
//! The interface, identical in both files:
//! - `hkdf32(salt, ikm, info)`, `hkdf_expand(prk, info_parts, out)`;
//! - `hmac_sha256(key, parts)`, `hmac_sha256_verify(key, msg, tag)` (constant time);
//! - `chacha_seal(key, nonce, buf)` (appends the tag), `chacha_open(key, nonce, buf)`;
//! - `X25519Secret::{new, public, agree}` (`agree` refuses an all-zero result);
//! - `mlkem_encapsulate_derand(level, ek, m)`, `MlkemDecaps::{from_seed, decapsulate}`;
//! - `aes256_ctr(key, iv, buf)`, `aes256_gcm_open(key, nonce, buf, tag)` (OpenSSH key files);
//! - `RsaOaepPublic::{new, encrypt}` (RSA-OAEP-SHA-256 encryption for `ssh-rsa` recipients: a
//!   public-key operation; RSA decryption stays native-only, in `recipient/ssh/rsa.rs`);
//! - `P256Secret::{new, public, agree}`, `p256_compress`, `p256_decompress` (native only: the
//!   portable twins fail, see [`P256_AVAILABLE`]).

// Each is built wherever it can be, used or not (then only by the tests), so that `tests.rs`
// can compare the two in either configuration.
#[cfg(not(target_arch = "wasm32"))]
#[cfg_attr(portable_backend, allow(dead_code))]
mod native;
#[cfg_attr(not(portable_backend), allow(dead_code))]
mod portable;

#[cfg(not(portable_backend))]
pub(crate) use native::*;
#[cfg(portable_backend)]
pub(crate) use portable::*;

/// Whether this build has P-256: the portable backend has not.
pub(crate) const P256_AVAILABLE: bool = cfg!(not(portable_backend));

/// The message every P-256 key gets in a build without P-256.
pub(crate) const P256_UNAVAILABLE: &str =
    "P-256 keys (p256, p256-mlkem768, age1tag1…, age1tagpq1…) are not available in this build";

/// The two ML-KEM parameter sets hyperseal uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MlkemLevel {
    /// ML-KEM-768 (inside X-Wing).
    L768,
    /// ML-KEM-1024 (alone).
    L1024,
}

impl MlkemLevel {
    pub(crate) const fn ek_len(self) -> usize {
        match self {
            MlkemLevel::L768 => 1184,
            MlkemLevel::L1024 => 1568,
        }
    }

    pub(crate) const fn ct_len(self) -> usize {
        match self {
            MlkemLevel::L768 => 1088,
            MlkemLevel::L1024 => 1568,
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
