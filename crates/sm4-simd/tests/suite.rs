//! The SM4 crate's integration tests, one binary: each file in this folder is a module here, so
//! the workspace links one test executable instead of one per file (linking is most of their
//! build). Run one file's tests with a module filter: `cargo test --release -p sm4-simd --test
//! suite wycheproof::`.

/// One test per backend, named by the caller, each running `check(Backend::NAME)`: every
/// backend passes or fails under its own test name, and `check` skips one the CPU lacks.
macro_rules! test_each_backend {
    ($check:ident: $($name:ident => $backend:ident),+ $(,)?) => {
        $(
            #[test]
            fn $name() {
                $check(sm4_simd::Backend::$backend);
            }
        )+
    };
}

mod cross_backend;
mod differential;
mod openssl;
mod vectors;
mod wycheproof;
