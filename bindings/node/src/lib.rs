//! Node.js bindings for hyperseal (napi-rs). The JS entry (`index.js`) adds the `Transform`
//! streams and normalises error codes; everything else is here.
//!
//! Only the library's public API is used, so what Node writes the CLI reads and the reverse.
#![deny(clippy::all)]

mod age;
mod buffers;
mod errors;
mod files;
mod keys;
mod pool;
mod rekey;
mod streams;
mod toolkit;

pub use age::*;
pub use buffers::*;
pub use files::*;
pub use rekey::*;
pub use streams::*;

/// The release and the commit it was built from, "0.1.0 (abc1234)": the string
/// `hyperseal --version` and Python's `hyperseal.__version__` print (`VERSION` in JS).
#[napi_derive::napi]
pub fn version() -> &'static str {
    env!("HYPERSEAL_VERSION")
}
