//! The SM4 crate's integration tests, one binary: each file in this folder is a module here, so
//! the workspace links one test executable instead of one per file (linking is most of their
//! build). Run one file's tests with a module filter: `cargo test --release -p sm4-simd --test
//! suite wycheproof::`.

mod cross_backend;
mod differential;
mod openssl;
mod vectors;
mod wycheproof;
