//! Key texts to recipients and identities: the one place that reads a key string or a key file
//! and picks its kind by prefix (bech32 HRPs, PEM labels, SSH key types, plugin names), and the
//! reverse, an identity's public recipient.
//!
//! Errors never quote the input: a secret key pasted in the wrong place must not end up in a
//! terminal, a log or a CI transcript.

use std::sync::Arc;

use crate::error::Error;
use crate::format::Profile;
use crate::recipient::callbacks::{Callbacks, NoCallbacks};
use crate::recipient::hpke::{hybrid, mlkem768p256, p256, tag};
#[cfg(not(portable_backend))]
use crate::recipient::ssh::pem_key;
use crate::recipient::ssh::{openssh, openssh_key};
use crate::recipient::traits::{Identity, Recipient};
use crate::recipient::{mlkem1024, plugin, rsa, ssh, x25519};

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
    if pem_key::parse_encrypted(t)?.is_some() {
        // No public key at hand: the passphrase is asked now (see ssh::parse_legacy_identity).
        return Ok(vec![ssh::parse_legacy_identity(t, None, callbacks)?.0]);
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
/// `p256-mlkem768` identities, one per line (see `hpke/tag.rs`); an error for any other kind.
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
    if pem_key::parse_encrypted(text.trim_start())?.is_some() {
        return Ok(vec![ssh::recipient_of(&ssh::parse_legacy_identity(text, None, callbacks)?.1)?]);
    }
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
