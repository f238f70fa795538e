//! Where age's types meet the core's: stanzas and file keys both ways, the core's errors as
//! age's, a core key as an age [`Identity`](crate::Identity)/[`Recipient`](crate::Recipient),
//! and an age recipient list as the stanzas of one file key (age's label rule kept).
//!
//! age's traits take borrowed, non-`Send` trait objects, and the core's take owned
//! `Send + Sync` ones; so the file key is wrapped and unwrapped here, with the caller's own
//! objects, and the core gets only the stanzas and the key (see [`KnownKey`]).

use std::collections::HashSet;

use age_core::format::{FileKey, Stanza};
use age_core::secrecy::ExposeSecret;
use hyperseal::Error as CoreError;

use crate::{DecryptError, EncryptError};

/// An age-core stanza as the core's.
pub(crate) fn to_core_stanza(s: &Stanza) -> hyperseal::format::Stanza {
    hyperseal::format::Stanza { tag: s.tag.clone(), args: s.args.clone(), body: s.body.clone() }
}

/// A core stanza as age-core's.
pub(crate) fn to_age_stanza(s: hyperseal::format::Stanza) -> Stanza {
    Stanza { tag: s.tag, args: s.args, body: s.body }
}

/// A core file key as age-core's (age files have 16-byte file keys; other lengths are not
/// age's and are refused as a broken stanza would be).
pub(crate) fn to_age_key(k: &hyperseal::FileKey) -> Result<FileKey, DecryptError> {
    FileKey::try_init_with_mut(|out| {
        let b = k.expose();
        if b.len() != out.len() {
            return Err(DecryptError::InvalidHeader);
        }
        out.copy_from_slice(b);
        Ok(())
    })
}

/// An age-core file key as the core's.
pub(crate) fn to_core_key(k: &FileKey) -> hyperseal::FileKey {
    hyperseal::FileKey::from_slice(k.expose_secret()).expect("age file keys are 16 bytes")
}

/// The core's error as age's [`DecryptError`], by what a caller of age matches on.
pub(crate) fn decrypt_error(e: CoreError) -> DecryptError {
    match e {
        CoreError::UnknownFormat => DecryptError::UnknownFormat,
        CoreError::HeaderMac => DecryptError::InvalidMac,
        CoreError::NoIdentityMatched => DecryptError::NoMatchingKeys,
        CoreError::WrongPassphrase | CoreError::WrongKey => DecryptError::DecryptionFailed,
        CoreError::ChunkAuth(_) | CoreError::Truncated(_) => DecryptError::DecryptionFailed,
        #[cfg(feature = "armor")]
        CoreError::Armor(_) => DecryptError::Io(crate::armor::read_error(e)),
        CoreError::Io(io) => DecryptError::Io(io),
        #[cfg(feature = "plugin")]
        CoreError::Plugin(msg) => DecryptError::Plugin(vec![crate::error::PluginError::Other {
            kind: "plugin".into(),
            metadata: vec![],
            message: msg,
        }]),
        // A damaged stanza, an oversized header, an empty input and the rest are all a header
        // age cannot use.
        _ => DecryptError::InvalidHeader,
    }
}

/// The core's error as age's [`EncryptError`].
pub(crate) fn encrypt_error(e: CoreError) -> EncryptError {
    match e {
        CoreError::Io(io) => EncryptError::Io(io),
        #[cfg(feature = "plugin")]
        CoreError::Plugin(msg) => EncryptError::Plugin(vec![crate::error::PluginError::Other {
            kind: "plugin".into(),
            metadata: vec![],
            message: msg,
        }]),
        other => EncryptError::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, other)),
    }
}

/// A core identity answering age's [`Identity`](crate::Identity): the stanza goes to the core
/// kind, its answer comes back as age's.
pub(crate) fn unwrap_with(
    id: &dyn hyperseal::Identity,
    stanza: &Stanza,
) -> Option<Result<FileKey, DecryptError>> {
    id.unwrap_stanza(&to_core_stanza(stanza)).map(|r| r.map_err(decrypt_error).and_then(|k| to_age_key(&k)))
}

