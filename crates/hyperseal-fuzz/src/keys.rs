//! Targets for key material: key and identity parsing, tokens.

use hyperseal::recipient;
use hyperseal_toolkit::sign::{SigningKey, VerifyingKey};
use hyperseal_toolkit::token::{self, KeyRing};

use crate::fixtures;

pub fn keys(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    let mut errors = Vec::new();
    match recipient::parse_recipient(text) {
        Ok(_) => assert!(!recipient::looks_like_identity(text), "a secret key parsed as a recipient"),
        Err(e) => errors.push(e.to_string()),
    }
    if let Err(e) = recipient::parse_recipients_file(text) {
        errors.push(e.to_string());
    }
    if let Err(e) = recipient::public_of(text) {
        errors.push(e.to_string());
    }
    match recipient::parse_identities(text) {
        Ok(ids) => identities_open_what_their_recipients_seal(text, &ids),
        Err(e) => errors.push(e.to_string()),
    }
    if let Err(e) = SigningKey::from_pem(text) {
        errors.push(e.to_string());
    }
    if let Err(e) = VerifyingKey::from_pem(text) {
        errors.push(e.to_string());
    }
    if let Err(e) = KeyRing::from_key_file(text) {
        errors.push(e.to_string());
    }
    for msg in &errors {
        assert_no_key_material(text, msg);
    }
}

/// A parsed identity file's recipients (from `public_of`) seal a file that the identities open.
fn identities_open_what_their_recipients_seal(text: &str, ids: &[Box<dyn hyperseal::Identity>]) {
    let recipients = match recipient::public_of(text) {
        Ok(public) => recipient::parse_recipients_file(&public).expect("public_of prints valid recipients"),
        // A PKCS#8 Ed25519 key is a signing key to `public_of` (`hyperseal pubkey` prints its
        // SPKI) and an ssh-ed25519 identity to age: its recipient is the one age makes.
        Err(_) => recipient::identity_recipients_for(
            text,
            std::sync::Arc::new(recipient::NoCallbacks),
            hyperseal::Profile::Age,
        )
        .expect("an identity file that parses has recipients"),
    };
    // Recipients of different kinds cannot share a file (post-quantum labels): one at a time.
    for r in recipients {
        let file = hyperseal::encrypt(&[r], b"fuzz").expect("encrypt to a parsed recipient");
        let plain = hyperseal::decrypt(ids, &file).expect("the identity opens its own recipient's file");
        assert_eq!(&plain[..], b"fuzz");
    }
}

/// Names of key kinds that messages list (what a recipient may look like): an input that
/// spells one is not key material.
const KIND_NAMES: &str = "age1pq1 age1tag1 hs-mlkem1024 hs-p2561 hs-mlkem768p2561 mlkem768x25519 ssh-ed25519";

/// No error message repeats eight characters of the input's key material (the bech32 or base64
/// data of each line, digits included so that English words in messages do not count).
pub(crate) fn assert_no_key_material(text: &str, msg: &str) {
    for line in text.lines() {
        let data = line.rsplit_once('1').map_or(line, |(_, d)| d);
        let chars: Vec<char> = data.chars().collect();
        for w in chars.windows(8) {
            let window: String = w.iter().collect();
            if window.chars().all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '/')
                && window.chars().any(|c| c.is_ascii_digit())
                && !KIND_NAMES.contains(&window)
            {
                assert!(!msg.contains(&window), "error message {msg:?} repeats input {window:?}");
            }
        }
    }
}

pub fn token(data: &[u8]) {
    let ring = fixtures::token_ring();
    // First byte: length (mod 8) of the associated data that follows it; the rest is the token.
    let Some((&n, data)) = data.split_first() else { return };
    let (aad, rest) = data.split_at(usize::from(n % 8).min(data.len()));
    if let Ok(text) = std::str::from_utf8(rest) {
        // Any outcome but a panic; a forged token opening would need the key.
        let _ = token::open(ring, text, aad);
        let _ = token::open(ring, text.trim(), aad);
    }
    // Whatever the bytes, they seal and open back, and only with the same associated data.
    let key = ring.primary().expect("fixture ring has a key");
    let sealed = token::seal(key, rest, aad, None);
    assert_eq!(&token::open(ring, &sealed, aad).expect("own token opens")[..], rest);
    let mut other = aad.to_vec();
    other.push(0);
    assert!(token::open(ring, &sealed, &other).is_err(), "a token opened with other associated data");
}
