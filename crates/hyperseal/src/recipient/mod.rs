//! Recipients wrap the file key into stanzas; identities unwrap them.
//!
//! One file per kind, all behind the [`Recipient`] / [`Identity`] pair. An identity answers
//! `None` for a stanza that is not its own ("not mine") and `Some(Err(..))` for one that is its
//! own but broken: only the second is fatal, exactly as in age.
//!
//! Labels forbid unsafe mixes: every recipient of a file must carry the same label set, so a
//! post-quantum file can never also be opened by a classic-only key, and a passphrase (which gets
//! a unique random label) must stand alone.

use std::collections::BTreeSet;

use zeroize::Zeroizing;

use crate::format::{Header, Profile, Stanza};
use crate::{Error, FileKey};

mod bech32_long;
pub mod hybrid;
mod mlkem;
pub mod mlkem1024;
pub mod passphrase;
mod primitives;
#[cfg(not(portable_backend))]
pub mod rsa;
#[cfg(portable_backend)]
#[path = "rsa_unavailable.rs"]
pub mod rsa;
pub mod scrypt;
#[cfg(test)]
mod tests;
pub mod x25519;

/// Labels a recipient attaches to its stanzas (see the module docs).
pub type Labels = BTreeSet<String>;

/// The label of recipients that resist a quantum adversary.
pub const POSTQUANTUM: &str = "postquantum";

/// Something that can wrap a file key for one party.
pub trait Recipient: Send + Sync {
    /// Wraps `file_key` into one or more stanzas.
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error>;
}

/// Something that can unwrap a file key from the stanzas addressed to it.
pub trait Identity: Send + Sync {
    /// `None`: not mine. `Some(Err)`: mine but broken. `Some(Ok)`: the file key.
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>>;

    /// Tries every stanza in order; the first definite answer wins.
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        stanzas.iter().find_map(|s| self.unwrap_stanza(s))
    }
}

/// The key kinds `hyperseal keygen` can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// ML-KEM-768 + X25519 (X-Wing), age v1.3's `mlkem768x25519`. The default.
    Hybrid,
    /// X25519, age's classic recipient.
    X25519,
    /// ML-KEM-1024 alone.
    Mlkem1024,
    /// RSA-OAEP-SHA-256 with a 3072-bit modulus.
    Rsa3072,
    /// RSA-OAEP-SHA-256 with a 4096-bit modulus.
    Rsa4096,
}

impl Kind {
    /// Every kind, in the order the CLI lists them.
    pub const ALL: [Kind; 5] = [Kind::Hybrid, Kind::X25519, Kind::Mlkem1024, Kind::Rsa3072, Kind::Rsa4096];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Hybrid => "hybrid",
            Kind::X25519 => "x25519",
            Kind::Mlkem1024 => "mlkem1024",
            Kind::Rsa3072 => "rsa3072",
            Kind::Rsa4096 => "rsa4096",
        }
    }

    /// Parses a CLI name.
    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// A freshly generated key pair, as text.
pub struct GeneratedKey {
    /// The identity: a bech32 secret key line, or a PKCS#8 PEM for RSA.
    pub secret: Zeroizing<String>,
    /// The recipient: a bech32 public key, or an SPKI PEM for RSA.
    pub public: String,
}

impl std::fmt::Debug for GeneratedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GeneratedKey {{ public: {:?}, secret: <redacted> }}", self.public)
    }
}

/// Generates a key pair of the given kind.
pub fn generate(kind: Kind) -> Result<GeneratedKey, Error> {
    match kind {
        Kind::Hybrid => hybrid::generate(),
        Kind::X25519 => x25519::generate(),
        Kind::Mlkem1024 => mlkem1024::generate(),
        Kind::Rsa3072 => rsa::generate(3072),
        Kind::Rsa4096 => rsa::generate(4096),
    }
}

/// Parses one recipient: `age1…`, `age1pq1…`, `hs1mlkem1024…`-style bech32, or an SPKI PEM.
pub fn parse_recipient(s: &str) -> Result<Box<dyn Recipient>, Error> {
    let s = s.trim();
    if s.starts_with("-----BEGIN PUBLIC KEY-----") {
        return Ok(Box::new(rsa::RsaRecipient::from_spki_pem(s)?));
    }
    let lower = s.to_ascii_lowercase();
    if lower.starts_with(hybrid::RECIPIENT_HRP) {
        Ok(Box::new(hybrid::HybridRecipient::from_bech32(s)?))
    } else if lower.starts_with(mlkem1024::RECIPIENT_HRP) {
        Ok(Box::new(mlkem1024::Mlkem1024Recipient::from_bech32(s)?))
    } else if lower.starts_with(x25519::RECIPIENT_HRP) {
        Ok(Box::new(x25519::X25519Recipient::from_bech32(s)?))
    } else {
        Err(Error::InvalidRecipient(format!(
            "unrecognised recipient {:?}: expected age1…, age1pq1…, {}… or an SPKI PEM",
            truncate(s),
            mlkem1024::RECIPIENT_HRP
        )))
    }
}

