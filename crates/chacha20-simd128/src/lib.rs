//! ChaCha20 (RFC 8439) and XChaCha20 with a WebAssembly 128-bit SIMD backend, behind RustCrypto's
//! `cipher` traits; a simd128 Poly1305; and ChaCha20-Poly1305 / XChaCha20-Poly1305 on them.
//!
//! RustCrypto's `chacha20` has SSE2, AVX2, AVX-512 and NEON backends but none for `simd128`, so a
//! `wasm32` build runs its portable one. On `wasm32` compiled with `-C target-feature=+simd128`
//! this crate's core runs four blocks at once (see `simd128.rs`); everywhere else [`ChaCha20`] and
//! [`XChaCha20`] *are* `chacha20`'s types, re-exported, so native builds are unchanged. WebAssembly
//! has no run-time feature detection: a module either uses SIMD instructions or does not, and
//! every browser that runs them (Chromium 91+, Firefox 89+, Safari 16.4+) validates the whole
//! module up front, which is why the choice is made at compile time.
//!
//! Both variants keep the IETF layout: a 32-bit block counter (word 12) and a 96-bit nonce, the
//! counter wrapping modulo 2^32 inside a call exactly as `chacha20` does, and the same
//! `remaining_blocks` so `StreamCipherCoreWrapper` refuses the same lengths and seeks.
//!
//! Constant-time by construction: the keystream is additions, rotations (byte shuffles with
//! constant indices, or shifts by constants) and XOR on the state; no table, no branch or index
//! that depends on the key, nonce or data. [`BACKEND`] says which implementation a build has, so
//! a test can refuse to pass on the wrong one.
//!
//! Poly1305 is the other half of the AEAD's time, and RustCrypto's `poly1305` has no simd128
//! backend either: on the same build `Poly1305` runs two blocks at once on r² (26-bit limbs,
//! `i64x2.extmul_low_i32x4_u` products; `poly1305.rs`, `poly1305_simd128.rs`). Since
//! `chacha20poly1305` takes `poly1305::Poly1305` as a concrete type, the AEADs are then composed
//! here (`aead.rs`) with the same traits and names; elsewhere they are RustCrypto's.
//! [`POLY1305_BACKEND`] names the Poly1305 in use.
#![no_std]
#![deny(unsafe_code)]

pub use cipher;

use cipher::consts::{U12, U24};

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod block;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod state;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use crate::state::{ChaCha20Core, XChaCha20Core};

/// ChaCha20 as RFC 8439 defines it (32-byte key, 12-byte nonce, 32-bit block counter).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub type ChaCha20 = cipher::StreamCipherCoreWrapper<ChaCha20Core>;
/// XChaCha20 (draft-irtf-cfrg-xchacha): HChaCha20 subkey, then ChaCha20 with a 24-byte nonce.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub type XChaCha20 = cipher::StreamCipherCoreWrapper<XChaCha20Core>;
/// Which keystream implementation this build uses: `"simd128"` or `"chacha20"` (RustCrypto's).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub const BACKEND: &str = "simd128";

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub use chacha20::{ChaCha20, XChaCha20};
/// Which keystream implementation this build uses: `"simd128"` or `"chacha20"` (RustCrypto's).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub const BACKEND: &str = "chacha20";

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod aead;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod poly1305;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod poly1305_limbs;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod poly1305_simd128;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use crate::aead::ChaChaPoly1305;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use crate::poly1305::Poly1305;
/// Which Poly1305 the AEADs use: `"simd128"` (this crate's, `Poly1305`) or `"poly1305"`
/// (RustCrypto's, inside `chacha20poly1305`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub const POLY1305_BACKEND: &str = crate::poly1305::Poly1305::BACKEND;

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub use chacha20poly1305::ChaChaPoly1305;
/// Which Poly1305 the AEADs use: `"simd128"` (this crate's, `Poly1305`) or `"poly1305"`
/// (RustCrypto's, inside `chacha20poly1305`).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub const POLY1305_BACKEND: &str = "poly1305";

/// ChaCha20-Poly1305 (RFC 8439 §2.8) over [`ChaCha20`]: on the simd128 build composed in this
/// crate over its SIMD Poly1305 (`aead.rs`), elsewhere RustCrypto's construction.
pub type ChaCha20Poly1305 = ChaChaPoly1305<ChaCha20, U12>;
/// XChaCha20-Poly1305 over [`XChaCha20`], composed like [`ChaCha20Poly1305`].
pub type XChaCha20Poly1305 = ChaChaPoly1305<XChaCha20, U24>;
