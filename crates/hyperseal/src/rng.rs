//! Randomness for keys, salts and ephemeral secrets: the operating system's CSPRNG.
//!
//! Not aws-lc's DRBG: on this aws-lc version its first use in a process seeds from CPU jitter
//! entropy, measured at ~37 ms of CPU per process (perf: `tree_jitter_initialize_once`), which
//! made a 1 KB `hyperseal encrypt` take 75 ms instead of a few. getrandom(2) costs microseconds.
//!
//! On WebAssembly (`wasm32-unknown-unknown`) the same call reaches the page's or worker's
//! `crypto.getRandomValues` (the `getrandom` crate's `wasm_js` feature, set in Cargo.toml).

use crate::error::Error;

/// Fills `dst` with random bytes.
pub(crate) fn fill(dst: &mut [u8]) -> Result<(), Error> {
    getrandom::fill(dst).map_err(|_| Error::Crypto)
}
