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
use std::sync::Arc;

use zeroize::Zeroizing;

use crate::format::{Header, Profile, Stanza};
use crate::{Error, FileKey};

mod bech32_long;
mod callbacks;
mod hpke;
mod hpke_kem;
pub mod hybrid;
pub mod identity_file;
mod mlkem;
pub mod mlkem1024;
pub mod mlkem768p256;
#[cfg(not(portable_backend))]
pub mod openssh;
#[cfg(not(portable_backend))]
pub mod openssh_key;
pub mod p256;
pub mod passphrase;
#[cfg(not(portable_backend))]
pub mod pem_key;
pub mod plugin;
mod primitives;
#[cfg(not(portable_backend))]
pub mod rsa;
#[cfg(portable_backend)]
#[path = "rsa_unavailable.rs"]
pub mod rsa;
pub mod scrypt;
#[cfg(not(portable_backend))]
pub mod ssh;
#[cfg(not(portable_backend))]
pub mod ssh_ed25519;
#[cfg(not(portable_backend))]
pub mod ssh_rsa;
// The portable build (WebAssembly) reads no SSH keys: their parsers and stanzas run on aws-lc.
#[cfg(portable_backend)]
mod ssh_unavailable;
#[cfg(portable_backend)]
use ssh_unavailable::{openssh, openssh_key, ssh};
pub mod tag;
#[cfg(test)]
mod tests;
pub mod x25519;

pub use callbacks::{Callbacks, NoCallbacks};

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
    /// P-256 (HPKE DHKEM(P-256)): nkCryptoTool's ECC mode. Not in the portable build.
    P256,
    /// ML-KEM-768 + P-256 (HPKE MLKEM768-P256): nkCryptoTool's Hybrid mode. Not in the portable
    /// build.
    P256Mlkem768,
    /// RSA-OAEP-SHA-256 with a 3072-bit modulus.
    Rsa3072,
    /// RSA-OAEP-SHA-256 with a 4096-bit modulus.
    Rsa4096,
}

impl Kind {
    /// Every kind, in the order the CLI lists them.
    pub const ALL: [Kind; 7] = [
        Kind::Hybrid,
        Kind::X25519,
        Kind::Mlkem1024,
        Kind::P256,
        Kind::P256Mlkem768,
        Kind::Rsa3072,
        Kind::Rsa4096,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Hybrid => "hybrid",
            Kind::X25519 => "x25519",
            Kind::Mlkem1024 => "mlkem1024",
            Kind::P256 => "p256",
            Kind::P256Mlkem768 => "p256-mlkem768",
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
        Kind::P256 => p256::generate(),
        Kind::P256Mlkem768 => mlkem768p256::generate(),
        Kind::Rsa3072 => rsa::generate(3072),
        Kind::Rsa4096 => rsa::generate(4096),
    }
}

/// The message of the [`Error::InvalidRecipient`] returned when a secret key is given where a
/// recipient belongs (callers match on it to suggest `-i` or `pubkey`).
pub const IDENTITY_NOT_RECIPIENT: &str = "a secret key (identity) was given, not a public key";

/// The message of the [`Error::InvalidKey`] returned when a recipient is given where an identity
/// belongs.
pub const RECIPIENT_NOT_IDENTITY: &str = "a public key (recipient) was given, not a secret key";

/// Parses one recipient: `age1…`, `age1pq1…`, age's tag recipients `age1tag1…` / `age1tagpq1…`,
/// hyperseal's `hs-mlkem10241…`, `hs-p2561…`, `hs-mlkem768p2561…`, an SPKI PEM, an
/// SSH public key line (`ssh-ed25519 AAAA… comment`, `ssh-rsa …`, with `authorized_keys` options),
/// or a plugin recipient `age1NAME1…` (refused here: plugins run only where the callbacks of
/// [`parse_recipient_with`] allow them, see [`plugin::Plugins`]).
///
/// Errors never quote the input: a secret key pasted in the wrong place must not end up in a
/// terminal, a log or a CI transcript. A secret key gets [`IDENTITY_NOT_RECIPIENT`].
pub fn parse_recipient(s: &str) -> Result<Box<dyn Recipient>, Error> {
    parse_recipient_with(s, Arc::new(NoCallbacks))
}

