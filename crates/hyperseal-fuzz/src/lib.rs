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

mod c2sp;
mod checklist;
mod decrypt;
mod fixtures;
mod format;
mod identity;
mod keys;
mod parts;
mod plugin;
mod push;
mod sops;
mod split;
mod ssh;

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
    Target { name: "plugin", run: plugin },
    Target { name: "part_key", run: part_key },
    Target { name: "armor_push", run: armor_push },
    Target { name: "opener", run: opener },
    Target { name: "ssh_key", run: ssh_key },
    Target { name: "ssh_recipient", run: ssh_recipient },
    Target { name: "identity_file", run: identity_file },
    Target { name: "c2sp", run: c2sp },
    Target { name: "sops", run: sops },
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

/// The plugin protocol reader (a plugin's stdout through the exchange's reader and budgets):
/// never panics, stops at the per-message and per-exchange budgets with a limit error, reads
/// exactly one spelling, and what it read re-encodes and reads back the same.
pub fn plugin(data: &[u8]) {
    plugin::plugin(data)
}

/// `parts::PartKey::from_bytes`: any bytes are refused or read back to themselves; on
/// layouts MACed like `to_bytes`, every edited byte is refused, plans cover the file without
/// gaps, bounds checks never wrap, and parts sealed under a key open under its twin.
pub fn part_key(data: &[u8]) {
    parts::part_key(data)
}

/// The push armor decoder fed in random pieces agrees with the pull `ArmoredReader` (same
/// verdict, same bytes) and fails for good after an error.
pub fn armor_push(data: &[u8]) {
    push::armor_push(data)
}

/// The push-based `Opener` fed in random pieces agrees with the one-shot decrypt, releases only
/// plaintext, and fails for good after an error.
pub fn opener(data: &[u8]) {
    push::opener(data)
}

/// OpenSSH (`openssh-key-v1`, plain and bcrypt-protected) and PEM private keys: parse, decrypt
/// with the right and a wrong passphrase, public-key round trips, and an identity opens what its
/// own recipient seals; no error message repeats key material.
pub fn ssh_key(data: &[u8]) {
    ssh::ssh_key(data)
}

/// `ssh-ed25519` / `ssh-rsa` lines and blobs: one spelling per blob, lines read back to the same
/// key, and a parsed recipient wraps or is refused as a bad key, never an internal failure.
pub fn ssh_recipient(data: &[u8]) {
    ssh::ssh_recipient(data)
}

/// Identity files as bytes, plain or passphrase-encrypted (the caller answers the prompt): an
/// identity file opens what its own recipients seal; errors repeat no key material.
pub fn identity_file(data: &[u8]) {
    identity::identity_file(data)
}

/// C2SP chunked encryption: the one-shot, push, streaming (1 and 2 threads) and seekable readers
/// agree; recipes round-trip, and a touched message opens on no path.
pub fn c2sp(data: &[u8]) {
    c2sp::c2sp(data)
}

/// sops files, each format (`hyperseal-sops`): never a panic; a re-key's output is up to date for
/// the same re-key, and a rotation's output rotates again (every value, comment and the `mac`
/// sealed under the new key).
pub fn sops(data: &[u8]) {
    sops::sops(data)
}
