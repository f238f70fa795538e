//! hyperseal in the browser: the library compiled to WebAssembly with wasm-bindgen, under the
//! Node package's names (`bindings/node/index.d.ts`) so code moves between the two unchanged.
//!
//! This crate only converts between JS values and the library's public API — no framing, no
//! cryptography. The build is the library's portable backend (RustCrypto; see
//! `crates/hyperseal/src/crypto/mod.rs`), which gives the same bytes as the native one, so a file
//! sealed in a page opens with the CLI and the reverse. What it cannot do there: RSA keys (no
//! constant-time pure-Rust RSA; they fail with `ERR_HYPERSEAL_KEY`, RSA signing keys too) and threads (one core per
//! instance: parallelism in a page comes from Web Workers, each with its own instance).
//!
//! Every error is a JS `Error` whose `code` is one of the library's stable
//! [`hyperseal::ErrorCode`] strings, as in Node.
//!
//! Layout: `age.rs` (what `hyperseal/age`, typage's API in `js/age-api.js`, needs), `errors.rs` (JS errors with codes), `args.rs` (JS argument decoding), `keys.rs`
//! (`generateKeyPair`, `publicKeyOf`), `oneshot.rs` (buffers, public key or passphrase),
//! `session.rs` (`EncryptSession`/`DecryptSession` over `Sealer`/`Opener`; the Web Streams
//! wrappers are in `js/core.js`), `parts.rs` (`PartKey`: one file sealed or opened across
//! `WorkerPool`'s workers), `range.rs` (`RangeJob`: `decryptRange` over the library's seekable
//! reader, a `Blob` read lazily), `rekey.rs` (`rekeyHead`: a new header for the same file key,
//! under `rekey`/`rekeyFile` in `js/core.js`), `passkey.rs` (what `js/passkeys.js` needs
//! around its WebAuthn calls: identity strings, PRF inputs, answered passkeys), `toolkit.rs` (hash, hmac, kdf, aead, token over
//! `hyperseal_toolkit`), `sign.rs` (`sign`/`verify`: Ed25519, ECDSA P-256, ML-DSA-65).

mod age;
mod args;
mod errors;
mod keys;
mod oneshot;
mod parts;
mod passkey;
mod range;
mod rekey;
mod session;
mod sign;
mod toolkit;

pub use age::{
    age_armor, age_check_recipient, age_dearmor, age_decrypt, age_decrypt_header, age_encrypt, age_file_key,
    age_header, age_x25519_recipient, age_x25519_shares, age_x25519_unwrap,
};
pub use errors::error_codes;
pub use keys::{generate_key_pair, public_key_of};
pub use oneshot::{
    decrypt_by_private_key, decrypt_with_passphrase, encrypt_by_public_key, encrypt_with_passphrase,
};
pub use parts::PartKey;
pub use passkey::{
    passkey_identity, passkey_identity_parse, passkey_opens, passkey_prf_inputs, passkey_stanzas,
};
pub use range::RangeJob;
pub use rekey::rekey_head;
pub use session::{starts_armor_js, DecryptSession, EncryptSession};
pub use sign::{sign_generate_key_pair, sign_message, sign_public_key_of, sign_verify};
pub use toolkit::{
    aead_generate_key, aead_open, aead_seal, hash, hmac, hmac_verify, kdf_argon2id, kdf_hkdf, kdf_pbkdf2,
    kdf_scrypt, token_generate_key, token_open, token_seal,
};
