//! The library's integration tests, one binary: each file in this folder is a module here, so
//! the workspace links one test executable instead of one per file (linking was the bulk of
//! building them). Run one file's tests with a module filter:
//! `cargo test --release -p hyperseal --test suite roundtrip::`.
//!
//! `hostile.rs` stays a binary of its own: its counting global allocator would see every other
//! test's allocations here.

mod common;

mod age_testkit;
mod backends;
mod damage;
mod engine;
mod format_vectors;
mod imports;
mod key_messages;
mod roundtrip;
mod writer_budget;
