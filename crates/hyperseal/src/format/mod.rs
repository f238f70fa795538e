//! The header codec: version line, parameters, recipient stanzas and a MAC; slack, the room a
//! header keeps for later re-keys; and ASCII armor.
//! Pure data in and out — it imports nothing but the error type, so it can be read, fuzzed and
//! reused without any key material. The MAC over these bytes is the key schedule's (`keys.rs`).
//!
//! One codec, two profiles: [`Profile::Hyperseal`] (`hyperseal/v1`, a parameters line, 256-bit
//! file keys, any suite and chunk size) and [`Profile::Age`] (`age-encryption.org/v1`, fixed
//! ChaCha20-Poly1305 and 64 KiB chunks, 128-bit file keys).

pub mod armor;
mod header;
mod params;
pub(crate) mod slack;
mod stanza;

pub use header::{Header, HeaderRules};
pub use params::{
    check_chunk_size, Profile, Suite, AGE_V1, DEFAULT_CHUNK, HYPERSEAL_V1, MAX_CHUNK, MIN_CHUNK,
};
pub use stanza::{decode_b64, encode_b64, Stanza};

/// Bytes of the random payload salt (age: "nonce") that follows the header.
pub const SALT_LEN: usize = 16;
/// Bytes of every suite's authentication tag, which ends each payload chunk.
pub const TAG_LEN: usize = 16;
