//! Prints the SM4 backends this CPU runs (every one of them is run by the crate's tests) and the
//! one `Sm4::new` picks; `make test` prints it so a log says which backends were tested.
fn main() {
    let names: Vec<&str> = sm4_simd::Backend::supported().iter().map(|b| b.name()).collect();
    println!(
        "sm4-simd: backends tested on this CPU: {}; Sm4::new uses {}",
        names.join(" "),
        sm4_simd::backend_name()
    );
}
