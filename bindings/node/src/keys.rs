//! Key strings → parsed recipients and identities, with a small cache.
//!
//! Parsing is not free (a hybrid identity expands its seed into ML-KEM keys, tens of µs), and
//! servers call the API with the same few keys over and over, so the last few parsed key sets
//! are kept. Cached identities are the library's own types, which zeroize on drop.

use std::sync::Arc;

use hyperseal::recipient::{self, Identity, Recipient};
use napi::bindgen_prelude::Either;

use crate::errors::{Code, Fail};

type Recipients = Arc<Vec<Box<dyn Recipient>>>;
type Identities = Arc<Vec<Box<dyn Identity>>>;

/// A few parsed keys, found again by their text (the library's `KeyCache`: it keeps no key
/// text and compares in constant time); shared with the toolkit's PEM keys.
pub(crate) type Cache<T> = hyperseal::KeyCache<T>;

static RECIPIENTS: Cache<Recipients> = Cache::new();
static IDENTITIES: Cache<Identities> = Cache::new();

/// One public key or a list of them, as JS passes it.
pub type PublicKeys = Either<String, Vec<String>>;

/// Parses (or finds cached) recipients.
pub fn recipients(keys: &PublicKeys) -> Result<Recipients, Fail> {
    let list: Vec<&str> = match keys {
        Either::A(s) => vec![s.as_str()],
        Either::B(v) => v.iter().map(String::as_str).collect(),
    };
    if list.is_empty() {
        return Err(Fail::arg("publicKey: give at least one public key"));
    }
    let joined = list.join("\n");
    RECIPIENTS.get_or_parse(&joined, || {
        let mut out = Vec::with_capacity(list.len());
        for k in list {
            // A recipients file (several lines) is accepted too, as the CLI's -R does.
            if k.trim().is_empty() {
                return Err(Fail::new(
                    Code(hyperseal::ErrorCode::Key),
                    "invalid recipient: empty public key",
                ));
            }
            if k.trim().lines().count() > 1 && !k.trim_start().starts_with("-----BEGIN") {
                out.extend(recipient::parse_recipients_file(k)?);
            } else {
                out.push(recipient::parse_recipient(k)?);
            }
        }
        Ok(Arc::new(out))
    })
}

/// Parses (or finds cached) identities: a secret key line, an identity file as the CLI writes
/// it, or a PKCS#8 PEM.
pub fn identities(text: &str) -> Result<Identities, Fail> {
    IDENTITIES.get_or_parse(text, || Ok::<_, Fail>(Arc::new(recipient::parse_identities(text)?)))
}
