//! age plugins (`plugin` feature): age's `Recipient`, `Identity`, `RecipientPluginV1`,
//! `IdentityPluginV1` and errors, over the core's plugin client (the v1 protocol, its deadlines
//! and its printable filter are the core's).
//!
//! Every stanza of a file goes to the plugin in one run, so a PIN or a touch is asked once per
//! file, not once per stanza.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use age_core::format::{FileKey, Stanza};
use hyperseal::recipient::plugin as core;
use zeroize::Zeroizing;

use crate::bridge; // import-cycle: the errors name the plugin's, the plugin speaks through the bridge
use crate::{Callbacks, DecryptError, EncryptError};

/// Parsing runs no plugin; the policy only lets a plugin's key string through the parser.
fn parse_only() -> Arc<dyn hyperseal::recipient::Callbacks> {
    Arc::new(hyperseal::recipient::plugin::Plugins::allowed(true))
}

/// A plugin-compatible recipient (`age1NAME1…`).
#[derive(Clone)]
pub struct Recipient {
    name: String,
    text: String,
}

impl std::str::FromStr for Recipient {
    type Err = &'static str;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let r =
            core::PluginRecipient::from_bech32(s, parse_only()).map_err(|_| "invalid plugin recipient")?;
        Ok(Recipient { name: r.name().to_string(), text: s.to_string() })
    }
}

impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Recipient {
    /// Returns the plugin name for this recipient.
    pub fn plugin(&self) -> &str {
        &self.name
    }
}

/// A plugin-compatible identity (`AGE-PLUGIN-NAME-1…`).
#[derive(Clone)]
pub struct Identity {
    name: String,
    text: Zeroizing<String>,
}

impl std::str::FromStr for Identity {
    type Err = &'static str;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let id = core::PluginIdentity::from_bech32(s, parse_only()).map_err(|_| "invalid plugin identity")?;
        Ok(Identity { name: id.name().to_string(), text: Zeroizing::new(s.to_string()) })
    }
}

impl fmt::Display for Identity {
    // An identity string may hold key material; age prints it, so this does too, but never
    // through Debug.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Identity {
    /// Returns the identity corresponding to the given plugin name, with no data (age's
    /// `-j NAME`).
    pub fn default_for_plugin(plugin_name: &str) -> Result<Self, ResolveError> {
        if !core::valid_name(plugin_name) {
            return Err(ResolveError::InvalidPluginName { name: plugin_name.into() });
        }
        Ok(Identity {
            name: plugin_name.to_string(),
            text: Zeroizing::new(core::identity_string(plugin_name, &[])),
        })
    }

    /// Returns the plugin name for this identity.
    pub fn plugin(&self) -> &str {
        &self.name
    }
}

/// A plugin found on `$PATH`.
pub(crate) struct Plugin {
    name: String,
}

impl Plugin {
    pub(crate) fn new(name: &str) -> Result<Self, ResolveError> {
        if !core::valid_name(name) {
            return Err(ResolveError::InvalidPluginName { name: name.into() });
        }
        core::find_binary(name)
            .map_err(|_| ResolveError::MissingPlugin { binary_name: format!("age-plugin-{name}") })?;
        Ok(Plugin { name: name.to_string() })
    }
}

/// An age plugin with an associated set of recipients (and identities to wrap to).
pub struct RecipientPluginV1<C: Callbacks> {
    recipients: Vec<core::PluginRecipient>,
    _callbacks: std::marker::PhantomData<C>,
}

impl<C: Callbacks> RecipientPluginV1<C> {
    /// Creates an age plugin from a plugin name and lists of recipients and identities; the
    /// ones for other plugins are ignored. Fails if the plugin's binary is not on `$PATH`.
    pub fn new(
        plugin_name: &str,
        recipients: &[Recipient],
        identities: &[Identity],
        callbacks: C,
    ) -> Result<Self, ResolveError> {
        let plugin = Plugin::new(plugin_name)?;
        let asks: Arc<dyn hyperseal::recipient::Callbacks> =
            Arc::new(bridge::Asks { callbacks, plugins: true });
        let mut out = vec![];
        for r in recipients.iter().filter(|r| r.name == plugin.name) {
            out.push(core::PluginRecipient::from_bech32(&r.text, asks.clone()).expect("parsed before"));
        }
        for i in identities.iter().filter(|i| i.name == plugin.name) {
            let id = core::PluginIdentity::from_bech32(&i.text, asks.clone()).expect("parsed before");
            out.push(core::PluginRecipient::from_identity(&id));
        }
        Ok(RecipientPluginV1 { recipients: out, _callbacks: std::marker::PhantomData })
    }
}

impl<C: Callbacks> crate::Recipient for RecipientPluginV1<C> {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, HashSet<String>), EncryptError> {
        let mut stanzas = vec![];
        let mut labels: Option<HashSet<String>> = None;
        for r in &self.recipients {
            let (s, l) = bridge::wrap_with(r, file_key)?;
            stanzas.extend(s);
            labels.get_or_insert(l);
        }
        Ok((stanzas, labels.unwrap_or_default()))
    }
}

/// An age plugin with an associated set of identities.
pub struct IdentityPluginV1<C: Callbacks> {
    identities: Vec<core::PluginIdentity>,
    _callbacks: std::marker::PhantomData<C>,
}

impl<C: Callbacks> IdentityPluginV1<C> {
    /// Creates an age plugin from a plugin name and a list of identities; the ones for other
    /// plugins are ignored. Fails if the plugin's binary is not on `$PATH`.
    pub fn new(plugin_name: &str, identities: &[Identity], callbacks: C) -> Result<Self, ResolveError> {
        let plugin = Plugin::new(plugin_name)?;
        let identities: Vec<Identity> =
            identities.iter().filter(|i| i.name == plugin_name).cloned().collect();
        Ok(Self::from_parts(plugin, identities, callbacks))
    }

