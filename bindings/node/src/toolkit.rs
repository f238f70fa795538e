//! ── TOOLKIT APIs GO HERE ────────────────────────────────────────────────────────────────────
//!
//! Placeholder for the bindings of the `hyperseal-toolkit` crate, to be added by a later merge:
//! `hash`, `hmac`, `kdf`, `aead`, `hazmat`, `sign`/`verify`, `token.seal`/`token.open`,
//! `batchEncrypt`/`batchDecrypt`.
//!
//! Conventions to keep when filling it in:
//! - errors go through `crate::errors::Fail` (add a `From<toolkit::Error> for Fail` in
//!   `errors.rs`, the one place where library errors become JS `code`s);
//! - anything above ~1 ms of work gets an `AsyncTask` twin named `…Async`;
//! - JS-side namespaces (`token.seal`) are assembled in `index.js` from flat native exports
//!   (`tokenSeal`), so the generated `index.d.ts` stays flat and documented.
