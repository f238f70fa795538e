//! The recipient kinds built on HPKE (RFC 9180) base mode, and the HPKE they share.
//!
//! `base.rs` is the part of HPKE they use (one `Seal` of the file key); `kem.rs` holds the two
//! KEMs over P-256 (DHKEM(P-256), MLKEM768-P256), while X-Wing lives with its one kind in
//! `hybrid.rs`. The kinds:
//!
//! | kind | KEM | stanza |
//! |---|---|---|
//! | [`hybrid`]: age v1.3's `age1pq1…` | X-Wing (ML-KEM-768 + X25519) | `mlkem768x25519` |
//! | [`p256`]: `hs-p2561…` | DHKEM(P-256) | `p256` |
//! | [`mlkem768p256`]: `hs-mlkem768p2561…` | MLKEM768-P256 | `mlkem768p256` |
//! | [`tag`]: age v1.3's `age1tag1…`, `age1tagpq1…` | DHKEM(P-256), MLKEM768-P256 | `p256tag`, `mlkem768p256tag` |
//!
//! `tag_held.rs` unwraps the tag stanzas for a key whose P-256 scalar is held elsewhere (a TPM):
//! the holder does the ECDH, everything else is here.
//!
//! The `p256` and `mlkem768p256` identities are the same keys as the tag recipients, so they
//! also open the tag stanzas addressed to them (`tag.rs`).

mod base;
pub mod hybrid;
mod kem;
pub mod mlkem768p256;
pub mod p256;
pub mod tag;
pub mod tag_held;
