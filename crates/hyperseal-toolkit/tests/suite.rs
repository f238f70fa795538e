//! The toolkit's integration tests, one binary: each file in this folder is a module here, so
//! the workspace links one test executable instead of one per file (linking is most of their
//! build). Run one file's tests with a module filter: `cargo test --release -p hyperseal-toolkit
//! --test suite token::`. `interop` runs on the native backend only and `sign_portable` with the
//! `portable` feature only (each file's `#![cfg]`).

mod interop;
mod sign_portable;
mod token;
mod wycheproof;