/// A core recipient answering age's [`Recipient`](crate::Recipient).
pub(crate) fn wrap_with(
    r: &dyn hyperseal::Recipient,
    file_key: &FileKey,
) -> Result<(Vec<Stanza>, HashSet<String>), EncryptError> {
    let (stanzas, labels) = r.wrap_file_key(&to_core_key(file_key)).map_err(encrypt_error)?;
    Ok((stanzas.into_iter().map(to_age_stanza).collect(), labels.into_iter().collect()))
}

/// The core's callbacks, answered by age's: a passphrase-protected key's passphrase, a plugin's
/// or the agent's questions (a PIN, a touch). `plugins`: whether the caller named plugins to run
/// (the core refuses to start one otherwise).
pub(crate) struct Asks<C> {
    pub(crate) callbacks: C,
    pub(crate) plugins: bool,
}

impl<C: crate::Callbacks> hyperseal::recipient::Callbacks for Asks<C> {
    fn display_message(&self, message: &str) {
        self.callbacks.display_message(message)
    }
    fn request_passphrase(&self, description: &str) -> Option<zeroize::Zeroizing<String>> {
        let p = self.callbacks.request_passphrase(description)?;
        Some(zeroize::Zeroizing::new(p.expose_secret().to_string()))
    }
    fn confirm(&self, message: &str, yes: &str, no: Option<&str>) -> Option<bool> {
        self.callbacks.confirm(message, yes, no)
    }
    fn request_public_string(&self, description: &str) -> Option<String> {
        self.callbacks.request_public_string(description)
    }
    fn plugins(&self) -> hyperseal::recipient::plugin::Plugins {
        match self.plugins {
            true => hyperseal::recipient::plugin::Plugins::allowed(true),
            false => hyperseal::recipient::plugin::Plugins::Refuse,
        }
    }
}

/// How every reader here parses a header: as the age crate does, which also reads a stanza
/// whose body ends without its final short line (early rage versions wrote them), so files a
/// program could open with the age crate still open after the switch.
pub(crate) const HEADER_RULES: hyperseal::format::HeaderRules =
    hyperseal::format::HeaderRules { legacy_stanza_end: true };

/// The file key, already unwrapped by the caller's identities, as the one identity the core
/// needs to check the header MAC and derive the payload key: it answers the first stanza it is
/// shown and nothing after.
pub(crate) struct KnownKey(pub(crate) hyperseal::FileKey);

impl hyperseal::Identity for KnownKey {
    fn unwrap_stanza(&self, _: &hyperseal::format::Stanza) -> Option<Result<hyperseal::FileKey, CoreError>> {
        Some(Ok(self.0.clone()))
    }
}

/// Unwraps the file key from `stanzas` with age identities, as age does: each identity in turn
/// is offered every stanza; the first definite answer wins, and "not mine" from all of them is
/// [`DecryptError::NoMatchingKeys`].
pub(crate) fn unwrap_file_key<'a>(
    stanzas: &[hyperseal::format::Stanza],
    identities: impl Iterator<Item = &'a dyn crate::Identity>,
) -> Result<hyperseal::FileKey, DecryptError> {
    let stanzas: Vec<Stanza> = stanzas.iter().cloned().map(to_age_stanza).collect();
    for id in identities {
        if let Some(r) = id.unwrap_stanzas(&stanzas) {
            return r.map(|k| to_core_key(&k));
        }
    }
    Err(DecryptError::NoMatchingKeys)
}

/// Wraps a fresh file key to every recipient with age's label rule: all recipients must carry
/// the same labels (a passphrase, or a post-quantum key, cannot stand beside a classic one).
pub(crate) fn wrap_file_key<'a>(
    recipients: impl Iterator<Item = &'a dyn crate::Recipient>,
) -> Result<(hyperseal::FileKey, Vec<hyperseal::format::Stanza>), EncryptError> {
    let core_key = hyperseal::FileKey::generate(hyperseal::Profile::Age.file_key_len());
    let file_key = to_age_key(&core_key).expect("a 16-byte age file key");
    let mut stanzas = vec![];
    let mut control: Option<HashSet<String>> = None;
    for r in recipients {
        let (s, labels) = r.wrap_file_key(&file_key)?;
        match &control {
            None => control = Some(labels),
            Some(l) if *l != labels => {
                return Err(EncryptError::IncompatibleRecipients { l_labels: l.clone(), r_labels: labels })
            }
            Some(_) => {}
        }
        stanzas.extend(s.iter().map(to_core_stanza));
    }
    if stanzas.is_empty() {
        return Err(EncryptError::MissingRecipients);
    }
    Ok((core_key, stanzas))
}

