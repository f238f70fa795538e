//! The machinery every recipient kind shares, kept apart from the kinds so that the folder
//! above lists the kinds alone: the [`Recipient`](traits::Recipient) / [`Identity`](traits::Identity)
//! pair and the label rule (`traits.rs`), the [`Callbacks`](callbacks::Callbacks) a kind may ask
//! the user through, `primitives.rs` (HKDF, the ChaCha20-Poly1305 file-key wrap, randomness),
//! `bech32_long.rs` (age's bech32 without a length limit), `pem.rs` (PEM blocks and DER, for the
//! RSA and SSH kinds), and, above the kinds, the choosing between them: `parse.rs` (key texts to
//! recipients and identities, by prefix) and `kind.rs` ([`Kind`](kind::Kind), generation). The
//! portable build's stand-ins for RSA private keys are `unavailable.rs`.

pub(super) mod bech32_long;
pub(super) mod callbacks;
pub(super) mod kind;
pub(super) mod parse;
pub(super) mod pem;
pub(super) mod primitives;
pub(super) mod traits;
#[cfg(portable_backend)]
pub(super) mod unavailable;