/// [`parse_recipient`], with `callbacks` for a plugin's requests.
pub fn parse_recipient_with(s: &str, callbacks: Arc<dyn Callbacks>) -> Result<Box<dyn Recipient>, Error> {
    let s = s.trim();
    if s.len() > crate::limits::KEY_TEXT {
        return Err(crate::limits::too_long("a recipient", crate::limits::KEY_TEXT));
    }
    if looks_like_identity(s) {
        return Err(Error::InvalidRecipient(IDENTITY_NOT_RECIPIENT.into()));
    }
    if s.starts_with("-----BEGIN PUBLIC KEY-----") {
        return Ok(Box::new(rsa::RsaRecipient::from_spki_pem(s)?));
    }
    let lower = s.to_ascii_lowercase();
    if lower.starts_with(hybrid::RECIPIENT_HRP) {
        Ok(Box::new(hybrid::HybridRecipient::from_bech32(s)?))
    } else if lower.starts_with(mlkem1024::RECIPIENT_HRP) {
        Ok(Box::new(mlkem1024::Mlkem1024Recipient::from_bech32(s)?))
    } else if lower.starts_with(p256::RECIPIENT_HRP) {
        Ok(Box::new(p256::P256Recipient::from_bech32(s)?))
    } else if lower.starts_with(mlkem768p256::RECIPIENT_HRP) {
        Ok(Box::new(mlkem768p256::Mlkem768P256Recipient::from_bech32(s)?))
    } else if tag::is_recipient(s) {
        // Before the plugin rule: `age1tag1…` is also the shape of a plugin named "tag".
        Ok(Box::new(tag::TagRecipient::from_bech32(s)?))
    } else if plugin::is_recipient(s) {
        Ok(Box::new(plugin::PluginRecipient::from_bech32(s, callbacks)?))
    } else if lower.starts_with(x25519::RECIPIENT_HRP) {
        Ok(Box::new(x25519::X25519Recipient::from_bech32(s)?))
    } else if openssh::looks_like_ssh(s) {
        ssh::parse_recipient(s)
    } else {
        Err(Error::InvalidRecipient(format!(
            "unrecognised recipient: expected age1…, age1pq1…, age1tag1…, {}…, {}…, {}…, ssh-ed25519 …, \
             ssh-rsa … or an SPKI PEM",
            mlkem1024::RECIPIENT_HRP,
            p256::RECIPIENT_HRP,
            mlkem768p256::RECIPIENT_HRP
        )))
    }
}

/// An identity file is at most [`limits::KEY_FILE`](crate::limits::KEY_FILE) bytes, and a PEM or
/// OpenSSH key at most [`limits::KEY_TEXT`](crate::limits::KEY_TEXT).
fn identity_text_within_budget(t: &str) -> Result<(), Error> {
    use crate::limits::{too_long, KEY_FILE, KEY_TEXT};
    if t.len() > KEY_FILE {
        return Err(too_long("an identity file", KEY_FILE));
    }
    let pem = t.starts_with("-----BEGIN") && !t.starts_with("-----BEGIN AGE ENCRYPTED FILE-----");
    if pem && t.len() > KEY_TEXT {
        return Err(too_long("a PEM or OpenSSH key", KEY_TEXT));
    }
    Ok(())
}

/// Whether `s` is (the start of) a secret: an identity line, a private-key PEM, or a
/// `hyperseal token` key. Case-insensitive, as bech32 is.
pub fn looks_like_identity(s: &str) -> bool {
    let upper = s.trim_start().to_ascii_uppercase();
    [
        hybrid::IDENTITY_HRP,
        mlkem1024::IDENTITY_HRP,
        p256::IDENTITY_HRP,
        mlkem768p256::IDENTITY_HRP,
        x25519::IDENTITY_HRP,
        "AGE-SECRET-KEY-",
        "HYPERSEAL-TOKEN-KEY-",
    ]
    .iter()
    .any(|p| upper.starts_with(p))
        || (upper.starts_with("-----BEGIN")
            && upper.lines().next().is_some_and(|l| l.contains("PRIVATE KEY")))
}

/// Parses a recipients file: one recipient per line, `#` comments and blank lines ignored, or a
/// single SPKI PEM block. SSH keys of types age cannot encrypt to (ECDSA, security keys) are
/// skipped, as age does, so an `authorized_keys` or GitHub `.keys` file works as it is.
pub fn parse_recipients_file(text: &str) -> Result<Vec<Box<dyn Recipient>>, Error> {
    parse_recipients_file_with(text, Arc::new(NoCallbacks))
}

