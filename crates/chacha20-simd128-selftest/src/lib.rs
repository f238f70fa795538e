//! The proofs of `chacha20-simd128`, as a library that runs wherever it is compiled: built for
//! `wasm32-unknown-unknown` with simd128 (`make -C bindings/wasm selftest`), its exports are
//! called by `bindings/wasm/test/chacha-simd128.test.mjs` in Node's WebAssembly
//! and in headless Chromium, so the SIMD code is what gets tested; natively, `cargo test` runs
//! the same checks on the scalar build (which is RustCrypto's `chacha20`, `poly1305` and
//! `chacha20poly1305` themselves).
//!
//! Each check returns the first failure as a message; none prints or reads the environment.

use wasm_bindgen::prelude::wasm_bindgen;

pub mod differential;
pub mod poly1305;
pub mod poly1305_vectors;
pub mod rfc8439;
pub mod wycheproof;

/// Decodes test-vector hex (the vectors are fixed and trusted; bad hex is a bug in this crate).
pub(crate) fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("test vector hex")
}

pub(crate) fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{what}: wrong output"))
    }
}

/// The keystream implementation of this build: `"simd128"` for the browser build, so a build
/// that silently fell back to the scalar code cannot pass as the SIMD one.
#[wasm_bindgen]
pub fn backend() -> String {
    chacha20_simd128::BACKEND.into()
}

/// The Poly1305 the AEADs of this build use: `"simd128"` for the browser build, so a build whose
/// AEAD silently went back to RustCrypto's `poly1305` cannot pass as the SIMD one.
#[wasm_bindgen]
pub fn poly1305_backend() -> String {
    chacha20_simd128::POLY1305_BACKEND.into()
}

/// Poly1305 known answers (RFC 8439 §2.5.2, A.3, OpenSSL's carry regressions), each whole, a
/// byte at a time and cut at every position.
#[wasm_bindgen]
pub fn poly1305_known_answers() -> Result<String, String> {
    Ok(format!("{} Poly1305 known answers", poly1305_vectors::run()?))
}

/// `cases` rounds of the Poly1305 differential test against RustCrypto's `poly1305` from the
/// generator state `start`.
#[wasm_bindgen]
pub fn poly1305_differential(start: u64, cases: u32) -> Result<String, String> {
    Ok(format!("{} Poly1305 differential cases from {start}", poly1305::run(start, cases)?))
}

/// RFC 8439 and draft-irtf-cfrg-xchacha known answers, on the single-block path and in every
/// SIMD lane. A summary, or (in JS, thrown) the first failure.
#[wasm_bindgen]
pub fn known_answers() -> Result<String, String> {
    Ok(format!("{} known answers", rfc8439::run()?))
}

/// One Wycheproof file (its JSON text): `nonce_len` 12 for `chacha20_poly1305_test.json`, 24
/// for `xchacha20_poly1305_test.json`.
#[wasm_bindgen]
pub fn wycheproof(json: &str, nonce_len: usize) -> Result<String, String> {
    let c = wycheproof::run(json, nonce_len)?;
    Ok(format!("{} valid + {} invalid", c.valid, c.invalid))
}

/// `cases` rounds of the differential test from the generator state `start` (a failure names
/// its case; the same `start` replays it).
#[wasm_bindgen]
pub fn differential(start: u64, cases: u32) -> Result<String, String> {
    Ok(format!("{} differential cases from {start}", differential::run(start, cases)?))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn vectors(file: &str) -> String {
        let path = format!("{}/../../vectors/wycheproof/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Natively this checks the vectors and the harness themselves (the build is RustCrypto's
    /// `chacha20`): a vector typed wrong fails here before it can mislead the wasm run.
    #[test]
    fn all_proofs_on_the_scalar_build() {
        assert_eq!(backend(), "chacha20");
        assert_eq!(poly1305_backend(), "poly1305");
        known_answers().unwrap();
        assert_eq!(poly1305_known_answers().unwrap(), "18 Poly1305 known answers");
        poly1305_differential(0x5151, 300).unwrap();
        let c = wycheproof(&vectors("chacha20_poly1305_test.json"), 12).unwrap();
        assert_eq!(c, "256 valid + 69 invalid");
        let x = wycheproof(&vectors("xchacha20_poly1305_test.json"), 24).unwrap();
        assert_eq!(x, "246 valid + 69 invalid");
        differential(0x5151, 300).unwrap();
    }
}
