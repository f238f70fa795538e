//! `hyperseal-age` under the name `age`. cargo matches `[patch.crates-io]` entries by package
//! name, so a patch that renames a package is ignored; this package carries the name instead,
//! and every item is hyperseal-age's.
pub use hyperseal_age::*;
