//! `hyperseal.__version__`: the same string as `hyperseal --version`, fixed at compile time so
//! that the extension reads neither git nor the environment at import.

fn main() {
    hyperseal_build_info::emit_version("bindings/python/");
}
