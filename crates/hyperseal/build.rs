//! One name for "this build runs the portable backend": WebAssembly always (aws-lc and ring do not
//! build there), native only with the `portable` feature (to test that backend). The code then says
//! `cfg(portable_backend)` instead of repeating the condition in every file.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(portable_backend)");
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32");
    if wasm || std::env::var_os("CARGO_FEATURE_PORTABLE").is_some() {
        println!("cargo::rustc-cfg=portable_backend");
    }
    // Any rerun-if line stops cargo from running the script again on every change in the
    // package. Not `rerun-if-changed=build.rs`: the toolkit runs this same file as its build
    // script, and cargo reads that path inside the toolkit's folder, where no build.rs exists,
    // so the toolkit and everything above it were rebuilt by every cargo command. A changed
    // script is a new script binary, which cargo runs again anyway.
    println!("cargo::rerun-if-env-changed=CARGO_FEATURE_PORTABLE");
}
