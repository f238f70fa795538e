//! `hyperseal --version`: the release and the commit it was built from, fixed at compile time
//! (crates/hyperseal-build-info says how, for the CLI and both packages).

fn main() {
    hyperseal_build_info::emit_version("crates/hyperseal-cli/");
}