#[cfg(feature = "cli-common")]
/// Any core identity (every kind the core parses: SSH keys, tag and plugin identities, …) as
/// age's [`Identity`](crate::Identity).
pub(crate) struct CoreIdentity(pub(crate) Box<dyn hyperseal::Identity>);

#[cfg(feature = "cli-common")]
impl crate::Identity for CoreIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>> {
        unwrap_with(self.0.as_ref(), stanza)
    }

    // All stanzas at once: a plugin is run once per file.
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, DecryptError>> {
        let core: Vec<_> = stanzas.iter().map(to_core_stanza).collect();
        self.0.unwrap_stanzas(&core).map(|r| r.map_err(decrypt_error).and_then(|k| to_age_key(&k)))
    }
}

#[cfg(feature = "cli-common")]
/// Any core recipient as age's [`Recipient`](crate::Recipient).
pub(crate) struct CoreRecipient(pub(crate) Box<dyn hyperseal::Recipient>);

#[cfg(feature = "cli-common")]
impl crate::Recipient for CoreRecipient {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, HashSet<String>), EncryptError> {
        wrap_with(self.0.as_ref(), file_key)
    }
}

/// Several core identities (all those of one key text) as one age identity.
#[cfg(feature = "ssh")]
pub(crate) struct CoreIdentities(pub(crate) Vec<Box<dyn hyperseal::Identity>>);

#[cfg(feature = "ssh")]
impl crate::Identity for CoreIdentities {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>> {
        self.0.iter().find_map(|id| unwrap_with(id.as_ref(), stanza))
    }
}

/// What every native recipient type (a core recipient in `.0`) shares: its string as
/// `Display`, the same as `Debug` (a recipient is public), and wrapping a file key through the
/// core kind.
macro_rules! native_recipient {
    ($ty:ty) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0.to_bech32())
            }
        }

        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{self}")
            }
        }

        impl crate::Recipient for $ty {
            fn wrap_file_key(
                &self,
                file_key: &age_core::format::FileKey,
            ) -> Result<(Vec<age_core::format::Stanza>, std::collections::HashSet<String>), crate::EncryptError>
            {
                crate::bridge::wrap_with(&self.0, file_key)
            }
        }
    };
}
pub(crate) use native_recipient;

/// What every native identity type (a core identity in an `Arc` in `.0`) shares with age's
/// `x25519::Identity`: `generate`, `to_string`, `to_public`, unwrapping through the core kind,
/// and a `Debug` that shows only the public half, so the secret never reaches a log.
macro_rules! native_identity {
    ($id:ident, $recipient:ident, $core:ty, $generate:path, $name:literal) => {
        impl std::fmt::Debug for $id {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($name, "({})"), self.to_public())
            }
        }

        impl $id {
            /// Generates a new secret key.
            pub fn generate() -> Self {
                let key = $generate().expect("the system RNG works");
                <$core>::from_bech32(&key.secret)
                    .map(|k| $id(std::sync::Arc::new(k)))
                    .expect("a generated key parses")
            }

            /// Serializes this secret key as a string.
            pub fn to_string(&self) -> age_core::secrecy::SecretString {
                age_core::secrecy::SecretString::from(self.0.to_bech32().to_string())
            }

            /// Returns the recipient key for this secret key.
            pub fn to_public(&self) -> $recipient {
                $recipient(self.0.to_public())
            }
        }

        impl crate::Identity for $id {
            fn unwrap_stanza(
                &self,
                stanza: &age_core::format::Stanza,
            ) -> Option<Result<age_core::format::FileKey, crate::DecryptError>> {
                crate::bridge::unwrap_with(&*self.0, stanza)
            }
        }
    };
}
pub(crate) use native_identity;