/// [`parse_recipients_file`], telling `callbacks` about every skipped SSH key and handing them
/// to plugin recipients.
pub fn parse_recipients_file_with(
    text: &str,
    callbacks: Arc<dyn Callbacks>,
) -> Result<Vec<Box<dyn Recipient>>, Error> {
    if text.len() > crate::limits::KEY_FILE {
        return Err(crate::limits::too_long("a recipients file", crate::limits::KEY_FILE));
    }
    if text.trim_start().starts_with("-----BEGIN") {
        return Ok(vec![parse_recipient(text)?]);
    }
    let mut out = Vec::new();
    let mut skipped = 0;
    for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Ok(openssh::AuthorizedKey::Unsupported(t)) = openssh::parse_authorized_key(line) {
            callbacks.display_message(&format!("ignoring an SSH key of unsupported type {t} at line {n}"));
            skipped += 1;
            continue;
        }
        out.push(parse_recipient_with(line, callbacks.clone())?);
    }
    if out.is_empty() {
        return Err(Error::InvalidRecipient(if skipped > 0 {
            format!("no usable recipients: {skipped} SSH key(s) of unsupported types (age takes ssh-ed25519 and ssh-rsa)")
        } else {
            "no recipients found".into()
        }));
    }
    Ok(out)
}

/// Parses an identity file: bech32 secret keys one per line with `#` comments, a PKCS#8 PEM, or
/// an OpenSSH private key. Passphrase-protected SSH keys fail when first needed; use
/// [`parse_identities_with`] to supply the passphrase.
pub fn parse_identities(text: &str) -> Result<Vec<Box<dyn Identity>>, Error> {
    parse_identities_with(text, Arc::new(NoCallbacks))
}

/// [`parse_identities`], asking `callbacks` for the passphrase of protected keys.
pub fn parse_identities_with(
    text: &str,
    callbacks: Arc<dyn Callbacks>,
) -> Result<Vec<Box<dyn Identity>>, Error> {
    let t = text.trim_start();
    identity_text_within_budget(t)?;
    if t.starts_with(openssh_key::BEGIN) {
        return Ok(vec![ssh::parse_identity(t, callbacks)?.0]);
    }
    #[cfg(not(portable_backend))]
    if let Some(key) = pem_key::parse(t)? {
        return pem_identities(&key, t);
    }
    legacy_ssh_pem(t)?;
    if t.starts_with("-----BEGIN AGE ENCRYPTED FILE-----") || t.starts_with(crate::format::AGE_V1) {
        return Err(Error::InvalidKey(
            "this identity file is an encrypted age file: read it with identity_file::parse".into(),
        ));
    }
    if t.starts_with("-----BEGIN") {
        return Ok(vec![Box::new(rsa::RsaIdentity::from_pkcs8_pem(text)?)]);
    }
    Ok(secret_key_lines(text, &callbacks)?.into_iter().map(SecretKeyLine::boxed).collect())
}

/// A PEM private key's identities: its SSH identity (as age reads such keys) and, for a PKCS#8
/// RSA key, hyperseal's own `rsa-oaep` identity too; at least one of them must load.
#[cfg(not(portable_backend))]
fn pem_identities(key: &pem_key::PemKey, text: &str) -> Result<Vec<Box<dyn Identity>>, Error> {
    let ssh = key.ssh_identity();
    let native = key.is_pkcs8_rsa().then(|| rsa::RsaIdentity::from_pkcs8_pem(text).ok()).flatten();
    match (ssh, native) {
        (Ok(s), Some(n)) => Ok(vec![s, Box::new(n)]),
        (Ok(s), None) => Ok(vec![s]),
        (Err(_), Some(n)) => Ok(vec![Box::new(n)]),
        (Err(e), None) => Err(e),
    }
}

/// SSH keys in the old PEM formats: say how to convert them instead of "not PKCS#8".
fn legacy_ssh_pem(t: &str) -> Result<(), Error> {
    for label in ["RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY"] {
        if t.starts_with(&format!("-----BEGIN {label}-----")) {
            return Err(Error::InvalidKey(format!(
                "{label} PEM files are not supported: convert the key to the OpenSSH format with \
                 `ssh-keygen -p -f KEY` (it rewrites the file in place)"
            )));
        }
    }
    Ok(())
}

