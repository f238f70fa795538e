//! hyperseal-toolkit: the general-purpose primitives behind `hyperseal`'s toolkit commands.
//!
//! Everything here is a thin, misuse-resistant layer over audited implementations:
//! aws-lc-rs where it has the primitive (it is FIPS-validated, assembly-optimised and
//! constant-time), RustCrypto crates only for what aws-lc-rs lacks (SM3, MD5, BLAKE2b,
//! Argon2id, scrypt, HMAC over SHA-3/SM3/BLAKE2b, HChaCha20) and the official BLAKE3 crate.
//!
//! | module | what |
//! |---|---|
//! | [`checklist`] | checksum list lines as coreutils writes and reads them (escaping, `--tag`) |
//! | [`hash`] | digests, streaming hasher, multithreaded BLAKE3 file hashing |
//! | [`mac`] | HMAC with constant-time verification |
//! | [`kdf`] | PBKDF2, Argon2id, scrypt, HKDF and a bounded, TTL'd [`kdf::DerivationCache`] |
//! | [`aead`] | one-shot AEAD seal/open (AES-GCM, ChaCha20/XChaCha20-Poly1305, AES-GCM-SIV); [`aead::LessSafeKey`]: caller nonces |
//! | [`hazmat`] | unauthenticated legacy AES/SM4-CBC/CTR/ECB, byte-compatible with `openssl enc`, streaming |
//! | [`sign`] | Ed25519, ECDSA P-256, RSA (PSS, PKCS#1 v1.5, OAEP), ML-DSA-65; PEM keys |
//! | [`token`] | compact authenticated tokens with key rotation and expiry |
//! | [`batch`] | order-preserving parallel AEAD over many small messages |
//!
//! On wasm32 (the browser package), or natively with the `portable` feature, the primitives come
//! from RustCrypto behind the same names (`backend/`, `sign/portable.rs`); `hazmat`, `batch` and
//! RSA are not built there (aws-lc keys, threads).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod aead;
mod backend;
#[cfg(not(portable_backend))]
pub mod batch;
#[cfg(not(target_arch = "wasm32"))]
mod blake3_file;
pub mod checklist;
mod error;
pub mod hash;
#[cfg(not(portable_backend))]
pub mod hazmat;
pub mod kdf;
pub mod mac;
mod pem;
pub mod sign;
pub mod token;

pub use error::{Error, Result};
