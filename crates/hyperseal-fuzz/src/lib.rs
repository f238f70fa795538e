//! The bodies of hyperseal's fuzz targets, in one place for both of their callers:
//!
//! - `fuzz/` (cargo-fuzz, nightly, libFuzzer): each `fuzz_targets/NAME.rs` is one line calling
//!   the function of the same name here; `make fuzz` runs them all.
//! - `tests/corpus.rs` (stable, part of `make test`): replays every committed input in
//!   `fuzz/corpus/NAME/` through the same function, so a crash once found and fixed stays fixed.
//!
//! A body returns normally for any input it rejects and panics only when an invariant breaks:
//! two decrypt paths disagree, a round trip changes the data, a parser accepts two spellings of
//! one value, or an error message repeats part of a secret key.
//!
//! ```
//! // Any bytes at all: a rejection is not a failure.
//! for t in hyperseal_fuzz::TARGETS {
//!     (t.run)(b"age-encryption.org/v1\n-> X25519 AAAA\n");
//! }
//! ```

mod checklist;
mod decrypt;
mod fixtures;
mod format;
mod keys;

/// One fuzz target: its name (the `fuzz_targets/` file and the corpus folder) and its body.
pub struct Target {
    /// Name of the target.
    pub name: &'static str,
    /// Runs one input; panics when an invariant breaks.
    pub run: fn(&[u8]),
}

/// Every target, in the order `make fuzz` runs them.
pub const TARGETS: &[Target] = &[
    Target { name: "header", run: header },
    Target { name: "armor", run: armor },
    Target { name: "stanza", run: stanza },
    Target { name: "decrypt", run: decrypt },
    Target { name: "token", run: token },
    Target { name: "keys", run: keys },
    Target { name: "checklist", run: checklist },
];

/// Header parsing, both profiles: never panics, consumes exactly the header, and re-encoding the
/// parsed header reproduces its bytes (one spelling per header).
pub fn header(data: &[u8]) {
    format::header(data)
}

/// ASCII armor: the reader accepts exactly what the writer produces (up to surrounding blanks
/// and line endings) and decodes it back unchanged.
pub fn armor(data: &[u8]) {
    format::armor(data)
}

/// Stanza bodies: every identity kind (X25519, ML-KEM-768 + X25519, ML-KEM-1024, RSA, scrypt,
/// Argon2id) sees the parsed stanzas of a header and must reject or unwrap without panicking.
pub fn stanza(data: &[u8]) {
    format::stanza(data)
}

/// Whole-file decryption with a fixed identity through the sequential, parallel, seek and
/// one-shot paths: all four must agree, and no modified file may decrypt to other plaintext.
pub fn decrypt(data: &[u8]) {
    decrypt::decrypt(data)
}

/// `hyperseal token open` with a fixed key ring, and seal/open round trips.
pub fn token(data: &[u8]) {
    keys::token(data)
}

/// Key and identity parsing: bech32 recipients and identities, PEM keys, identity files, token
/// key files. A parsed identity must open what its parsed recipient seals, and no error message
/// may repeat part of a secret key.
pub fn keys(data: &[u8]) {
    keys::keys(data)
}

/// `hash --check` lines (GNU and BSD `--tag`): parsing never panics, formatting then parsing
/// gives back the name, and no name can put a newline into a line.
pub fn checklist(data: &[u8]) {
    checklist::checklist(data)
}
