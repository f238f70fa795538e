//! The header: version line, parameters, recipient stanzas and a MAC; and ASCII armor.
//!
//! One codec, two profiles: [`Profile::Hyperseal`] (`hyperseal/v1`, a parameters line, 256-bit
//! file keys, any suite and chunk size) and [`Profile::Age`] (`age-encryption.org/v1`, fixed
//! ChaCha20-Poly1305 and 64 KiB chunks, 128-bit file keys).

pub mod armor;
mod header;
mod stanza;

pub(crate) use header::hkdf32;
pub use header::{Header, Profile, AGE_V1, HYPERSEAL_V1};
pub use stanza::{decode_b64, encode_b64, Stanza};
