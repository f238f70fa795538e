//! One name for "this build runs the portable backend", as in crates/hyperseal/build.rs:
//! WebAssembly always (aws-lc does not build there), native only with the `portable` feature (to
//! test that backend). The code says `cfg(portable_backend)`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(portable_backend)");
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32");
    if wasm || std::env::var_os("CARGO_FEATURE_PORTABLE").is_some() {
        println!("cargo::rustc-cfg=portable_backend");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
