//! napi's link setup, and `VERSION`: the same string as `hyperseal --version`, fixed at compile
//! time so that the addon reads neither git nor the environment when it loads.

fn main() {
    napi_build::setup();
    hyperseal_build_info::emit_version("bindings/node/");
}