    pub(crate) fn from_parts(_plugin: Plugin, identities: Vec<Identity>, callbacks: C) -> Self {
        let asks: Arc<dyn hyperseal::recipient::Callbacks> =
            Arc::new(bridge::Asks { callbacks, plugins: true });
        let identities = identities
            .iter()
            .map(|i| core::PluginIdentity::from_bech32(&i.text, asks.clone()).expect("parsed before"))
            .collect();
        IdentityPluginV1 { identities, _callbacks: std::marker::PhantomData }
    }
}

impl<C: Callbacks> crate::Identity for IdentityPluginV1<C> {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>> {
        self.unwrap_stanzas(std::slice::from_ref(stanza))
    }

    /// Every stanza goes to the plugin at once: one run (one PIN) per identity and file.
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, DecryptError>> {
        let core_stanzas: Vec<_> = stanzas.iter().map(bridge::to_core_stanza).collect();
        self.identities.iter().find_map(|id| {
            hyperseal::Identity::unwrap_stanzas(id, &core_stanzas)
                .map(|r| r.map_err(bridge::decrypt_error).and_then(|k| bridge::to_age_key(&k)))
        })
    }
}

impl<C: Callbacks> IdentityPluginV1<C> {
    /// The file keys of many files in one plugin run per identity, where age runs the plugin
    /// once per file (and asks for a PIN or a touch each time). `files[i]` is the i-th file's
    /// stanzas ([`Decryptor::stanzas`](crate::Decryptor::stanzas)); answer `i` is what
    /// [`unwrap_stanzas`](crate::Identity::unwrap_stanzas) would give for that file. Open each
    /// file with [`Decryptor::decrypt_with_file_key`](crate::Decryptor::decrypt_with_file_key).
    /// Not in the age crate.
    pub fn unwrap_files(&self, files: &[&[Stanza]]) -> Vec<Option<Result<FileKey, DecryptError>>> {
        let stanzas: Vec<_> = files.iter().flat_map(|f| f.iter().map(bridge::to_core_stanza)).collect();
        let refs: Vec<&hyperseal::format::Stanza> = stanzas.iter().collect();
        let mut answers: Vec<Option<Result<FileKey, DecryptError>>> = files.iter().map(|_| None).collect();
        for id in &self.identities {
            let per_stanza = match hyperseal::Identity::unwrap_each(id, &refs) {
                Ok(a) => a,
                Err(e) => {
                    let e = bridge::decrypt_error(e);
                    answers.iter_mut().filter(|a| a.is_none()).for_each(|a| *a = Some(Err(e.clone())));
                    return answers;
                }
            };
            let mut per_stanza = per_stanza.into_iter();
            for (file, answer) in files.iter().zip(answers.iter_mut()) {
                // This file's stanzas' answers, in order; the first definite one wins.
                let mine: Vec<_> = per_stanza.by_ref().take(file.len()).collect();
                if answer.is_none() {
                    *answer = mine
                        .into_iter()
                        .flatten()
                        .next()
                        .map(|r| r.map_err(bridge::decrypt_error).and_then(|k| bridge::to_age_key(&k)));
                }
            }
        }
        answers
    }
}

/// Recipients for plugin recipients and identities, one per plugin named (age's
/// `IdentityFile::to_recipients` and `cli_common::read_recipients` group them so).
pub(crate) fn recipients_for<C: Callbacks>(
    recipients: &[Recipient],
    identities: &[Identity],
    callbacks: C,
) -> Result<Vec<Box<dyn crate::Recipient + Send>>, EncryptError> {
    let mut names: Vec<&str> =
        recipients.iter().map(|r| r.plugin()).chain(identities.iter().map(|i| i.plugin())).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            RecipientPluginV1::new(name, recipients, identities, callbacks.clone())
                .map(|p| Box::new(p) as Box<dyn crate::Recipient + Send>)
                .map_err(EncryptError::PluginResolve)
        })
        .collect()
}

/// Errors from a plugin, as age reports them.
#[derive(Clone, Debug)]
pub enum PluginError {
    /// An error caused by a specific identity.
    Identity {
        /// The plugin's binary name.
        binary_name: String,
        /// The error message.
        message: String,
    },
    /// An error caused by a specific recipient.
    Recipient {
        /// The plugin's binary name.
        binary_name: String,
        /// The recipient.
        recipient: String,
        /// The error message.
        message: String,
    },
    /// Any other error (the core's plugin client says what in `message`).
    Other {
        /// The error kind.
        kind: String,
        /// Any metadata associated with the error.
        metadata: Vec<String>,
        /// The error message.
        message: String,
    },
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginError::Identity { binary_name, message } => {
                write!(f, "{binary_name}: identity error: {message}")
            }
            PluginError::Recipient { binary_name, recipient, message } => {
                write!(f, "{binary_name}: error with recipient {recipient}: {message}")
            }
            PluginError::Other { kind, message, .. } => write!(f, "plugin error ({kind}): {message}"),
        }
    }
}

/// Errors returned when resolving a plugin.
#[derive(Clone, Debug)]
pub enum ResolveError {
    /// A provided plugin name was invalid.
    InvalidPluginName {
        /// The provided name.
        name: String,
    },
    /// A required plugin could not be found.
    MissingPlugin {
        /// The plugin's binary name.
        binary_name: String,
    },
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::InvalidPluginName { name } => write!(f, "invalid plugin name: {name}"),
            ResolveError::MissingPlugin { binary_name } => {
                write!(f, "could not find {binary_name} on the PATH")
            }
        }
    }
}

impl std::error::Error for ResolveError {}
