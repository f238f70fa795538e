//! The crate's integration tests, one binary: each file in this folder is a module here, so the
//! workspace links one test executable instead of one per file (a link each). Run one
//! file's tests with a module filter: `cargo test --release -p hyperseal-age --all-features
//! --test suite api::`. `age_peer` needs the `armor` feature and `plugin_batch` the `plugin`
//! feature (each file's `#![cfg]`); `make test` builds the workspace with every feature of this
//! crate on.

mod age_peer;
mod agent;
mod api;
mod encrypted;
mod plugin_batch;
