//! The primitives under `hash`, `mac`, `kdf`, `aead` and `token`, chosen at compile time:
//! aws-lc-rs natively (FIPS-validated, assembly-optimised), and on wasm32 — where aws-lc does not
//! build — or with the `portable` feature (to test it natively) [`portable`], a RustCrypto stand-in for exactly the part of aws-lc-rs's API those
//! modules call. The modules are written once against these names, so both builds run the same
//! code above the primitives (the library's own seam is `crates/hyperseal/src/crypto/`; this one
//! is the toolkit's). Same standard algorithms, so the same bytes: the browser tests check known
//! answers and tokens and AEAD messages crossing with the native CLI.
//!
//! Native-only (not compiled on the portable backend): RSA and RSA-OAEP, the hazmat modes and the
//! parallel batch (threads). Signatures have their own seam (`sign/native.rs`, `sign/portable.rs`).

#[cfg(not(portable_backend))]
pub(crate) use aws_lc_rs::{aead, digest, error, hkdf, hmac, pbkdf2, rand};

#[cfg(portable_backend)]
mod portable;
#[cfg(portable_backend)]
pub(crate) use portable::{aead, digest, error, hkdf, hmac, pbkdf2, rand};