/// The recipient (public) string of an identity file, for `hyperseal pubkey`.
pub fn public_of(identity_text: &str) -> Result<String, Error> {
    let t = identity_text.trim_start();
    identity_text_within_budget(t)?;
    if t.starts_with(openssh_key::BEGIN) {
        // The public key is in the clear part: no passphrase needed.
        return Ok(openssh_key::OpensshKeyFile::parse(t)?.public().to_authorized_key());
    }
    // A PKCS#1 key is an SSH key; a PKCS#8 RSA key keeps its SPKI PEM (hyperseal's own RSA
    // keys) unless that refuses it (under 3072 bits): then its SSH key line. A PKCS#8 Ed25519
    // key goes on below (a hyperseal signing key; age mode takes its SSH recipient itself).
    #[cfg(not(portable_backend))]
    if let Ok(Some(key)) = pem_key::parse(t) {
        if !key.is_pkcs8() {
            return Ok(key.public().to_authorized_key());
        }
        if key.is_pkcs8_rsa() {
            return rsa::public_pem_from_pkcs8_pem(t).or_else(|_| Ok(key.public().to_authorized_key()));
        }
    }
    if t.starts_with("-----BEGIN") {
        return rsa::public_pem_from_pkcs8_pem(t);
    }
    let publics = secret_key_lines(t, &(Arc::new(NoCallbacks) as Arc<dyn Callbacks>))?
        .iter()
        .map(SecretKeyLine::public)
        .collect::<Result<Vec<String>, Error>>()?;
    Ok(publics.join("\n"))
}

/// The age v1.3 tag recipients (`age1tag1…`, `age1tagpq1…`) of an identity file's `p256` and
/// `p256-mlkem768` identities, one per line (see `tag.rs`); an error for any other kind.
pub fn tag_recipients_of(identity_text: &str) -> Result<String, Error> {
    identity_text_within_budget(identity_text)?;
    if identity_text.trim_start().starts_with("-----BEGIN") {
        return Err(Error::InvalidKey(TAG_KINDS_ONLY.into()));
    }
    let tags = secret_key_lines(identity_text, &(Arc::new(NoCallbacks) as Arc<dyn Callbacks>))?
        .iter()
        .map(|line| match line {
            SecretKeyLine::P256(k) => Ok(k.to_tag_recipient().to_bech32()),
            SecretKeyLine::Mlkem768P256(k) => Ok(k.to_tag_recipient().to_bech32()),
            _ => Err(Error::InvalidKey(TAG_KINDS_ONLY.into())),
        })
        .collect::<Result<Vec<String>, Error>>()?;
    Ok(tags.join("\n"))
}

const TAG_KINDS_ONLY: &str =
    "only p256 and p256-mlkem768 identities have an age tag recipient (age1tag1…, age1tagpq1…)";

/// The recipients of an identity file's identities (age's `-e -i`): plugin identities become
/// plugin recipients that wrap to the identity itself.
pub fn identity_recipients(
    text: &str,
    callbacks: Arc<dyn Callbacks>,
) -> Result<Vec<Box<dyn Recipient>>, Error> {
    identity_recipients_for(text, callbacks, Profile::Hyperseal)
}

/// [`identity_recipients`] for files of `profile`: in age files a PKCS#8 RSA key is an
/// `ssh-rsa` recipient, as age makes it, not hyperseal's `rsa-oaep`.
pub fn identity_recipients_for(
    text: &str,
    callbacks: Arc<dyn Callbacks>,
    profile: Profile,
) -> Result<Vec<Box<dyn Recipient>>, Error> {
    #[cfg(not(portable_backend))]
    if profile == Profile::Age {
        if let Some(key) = pem_key::parse(text)? {
            return Ok(vec![ssh::recipient_of(&key.public())?]);
        }
    }
    let _ = profile;
    if text.trim_start().starts_with("-----BEGIN") {
        return parse_recipients_file(&public_of(text)?);
    }
    secret_key_lines(text, &callbacks)?
        .iter()
        .map(|line| match line {
            SecretKeyLine::Plugin(id) => {
                Ok(Box::new(plugin::PluginRecipient::from_identity(id)) as Box<dyn Recipient>)
            }
            other => parse_recipient(&other.public()?),
        })
        .collect()
}