/// Parses a recipients file: one recipient per line, `#` comments and blank lines ignored, or a
/// single SPKI PEM block.
pub fn parse_recipients_file(text: &str) -> Result<Vec<Box<dyn Recipient>>, Error> {
    if text.trim_start().starts_with("-----BEGIN") {
        return Ok(vec![parse_recipient(text)?]);
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(parse_recipient)
        .collect()
}

/// Parses an identity file: bech32 secret keys one per line with `#` comments, or a PKCS#8 PEM.
pub fn parse_identities(text: &str) -> Result<Vec<Box<dyn Identity>>, Error> {
    if text.trim_start().starts_with("-----BEGIN") {
        return Ok(vec![Box::new(rsa::RsaIdentity::from_pkcs8_pem(text)?)]);
    }
    Ok(secret_key_lines(text)?.into_iter().map(SecretKeyLine::boxed).collect())
}

/// The recipient (public) string of an identity file, for `hyperseal pubkey`.
pub fn public_of(identity_text: &str) -> Result<String, Error> {
    let t = identity_text.trim_start();
    if t.starts_with("-----BEGIN") {
        return rsa::public_pem_from_pkcs8_pem(t);
    }
    let publics: Vec<String> = secret_key_lines(t)?.iter().map(SecretKeyLine::public).collect();
    Ok(publics.join("\n"))
}

/// One bech32 identity line, by kind: the single place that maps prefixes to key types.
enum SecretKeyLine {
    Hybrid(hybrid::HybridIdentity),
    Mlkem1024(mlkem1024::Mlkem1024Identity),
    X25519(x25519::X25519Identity),
}

impl SecretKeyLine {
    fn parse(line: &str) -> Result<Self, Error> {
        let upper = line.to_ascii_uppercase();
        // The hybrid prefix (AGE-SECRET-KEY-PQ-1) must be tested before X25519's (AGE-SECRET-KEY-1).
        if upper.starts_with(hybrid::IDENTITY_HRP) {
            Ok(Self::Hybrid(hybrid::HybridIdentity::from_bech32(line)?))
        } else if upper.starts_with(mlkem1024::IDENTITY_HRP) {
            Ok(Self::Mlkem1024(mlkem1024::Mlkem1024Identity::from_bech32(line)?))
        } else if upper.starts_with(x25519::IDENTITY_HRP) {
            Ok(Self::X25519(x25519::X25519Identity::from_bech32(line)?))
        } else {
            Err(Error::InvalidKey("unrecognised identity line (expected AGE-SECRET-KEY-…)".into()))
        }
    }

    fn boxed(self) -> Box<dyn Identity> {
        match self {
            Self::Hybrid(k) => Box::new(k),
            Self::Mlkem1024(k) => Box::new(k),
            Self::X25519(k) => Box::new(k),
        }
    }

    fn public(&self) -> String {
        match self {
            Self::Hybrid(k) => k.to_public().to_bech32(),
            Self::Mlkem1024(k) => k.to_public().to_bech32(),
            Self::X25519(k) => k.to_public().to_bech32(),
        }
    }
}

/// Every identity line of a text, skipping blank lines and `#` comments; at least one.
fn secret_key_lines(text: &str) -> Result<Vec<SecretKeyLine>, Error> {
    let keys = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(SecretKeyLine::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if keys.is_empty() {
        return Err(Error::InvalidKey("no identities found".into()));
    }
    Ok(keys)
}

/// The passphrase recipient of a profile: age's scrypt for age files, Argon2id for hyperseal.
pub fn passphrase_recipient(profile: Profile, passphrase: Zeroizing<String>) -> Box<dyn Recipient> {
    match profile {
        Profile::Age => Box::new(scrypt::ScryptRecipient::new(passphrase)),
        Profile::Hyperseal => Box::new(passphrase::PassphraseRecipient::new(passphrase)),
    }
}

/// The passphrase identity that can open a file with this header (see [`Header::is_passphrase`]).
pub fn passphrase_identity_for(header: &Header, passphrase: Zeroizing<String>) -> Box<dyn Identity> {
    match header.profile {
        Profile::Age => Box::new(scrypt::ScryptIdentity::new(passphrase)),
        Profile::Hyperseal => Box::new(passphrase::PassphraseIdentity::new(passphrase)),
    }
}

/// Wraps `file_key` for every recipient and enforces the label rule.
pub fn wrap_all(recipients: &[Box<dyn Recipient>], file_key: &FileKey) -> Result<Vec<Stanza>, Error> {
    if recipients.is_empty() {
        return Err(Error::InvalidArgument("no recipients".into()));
    }
    let mut stanzas = Vec::new();
    let mut first: Option<Labels> = None;
    for r in recipients {
        let (s, labels) = r.wrap_file_key(file_key)?;
        match &first {
            None => first = Some(labels),
            Some(l) if *l != labels => {
                return Err(Error::IncompatibleRecipients(
                    "post-quantum and classic recipients cannot be mixed (the file would be only as \
                     strong as the classic one), and a passphrase must be the only recipient"
                        .into(),
                ))
            }
            Some(_) => {}
        }
        stanzas.extend(s);
    }
    Ok(stanzas)
}

fn truncate(s: &str) -> String {
    s.chars().take(24).collect()
}
