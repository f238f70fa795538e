//! The primitives under `hash`, `mac`, `kdf`, `aead` and `token`, chosen at compile time:
//! aws-lc-rs natively (FIPS-validated, assembly-optimised), and on wasm32 — where aws-lc does not
//! build — [`portable`], a RustCrypto stand-in for exactly the part of aws-lc-rs's API those
//! modules call. The modules are written once against these names, so both builds run the same
//! code above the primitives (the library's own seam is `crates/hyperseal/src/crypto/`; this one
//! is the toolkit's). Same standard algorithms, so the same bytes: the browser tests check known
//! answers and tokens and AEAD messages crossing with the native CLI.
//!
//! Native-only (not compiled for wasm32): signatures and RSA-OAEP (aws-lc keys and PEM/DER
//! codecs), the hazmat modes and the parallel batch (threads).

#[cfg(not(target_arch = "wasm32"))]
pub(crate) use aws_lc_rs::{aead, digest, error, hkdf, hmac, pbkdf2, rand};

#[cfg(target_arch = "wasm32")]
mod portable;
#[cfg(target_arch = "wasm32")]
pub(crate) use portable::{aead, digest, error, hkdf, hmac, pbkdf2, rand};