/// One bech32 identity line, by kind: the single place that maps prefixes to key types.
enum SecretKeyLine {
    Hybrid(hybrid::HybridIdentity),
    Mlkem1024(mlkem1024::Mlkem1024Identity),
    P256(p256::P256Identity),
    Mlkem768P256(mlkem768p256::Mlkem768P256Identity),
    X25519(x25519::X25519Identity),
    Plugin(plugin::PluginIdentity),
}

impl SecretKeyLine {
    fn parse(line: &str, callbacks: &Arc<dyn Callbacks>) -> Result<Self, Error> {
        let upper = line.to_ascii_uppercase();
        // The hybrid prefix (AGE-SECRET-KEY-PQ-1) must be tested before X25519's (AGE-SECRET-KEY-1).
        if upper.starts_with(hybrid::IDENTITY_HRP) {
            Ok(Self::Hybrid(hybrid::HybridIdentity::from_bech32(line)?))
        } else if upper.starts_with(mlkem1024::IDENTITY_HRP) {
            Ok(Self::Mlkem1024(mlkem1024::Mlkem1024Identity::from_bech32(line)?))
        } else if upper.starts_with(p256::IDENTITY_HRP) {
            Ok(Self::P256(p256::P256Identity::from_bech32(line)?))
        } else if upper.starts_with(mlkem768p256::IDENTITY_HRP) {
            Ok(Self::Mlkem768P256(mlkem768p256::Mlkem768P256Identity::from_bech32(line)?))
        } else if upper.starts_with(x25519::IDENTITY_HRP) {
            Ok(Self::X25519(x25519::X25519Identity::from_bech32(line)?))
        } else if upper.starts_with(plugin::IDENTITY_PREFIX) {
            Ok(Self::Plugin(plugin::PluginIdentity::from_bech32(line, callbacks.clone())?))
        } else if parse_recipient(line).is_ok() {
            Err(Error::InvalidKey(RECIPIENT_NOT_IDENTITY.into()))
        } else {
            Err(Error::InvalidKey(
                "unrecognised identity line (expected AGE-SECRET-KEY-…, HS-…-SECRET-KEY-… or AGE-PLUGIN-…)"
                    .into(),
            ))
        }
    }

    fn boxed(self) -> Box<dyn Identity> {
        match self {
            Self::Hybrid(k) => Box::new(k),
            Self::Mlkem1024(k) => Box::new(k),
            Self::P256(k) => Box::new(k),
            Self::Mlkem768P256(k) => Box::new(k),
            Self::X25519(k) => Box::new(k),
            Self::Plugin(k) => Box::new(k),
        }
    }

    fn public(&self) -> Result<String, Error> {
        Ok(match self {
            Self::Hybrid(k) => k.to_public().to_bech32(),
            Self::Mlkem1024(k) => k.to_public().to_bech32(),
            Self::P256(k) => k.to_public().to_bech32(),
            Self::Mlkem768P256(k) => k.to_public().to_bech32(),
            Self::X25519(k) => k.to_public().to_bech32(),
            Self::Plugin(k) => {
                return Err(Error::Plugin(format!(
                    "the recipient of an age-plugin-{} identity is known only to the plugin (see its own commands)",
                    k.name()
                )))
            }
        })
    }
}

/// Every identity line of a text, skipping blank lines and `#` comments; at least one.
fn secret_key_lines(text: &str, callbacks: &Arc<dyn Callbacks>) -> Result<Vec<SecretKeyLine>, Error> {
    let keys = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| SecretKeyLine::parse(l, callbacks))
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

/// Both passphrase identities, Argon2id (hyperseal files) and scrypt (age files): each opens
/// only its own stanza type, so a file or stream can be opened before its header says which
/// one it needs (what the bindings' `passphrase` arguments build).
pub fn passphrase_identities(passphrase: Zeroizing<String>) -> Vec<Box<dyn Identity>> {
    vec![
        Box::new(passphrase::PassphraseIdentity::new(passphrase.clone())),
        Box::new(scrypt::ScryptIdentity::new(passphrase)),
    ]
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
